"""What a scheduled run costs, as whole processes: CPU time and peak memory of a run that skips,
a dry run and a real post (against the local X emulator), each with a short and a long tweets
file, beside `python -c pass` and `python -c 'import tweepy'` measured in the same run, all
interleaved so that drift hits every command alike::

    .venv/bin/python benchmarks/startup.py                 # 15 rounds, 16 and 5,000 lines, ~1.5 min
    .venv/bin/python benchmarks/startup.py -n 31 --lines 20000
    .venv/bin/python benchmarks/startup.py --against v0.2.0   # beside another commit, in the same rounds

A cron line runs the bot four times a day on a Pi Zero 2 W (512 MB), usually to decide "skip":
this is that cost. Figures are medians; a ratio is the median over rounds of the command's CPU
time over the baseline's in the same round, and the growth per line is the median over rounds of
(long file - short file) / extra lines.
Each file size has its own state folder (a run keeps the lengths of one tweets file), and the
first round, which measures every line and fills that cache, is a warm-up: not counted.
`--against REV` runs that commit's bot.py (from `git archive`) with the short file in the same
rounds, each with its own state folder, and prints each run's ratio beside it. Both trees are
byte-compiled first: a machine with PYTHONDONTWRITEBYTECODE set would otherwise compile every
module the change touched on every run, and charge the change for it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # the emulator loads twitter-text through the bot

from x_emulator import XEmulator  # noqa: E402

GNU_TIME = Path("/usr/bin/time")  # Debian's `time` package: reports the child's own peak memory
SHORT = 16  # the bundled tweets.txt's size
# The goal (issue 18): a run costs at most this much against `import tweepy`, this much memory,
# and grows by well under this much per line of the tweets file.
TARGET_RATIO, TARGET_MIB, TARGET_MS_PER_LINE = 1.3, 40.0, 0.1


def measure(argv: Sequence[str], env: Dict[str, str], scratch: Path) -> Tuple[float, float]:
    """CPU seconds (user + system) and peak RSS in MiB of one run of `argv`.

    CPU from wait4, which counts the process and the children it waited for (microseconds, where
    GNU time rounds to 10 ms). Peak memory from GNU time when the machine has it: a child forked
    from this (large) benchmark process is charged this process's memory up to its exec, the
    command GNU time starts is not."""
    report = scratch / "time.txt"
    command = [str(GNU_TIME), "-f", "%M", "-o", str(report), *argv] if GNU_TIME.exists() else list(argv)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed with {os.waitstatus_to_exitcode(status)}")
    peak_kib = int(report.read_text().split()[-1]) if GNU_TIME.exists() else usage.ru_maxrss
    return usage.ru_utime + usage.ru_stime, peak_kib / 1024


def other_tree(revision: str, folder: Path) -> Path:
    """The commit `revision` of this repository, unpacked into `folder` (its bot.py and package)."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def bot_home(folder: Path, lines: int, emulator: XEmulator) -> Path:
    """A tweets file of `lines` lines and an env file with its own state folder; returns the env file."""
    folder.mkdir()
    tweets = folder / "tweets.txt"
    tweets.write_text("".join(f"Line number {number} of a long tweets file\n" for number in range(lines)))
    settings = {
        **emulator.env(),
        "TWEETS_FILE": str(tweets),
        "BOT_STATE_DIR": str(folder / "state"),
        "MAX_POSTS_PER_DAY": "100000",
        "MIN_POST_GAP": "0",
    }
    env_file = folder / ".env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    env_file.chmod(0o600)
    return env_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="rounds (each runs every command once; default 15)")
    parser.add_argument("--lines", type=int, default=5000, help="lines in the long tweets file (default 5000)")
    parser.add_argument("--against", metavar="REV", help="another commit's runs beside this checkout's (git archive)")
    options = parser.parse_args()
    rounds, lines = options.n, options.lines

    python = sys.executable
    with tempfile.TemporaryDirectory() as folder, XEmulator() as emulator:
        trees = {"": REPO}
        if options.against:
            trees[f" ({options.against})"] = other_tree(options.against, Path(folder) / "against")
        for tree in trees.values():
            subprocess.run(
                [python, "-m", "compileall", "-q", str(tree / "twitterbot")], check=True, stdout=subprocess.DEVNULL
            )
        env = {"PATH": "/usr/bin:/bin", "HOME": folder, "LANG": "C.UTF-8"}
        commands = {"python -c pass": [python, "-c", "pass"], "import tweepy": [python, "-c", "import tweepy"]}
        runs = {
            "skip": ["--one-in", "1000000000", "--seed", "1"],
            "dry run": ["--dry-run", "--force"],
            "post": ["--force"],
        }
        for size in (SHORT, lines):
            for suffix, tree in trees.items():
                if suffix and size != SHORT:
                    continue  # the other commit with the short file only
                env_file = bot_home(Path(folder) / f"lines-{size}{len(suffix)}", size, emulator)
                for name, flags in runs.items():
                    commands[f"{name}, {size:,} lines{suffix}"] = [
                        python,
                        str(tree / "bot.py"),
                        "--env-file",
                        str(env_file),
                        *flags,
                    ]
        figures: Dict[str, List[Tuple[float, float]]] = {name: [] for name in commands}
        started = time.monotonic()
        for round_number in range(rounds + 1):
            for name, argv in commands.items():
                emulator.posts.clear()  # X refuses a text it already has; the benchmark reposts lines
                figure = measure(argv, env, Path(folder))
                if round_number:
                    figures[name].append(figure)
        elapsed = time.monotonic() - started

    print(f"python {sys.version.split()[0]}, {rounds} rounds (+1 warm-up) in {elapsed:.0f} s, CPU time, medians")
    if not GNU_TIME.exists():
        print("(no /usr/bin/time: peak memory includes this benchmark's own, up to each exec)")
    cpu = {name: statistics.median(c for c, _ in runs_) for name, runs_ in figures.items()}

    def ratio(name: str, baseline: str) -> float:
        """The median of the round-by-round ratios: a round's commands ran seconds apart."""
        return statistics.median(a[0] / b[0] for a, b in zip(figures[name], figures[baseline]))

    print(f"{'command':24} {'cpu':>8} {'min-max':>13} {'peak MiB':>9} {'x pass':>7} {'x tweepy':>9}")
    for name, runs_ in figures.items():
        cpus = sorted(c for c, _ in runs_)
        peak = max(rss for _, rss in runs_)
        print(
            f"{name:24} {cpu[name]:>6.3f} s {cpus[0]:>5.3f}-{cpus[-1]:<5.3f}s {peak:>9.1f} "
            f"{ratio(name, 'python -c pass'):>6.1f}x {ratio(name, 'import tweepy'):>8.2f}x"
        )
    print(f"\ngrowth per tweets-file line ({SHORT:,} -> {lines:,} lines), median of paired rounds:")
    for name in runs:
        short, long = figures[f"{name}, {SHORT:,} lines"], figures[f"{name}, {lines:,} lines"]
        per_line = statistics.median((b[0] - a[0]) / (lines - SHORT) for a, b in zip(short, long))
        print(f"  {name:10} {per_line * 1000:+.4f} ms/line")
    if options.against:
        print(f"\nthis checkout against {options.against}, {SHORT} lines, x import tweepy in the same rounds:")
        for name in runs:
            mine, theirs = f"{name}, {SHORT:,} lines", f"{name}, {SHORT:,} lines ({options.against})"
            print(f"  {name:10} {ratio(mine, 'import tweepy'):.2f}x against {ratio(theirs, 'import tweepy'):.2f}x")
    ours = [name for name in figures if "lines" in name and not name.endswith(")")]
    worst = max(ratio(name, "import tweepy") for name in ours)
    peak = max(rss for name, runs_ in figures.items() if name in ours for _, rss in runs_)
    print(
        f"\ngoal: at most {TARGET_RATIO}x import tweepy (worst here {worst:.2f}x), at most {TARGET_MIB:.0f} MiB "
        f"(worst here {peak:.1f}), well under {TARGET_MS_PER_LINE} ms per line"
    )


if __name__ == "__main__":
    main()
