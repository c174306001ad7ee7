"""What replies cost, as whole processes against the local X emulator (and the Mastodon one): `bot.py replies` with nothing
new (the timer's usual round, every 5 minutes), a round answering 10 new mentions, and a scheduled
run the roll skips, with and without REPLY_RULES (a run with it set answers mentions first); each
with the 650-rule Cheap Bots Toot Sweet file of tests/fixtures/replies. CPU time of the child
(user + system), wall time, peak memory and the requests X would bill, medians over rounds, beside
`python -c 'import tweepy'` measured in the same rounds: the run-cost targets (at most 1.3 times
its CPU and 40 MiB, as benchmarks/startup.py holds a post to) apply to a round with nothing new.
Then the same round on Bluesky, against the tests' Bluesky emulator with the session an earlier
round saved (`--bot` measures another checkout's bot.py, for a before and after)::

    .venv/bin/python benchmarks/replies.py            # 9 rounds, about a minute
    .venv/bin/python benchmarks/replies.py -n 21
    .venv/bin/python benchmarks/replies.py --only bluesky --bot ../before/bot.py
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
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from bluesky_emulator import BlueskyEmulator  # noqa: E402
from mastodon_server import MastodonEmulator  # noqa: E402
from x_emulator import XEmulator  # noqa: E402

RULES = REPO / "tests" / "fixtures" / "replies" / "cbts-650.json"


GNU_TIME = Path("/usr/bin/time")  # Debian's `time` package: the child's own peak memory
TARGET_RATIO, TARGET_MIB = 1.3, 40.0  # benchmarks/startup.py's targets for a run


def _measure(argv: List[str], home: Path) -> Dict[str, float]:
    """One process: its CPU seconds, wall seconds and peak memory in MiB (GNU time's, when the
    machine has it: a child forked from this process is charged this process's memory up to its
    exec, the command GNU time starts is not)."""
    report = home / "time.txt"
    command = [str(GNU_TIME), "-f", "%M", "-o", str(report), *argv] if GNU_TIME.exists() else argv
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=home,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:])} failed ({done.returncode}): {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = int(report.read_text().split()[-1]) / 1024 if GNU_TIME.exists() else float("nan")
    return {"cpu": cpu, "wall": wall, "MiB": peak}


def _run(home: Path, *args: str, bot: Path = REPO / "bot.py") -> Dict[str, float]:
    """One bot.py process."""
    return _measure([sys.executable, str(bot), "--env-file", str(home / ".env"), "-q", *args], home)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=9, help="rounds (default 9)")
    parser.add_argument("--only", choices=("x", "mastodon", "bluesky"), help="measure one network's rounds")
    parser.add_argument("--bot", type=Path, default=REPO / "bot.py", help="the bot.py the Bluesky rounds run")
    options = parser.parse_args()
    if options.only in (None, "x"):
        _x(options.n)
    if options.only in (None, "mastodon"):
        _report(f"replies against the Mastodon emulator, {options.n} rounds, medians:", _mastodon(options.n))
    if options.only in (None, "bluesky"):
        _bluesky(options.n, options.bot)


def _verdict(figures: Dict[str, List[float]], round_: str) -> None:
    """Print the figures' medians, and whether `round_` is within the run-cost targets."""
    for label, values in figures.items():
        unit = {"requests": "", "MiB": " MiB", "tweepy": "x"}.get(label.rsplit(" ", 1)[-1], " s")
        print(f"  {label:<60} {statistics.median(values):.3f}{unit}")
    ratio = statistics.median(figures[f"{round_}: CPU / import tweepy"])
    peak = statistics.median(figures[f"{round_}: MiB"])
    verdict = "within" if ratio <= TARGET_RATIO and peak <= TARGET_MIB else "OVER"
    print(f"a round with nothing new: {ratio:.2f}x import tweepy, {peak:.1f} MiB: {verdict} the targets")
    print(f"({TARGET_RATIO}x, {TARGET_MIB:.0f} MiB)")


def _bluesky(rounds: int, bot: Path) -> None:
    """A Bluesky round with nothing new and the saved session, beside `import tweepy`."""
    figures: Dict[str, List[float]] = {}
    with BlueskyEmulator() as emulator, tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        shutil.copy(RULES, home / "replies.json")
        (home / "tweets.txt").write_text("a line\n")
        emulator.canned["app.bsky.notification.listNotifications"] = {"notifications": []}
        (home / ".env").write_text(
            f"POST_TO=bluesky\nBLUESKY_HANDLE={emulator.handle}\nBLUESKY_APP_PASSWORD={emulator.password}\n"
            f"BLUESKY_SERVICE={emulator.url}\nTWEET_ONE_IN=1000000\nREPLY_COOLDOWN=0\nREPLY_RULES=replies.json\n"
        )
        os.chmod(home / ".env", 0o600)
        _run(home, "replies", bot=bot)  # the first round: the login, the saved session
        round_ = "bluesky replies, nothing new"
        for _ in range(rounds):
            baseline = _measure([sys.executable, "-c", "import tweepy"], home)
            for name, value in baseline.items():
                figures.setdefault(f"python -c 'import tweepy': {name}", []).append(value)
            before = sum(emulator.calls.values())
            quiet = _run(home, "replies", bot=bot)
            for name, value in quiet.items():
                figures.setdefault(f"{round_}: {name}", []).append(value)
            figures.setdefault(f"{round_}: CPU / import tweepy", []).append(quiet["cpu"] / baseline["cpu"])
            figures.setdefault(f"{round_}: requests", []).append(sum(emulator.calls.values()) - before)
    print(f"replies against the Bluesky emulator ({bot}), {rounds} rounds, medians:")
    _verdict(figures, round_)


def _x(rounds: int) -> None:
    """X's rounds: nothing new, 10 new mentions, and the scheduled runs the roll skips."""
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
            _replies_rounds(home, emulator, "@pi_bot", number, figures)
            for name, value in _run(home).items():
                figures.setdefault(f"scheduled run (skipped), REPLY_RULES set: {name}", []).append(value)
            write(REPLY_RULES="")
            for name, value in _run(home).items():
                figures.setdefault(f"scheduled run (skipped), no REPLY_RULES: {name}", []).append(value)
            write(REPLY_RULES="replies.json")
    _report(f"replies against the X emulator, {rounds} rounds, medians (the 650-rule CBTS file):", figures)


def _mastodon(rounds: int) -> Dict[str, List[float]]:
    """A Mastodon round with nothing new, and one answering 10 new mentions, beside `import tweepy`."""
    figures: Dict[str, List[float]] = {}
    with MastodonEmulator() as emulator, tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        shutil.copy(RULES, home / "replies.json")
        (home / "tweets.txt").write_text("a line\n")
        settings = {**emulator.env(), "POST_TO": "mastodon", "REPLY_RULES": "replies.json", "REPLY_COOLDOWN": "0"}
        (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        os.chmod(home / ".env", 0o600)
        _run(home, "replies")  # the first round: the cursor, the account's id
        for number in range(rounds):
            _replies_rounds(home, emulator, "@pibot", number, figures)
    return figures


def _report(title: str, figures: Dict[str, List[float]]) -> None:
    """Each figure's median, and whether a round with nothing new is within the targets."""
    print(title)
    _verdict(figures, "replies, nothing new")


def _replies_rounds(home: Path, emulator: Any, handle: str, number: int, figures: Dict[str, List[float]]) -> None:
    """One round's figures against `emulator` (X's or Mastodon's, which count their reads): `import
    tweepy`, a round of replies with nothing new (and its requests), then one answering 10 new
    mentions of `handle`."""
    baseline = _measure([sys.executable, "-c", "import tweepy"], home)
    for name, value in baseline.items():
        figures.setdefault(f"python -c 'import tweepy': {name}", []).append(value)
    reads = emulator.reads
    quiet = _run(home, "replies")
    for name, value in quiet.items():
        figures.setdefault(f"replies, nothing new: {name}", []).append(value)
    figures.setdefault("replies, nothing new: CPU / import tweepy", []).append(quiet["cpu"] / baseline["cpu"])
    figures.setdefault("replies, nothing new: requests", []).append(emulator.reads - reads)
    for mention in range(10):
        emulator.mention(f"{handle} Word{(number * 10 + mention) * 4 % 648} hello", by=f"user{mention}", ago=5)
    for name, value in _run(home, "replies").items():
        figures.setdefault(f"replies, 10 new mentions: {name}", []).append(value)


if __name__ == "__main__":
    main()
