"""What a scheduled run writes to storage, for a Pi's SD card: the write calls (`syscw`) and the
bytes sent to the storage layer (`write_bytes`) of a run the roll skips; one that skips and
warns as the last one did (a monitor that does not answer: two warnings); one that skips with its
warnings changed since the last run (the monitor fails every other run: the record of the last
run's warnings is rewritten or removed); a run that posts (to the local X emulator) and a dry
run, from the process's own `/proc/self/io`, beside another commit measured in the same rounds::

    .venv/bin/python benchmarks/writes.py                    # beside v0.2.0, 5 rounds, ~20 s
    .venv/bin/python benchmarks/writes.py --against HEAD~3 -n 9

Each run is a real `bot.py` process with its own state folder, from an unrelated folder; a small
wrapper reads `/proc/self/io` before and after the bot's `main` (the interpreter's own start-up
writes nothing). The first round of each kind is a warm-up (it creates the history and measures
the tweets file): not counted. Figures are medians over the rounds. The targets (issue 50): a
skipping run at most 4 write calls and 8 KiB, a post at most 64 KiB. Lines logged count too:
stderr is a pipe here, a file (cron.log) under cron.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
REFUSED = 9  # a port of 127.0.0.1 nothing listens on (discard): a monitor there does not answer
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from x_emulator import XEmulator  # noqa: E402

SKIP_TARGET = (4, 8 * 1024)
TARGETS = {"skip": SKIP_TARGET, "skip, warns": SKIP_TARGET, "skip, changed": SKIP_TARGET, "post": (None, 64 * 1024)}
KINDS = ("skip", "skip, warns", "skip, changed", "post", "dry run")

# Runs bot.py's main in this process between two readings of /proc/self/io, and writes the
# difference to the file named by the first argument.
WRAPPER = """
import json, runpy, sys
def io():
    return dict((key, int(value)) for key, value in (line.split(":") for line in open("/proc/self/io")))
out, bot = sys.argv[1], sys.argv[2]
sys.argv = [bot, *sys.argv[3:]]
sys.path[0] = bot.rsplit("/", 1)[0]  # as `python bot.py` has it
before = io()
try:
    runpy.run_path(bot, run_name="__main__")
except SystemExit:
    pass
after = io()
open(out, "w").write(json.dumps({key: after[key] - before[key] for key in ("syscw", "write_bytes")}))
"""


def run_once(
    tree: Path, kind: str, home: Path, emulator: XEmulator, scratch: Path, round_number: int
) -> Dict[str, int]:
    """One run of `kind` with `tree`'s bot.py: its write calls and bytes."""
    state = home / "state"
    settings = {
        **emulator.env(),
        "TWEETS_FILE": str(REPO / "tweets.txt"),
        "BOT_STATE_DIR": str(state),
        "TWEET_ONE_IN": "1000000" if kind.startswith("skip") else "1",
        "MAX_POSTS_PER_DAY": "1000000",
        "MIN_POST_GAP": "0",
        "API_RETRIES": "0",
    }
    if kind == "skip, warns" or (kind == "skip, changed" and round_number % 2):
        settings["HEALTHCHECK_URL"] = f"http://127.0.0.1:{REFUSED}/ping"  # warns of the start and end pings
    env_file = home / "bot.env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    env_file.chmod(0o600)
    out = scratch / "io.json"
    argv = [sys.executable, "-c", WRAPPER, str(out), str(tree / "bot.py"), "--env-file", str(env_file)]
    argv += ["--dry-run", "--force"] if kind == "dry run" else []
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    out.unlink(missing_ok=True)
    done = subprocess.run(
        argv, env=environ, cwd=str(scratch), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if not out.exists():
        raise SystemExit(f"{kind} run of {tree} failed:\n{done.stderr}")
    return json.loads(out.read_text())


def checkout(rev: str, into: Path) -> Path:
    """`rev`'s tree (git archive), byte-compiled as this tree is."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--rounds", type=int, default=5, help="counted rounds of each kind (default 5)")
    parser.add_argument("--against", default="v0.2.0", help="the commit to measure beside (default v0.2.0)")
    parser.add_argument("--each", action="store_true", help="also print every run's calls/KiB")
    args = parser.parse_args()
    if not Path("/proc/self/io").exists():
        raise SystemExit("this benchmark reads /proc/self/io: Linux only")
    with (
        tempfile.TemporaryDirectory() as temp,
        XEmulator(duplicate_check=False) as emulator,
    ):  # both trees post the same lines
        scratch = Path(temp)
        trees = {"this tree": REPO, args.against: checkout(args.against, scratch / "against")}
        for tree in trees.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "twitterbot")], check=True)
        figures: Dict[str, Dict[str, List[Dict[str, int]]]] = {name: {kind: [] for kind in KINDS} for name in trees}
        for round_number in range(args.rounds + 1):
            for name, tree in trees.items():
                for kind in KINDS:
                    home = scratch / f"{name.replace(' ', '-').replace('/', '-')}-{kind.replace(' ', '-')}"
                    home.mkdir(exist_ok=True)
                    measured = run_once(tree, kind, home, emulator, scratch, round_number)
                    if round_number:  # the first round creates the history: a warm-up
                        figures[name][kind].append(measured)
    print(f"writes per run, median of {args.rounds} rounds (write calls / KiB sent to storage)")
    print(f"{'run':<14}" + "".join(f"{name:>24}" for name in figures) + f"{'target':>20}")
    for kind in KINDS:
        cells = []
        for name in figures:
            calls = statistics.median(each["syscw"] for each in figures[name][kind])
            kib = statistics.median(each["write_bytes"] for each in figures[name][kind]) / 1024
            cells.append(f"{calls:>10.0f} calls {kib:>6.1f} KiB")
        most_calls, most_bytes = TARGETS.get(kind, (None, None))
        target = (f"<= {most_calls} calls " if most_calls else "") + (
            f"<= {most_bytes // 1024} KiB" if most_bytes else ""
        )
        print(f"{kind:<14}" + "".join(f"{cell:>24}" for cell in cells) + f"{target:>20}")
    if args.each:
        for name in figures:
            for kind in KINDS:
                print(
                    f"  {name} {kind}: "
                    + ", ".join(f"{each['syscw']}/{each['write_bytes'] // 1024}" for each in figures[name][kind])
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
