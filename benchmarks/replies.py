"""What replies cost, as whole processes against the local X emulator: `bot.py replies` with nothing
new (the timer's usual round, every 5 minutes), a round answering 10 new mentions, and a scheduled
run the roll skips, with and without REPLY_RULES (a run with it set answers mentions first); each
with the 650-rule Cheap Bots Toot Sweet file of tests/fixtures/replies. CPU time of the child
(user + system), wall time and the requests X would bill, medians over rounds::

    .venv/bin/python benchmarks/replies.py            # 9 rounds, about a minute
    .venv/bin/python benchmarks/replies.py -n 21
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from x_emulator import XEmulator  # noqa: E402

RULES = REPO / "tests" / "fixtures" / "replies" / "cbts-650.json"


def _run(home: Path, *args: str) -> Dict[str, float]:
    """One bot.py process: its CPU seconds and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(REPO / "bot.py"), "--env-file", str(home / ".env"), "-q", *args],
        cwd=home,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bot.py {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": cpu, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=9, help="rounds (default 9)")
    rounds = parser.parse_args().n
    figures: Dict[str, List[float]] = {}
    with XEmulator(duplicate_check=False) as emulator, tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        shutil.copy(RULES, home / "replies.json")
        (home / "tweets.txt").write_text("a line\n")
        settings = {**emulator.env(), "POST_TO": "x", "TWEET_ONE_IN": "1000000", "REPLY_COOLDOWN": "0"}
        env = home / ".env"

        def write(**more: str) -> None:
            env.write_text("".join(f"{name}={value}\n" for name, value in {**settings, **more}.items()))
            os.chmod(env, 0o600)

        write(REPLY_RULES="replies.json")
        _run(home, "replies")  # the first round: the cursor, the account's id
        for number in range(rounds):
            reads = emulator.reads
            for name, value in _run(home, "replies").items():
                figures.setdefault(f"replies, nothing new: {name}", []).append(value)
            figures.setdefault("replies, nothing new: requests", []).append(emulator.reads - reads)
            for mention in range(10):
                emulator.mention(f"@pi_bot Word{(number * 10 + mention) * 4 % 648} hello", by=f"user{mention}", ago=5)
            for name, value in _run(home, "replies").items():
                figures.setdefault(f"replies, 10 new mentions: {name}", []).append(value)
            for name, value in _run(home).items():
                figures.setdefault(f"scheduled run (skipped), REPLY_RULES set: {name}", []).append(value)
            write(REPLY_RULES="")
            for name, value in _run(home).items():
                figures.setdefault(f"scheduled run (skipped), no REPLY_RULES: {name}", []).append(value)
            write(REPLY_RULES="replies.json")
    print(f"replies against the X emulator, {rounds} rounds, medians (the 650-rule CBTS file):")
    for label, values in figures.items():
        unit = "" if label.endswith("requests") else " s"
        print(f"  {label:<55} {statistics.median(values):.3f}{unit}")


if __name__ == "__main__":
    main()
