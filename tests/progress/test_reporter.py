"""The progress reporter: when it posts, what it posts, and that it survives restarts and X's failures.

Every post goes through the real tweepy client to the X API emulator; the clock is injected.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import REGISTRY, X_ONLY, by_network, credentials_for
from hypothesis import given, settings
from hypothesis import strategies as st
from reporters import make_reporter

from twitterbot.errors import ConfigError, LockHeld
from twitterbot.networks.dryrun import DryRunPoster
from twitterbot.networks.x import measure
from twitterbot.networks.x.poster import XPoster
from twitterbot.posting.scheduled import Run, RunRules, decide_and_post
from twitterbot.posting.tweets import parse_tweets
from twitterbot.progress.reporter import Cadence, Reporter
from twitterbot.progress.reports import NullReporter, Templates
from twitterbot.progress.session import JobSettings, open_reporter
from twitterbot.progress.text import check_template, fit, format_elapsed
from twitterbot.settings.loading import load_config
from twitterbot.state.store import HistoryStore

HOUR = 3600


class Clock:
    def __init__(self) -> None:
        # Fake, but started at the real time: the emulator's rate-limit reset times are real.
        self.now = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path):
    with HistoryStore(tmp_path / "history.sqlite3") as history:
        yield history


def reporter(
    store, poster, clock, *, every=6 * HOUR, milestone_every=HOUR, first_after=0, cap=20, **options
) -> Reporter:
    """A reporter whose first news posts at once (first_after=0), unless a test says otherwise."""
    return make_reporter(
        "monkey",
        posters=by_network(poster),
        store=store,
        clock=clock,
        cadence=Cadence(every, milestone_every, first_after, cap),
        **options,
    )


# -- throttling --------------------------------------------------------------------------------


def test_the_first_update_posts_then_nothing_until_the_interval_has_passed(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock)
    assert report.update("1 million keystrokes").action == "posted"
    clock.advance(hours=5, minutes=59)
    waiting = report.update("2 million keystrokes")
    assert waiting.action == "waiting"
    assert "1m" in waiting.reason  # due in one minute
    clock.advance(minutes=1)
    posted = report.tick()  # the job went quiet: its pending news still goes out when due
    assert posted.action == "posted"
    assert "interval" in posted.reason
    assert emulator.texts == ["monkey: 1 million keystrokes (0s)", "monkey: 2 million keystrokes (6h)"]


def test_a_job_that_ends_before_first_after_posts_only_its_result(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock, first_after=300)
    assert report.update("searched 1 position").action == "waiting"
    waiting = report.update("best so far 43 pegs left", milestone=True)
    assert waiting.action == "waiting" and "PROGRESS_FIRST_AFTER" in waiting.reason  # milestones too
    clock.advance(seconds=1)
    assert report.done("solved in 43 jumps").action == "posted"
    assert emulator.texts == ["monkey finished in 1s: solved in 43 jumps"]


def test_the_first_progress_post_waits_for_first_after_then_says_the_latest_news(
    store, poster, emulator, clock
) -> None:
    shown = []

    class Recorder:
        def show(self, text: str) -> None:
            shown.append(text)

    report = reporter(store, poster, clock, first_after=300, status=Recorder())
    report.update("step 1")
    assert shown[-1] == "monkey: 0 posts; next in 5m: monkey: step 1 (0s)"
    clock.advance(minutes=4)
    assert report.update("record: 'to be'", milestone=True).action == "waiting"
    clock.advance(minutes=1)
    posted = report.tick()
    assert (posted.action, posted.reason) == ("posted", "first progress post, after 5m")
    assert emulator.texts == ["monkey: record: 'to be' (5m)"]
    clock.advance(hours=1)  # after the first post, milestones and intervals as usual
    assert report.update("record: 'to be or'", milestone=True).action == "posted"


def test_a_milestone_posts_sooner_but_not_sooner_than_milestone_every(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock)
    report.update("started")
    clock.advance(minutes=30)
    assert report.update("record: 'to be'", milestone=True).action == "waiting"
    clock.advance(minutes=20)
    # Ordinary news does not push a pending milestone aside.
    assert report.update("3 million keystrokes").action == "waiting"
    clock.advance(minutes=10)
    posted = report.tick()
    assert (posted.action, posted.reason) == ("posted", "milestone")
    assert emulator.texts[-1] == "monkey: record: 'to be' (1h)"


def test_the_same_news_is_not_posted_twice(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock)
    report.update("best so far: 'to be'", best=5)
    clock.advance(hours=7)
    # The elapsed time differs, but nothing new happened: no post.
    assert report.update("best so far: 'to be'", best=5).action == "unchanged"
    assert report.update("best so far: 'to be o'", best=7).action == "posted"
    assert len(emulator.posts) == 2


def test_identical_text_is_skipped_even_when_fields_differ(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock, templates=Templates(progress="{name}: {message}"), job_fields=["count"])
    report.update("still typing", count=1)
    clock.advance(hours=7)
    assert report.update("still typing", count=2).action == "unchanged"
    assert emulator.texts == ["monkey: still typing"]


# -- the daily cap -------------------------------------------------------------------------------


def test_the_cap_is_shared_with_scheduled_posts_and_keeps_room_for_the_result(store, poster, emulator, clock) -> None:
    tweets = parse_tweets(b"Good morning\nGood night\n", Path("tweets.txt"), X_ONLY)
    how = Run(store, lambda: by_network(poster), random.Random(1), clock)
    scheduled = decide_and_post(tweets, how, RunRules(1, 3, timedelta(0), X_ONLY, known=REGISTRY.names()))
    assert scheduled.action == "posted"
    report = reporter(store, poster, clock, every=HOUR, cap=3)
    assert report.update("step 1").action == "posted"  # 2 of 3
    clock.advance(hours=2)
    capped = report.update("step 2")
    assert capped.action == "capped"  # the last slot is kept for the result
    assert "MAX_POSTS_PER_DAY=3" in capped.reason
    assert report.done("the answer is 42").action == "posted"
    assert len(emulator.posts) == 3
    # ... and the scheduled runs see the job's posts too.
    clock.advance(minutes=1)
    after = decide_and_post(tweets, how, RunRules(1, 3, timedelta(0), X_ONLY, known=REGISTRY.names()))
    assert after.action == "skipped" and "cap is reached" in after.reason


def test_a_capped_job_posts_again_when_the_window_frees_up(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock, every=HOUR, cap=2)
    report.update("step 1")
    clock.advance(hours=2)
    assert report.update("step 2").action == "capped"
    clock.advance(hours=21)
    assert report.tick().action == "waiting"  # the first post is 23 h old
    clock.advance(hours=1)
    assert report.tick().action == "posted"


# -- fitting the text ----------------------------------------------------------------------------


def test_a_long_message_is_shortened_at_a_word_and_the_rest_is_kept() -> None:
    message = " ".join(["word"] * 100) + " https://example.com/" + "x" * 50
    text = fit("{name}: {message} ({elapsed})", {"name": "job", "elapsed": "3h"}, message, X_ONLY)
    assert text is not None
    assert measure(text).length <= 280
    assert text.startswith("job: word word") and text.endswith("… (3h)")
    assert "https://example.com/x" not in text  # the link is dropped whole, never cut


def test_a_link_that_fits_is_kept_whole() -> None:
    link = "https://example.com/" + "x" * 300  # X counts any link as 23
    text = fit("{message}", {}, "see " + link + " " + "word " * 80, X_ONLY)
    assert text is not None and link in text
    assert measure(text).length <= 280


def test_wide_characters_count_double() -> None:
    text = fit("{message}", {}, "猿 " * 200, X_ONLY)
    assert text is not None and measure(text).length <= 280
    assert text.count("猿") == 93  # 93 x 2 + 92 spaces + the ellipsis
    # Text without spaces (Japanese, say) is cut between characters instead.
    unspaced = fit("{message}", {}, "猿" * 200, X_ONLY)
    assert unspaced == "猿" * 139 + "…"


_WORD = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(_WORD, max_size=120), name=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_fit_never_goes_over_280_and_cuts_only_between_words(words: list, name: str) -> None:
    message = " ".join(words)
    text = fit("{message} #{name}", {"name": name}, message, X_ONLY)
    if text is None:
        return
    assert measure(text).length <= 280
    if text.endswith(f"… #{name}") and "…" not in message:
        kept = text[: -len(f"… #{name}")].rstrip()
        assert message.startswith(kept)
        if " " in message[: len(kept) + 1]:
            # Cut at a space: what the cut word loses after `kept` is at most the punctuation
            # fit drops before the ellipsis (",;:-").
            rest_of_word = message[len(kept) :].split(" ", 1)[0]
            assert rest_of_word.strip(",;:-") == "" or kept == ""


def test_empty_fields_leave_no_dangling_punctuation() -> None:
    assert (
        fit("{name} finished in {elapsed}: {message}", {"name": "job", "elapsed": "2m"}, "", X_ONLY)
        == "job finished in 2m"
    )
    assert fit("{name}: {message} ({extra})", {"name": "job", "extra": ""}, "hi", X_ONLY) == "job: hi"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (59, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (11520, "3h12m"),
        (86400, "1d"),
        (183600, "2d3h"),
    ],
)
def test_format_elapsed(seconds: float, shown: str) -> None:
    assert format_elapsed(seconds) == shown


def test_a_template_naming_an_unknown_field_is_refused_up_front(store, clock) -> None:
    with pytest.raises(ValueError, match=r"\{percent\}"):
        check_template("{name}: {percent}%", ["name", "message"])
    with pytest.raises(ValueError, match="unnamed"):
        check_template("{}", ["name"])
    with pytest.raises(ValueError, match=r"\{best\}"):
        reporter(store, DryRunPoster(), clock, templates=Templates(progress="{best}"))


def test_control_characters_and_colour_codes_never_reach_a_post(store, poster, emulator, clock) -> None:
    reporter(store, poster, clock).update("\x1b[32mgreen\x1b[0m\tand\x07 clean\r\n")
    assert emulator.texts == ["monkey: green and clean (0s)"]


# -- threads and results -------------------------------------------------------------------------


def test_posts_of_a_run_reply_to_its_first_post(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock)
    first = report.update("started").post_id
    clock.advance(hours=6)
    report.update("halfway")
    report.done("typed 'to be'")
    assert [post.reply_to for post in emulator.posts] == [None, first, first]
    replies = [seen.body for seen in emulator.seen if seen.method == "POST"][1:]
    assert all(body["reply"] == {"in_reply_to_tweet_id": first} for body in replies)


def test_without_threads_every_post_stands_alone(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock, thread=False)
    report.update("started")
    report.done("ok")
    assert [post.reply_to for post in emulator.posts] == [None, None]


def test_the_result_and_the_failure_say_how_long_it_took(store, poster, emulator, clock, tmp_path) -> None:
    report = reporter(store, poster, clock)
    clock.advance(hours=3, minutes=12)
    report.done("typed 'to be or'")
    assert emulator.texts == ["monkey finished in 3h12m: typed 'to be or'"]
    assert report.done("again").action == "finished"
    assert len(emulator.posts) == 1
    with HistoryStore(tmp_path / "other.sqlite3") as other:
        failing = reporter(other, poster, clock)
        clock.advance(minutes=40)
        failing.failed(MemoryError("out of memory"))
    assert emulator.texts[-1] == "monkey failed after 40m: out of memory"


def test_the_context_manager_posts_the_failure_and_lets_the_exception_through(
    store, poster, emulator, clock, tmp_path
) -> None:
    with pytest.raises(ZeroDivisionError), reporter(store, poster, clock):
        1 / 0  # noqa: B018
    assert emulator.texts == ["monkey failed after 0s: ZeroDivisionError: division by zero"]
    with HistoryStore(tmp_path / "other.sqlite3") as other, reporter(other, poster, clock) as report:
        report.update("working")
        report.done("42")
    assert emulator.texts[-1] == "monkey finished in 0s: 42"


def test_ctrl_c_stops_the_run_without_posting_so_it_can_continue(store, poster, emulator, clock) -> None:
    with pytest.raises(KeyboardInterrupt), reporter(store, poster, clock) as report:
        report.update("working")
        raise KeyboardInterrupt
    assert len(emulator.posts) == 1
    assert store.open_job("monkey", at=clock()).finished_at is None


def test_a_closed_output_stops_the_run_without_posting_that_it_failed(store, poster, emulator, clock) -> None:
    """`bot.py pegs count | head`: the reader going away is the terminal's business, not the job's."""
    with pytest.raises(BrokenPipeError), reporter(store, poster, clock) as report:
        report.update("working")
        raise BrokenPipeError(32, "Broken pipe")
    assert len(emulator.posts) == 1 and "Broken" not in emulator.texts[0]
    assert store.open_job("monkey", at=clock()).finished_at is None


# -- resuming ------------------------------------------------------------------------------------


def test_a_restarted_job_continues_its_thread_without_announcing_itself_again(
    tmp_path, poster, emulator, clock
) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        first = reporter(store, poster, clock).update("started").post_id
    clock.advance(hours=1)  # a reboot
    with HistoryStore(path) as store:
        report = reporter(store, poster, clock)
        assert report.job.thread_root == first and report.job.posts == 1
        assert report.update("started again").action == "waiting"  # not due: 1 h since the last post
        clock.advance(hours=5)
        assert report.tick().action == "posted"
        report.done("finished")
    assert [post.reply_to for post in emulator.posts] == [None, first, first]
    assert emulator.texts[-1] == "monkey finished in 6h: finished"


def test_a_finished_run_never_posts_its_result_twice(tmp_path, poster, emulator, clock) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        reporter(store, poster, clock, run_key="seed-7").done("typed 'hamlet'")
    with HistoryStore(path) as store:
        again = reporter(store, poster, clock, run_key="seed-7")
        assert again.finished
        assert again.update("more").action == "finished"
        assert again.done("typed 'hamlet'").action == "finished"
        # Without a run key, the next start of the job is a new run with a new thread.
        fresh = reporter(store, poster, clock)
        assert not fresh.finished and fresh.job.id != again.job.id
    assert len(emulator.posts) == 1


def test_a_result_post_cut_off_by_a_crash_is_not_sent_again(tmp_path, emulator, clock) -> None:
    path = tmp_path / "history.sqlite3"
    emulator.fail_next("posted_then_drop")  # X posts it, the process dies before it hears back
    crashing = XPoster(credentials_for(emulator), timeout=2, retries=0, base_url=emulator.url)
    with HistoryStore(path) as store:
        report = reporter(store, crashing, clock, run_key="r1")
        job_id = report.job.id
        attempt = store.begin_job_attempt(job_id, "monkey finished in 0s: done", at=clock(), final=True, network="x")
        assert attempt  # the process is killed here, with the attempt still pending
    with HistoryStore(path) as store:
        resumed = reporter(store, crashing, clock, run_key="r1")
        assert resumed.job.final_sent
        assert resumed.done("done").action == "finished"
        assert resumed.finished
    assert emulator.posts == []


# -- X's failures never stop the job ---------------------------------------------------------------


@pytest.mark.parametrize("failure", ["server_error", "unauthorized", "credits", "rate_limit"])
def test_a_failing_api_is_logged_and_the_job_carries_on(store, emulator, clock, failure, caplog) -> None:
    no_retry = XPoster(credentials_for(emulator), timeout=2, retries=0, base_url=emulator.url)
    report = reporter(store, no_retry, clock)
    emulator.fail_next(failure)
    failed = report.update("step 1")
    assert failed.action == "failed"
    assert "the job carries on" in caplog.text
    assert report.update("step 2").action == "waiting"  # no hammering a failing API
    clock.advance(minutes=20)  # past both the retry delay and the emulator's 15-minute reset
    assert report.tick().action == "posted"
    assert emulator.texts[-1].startswith("monkey: step 2")
    assert report.done("ok").action == "posted"


def test_a_post_whose_reply_was_lost_counts_and_is_never_sent_again(store, emulator, clock) -> None:
    emulator.duplicate_check = False
    no_retry = XPoster(credentials_for(emulator), timeout=2, retries=2, base_url=emulator.url)
    report = reporter(store, no_retry, clock)
    emulator.fail_next("posted_then_drop")
    assert report.update("step 1").action == "uncertain"
    assert report.tick().action in ("idle", "waiting")  # not sent again
    assert store.posts_since(clock() - timedelta(hours=1)) == 1
    assert report.done("ok").action == "posted"
    assert emulator.texts.count(emulator.texts[0]) == 1 and len(emulator.texts) == 2


def test_a_deleted_first_post_starts_a_new_thread(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock)
    first = report.update("started").post_id
    emulator.delete(first)
    clock.advance(hours=6)
    second = report.update("halfway")
    assert second.action == "posted"
    report.done("ok")
    assert [post.reply_to for post in emulator.posts] == [None, None, second.post_id]


# -- wiring ----------------------------------------------------------------------------------------


def test_open_reporter_reads_the_settings_and_locks_the_job(tmp_path, emulator) -> None:
    env = tmp_path / ".env"
    lines = [f"{k}={v}" for k, v in emulator.env().items()]
    env.write_text(
        "\n".join([*lines, "PROGRESS_EVERY=1d", 'PROGRESS_DONE_TEMPLATE="{name} is done: {message}"']) + "\n"
    )
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert config["PROGRESS_FIRST_AFTER"] == 300  # the default: 5m
    with open_reporter("pegs", config=config, job=JobSettings(first_after=0)) as report:
        assert report._every == timedelta(days=1)
        with pytest.raises(LockHeld, match="already reporting the job 'pegs'"), open_reporter("pegs", config=config):
            pass
        report.update("level 1")
        report.done("solved")
    assert emulator.texts[-1] == "pegs is done: solved"
    assert [post.reply_to for post in emulator.posts] == [None, emulator.posts[0].id]


def test_open_reporter_names_the_settings_when_a_template_does_not_fit_the_job(tmp_path) -> None:
    env = tmp_path / ".env"
    env.write_text('PROGRESS_TEMPLATE="{name}: {percent}%"\n')
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    with pytest.raises(ConfigError, match="PROGRESS_TEMPLATE"), open_reporter("pegs", config=config, dry_run=True):
        pass


def test_a_dry_run_prints_each_post_and_keeps_no_state(tmp_path, capsys, caplog) -> None:
    config = load_config(REGISTRY, project_dir=tmp_path, environ={})
    with (
        caplog.at_level("INFO"),
        open_reporter("pegs", config=config, job=JobSettings(first_after=0), dry_run=True) as report,
    ):
        report.update("level 3: 8 positions")
    assert "dry run, would post (first progress post, after 0s)" in caplog.text
    assert "posted" not in caplog.text  # no "posted dry-run-1", as if it had been
    printed = capsys.readouterr().err
    assert "dry run, not posted" in printed and "pegs: level 3: 8 positions" in printed
    assert "(reply to dry-run-1)" in printed  # the result joins the thread
    assert not (tmp_path / "state").exists()


def test_the_null_reporter_takes_every_call() -> None:
    with NullReporter() as report:
        assert report.update("x", milestone=True, anything=1).action == "idle"
        assert report.done("y").action == "idle"


def test_text_x_already_has_is_dropped_not_retried(store, poster, emulator, clock) -> None:
    report = reporter(store, poster, clock, templates=Templates(progress="{message}"))
    emulator.fail_next("duplicate")
    assert report.update("hello again").action == "unchanged"
    clock.advance(hours=1)
    assert report.tick().action == "idle"
    assert emulator.posts == []


def test_the_status_line_says_what_the_next_post_would_say_and_when(store, poster, clock) -> None:
    shown = []

    class Recorder:
        def show(self, text: str) -> None:
            shown.append(text)

    report = reporter(store, poster, clock, status=Recorder())
    report.update("1 million keystrokes")
    assert shown[-1] == "monkey: 1 post; waiting for news"
    clock.advance(hours=2)
    report.update("2 million keystrokes")
    assert shown[-1] == "monkey: 1 post; next in 4h: monkey: 2 million keystrokes (2h)"
    report.done("ok")
    assert shown[-1] == "monkey: finished (done), 2 posts"


def test_a_job_s_lock_file_is_removed_when_the_job_ends(tmp_path) -> None:
    import io

    state = tmp_path / "state"
    config = load_config(REGISTRY, project_dir=tmp_path, environ={"BOT_STATE_DIR": str(state)})
    quiet = DryRunPoster(io.StringIO())
    for _ in range(2):  # and taken again afterwards, as a fresh file
        with open_reporter(
            "pegs count english", config=config, job=JobSettings(first_after=0), posters=by_network(quiet)
        ) as report:
            assert (state / "job-pegs-count-english.lock").is_file()
            with pytest.raises(LockHeld), open_reporter("pegs count english", config=config, posters=by_network(quiet)):
                pass
            assert (state / "job-pegs-count-english.lock").is_file()  # the refused one left it alone
            report.done("ok")
        assert not list(state.glob("*.lock"))
