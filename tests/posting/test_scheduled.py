"""A scheduled run's decisions and side effects, with an injected clock and RNG and the emulator."""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import REGISTRY, REPO, SAMPLE_TWEETS, X_ONLY, BotHome, by_network, credentials_for
from x_emulator import XEmulator

from twitterbot.networks.x.poster import XPoster
from twitterbot.posting.scheduled import MAX_DUPLICATE_TRIES, Run, RunRules, decide_and_post
from twitterbot.posting.tweets import parse_tweets
from twitterbot.state.outcomes import Ending
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def tweets(*texts: str):
    return parse_tweets("\n".join(texts).encode(), Path("tweets.txt"), X_ONLY)


def run(store, poster, file, *, clock=None, seed=0, one_in=1, cap=4, gap=timedelta(0), dry_run=False, force=False):
    posters = (lambda: by_network(poster)) if poster is not None else None
    how = Run(store, posters, random.Random(seed), clock or Clock(), dry_run=dry_run, force=force)
    return decide_and_post(file, how, RunRules(one_in, cap, gap, X_ONLY, known=REGISTRY.names()))


def test_a_hit_posts_and_records_everything(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    result = run(store, poster, tweets("only line"))
    assert result.action == "posted" and result.post_id and result.exit_status == 0
    assert emulator.texts == ["only line"]
    (record,) = store.recent_runs(5)
    assert (record.action, record.text, record.post_id, record.roll) == ("posted", "only line", result.post_id, 0)
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


def test_duplicates_are_given_up_on_after_a_bounded_budget_naming_the_line_sent(
    emulator: XEmulator, poster: XPoster
) -> None:
    store = HistoryStore(":memory:")
    lines = [f"line {n}" for n in range(MAX_DUPLICATE_TRIES + 3)]
    for text in lines:
        poster.post(text)
    before = len(emulator.seen)
    result = run(store, poster, tweets(*lines))
    assert result.action == "failed" and result.exit_status == 65
    sent = [seen.body["text"] for seen in emulator.seen[before:]]
    assert len(sent) == MAX_DUPLICATE_TRIES  # each try is a paid request: bounded
    assert result.line.text == sent[-1]  # the run names the line it really sent
    assert store.recent_runs(1)[0].text == sent[-1]
    assert result.as_dict()["text"] == sent[-1]
    assert "3 untried lines are left for the next runs" in result.reason
    assert store.used_texts() == set(sent)


@pytest.mark.parametrize("seed", range(6))
def test_duplicates_do_not_stop_a_run_while_untried_lines_remain_in_budget(
    emulator: XEmulator, poster: XPoster, seed: int
) -> None:
    store = HistoryStore(":memory:")
    on_x = [f"old {n}" for n in range(MAX_DUPLICATE_TRIES - 1)]
    for text in on_x:
        poster.post(text)
    result = run(store, poster, tweets(*on_x, "fresh"), seed=seed)
    assert result.action == "posted" and result.line.text == "fresh"
    assert emulator.texts.count("fresh") == 1


def test_every_line_on_x_says_so(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    for text in ("a", "b"):
        poster.post(text)
    result = run(store, poster, tweets("a", "b"))
    assert result.action == "failed" and "every line left in this round" in result.reason


@pytest.mark.parametrize("fault", ["posted_then_drop", "posted_then_slow"])
def test_a_post_whose_reply_was_lost_is_uncertain_counted_and_never_sent_again(emulator: XEmulator, fault: str) -> None:
    emulator.duplicate_check = False  # nothing but the history may prevent a second post
    emulator.slow_seconds = 0.8
    quick = XPoster(credentials_for(emulator), timeout=0.3, retries=2, base_url=emulator.url, sleep=lambda s: None)
    store = HistoryStore(":memory:")
    clock = Clock()
    emulator.fail_next(fault)
    result = run(store, quick, tweets("lost reply", "other"), seed=0, clock=clock, cap=2)
    assert result.action == "uncertain" and result.exit_status == 75
    text = result.line.text
    assert "counts as posted" in result.reason and "https://x.com/intent/user?user_id=12345" in result.reason
    assert result.as_dict()["check_url"] == "https://x.com/intent/user?user_id=12345"
    assert store.recent_runs(1)[0].action == "uncertain"
    assert store.used_texts() == {text}
    assert store.posts_since(NOW - timedelta(hours=1)) == 1  # it counts against MAX_POSTS_PER_DAY

    clock.now += timedelta(hours=2)
    emulator.release.wait(1.0)  # let a slow reply finish before the next run
    following = run(store, quick, tweets("lost reply", "other"), seed=0, clock=clock, cap=2)
    assert following.action == "posted" and following.line.text != text
    assert sorted(emulator.texts) == ["lost reply", "other"]  # zero doubles
    clock.now += timedelta(hours=2)
    assert run(store, quick, tweets("lost reply", "other"), clock=clock, cap=2).action == "skipped"  # cap of 2


def test_posts_dated_in_the_future_do_not_block_posting_and_the_jump_is_warned_once(
    emulator: XEmulator, poster: XPoster, caplog
) -> None:
    store = HistoryStore(":memory:")
    ahead = Clock()
    ahead.now = NOW + timedelta(days=365)  # the clock was a year ahead
    for hour in range(2):
        ahead.now += timedelta(hours=hour)
        assert run(store, poster, tweets("a", "b", "c"), clock=ahead, cap=2, gap=timedelta(hours=1)).action == "posted"
    fixed = Clock()  # someone fixed the clock
    with caplog.at_level(logging.WARNING):
        result = run(store, poster, tweets("a", "b", "c"), clock=fixed, cap=2, gap=timedelta(hours=1))
    assert result.action == "posted", result.reason
    assert caplog.text.count("clock seems to have jumped") == 1
    caplog.clear()
    fixed.now += timedelta(hours=2)
    with caplog.at_level(logging.WARNING):
        run(store, poster, tweets("a", "b", "c"), clock=fixed, cap=2, gap=timedelta(hours=1))
    assert "clock seems to have jumped" not in caplog.text  # warned once, not every run


def test_min_post_gap_keeps_two_runs_close_together_from_both_posting(
    emulator: XEmulator, poster: XPoster, caplog
) -> None:
    store = HistoryStore(":memory:")
    clock = Clock()
    gap = timedelta(hours=1)
    assert run(store, poster, tweets("a", "b", "c"), clock=clock, gap=gap).action == "posted"
    clock.now += timedelta(seconds=1)  # a second crontab line fired at the same minute
    second = run(store, poster, tweets("a", "b", "c"), clock=clock, gap=gap)
    next_at = (NOW + gap).astimezone()
    assert second.action == "skipped" and "MIN_POST_GAP=1h" in second.reason and f"{next_at:%H:%M}" in second.reason
    dry = run(store, None, tweets("a", "b", "c"), clock=clock, gap=gap, dry_run=True)
    assert dry.action == "skipped"  # a dry run decides the same
    with caplog.at_level(logging.WARNING):
        forced = run(store, poster, tweets("a", "b", "c"), clock=clock, gap=gap, force=True)
    assert forced.action == "posted" and "--force: posting although" in caplog.text
    clock.now += timedelta(hours=1)
    assert run(store, poster, tweets("a", "b", "c"), clock=clock, gap=gap).action == "posted"
    assert len(emulator.texts) == 3


def test_progress_posts_do_not_count_for_the_gap(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    job = store.open_job("watch", at=NOW)
    attempt = store.begin_job_attempt(job.id, "watch: step 1", at=NOW, final=False, network="x")
    store.record_job_post(job.id, attempt, Ending("posted", NOW, post_id="1", detail=None), "step 1")
    result = run(store, poster, tweets("a"), gap=timedelta(hours=1), cap=2)
    assert result.action == "posted"


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
    store.begin_attempt("maybe posted", run_id=run_id, at=NOW, network="x")  # and then the power went out
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
    from twitterbot.state.folder import MIN_FREE_BYTES

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

    name = "x"

    def __init__(self, store: HistoryStore) -> None:
        self.store = store
        self.texts: list = []

    def post(self, text: str, options=None):
        from twitterbot.networks import PostResult

        self.texts.append(text)
        pages = self.store._conn.execute("PRAGMA page_count").fetchone()[0]
        self.store._conn.execute(f"PRAGMA max_page_count = {pages}")
        return PostResult(text, post_id="1" * 20_000)  # needs new pages to record


class Accepts:
    name = "x"

    def post(self, text: str, options=None):
        from twitterbot.networks import PostResult

        return PostResult(text, post_id="2")


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


# -- a run reads and measures only what it needs -----------------------------------------------------


def test_a_run_the_roll_skips_reads_no_tweets_file_and_a_hit_still_checks_it(tmp_path: Path) -> None:
    from twitterbot.errors import TweetFileError
    from twitterbot.posting.scheduled import run_once
    from twitterbot.settings.loading import load_config

    missing = tmp_path / "no such tweets.txt"
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"TWEETS_FILE": str(missing), "BOT_STATE_DIR": str(tmp_path / "state"), "TWEET_ONE_IN": "4"},
    )
    skip_seed = next(s for s in range(100) if random.Random(s).randrange(4) != 0)
    hit_seed = next(s for s in range(100) if random.Random(s).randrange(4) == 0)
    skipped = run_once(config, posters=None, rng=random.Random(skip_seed), dry_run=True)
    assert skipped.action == "skipped" and skipped.roll == random.Random(skip_seed).randrange(4)  # the same roll
    with pytest.raises(TweetFileError, match="does not exist"):
        run_once(config, posters=None, rng=random.Random(hit_seed), dry_run=True)
    with pytest.raises(TweetFileError, match="does not exist"):
        run_once(config, posters=None, rng=random.Random(skip_seed), dry_run=True, force=True)
    with HistoryStore(config.state.history) as store:
        assert [run.action for run in store.recent_runs(5)] == ["skipped"]  # a failed load records no run


_LOADED = (
    "import sys\n"
    "seen = set()\n"  # every module imported, even one let go again (twitter-text is, once measuring is done)
    "sys.addaudithook(lambda event, args: event == 'import' and seen.add(args[0]))\n"
    "from twitterbot.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "names = ('twitter_text', 'tweepy', 'twitterbot.unattended.daemon', 'twitterbot.progress.reporter',\n"
    "         'twitterbot.jobs.pegs.board', 'twitterbot.jobs.monkey.job', 'numpy', '_strptime',\n"
    "         'twitterbot.delivery.settle', 'twitterbot.monitoring.monitor', 'twitterbot.monitoring.stall',\n"
    "         'twitterbot.posting.monitored', 'twitterbot.delivery.budget', 'urllib.request')\n"
    "print('loaded:', ' '.join(name for name in names if name in seen))\n"
    "sys.exit(status)\n"
)


def _loads(home: BotHome, *args: str) -> str:
    """Run the command line in a fresh Python and say which of twitter-text, tweepy and the other
    commands' modules it imported (every part's capability is declared in a light module, which
    the registry imports; their code is not)."""
    result = subprocess.run(
        [sys.executable, "-c", _LOADED, "--env-file", str(home.env_file), *args],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home.path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


# What HEALTHCHECK_URL, NOTIFY_URL and X_MONTHLY_BUDGET bring: a run without them imports none of it.
_MONITORING = (
    "twitterbot.monitoring.monitor",
    "twitterbot.monitoring.stall",
    "twitterbot.posting.monitored",
    "twitterbot.delivery.budget",
)


def test_a_run_without_monitors_or_a_budget_imports_nothing_of_them(home: BotHome, emulator: XEmulator) -> None:
    skip_seed = next(s for s in range(100) if random.Random(s).randrange(1000) != 0)
    skipped = _loads(home, "--one-in", "1000", "--seed", str(skip_seed), "-q").split()
    posted = _loads(home, "--force", "-q").split()
    assert not [name for name in _MONITORING if name in skipped + posted]  # only the capability, twitterbot.monitoring
    assert "urllib.request" not in skipped  # no HTTP client at all on a skip
    home.write_env(X_MONTHLY_BUDGET="5")
    assert "twitterbot.delivery.budget" in _loads(home, "--force", "-q").split()  # the assertion can fail
    assert len(emulator.texts) == 2


def test_twitter_text_is_loaded_only_for_lines_it_has_not_measured(home: BotHome, emulator: XEmulator) -> None:
    skip_seed = next(s for s in range(100) if random.Random(s).randrange(1000) != 0)
    skipped = _loads(home, "--one-in", "1000", "--seed", str(skip_seed), "-q")
    assert "twitter_text" not in skipped  # a skip measures nothing
    assert "daemon" not in skipped and "progress" not in skipped and "jobs" not in skipped  # nor imports the rest
    assert "numpy" not in skipped
    assert "settle" not in skipped  # nothing uncertain: nothing looked up, nothing more imported
    assert "twitter_text" in _loads(home, "--dry-run", "--force")  # the first run measures every line
    assert "twitter_text" not in _loads(home, "--dry-run", "--force")
    posted = _loads(home, "--force")
    assert "twitter_text" not in posted  # a real post too
    assert "_strptime" not in skipped + posted  # its first strptime costs 10 ms: history times parse without it
    assert len(emulator.texts) == 1
    home.write_tweets(SAMPLE_TWEETS + "A new line with a link: example.com\n")
    assert "twitter_text" in _loads(home, "--dry-run", "--force")
    assert "twitter_text" not in _loads(home, "--dry-run", "--force")
    home.write_tweets("A new line with a link: example.com\n")
    report = json.loads(home.run("--dry-run", "--force", "--json").stdout)
    assert (report["weighted_length"], report["has_url"]) == (47, True)  # as X counts it (a URL is 23), from the cache


def test_a_real_run_whose_posters_cover_none_of_its_networks_is_a_bug_not_a_duplicate() -> None:
    """Posters that stand for none of POST_TO's networks are the composition's mistake: the run
    says so (exit 1 at the boundary) before it touches the round, never "X already has it"."""
    store = HistoryStore(":memory:")
    how = Run(store, lambda: {}, random.Random(0), Clock())
    with pytest.raises(ValueError, match="needs posters"):
        decide_and_post(tweets("First post", "Second post"), how, RunRules(1, 4, timedelta(0), X_ONLY))
    assert store.used_texts() == set()
