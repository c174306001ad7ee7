"""A scheduled run's decisions and side effects, with an injected clock and RNG and the emulator."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from x_emulator import XEmulator

from twitterbot.history import HistoryStore
from twitterbot.posters import XPoster
from twitterbot.scheduled import MAX_DUPLICATE_SKIPS, decide_and_post
from twitterbot.tweets import parse_tweets

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def tweets(*texts: str):
    return parse_tweets("\n".join(texts).encode(), Path("tweets.txt"))


def run(store, poster, file, *, clock=None, seed=0, one_in=1, cap=4, dry_run=False, force=False):
    return decide_and_post(
        file,
        store=store,
        poster=poster,
        rng=random.Random(seed),
        clock=clock or Clock(),
        one_in=one_in,
        max_posts_per_day=cap,
        dry_run=dry_run,
        force=force,
    )


def test_a_hit_posts_and_records_everything(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    result = run(store, poster, tweets("only line"))
    assert result.action == "posted" and result.tweet_id and result.exit_status == 0
    assert emulator.texts == ["only line"]
    (record,) = store.recent_runs(5)
    assert (record.action, record.text, record.tweet_id, record.roll) == ("posted", "only line", result.tweet_id, 0)
    assert store.used_texts() == {"only line"}


def test_a_miss_posts_nothing(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    seed = next(s for s in range(100) if random.Random(s).randrange(4) != 0)
    result = run(store, poster, tweets("a", "b"), one_in=4, seed=seed)
    assert result.action == "skipped" and "posts on 0 of 1-in-4" in result.reason
    assert emulator.seen == [] and store.recent_runs(1)[0].action == "skipped"


def test_force_skips_the_roll_but_not_the_cap(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    clock = Clock()
    for _ in range(2):
        assert run(store, poster, tweets("a", "b", "c"), one_in=1000, force=True, cap=2, clock=clock).action == "posted"
        clock.now += timedelta(hours=1)
    capped = run(store, poster, tweets("a", "b", "c"), force=True, cap=2, clock=clock)
    assert capped.action == "skipped" and "MAX_POSTS_PER_DAY=2" in capped.reason
    assert len(emulator.texts) == 2
    clock.now = NOW + timedelta(hours=24, minutes=1)  # the first post has left the 24-hour window
    assert run(store, poster, tweets("a", "b", "c"), force=True, cap=2, clock=clock).action == "posted"


def test_no_repeats_until_every_line_has_been_posted(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    clock = Clock()
    file = tweets("one", "two", "three", "four")
    posted = []
    for seed in range(8):
        emulator.posts.clear()  # let X accept repeats, so only the bag prevents them
        result = run(store, poster, file, seed=seed, clock=clock, cap=100)
        posted.append(result.line.text)
        clock.now += timedelta(hours=6)
    assert sorted(posted[:4]) == ["four", "one", "three", "two"]
    assert sorted(posted[4:]) == ["four", "one", "three", "two"]
    assert posted[4] != posted[3]  # a new round does not start with the line posted last


def test_a_dry_run_decides_the_same_and_changes_no_bag(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("a", "b", "c")
    dry = run(store, None, file, seed=5, dry_run=True)
    assert dry.action == "would_post" and emulator.seen == []
    assert store.used_texts() == set() and store.recent_runs(1)[0].dry_run
    real = run(store, poster, file, seed=5)
    assert real.line == dry.line  # faithful: the same seed picks the same line


def test_a_duplicate_marks_the_line_used_and_picks_another(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    poster.post("already on X")
    result = run(store, poster, tweets("already on X", "fresh"), seed=1)
    assert result.action == "posted" and result.line.text == "fresh"
    assert store.used_texts() == {"already on X", "fresh"}
    assert store.posts_since(NOW - timedelta(hours=1)) == 1  # the duplicate is not counted


def test_duplicates_are_given_up_on_after_a_bounded_number_of_tries(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    lines = [f"line {n}" for n in range(MAX_DUPLICATE_SKIPS + 3)]
    for text in lines:
        poster.post(text)
    before = len(emulator.seen)
    result = run(store, poster, tweets(*lines))
    assert result.action == "failed" and result.exit_status == 65
    assert len(emulator.seen) - before == MAX_DUPLICATE_SKIPS + 1


@pytest.mark.parametrize("failure", ["unauthorized", "read_only", "credits", "rate_limit"])
def test_a_failed_post_is_recorded_and_the_line_stays_in_the_round(
    emulator: XEmulator, poster: XPoster, failure
) -> None:
    store = HistoryStore(":memory:")
    emulator.fail_next(failure)
    result = run(store, poster, tweets("hello"))
    assert result.action == "failed" and result.exit_status != 0
    assert store.recent_runs(1)[0].action == "failed"
    assert store.used_texts() == set()
    assert store.posts_since(NOW - timedelta(hours=1)) == 0


def test_a_run_that_died_mid_post_is_not_posted_again(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    run_id = store.begin_run(at=NOW, one_in=1, roll=0, forced=False, dry_run=False)
    store.begin_attempt("maybe posted", run_id=run_id, at=NOW)  # and then the power went out
    result = run(store, poster, tweets("maybe posted", "other"), cap=2)
    assert result.line.text == "other"
    assert emulator.texts == ["other"]
    assert store.posts_since(NOW - timedelta(hours=1)) == 2


# -- a full disk ----------------------------------------------------------------------------------


class Statvfs:
    """A filesystem with `free` bytes left, as os.statvfs reports it."""

    def __init__(self, free: int) -> None:
        self.free = free

    def __call__(self, path: str):
        from types import SimpleNamespace

        return SimpleNamespace(f_bavail=self.free // 4096, f_frsize=4096, f_flag=0)


def test_a_nearly_full_disk_stops_the_run_before_it_posts(tmp_path: Path, emulator: XEmulator, poster) -> None:
    from twitterbot.errors import StateError
    from twitterbot.history import MIN_FREE_BYTES

    store = HistoryStore(tmp_path / "history.sqlite3", statvfs=Statvfs(MIN_FREE_BYTES // 2))
    with pytest.raises(StateError, match=r"not posting: the disk holding .* has 512 KiB free") as raised:
        run(store, poster, tweets("a line"), force=True)
    assert raised.value.exit_status == 73
    assert emulator.seen == []
    (record,) = store.recent_runs(1)
    assert record.action == "failed" and "not posting" in record.reason
    store._statvfs = Statvfs(MIN_FREE_BYTES)
    assert run(store, poster, tweets("a line"), force=True).action == "posted"


class PostsThenTheDiskFills:
    """X takes the post; while it does, the disk fills up (SQLite's page limit stands in for it)."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store
        self.texts: list = []

    def post(self, text: str, reply_to=None):
        from twitterbot.posters import PostResult

        self.texts.append(text)
        pages = self.store._conn.execute("PRAGMA page_count").fetchone()[0]
        self.store._conn.execute(f"PRAGMA max_page_count = {pages}")
        return PostResult(text, tweet_id="1" * 20_000)  # needs new pages to record


class Accepts:
    def post(self, text: str, reply_to=None):
        from twitterbot.posters import PostResult

        return PostResult(text, tweet_id="2")


def test_a_disk_that_fills_while_posting_is_named_and_the_post_is_never_sent_again(tmp_path: Path) -> None:
    from twitterbot.errors import StateError

    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    poster = PostsThenTheDiskFills(store)
    with pytest.raises(StateError, match="the disk holding .* is full.*the history is intact, keep it") as raised:
        run(store, poster, tweets("alpha", "beta"), force=True)
    assert "damaged" not in str(raised.value) and "move it aside" not in str(raised.value)
    assert raised.value.exit_status == 73
    store.close()
    # Space is back: the next run counts the unrecorded post as posted and sends the other line.
    with HistoryStore(path) as store:
        result = run(store, Accepts(), tweets("alpha", "beta"), force=True)
        assert result.action == "posted" and result.line.text != poster.texts[0]
        assert store.posts_since(NOW - timedelta(hours=1)) == 2
