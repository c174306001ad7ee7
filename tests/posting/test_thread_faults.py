"""A thread under the faults a Pi meets: a kill or a power cut while a part is sent, a lost
answer, the daemon's SIGTERM between parts, a part refused as a duplicate, the day's cap and the
monthly budget. Each part is an attempt like any other (its own text, price and look-up), so a
thread goes out in order, each part answering the one before, or not at all: never a part twice,
never an orphan part, never more parts than the cap allows. Through tweepy against the X emulator.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from typing import List, Tuple

import pytest
from conftest import A_DAEMON_OF_THIS_CHECKOUT, BotHome
from x_emulator import XEmulator

from twitterbot.delivery.threads import parts_for
from twitterbot.networks.x import NETWORK as X
from twitterbot.networks.x import PRICES
from twitterbot.state.outcomes import AttemptStart
from twitterbot.state.store import HistoryStore

SENTENCE = "This sentence is one of several that make a line too long for a single post on X. "
LONG = (SENTENCE * 8).strip()  # about 660 characters: three parts of at most 280


def _rows(home: BotHome) -> List[Tuple[str, int, str]]:
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        rows = conn.execute("SELECT outcome, part, sent_text FROM attempts ORDER BY id").fetchall()
    conn.close()
    return rows


def _in_order(emulator: XEmulator) -> None:
    """Every post of the thread answers the one before it, and no text went twice."""
    posts = emulator.posts
    assert posts[0].reply_to is None
    assert [post.reply_to for post in posts[1:]] == [post.id for post in posts[:-1]]
    assert len({post.text for post in posts}) == len(posts)


def _killed_while_sending_part_1(home: BotHome) -> List[str]:
    """The history a run leaves when it is killed (a power cut) after recording part 1 of a
    thread and before recording X's answer: part 1 pending. Returns the parts as cut."""
    parts = parts_for(LONG, X, True)
    with HistoryStore(home.path / "state" / "history.sqlite3") as store:
        now = datetime.now(timezone.utc) - timedelta(minutes=20)  # a look-up that finds nothing then settles it
        run = store.begin_run(at=now, one_in=1, roll=1, forced=True, dry_run=False)
        store.begin_thread(LONG, parts, AttemptStart("x", now, run, cost=PRICES.post))
    return parts


def _thread_home(home: BotHome, **settings: str) -> None:
    home.write_env(LONG_LINES="thread", THREAD_NUMBERS="yes", MIN_POST_GAP="0", **settings)
    home.write_tweets(LONG + "\n")
    (home.path / "state").mkdir(exist_ok=True)


def test_a_power_cut_while_part_1_was_sent_is_looked_up_and_the_thread_goes_on_in_order(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="3")
    parts = _killed_while_sending_part_1(home)
    home.emulator._create(parts[0], None)  # the request reached X before the power went
    result = home.run("--json")
    assert result.returncode == 0, result.stderr
    assert home.emulator.texts == parts  # part 1 found by its own text, never sent again
    _in_order(home.emulator)  # parts 2 and 3 answer it: no orphan chain
    assert [row[:2] for row in _rows(home)] == [("posted", 1), ("posted", 2), ("posted", 3)]


def test_a_power_cut_before_part_1_reached_x_ends_the_thread_and_the_line_comes_round_again(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="3", TWEET_ONE_IN="1000000")  # the roll skips: only settling happens
    _killed_while_sending_part_1(home)
    result = home.run("--json")
    assert result.returncode == 0, result.stderr
    assert home.emulator.posts == []  # no part 2 or 3 without their part 1
    assert [row[:2] for row in _rows(home)] == [("failed", 1)]
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        (stopped,) = conn.execute("SELECT stopped FROM threads").fetchone()
        bag = conn.execute("SELECT count(*) FROM bag").fetchone()[0]
    assert stopped and "part 1" in stopped and bag == 0  # the line is back in the round
    again = home.run("--force", "--json")  # a later run sends it as a new, whole thread
    assert again.returncode == 0, again.stderr
    assert len(home.emulator.posts) == 3
    _in_order(home.emulator)


def test_a_part_whose_answer_was_lost_waits_for_its_look_up_and_is_never_sent_twice(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="3", LOOK_UP_UNCERTAIN="no")
    home.emulator.fail_next("ok", "posted_then_drop")  # part 2 is made; its answer is lost
    first = home.run("--force", "--json")
    assert first.returncode in (0, 75), first.stderr
    second = home.run("--json")  # nothing may look part 2 up: part 3 waits rather than answer part 1
    assert second.returncode == 0, second.stderr
    assert [post.text[-3:] for post in home.emulator.posts] == ["1/3", "2/3"]
    assert "waits until a later run has looked it up" in second.stderr
    home.write_env(LOOK_UP_UNCERTAIN="yes")
    third = home.run("--json")  # look-ups on again: part 2 is found by its own text, part 3 answers it
    assert third.returncode == 0, third.stderr
    assert [post.text[-3:] for post in home.emulator.posts] == ["1/3", "2/3", "3/3"]
    _in_order(home.emulator)


def test_a_part_1_refused_as_a_duplicate_ends_the_thread(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="3")
    home.emulator.fail_next("duplicate")
    first = home.run("--force", "--json")
    assert first.returncode in (0, 65), first.stderr
    home.write_env(TWEET_ONE_IN="1000000")  # later runs only go on with what earlier runs left
    for _ in range(2):  # they never send its next parts alone
        assert home.run("--json").returncode == 0
    assert home.emulator.posts == []
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        stopped = [row[0] for row in conn.execute("SELECT stopped FROM threads")]
    conn.close()
    assert stopped and all("part 1 duplicate" in each for each in stopped)


def test_a_thread_never_has_more_parts_than_the_day_s_cap(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="2")
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["action"] == "skipped" and "a thread of 3 posts, more than MAX_POSTS_PER_DAY=2" in run["reason"]
    assert home.emulator.posts == []
    check = home.run("check")
    assert "more than MAX_POSTS_PER_DAY=2 allows in 24 hours, it is not posted there" in check.stdout + check.stderr
    dry = home.run("--dry-run", "--force")
    assert "more than MAX_POSTS_PER_DAY=2" in dry.stderr


def test_a_100_kb_line_is_not_cut_into_hundreds_of_parts(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="1000")
    home.write_tweets(" ".join(["word"] * 20_000) + "\n")  # 100 KB: about 360 parts on X
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    assert "a thread of more than 25 posts, the most a thread may have" in json.loads(result.stdout)["reason"]
    assert home.emulator.posts == []


def test_a_thread_waits_for_room_the_cap_leaves_and_each_part_counts(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="4")
    home.write_tweets(LONG + "\nA short line.\nAnother short line.\n")
    for text in ("A short line.", "Another short line."):  # two posts today already
        with HistoryStore(home.path / "state" / "history.sqlite3") as store:
            now = datetime.now(timezone.utc)
            attempt = store.begin_attempt(text, run_id=None, at=now, network="x")
            from twitterbot.state.outcomes import Ending

            store.finish_attempt(attempt, Ending("posted", now, post_id=str(len(text)), mark_used=True))
    result = home.run("--force", "--json")  # the long line is all that is left: 3 parts, room for 2
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["action"] == "skipped" and "leaves room for 2 more" in run["reason"], run
    assert home.emulator.posts == []
    with HistoryStore(home.path / "state" / "history.sqlite3") as store:
        assert store.posts_since(datetime(2000, 1, 1, tzinfo=timezone.utc)) == 2


def test_a_thread_counts_its_parts_against_the_cap(home: BotHome) -> None:
    _thread_home(home, MAX_POSTS_PER_DAY="4")
    home.write_tweets(LONG + "\nA short line.\n")
    home.run("--force")
    home.run("--force")
    texts = home.emulator.texts
    assert len(texts) == 4  # the thread's 3 posts and the short line, in either order
    third = home.run("--force", "--json")  # 4 posts in 24 hours: the cap holds even a forced run
    assert json.loads(third.stdout)["action"] == "skipped" and len(home.emulator.posts) == 4


def test_a_thread_is_held_to_the_budget_by_its_parts_prices(home: BotHome) -> None:
    # Part 1 holds the link (about $0.20), parts 2 and 3 do not ($0.015 each): $0.23 in all, where
    # pricing every part as the whole line (with its link) would make it $0.60.
    line = "See example.com for more. " + LONG
    _thread_home(home, MAX_POSTS_PER_DAY="4", X_MONTHLY_BUDGET="0.30")
    home.write_tweets(line + "\n")
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    assert len(home.emulator.posts) == 3
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        costs = [row[0] for row in conn.execute("SELECT cost FROM attempts ORDER BY id")]
    conn.close()
    assert costs == pytest.approx([PRICES.post_with_url, PRICES.post, PRICES.post])


@A_DAEMON_OF_THIS_CHECKOUT
def test_sigterm_to_the_daemon_mid_thread_stops_between_parts_and_the_next_run_goes_on(
    home: BotHome, emulator: XEmulator
) -> None:
    """`systemctl stop` while the daemon sends a thread: the part in flight is finished and
    recorded, the daemon stops at once (well inside the unit's TimeoutStopSec), and the next run
    sends the rest in order."""
    now = datetime.now(timezone.utc)
    when = (now + timedelta(seconds=3)).strftime("%H:%M:%S")
    _thread_home(home, MAX_POSTS_PER_DAY="3", TWEET_TIMES=when, TWEET_TIMEZONE="UTC")
    emulator.slow_seconds = 1.5
    emulator.fail_next("slow")  # part 1 is in flight when the stop comes
    process = home.start("daemon")
    try:
        assert emulator.received.wait(60), "the daemon did not post"
        process.send_signal(signal.SIGTERM)
        stopped_at = time.monotonic()
        process.wait(30)
        took = time.monotonic() - stopped_at
    finally:
        process.kill()
    _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert took < 10, took  # not after the whole thread
    assert [post.text[-3:] for post in emulator.posts] == ["1/3"], stderr
    assert "asked to stop: part 2 of the thread and the rest are left for the next run" in stderr
    assert [row[:2] for row in _rows(home)] == [("posted", 1)]
    result = home.run("--json")
    assert result.returncode == 0, result.stderr
    assert [post.text[-3:] for post in emulator.posts] == ["1/3", "2/3", "3/3"]
    _in_order(emulator)
