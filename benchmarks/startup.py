"""What a scheduled run costs, as whole processes: CPU time and peak memory of a run that skips,
a dry run and a real post (against the local X emulator), each beside `python -c pass` and
`python -c 'import tweepy'` measured in the same run, interleaved so drift hits all alike::

    .venv/bin/python benchmarks/startup.py          # 15 rounds, about a minute
    .venv/bin/python benchmarks/startup.py -n 40 --lines 16   # the bundled file's size

A cron line runs the bot four times a day on a Pi Zero 2 W (512 MB), usually to decide "skip":
this is that cost. Figures are medians; the ratios are against the baselines of the same run.
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
sys.path.insert(0, str(REPO / "tests"))

from x_emulator import XEmulator  # noqa: E402

GNU_TIME = Path("/usr/bin/time")  # Debian's `time` package: reports the child's own peak memory


def measure(argv: Sequence[str], env: Dict[str, str], scratch: Path) -> Tuple[float, float]:
    """CPU seconds (user + system) and peak RSS in MiB of one run of `argv`.

    Through GNU time when the machine has it: a child forked from this (large) benchmark process
    would otherwise be charged this process's memory up to its exec."""
    report = scratch / "time.txt"
    command = [str(GNU_TIME), "-f", "%U %S %M", "-o", str(report), *argv] if GNU_TIME.exists() else list(argv)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed with {os.waitstatus_to_exitcode(status)}")
    if GNU_TIME.exists():
        user, system, peak_kib = report.read_text().split()[-3:]
        return float(user) + float(system), int(peak_kib) / 1024
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="rounds (each runs every command once)")
    parser.add_argument("--lines", type=int, default=5000, help="lines in the tweets file (default 5000)")
    options = parser.parse_args()
    rounds, lines = options.n, options.lines

    python = sys.executable
    bot = [python, str(REPO / "bot.py")]
    with tempfile.TemporaryDirectory() as folder, XEmulator() as emulator:
        home = Path(folder)
        tweets = home / "tweets.txt"
        tweets.write_text("".join(f"Line number {number} of a long tweets file\n" for number in range(lines)))
        settings = {
            **emulator.env(),
            "TWEETS_FILE": str(tweets),
            "BOT_STATE_DIR": str(home / "state"),
            "MAX_POSTS_PER_DAY": "1000",
            "MIN_POST_GAP": "0",
        }
        env_file = home / ".env"
        env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        env_file.chmod(0o600)
        env = {"PATH": "/usr/bin:/bin", "HOME": folder, "LANG": "C.UTF-8"}
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "python -c 'import tweepy'": [python, "-c", "import tweepy"],
            "skip (roll says no)": [*bot, "--env-file", str(env_file), "--one-in", "1000000000", "--seed", "1", "-q"],
            "dry run (forced)": [*bot, "--env-file", str(env_file), "--dry-run", "--force", "-q"],
            "post (to the emulator)": [*bot, "--env-file", str(env_file), "--force", "-q"],
        }
        figures: Dict[str, List[Tuple[float, float]]] = {name: [] for name in commands}
        started = time.monotonic()
        for _ in range(rounds):
            for name, argv in commands.items():
                figures[name].append(measure(argv, env, home))
        elapsed = time.monotonic() - started

    print(f"python {sys.version.split()[0]}, {rounds} rounds in {elapsed:.0f} s, a {lines:,}-line tweets file")
    if not GNU_TIME.exists():
        print("(no /usr/bin/time: peak memory includes this benchmark's own, up to each exec)")
    pass_cpu = statistics.median(cpu for cpu, _ in figures["python -c pass"])
    tweepy_cpu = statistics.median(cpu for cpu, _ in figures["python -c 'import tweepy'"])
    print(f"{'command':28} {'cpu (median)':>12} {'min-max':>13} {'peak MiB':>9} {'x pass':>7} {'x tweepy':>9}")
    for name, runs in figures.items():
        cpus = sorted(cpu for cpu, _ in runs)
        cpu = statistics.median(cpus)
        peak = statistics.median(rss for _, rss in runs)
        print(
            f"{name:28} {cpu:>10.3f} s {cpus[0]:>5.2f}-{cpus[-1]:<5.2f} s {peak:>9.1f} "
            f"{cpu / pass_cpu:>6.1f}x {cpu / tweepy_cpu:>8.2f}x"
        )


if __name__ == "__main__":
    main()
