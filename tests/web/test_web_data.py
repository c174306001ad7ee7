"""The status page's facts without a server: the read-only snapshot (`web.data`), where the next
run comes from (`web.nextrun`) and the links (`web.links`), over real SQLite files."""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, Optional, Sequence

import hypothesis
import pytest
from conftest import REGISTRY
from hypothesis import strategies as st

from twitterbot.networks.x import PRICES
from twitterbot.settings.loading import load_config
from twitterbot.state.outcomes import Ending
from twitterbot.state.schema import APPLICATION_ID
from twitterbot.state.store import HistoryStore
from twitterbot.web.app import create_app
from twitterbot.web.data import read_status
from twitterbot.web.jobs import JobPicture
from twitterbot.web.links import check_url, post_url, safe_href
from twitterbot.web.nextrun import NextRun, _cron_field, next_run, next_time

NOW = datetime(2026, 3, 10, 9, 30, tzinfo=timezone.utc)
UTC_TIMES = ("00:00", "06:00", "12:00", "18:00")


def settings(tmp_path: Path, **values: str):
    env = tmp_path / ".env"
    lines = {
        "TWEETS_FILE": str(tmp_path / "tweets.txt"),
        "BOT_STATE_DIR": str(tmp_path / "state"),
        "TWEET_TIMEZONE": "UTC",
    }
    lines.update(values)
    env.write_text("".join(f"{name}={value}\n" for name, value in lines.items()))
    if not (tmp_path / "tweets.txt").exists():
        (tmp_path / "tweets.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "state").mkdir(exist_ok=True)
    return load_config(REGISTRY, project_dir=None, env_file=env, environ={})


def fixed(config, *, now: datetime) -> NextRun:
    return NextRun(None, "settings", "fixed")


def post(store: HistoryStore, text: str, at: datetime, outcome: str = "posted", job: bool = False) -> None:
    run_id = None if job else store.begin_run(at=at, one_in=1, roll=0, forced=False, dry_run=False)
    attempt = store.begin_attempt(text, run_id=run_id, at=at, network="x")
    post_id = "1" + str(int(at.timestamp())) if outcome == "posted" else None
    store.finish_attempt(attempt, Ending(outcome, at, post_id=post_id, mark_used=outcome in ("posted", "uncertain")))
    if run_id:
        store.finish_run(run_id, at=at, action=outcome, text=text, post_id=post_id)


def test_the_cap_counts_24_hours_and_says_when_the_next_post_may_go(tmp_path: Path) -> None:
    config = settings(tmp_path, MAX_POSTS_PER_DAY="2", MIN_POST_GAP="0")
    with HistoryStore(config.state.history) as store:
        post(store, "one", NOW - timedelta(hours=30))  # out of the window
        post(store, "two", NOW - timedelta(hours=20))
        post(store, "three", NOW - timedelta(hours=2), outcome="uncertain")  # counts as posted
        post(store, "one", NOW - timedelta(hours=1), outcome="failed")  # does not
    status = read_status(config, now=NOW, probe=fixed)
    assert (status.cap.posts, status.cap.limit) == (2, 2)
    assert status.cap.next_allowed == NOW - timedelta(hours=20) + timedelta(hours=24)
    assert "MAX_POSTS_PER_DAY=2" in status.cap.why
    assert (status.bag.left, status.bag.total) == (0, 3)  # a failure does not put a posted line back


def test_the_gap_delays_the_next_post(tmp_path: Path) -> None:
    config = settings(tmp_path, MIN_POST_GAP="3h")
    with HistoryStore(config.state.history) as store:
        post(store, "one", NOW - timedelta(hours=1))
    status = read_status(config, now=NOW, probe=fixed)
    assert status.cap.next_allowed == NOW + timedelta(hours=2) and "MIN_POST_GAP" in status.cap.why


def test_reading_changes_nothing_and_makes_no_file(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with HistoryStore(config.state.history) as store:
        post(store, "one", NOW - timedelta(hours=1))
    before = {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in (tmp_path / "state").iterdir()}
    for _ in range(3):
        read_status(config, now=NOW, probe=fixed)
    after = {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in (tmp_path / "state").iterdir()}
    assert after == before


def test_a_run_holding_the_write_lock_only_delays_the_page(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with HistoryStore(config.state.history) as store:
        post(store, "one", NOW - timedelta(hours=1))
    writer = sqlite3.connect(config.state.history)
    writer.execute("BEGIN IMMEDIATE")  # a run between its attempt and its commit
    writer.execute("INSERT INTO bag (text, used_at) VALUES ('two', 'x')")
    try:
        status = read_status(config, now=NOW, probe=fixed)
    finally:
        writer.rollback()
        writer.close()
    assert status.history_problem is None and status.cap.posts == 1


def test_uncertain_posts_failures_and_refused_keys_need_attention_most_urgent_first(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with HistoryStore(config.state.history) as store:
        post(store, "maybe", NOW - timedelta(hours=3), outcome="uncertain")
        run_id = store.begin_run(at=NOW - timedelta(hours=1), one_in=1, roll=0, forced=False, dry_run=False)
        attempt = store.begin_attempt("refused", run_id=run_id, at=NOW - timedelta(hours=1), network="x")
        refusal = "X rejected the keys (401 Unauthorized): check TWITTER_API_KEY"
        store.finish_attempt(
            attempt, Ending("failed", NOW - timedelta(hours=1), detail=refusal, error_kind="unauthorized")
        )
        store.finish_run(run_id, at=NOW - timedelta(hours=1), action="failed", reason=refusal, text="refused")
        post(store, "long ago", NOW - timedelta(days=9), outcome="uncertain")  # older than a week: not listed
    (tmp_path / "tweets.txt").write_text("one\n" + "x" * 400 + "\n")
    status = read_status(config, now=NOW, probe=fixed)
    kinds = [item.kind for item in status.attention]
    assert kinds == ["keys", "keys", "uncertain", "tweets_file"]  # keys not set, keys refused (the failed run is that)
    uncertain = status.attention[2]
    assert "maybe" in uncertain.title and uncertain.link == "https://x.com/home"  # no access token: X's home
    assert "line 2" in status.attention[3].title


def test_jobs_show_their_state_and_thread(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with HistoryStore(config.state.history) as store:
        job = store.open_job("watch make", at=NOW - timedelta(hours=2))
        attempt = store.begin_job_attempt(
            job.id, "watch make: 10%", at=NOW - timedelta(hours=1), final=False, network="x"
        )
        store.record_job_post(
            job.id, attempt, Ending("posted", NOW - timedelta(hours=1), post_id="77", detail=None), "10%"
        )
        finished = store.open_job("pegs", at=NOW - timedelta(days=1))
        store.finish_job(finished.id, "failed", at=NOW - timedelta(hours=20))
    status = read_status(
        config,
        now=NOW,
        probe=fixed,
        picture_for=lambda job: JobPicture("/pictures/1.png", "a board") if job.name == "pegs" else None,
    )
    jobs = {job.name: job for job in status.jobs}
    assert jobs["watch make"].state == "stopped"  # unfinished, and no process holds its lock
    assert jobs["watch make"].threads == (("X", "https://x.com/i/status/77"),)
    assert jobs["watch make"].last_text == "watch make: 10%"
    assert jobs["pegs"].state == "failed" and jobs["pegs"].picture == "/pictures/1.png"
    assert jobs["pegs"].picture_alt == "a board" and jobs["watch make"].picture is None
    assert {item.title for item in status.attention if item.kind == "job"} == {
        "Job 'watch make' stopped",
        "Job 'pegs' failed",
    }


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no history yet"),
        (b"", "is empty (0 bytes)"),
        (b"garbage" * 1000, "is damaged"),
    ],
)
def test_a_missing_or_damaged_history_is_a_sentence(tmp_path: Path, content: Optional[bytes], words: str) -> None:
    config = settings(tmp_path)
    if content is not None:
        config.state.history.write_bytes(content)
    status = read_status(config, now=NOW, probe=fixed)
    assert words in status.history_problem and status.runs == () and status.cap is None
    assert status.as_dict()["history_problem"] == status.history_problem


def test_a_missing_history_says_the_bot_has_not_run_yet_never_all_well(tmp_path: Path) -> None:
    config = settings(tmp_path)
    status = read_status(config, now=NOW, probe=fixed)
    assert not status.ok and status.as_dict()["ok"] is False
    assert status.attention[0].kind == "history" and status.attention[0].title == "The bot has not run yet"
    html = create_app(config, clock=lambda: NOW, probe=fixed).test_client().get("/").get_data(as_text=True)
    assert "All well" not in html and "The bot has not run yet" in html
    assert not config.state.history.exists()


# Every column the page reads, and values of every type SQLite will keep in it (it keeps any type).
READ_COLUMNS = {
    "runs": ("started_at", "action", "one_in", "roll", "dry_run", "text", "reason"),
    "attempts": ("network", "text", "outcome", "post_id", "url", "detail", "sent_at", "error_kind", "cost"),
    "jobs": ("name", "started_at", "finished_at", "outcome", "last_post_at", "last_text", "posts"),
    "job_threads": ("network", "thread_root"),
    "bag": ("text",),
    "missed": ("text", "due_at", "noted_at", "reason"),
}
ANY_VALUE = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=30),
    st.sampled_from(["posted", "uncertain", "failed", "x", "javascript:alert(1)", "2026-03-10T09:00:00", "9999-99-99"]),
)


def _history_with_every_kind_of_row(config) -> None:
    with HistoryStore(config.state.history) as store:
        post(store, "one", NOW - timedelta(hours=1))
        post(store, "two", NOW - timedelta(hours=2), outcome="uncertain")
        post(store, "three", NOW - timedelta(hours=3), outcome="failed")
        job = store.open_job("pegs", at=NOW - timedelta(hours=2))
        attempt = store.begin_job_attempt(job.id, "peg 1", at=NOW - timedelta(hours=2), final=False, network="x")
        store.record_job_post(
            job.id, attempt, Ending("posted", NOW - timedelta(hours=2), post_id="77", detail=None), "peg 1"
        )
        attempt = store.begin_job_attempt(job.id, "peg 2", at=NOW - timedelta(hours=1), final=False, network="x")
        store.finish_attempt(attempt, Ending("failed", NOW - timedelta(hours=1), detail="refused"))
        store.record_missed("{at: 2026-03-10 06:00} Six", due=NOW - timedelta(hours=3), at=NOW, reason="late")


@hypothesis.settings(
    max_examples=40, deadline=None, suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture]
)
@hypothesis.given(
    values=st.lists(st.tuples(st.sampled_from(sorted(READ_COLUMNS)), st.integers(0, 8), ANY_VALUE), max_size=8)
)
@hypothesis.example(values=[("attempts", 1, b"")])  # a post's text as bytes: the month's X spend priced it
@hypothesis.example(values=[("attempts", 8, "a word"), ("attempts", 1, 7)])  # a cost that is no number
def test_rows_with_values_of_any_type_give_a_page_never_a_500(tmp_path_factory, values) -> None:
    config = settings(tmp_path_factory.mktemp("history"))
    _history_with_every_kind_of_row(config)
    with sqlite3.connect(config.state.history) as conn:
        for table, which, value in values:
            column = READ_COLUMNS[table][which % len(READ_COLUMNS[table])]
            with contextlib.suppress(sqlite3.IntegrityError):  # a NOT NULL column: SQLite refuses None
                conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
    status = read_status(config, now=NOW, probe=fixed)
    assert status.history_problem is None
    client = create_app(config, clock=lambda: NOW, probe=fixed).test_client()
    for path in ("/", "/status.json"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:200])


@pytest.mark.parametrize(
    "grammar, said",
    [
        # A lone surrogate was named in the problem and broke the page's encoding (500).
        ('{"origin": ["#\\ud800#"]}', "holds a lone surrogate"),
        (
            '{"origin": ' + "[" * 100_000 + '"a"' + "]" * 100_000 + "}",
            "line 1 holds lists or objects inside each other",
        ),
        ('{"origin": ["' + "[" * 100_000 + "]" * 100_000 + '"]}', "has [ nested more than 60 deep"),
    ],
    ids=["a lone surrogate", "JSON lists in lists", "actions in actions"],
)
def test_a_hostile_grammar_gives_a_page_that_names_it_never_a_500(tmp_path: Path, grammar: str, said: str) -> None:
    (tmp_path / "bot.json").write_text(grammar, encoding="utf-8")
    config = settings(tmp_path, TWEETS_FILE=str(tmp_path / "bot.json"))
    client = create_app(config, clock=lambda: NOW, probe=fixed).test_client()
    for path in ("/", "/status.json"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:200])
        assert said in response.get_data(as_text=True)


def test_a_grammars_problems_are_kept_until_the_file_changes(tmp_path: Path) -> None:
    from twitterbot.web.tweetsfile import TweetsFile

    path = tmp_path / "bot.json"
    path.write_text('{"origin": ["#nowhere#"]}', encoding="utf-8")
    config = settings(tmp_path, TWEETS_FILE=str(path))
    tweets = TweetsFile()
    texts, first = tweets(config)
    assert texts is None and [item.detail for item in first] == [
        'rule "origin" uses #nowhere#, which is not there: Tracery writes ((nowhere)) in the post; add a rule "nowhere"'
    ]
    assert tweets(config)[1] is first  # the same bytes: not read as a grammar again
    path.write_text('{"origin": ["fine"]}', encoding="utf-8")
    assert tweets(config) == (None, [])


def test_a_bbdq_grammar_s_codes_name_its_rules_before_they_are_checked(tmp_path: Path) -> None:
    """``#parity{n % 2}#`` names rule parity0 or parity1 once the codes are replaced, as a run does."""
    from twitterbot.web.tweetsfile import TweetsFile

    path = tmp_path / "bot.json"
    path.write_text('{"origin": ["#parity{n % 2}# at {hour}"], "parity0": ["even"], "parity1": ["odd"]}')
    assert TweetsFile()(settings(tmp_path, TWEETS_FILE=str(path))) == (None, [])


def test_a_history_of_an_older_format_is_left_for_a_run_to_upgrade(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with sqlite3.connect(config.state.history) as conn:
        conn.executescript(
            f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 2;"
            " CREATE TABLE runs (id INTEGER); CREATE TABLE attempts (id INTEGER); CREATE TABLE bag (text TEXT);"
        )
    status = read_status(config, now=NOW, probe=fixed)
    assert "older format" in status.history_problem
    with sqlite3.connect(config.state.history) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


# -- when the next run is due ----------------------------------------------------------------------


def test_next_time_is_the_first_of_the_times_after_now() -> None:
    assert next_time(UTC_TIMES, now=NOW, zone=timezone.utc) == NOW.replace(hour=12, minute=0)
    assert next_time(UTC_TIMES, now=NOW.replace(hour=18, minute=0), zone=timezone.utc) == NOW.replace(
        day=11, hour=0, minute=0
    )
    assert next_time(("06:00:30",), now=NOW, zone=timezone.utc) == NOW.replace(day=11, hour=6, minute=0, second=30)


@pytest.mark.parametrize(
    ("field", "size", "values"),
    [
        ("0", 60, [0]),
        ("0,30", 60, [0, 30]),
        ("*/15", 60, [0, 15, 30, 45]),
        ("1-3", 24, [1, 2, 3]),
        ("0-23/6", 24, [0, 6, 12, 18]),
        ("L", 60, []),
        ("61", 60, []),
        ("*/0", 60, []),
    ],
)
def test_cron_fields(field: str, size: int, values: list) -> None:
    assert _cron_field(field, size) == values


class Runner:
    """Answers commands from a table, as `systemctl` and `crontab` would; None for the rest."""

    def __init__(self, answers: Dict[str, str]) -> None:
        self.answers = answers

    def __call__(self, command: Sequence[str]) -> Optional[str]:
        key = " ".join(command[:4])
        return next((answer for prefix, answer in self.answers.items() if key.startswith(prefix)), None)


def test_a_crontab_line_for_this_checkout_gives_the_next_run(tmp_path: Path) -> None:
    config = settings(tmp_path)
    bot = tmp_path / "bot.py"
    table = f"# mine\n5 3 * * * /usr/bin/other\n0 */6 * * * /usr/bin/flock -n /x {bot} -q --jitter\n"
    due = next_run(config, now=NOW, run=Runner({"crontab -l": table}), proc=tmp_path / "noproc", bot_py=bot)
    assert due.source == "cron" and str(bot) in due.detail
    assert due.at is not None and due.at.astimezone().hour % 6 == 0 and due.at > NOW


def test_the_systemd_timer_of_this_checkout_wins_over_cron(tmp_path: Path) -> None:
    config = settings(tmp_path)
    bot = tmp_path / "bot.py"
    stamp = int((NOW + timedelta(hours=2)).timestamp())
    runner = Runner(
        {
            "systemctl --user show twitterbot.service": f"ExecStart={{ path=/venv/bin/python ; argv[]=/venv/bin/python {bot} ; }}\n",
            "systemctl --user show twitterbot.timer": f"ActiveState=active\nNextElapseUSecRealtime=@{stamp}\n",
            "crontab -l": f"0 * * * * {bot}\n",
        }
    )
    due = next_run(config, now=NOW, run=runner, proc=tmp_path / "noproc", bot_py=bot)
    assert due.source == "systemd" and due.at == NOW + timedelta(hours=2)


def test_a_running_daemon_of_this_checkout_is_found_in_proc(tmp_path: Path) -> None:
    config = settings(tmp_path)
    bot = tmp_path / "bot.py"
    proc = tmp_path / "proc"
    (proc / "4242").mkdir(parents=True)
    (proc / "4242" / "cmdline").write_bytes(b"\0".join([b"/venv/bin/python", str(bot).encode(), b"daemon", b""]))
    (proc / "self").mkdir()
    due = next_run(config, now=NOW, run=Runner({}), proc=proc, bot_py=bot)
    assert due.source == "daemon" and "4242" in due.detail and due.at == NOW.replace(hour=12, minute=0)


def test_nothing_found_falls_back_to_tweet_times(tmp_path: Path) -> None:
    config = settings(tmp_path, TWEET_JITTER="10m")
    due = next_run(
        config,
        now=NOW,
        run=Runner({"crontab -l": "0 * * * * /elsewhere/bot.py\n"}),
        proc=tmp_path,
        bot_py=tmp_path / "bot.py",
    )
    assert due.source == "settings" and due.at == NOW.replace(hour=12, minute=0)
    assert "10m of TWEET_JITTER" in due.detail


# -- links -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://x.com/i/status/1", "https://x.com/i/status/1"),
        ("http://mastodon.local/@me/1", "http://mastodon.local/@me/1"),
        ("javascript:alert(1)", None),
        (" JaVaScRiPt:alert(1)", None),
        ("data:text/html,<script>", None),
        ("file:///etc/passwd", None),
        ("//evil.example/x", None),
        ("", None),
    ],
)
def test_only_http_links_are_ever_shown(url: str, safe: Optional[str]) -> None:
    assert safe_href(url) == safe


def test_post_and_check_links(tmp_path: Path) -> None:
    config = settings(tmp_path, BLUESKY_HANDLE="alice.example.com", MASTODON_INSTANCE="https://mastodon.local")
    assert post_url("x", "123", None, config) == "https://x.com/i/status/123"
    assert post_url("x", "dry-run-1", None, config) is None
    assert post_url("mastodon", "55", None, config) is None  # only the link the network gave
    link = "https://bsky.app/profile/a/post/b"
    assert post_url("bluesky", "at://did", link, config) == link
    assert check_url("bluesky", config) == "https://bsky.app/profile/alice.example.com"
    assert check_url("mastodon", config) == "https://mastodon.local"


def test_the_month_s_spend_shows_against_the_budget(tmp_path: Path) -> None:
    config = settings(tmp_path, X_MONTHLY_BUDGET="5")
    with HistoryStore(config.state.history) as store:
        for at, cost in (
            (NOW - timedelta(days=20), 1.0),
            (NOW - timedelta(hours=2), PRICES.post),
        ):  # last month's is left out
            attempt = store.begin_attempt("paid", run_id=None, at=at, network="x", cost=cost)
            store.finish_attempt(attempt, Ending("posted", at, post_id="1"))
        post(store, "priced by its text", NOW - timedelta(hours=1))  # no cost kept: priced as X prices it
    status = read_status(config, now=NOW, probe=fixed)
    (budget,) = status.budgets
    assert (budget.network, budget.budget, budget.setting) == ("x", 5.0, "X_MONTHLY_BUDGET")
    assert abs(budget.spent - 2 * PRICES.post) < 1e-9 and budget.since == datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert status.as_dict()["budgets"][0]["budget"] == 5.0
    page = create_app(config, clock=lambda: NOW, probe=fixed).test_client().get("/").get_data(as_text=True)
    assert "X this month" in page and f'${2 * PRICES.post:.2f} <span class="of">of $5.00</span>' in page
    unset = read_status(settings(tmp_path, X_MONTHLY_BUDGET=""), now=NOW, probe=fixed)
    assert unset.budgets[0].budget is None


def test_a_settled_uncertain_post_shows_how_it_was_settled(tmp_path: Path) -> None:
    config = settings(tmp_path)
    at = NOW - timedelta(hours=3)
    with HistoryStore(config.state.history) as store:
        run_id = store.begin_run(at=at, one_in=1, roll=0, forced=False, dry_run=False)
        attempt = store.begin_attempt("maybe", run_id=run_id, at=at, network="x")
        store.finish_attempt(attempt, Ending("uncertain", at, detail="no answer in 30 s", mark_used=True))
        store.finish_run(run_id, at=at, action="uncertain", text="maybe")
        store.settle(attempt, found=True, how="found among the account's recent posts", at=NOW, post_id="1877")
    status = read_status(config, now=NOW, probe=fixed)
    (run,) = status.runs
    (sent,) = run.networks
    assert run.action == "posted" and sent.outcome == "posted"
    assert sent.settled == "uncertain → posted (found among the account's recent posts)"
    assert not [item for item in status.attention if item.kind == "uncertain"]  # settled: nothing to check
    page = create_app(config, clock=lambda: NOW, probe=fixed).test_client().get("/").get_data(as_text=True)
    assert "X, settled by a later run: uncertain → posted (found among the account&#39;s recent posts)" in page


def test_the_page_shows_the_timed_lines_of_today_and_this_week(tmp_path: Path) -> None:
    (tmp_path / "tweets.txt").write_text(
        "plain\n{on: 03-10} Today's line\n{days: sat} Saturday\n{at: 2026-03-12 21:30} One-off\n{on: 04-01} Later\n"
    )
    config = settings(tmp_path)
    status = read_status(config, now=NOW, probe=fixed)
    assert [(line.day, line.lineno, line.at, line.today) for line in status.coming] == [
        ("2026-03-10", 2, None, True),
        ("2026-03-12", 4, "21:30", False),
        ("2026-03-14", 3, None, False),
    ]
    assert status.bag.total == 1  # the round: the line without a time
    page = create_app(config, probe=fixed, clock=lambda: NOW).test_client().get("/").get_data(as_text=True)
    assert "Coming up this week" in page and "<code>{at: 2026-03-12 21:30}</code> One-off" in page


def test_a_one_off_line_no_run_posted_in_time_needs_attention_for_a_week(tmp_path: Path) -> None:
    config = settings(tmp_path, TWEET_TIMEZONE="America/New_York")
    late = "no run came within LATE_BY=1h of its time: the first came 3h10m after it"
    with HistoryStore(config.state.history) as store:
        store.record_missed(
            "{at: 2026-03-09 23:59} Happy birthday!",
            due=datetime(2026, 3, 10, 3, 59, tzinfo=timezone.utc),
            at=NOW - timedelta(hours=2),
            reason=late,
        )
        store.record_missed(
            "{at: 2026-02-01 09:00} Long ago", due=NOW - timedelta(days=37), at=NOW - timedelta(days=8), reason=late
        )
    status = read_status(config, now=NOW, probe=fixed)
    (item,) = [item for item in status.attention if item.kind == "missed_line"]
    assert item.title == "A one-off line was not posted: {at: 2026-03-09 23:59} Happy birthday!"
    # when it was due and when the run came, in the bot's zone as the line writes its time; and why
    assert (
        item.detail == f"due 2026-03-09 23:59, the run that found it came 2026-03-10 03:30: {late}"
    )  # EDT since March 8
    assert item.at == NOW - timedelta(hours=2)
    assert "missed_line" in [each["kind"] for each in status.as_dict()["attention"]]
    page = create_app(config, probe=fixed, clock=lambda: NOW).test_client().get("/").get_data(as_text=True)
    assert "A one-off line was not posted: {at: 2026-03-09 23:59} Happy birthday!" in page
    assert "missed line" in page and "Long ago" not in page
