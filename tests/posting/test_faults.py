"""Fault injection: many real `bot.py` runs against the X emulator with its duplicate check off
(and, with POST_TO=x,mastodon, the Mastodon emulator too), killed with SIGKILL at random moments
while the emulators lose replies after posting, and now and then answer the look-up of an
uncertain post with something a broken server would send (malformed, not JSON, past the 8 MB any
answer is read to). Half the lines carry a link, which X gives back as a t.co link.

Whatever happens, no network may get a text twice, every post a network accepted must be in the
history as posted or maybe posted (uncertain, interrupted, or pending for a run killed mid-send)
for that network, and the database must pass its integrity check. Runs alone with ``pytest -m faults``; the default size is
quick enough for CI, a long run sets ``TWITTERBOT_FAULT_RUNS`` (and ``TWITTERBOT_FAULT_SEED``)::

    TWITTERBOT_FAULT_RUNS=400 .venv/bin/python -m pytest -q -m faults

The figures (runs, kills, faults, doubles) are printed at the end.
"""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from conftest import BotHome
from loopback import Answer
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator

RUNS = int(os.environ.get("TWITTERBOT_FAULT_RUNS", "25"))
SEED = int(os.environ.get("TWITTERBOT_FAULT_SEED", "2026"))

# What the emulator does to a run's post: mostly nothing, else a fault. The "posted_then_*" ones are
# the dangerous kind: X has the post and the bot never hears of it.
FAULTS: List[Optional[str]] = [None] * 5 + ["posted_then_drop", "posted_then_slow", "drop", "slow", "server_error"]
# What the next look-ups of X's timeline meet: mostly X's own answer, else a broken one.
LOOK_UP_ANSWERS: List[Optional[Answer]] = [None] * 8 + [
    Answer({"data": [{"id": None, "text": "fault test line 1"}]}),
    Answer({"data": "fault test line 1"}),
    Answer({"data": [{"id": "1", "text": "fault test line 1 https://t.co/abcdefghij"}]}),  # no entities
    Answer([]),
    Answer(b"<html>Bad Gateway</html>"),
    Answer(size=9 * 1024 * 1024),
]
# Outcomes under which a post X accepted may be recorded: never "failed" or "duplicate".
MAY_BE_ON_X = {"posted", "uncertain", "interrupted", "pending"}


def _long_line(number: int) -> str:
    """A line of the thread rounds, three parts on X: each sentence names its line, so no two
    lines' parts are the same text."""
    return " ".join(f"Sentence {k} of line {number} is one of several too long for one post on X." for k in range(8))


@pytest.mark.faults
@pytest.mark.parametrize(("post_to", "threads"), [("x", False), ("x,mastodon", False), ("x", True)])
def test_killed_runs_and_lost_replies_never_double_post_or_lose_a_post(
    tmp_path: Path, post_to: str, threads: bool
) -> None:
    rng = random.Random(SEED)
    started = time.monotonic()
    figures: Counter = Counter()
    with XEmulator(duplicate_check=False, slow_seconds=1.0) as emulator, MastodonEmulator(slow_seconds=1.0) as mastodon:
        home = BotHome(tmp_path / "bot", emulator)
        home.path.mkdir()
        home.write_env(
            **emulator.env(),
            **mastodon.env(),
            POST_TO=post_to,
            TWEET_ONE_IN="1",
            MAX_POSTS_PER_DAY="1000000",
            MIN_POST_GAP="0",
            API_RETRIES="1",
            API_TIMEOUT="0.5",
            **({"LONG_LINES": "thread", "THREAD_NUMBERS": "yes"} if threads else {}),
        )
        # One round: more lines than runs, so any repeated text on X is a double post.
        if threads:
            home.write_tweets("".join(f"{_long_line(number)}\n" for number in range(RUNS * 2 + 10)))
        else:  # half the lines with a link: a look-up must tell them apart by it
            home.write_tweets(
                "".join(
                    f"fault test line {number} https://example.com/{number}\n"
                    if number % 2
                    else f"fault test line {number}\n"
                    for number in range(RUNS * 2 + 10)
                )
            )

        for _ in range(RUNS):
            emulator._script.clear()
            emulator._answers.clear()
            mastodon._script.clear()
            emulator.received.clear()
            fault = rng.choice(FAULTS)
            if fault:
                emulator.fail_next(fault)
            look_up_answer = rng.choice(LOOK_UP_ANSWERS)
            if look_up_answer:
                emulator.answer_next("timeline", look_up_answer)
                figures["broken look-up answers"] += 1
            if "mastodon" in post_to:
                mastodon_fault = rng.choice(FAULTS)
                if mastodon_fault:
                    mastodon.fail_next(mastodon_fault)
            runs = [home.start("--force")]
            if rng.random() < 0.1:  # now and then a second run at the same moment (the lock's job)
                runs.append(home.start("--force"))
            figures["runs"] += len(runs)
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0.0, 1.6))  # from start-up to well past the reply
                for process in runs:
                    if process.poll() is None:
                        process.send_signal(signal.SIGKILL)
                        figures["kills"] += 1
            for process in runs:
                try:
                    process.communicate(timeout=60)
                except subprocess.TimeoutExpired:  # pragma: no cover - a hung run is a failure too
                    process.kill()
                    raise
                figures[f"exit {process.returncode}"] += 1
            if fault and emulator.received.is_set():
                figures["faults"] += 1
        time.sleep(emulator.slow_seconds)  # let a last slow reply finish before counting

        posts = {"x": [(post.id, post.text) for post in emulator.posts]}
        posts["mastodon"] = [(status.id, status.text) for status in mastodon.statuses]
        replies = {post.id: post.reply_to for post in emulator.posts}
        with sqlite3.connect(home.path / "state" / "history.sqlite3") as db:
            # A thread's part is recorded by the text it was sent as.
            attempts = db.execute(
                "SELECT network, coalesce(sent_text, text), outcome, post_id FROM attempts"
            ).fetchall()
            integrity = db.execute("PRAGMA integrity_check").fetchall()

    doubles = sum(count - 1 for each in posts.values() for count in Counter(text for _, text in each).values())
    outcomes = Counter(f"{network} {outcome}" for network, _, outcome, _ in attempts)
    recorded: dict = {}
    for network, text, outcome, _ in attempts:
        recorded.setdefault((network, text), set()).add(outcome)
    lost = [
        (network, text)
        for network, each in posts.items()
        for _, text in each
        if not recorded.get((network, text), set()) & MAY_BE_ON_X
    ]
    ids = {(network, post_id) for network, each in posts.items() for post_id, _ in each}
    phantom = [
        (network, post_id)
        for network, _, outcome, post_id in attempts
        if outcome == "posted" and (network, post_id) not in ids
    ]
    out_of_order = _out_of_order(posts["x"], replies)
    summary = (
        f"fault injection (seed {SEED}): {figures['runs']} runs, {figures['kills']} killed, {figures['faults']} "
        f"faults injected, POST_TO={post_to}{', threads' if threads else ''}: "
        + ", ".join(f"{len(each)} posts accepted by {network}" for network, each in posts.items() if each)
        + f", {doubles} doubles; {figures['broken look-up answers']} broken look-up answers scripted, "
        + f"{emulator.timeline_reads} timeline reads; history: "
        + ", ".join(f"{count} {outcome}" for outcome, count in sorted(outcomes.items()))
        + "; exits: "
        + ", ".join(f"{key.split()[1]}×{count}" for key, count in sorted(figures.items()) if key.startswith("exit"))
        + f"; {time.monotonic() - started:.0f} s"
    )
    print("\n" + summary)
    assert doubles == 0, summary
    assert lost == [], f"posts a network has that the history says were not sent there: {lost}"
    assert phantom == [], f"posts recorded as posted that the network does not have: {phantom}"
    assert out_of_order == [], f"thread parts that do not answer their part before: {out_of_order}"
    assert integrity == [("ok",)]
    assert figures["kills"] > 0 and figures["faults"] > 0, summary  # the run really injected faults
    assert "exit 1" not in figures, summary  # no crash, whatever the fault


def _out_of_order(posts: List[Tuple[str, str]], replies: Dict[str, Optional[str]]) -> List[str]:
    """The thread parts on X ("... 2/3") that do not answer their own line's part before them, and
    parts 1 that answer anything: a thread goes out in order or not at all."""
    texts = dict(posts)
    wrong: List[str] = []
    for post_id, text in posts:
        line, _, number = text.rpartition(" ")
        if not re.fullmatch(r"\d+/\d+", number):  # not a thread's part (a link has slashes too)
            continue
        part, total = number.split("/")
        parent = replies.get(post_id)
        if part == "1":
            if parent is not None:
                wrong.append(text[-40:])
            continue
        before = texts.get(parent or "", "")
        if not (before.endswith(f" {int(part) - 1}/{total}") and _line_of(before) == _line_of(text)):
            wrong.append(text[-40:])
    return wrong


def _line_of(part: str) -> str:
    """Which line a part of the thread rounds is of ("of line 7")."""
    return part.split(" of line ", 1)[1].split(" ", 1)[0] if " of line " in part else ""
