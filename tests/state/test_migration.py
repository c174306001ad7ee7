"""A history written by the last release, 0.1.0 (schema 3, made by that release's code and checked
in as tests/fixtures/state/history-schema3.sqlite) opens with today's store and keeps working: every
row reads back, the daily cap and the bag count it, its killed job is settled, and new rows go in;
migration 4 renames its tweet_id to post_id and keeps every row. A schema-5 history (the release
that settled uncertain posts) gains migration 6's costs and alerts and keeps what it settled."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from twitterbot.state import schema
from twitterbot.state.outcomes import Ending
from twitterbot.state.schema import SCHEMA_VERSION
from twitterbot.state.store import HistoryStore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "state" / "history-schema3.sqlite"
WRITTEN = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)  # when the fixture's first run started


@pytest.fixture
def old_history(tmp_path: Path) -> Path:
    copy = tmp_path / "history.sqlite3"
    shutil.copyfile(FIXTURE, copy)  # never the checked-in file itself
    return copy


def test_the_last_releases_history_reads_back_whole(old_history: Path) -> None:
    with HistoryStore(old_history) as store:
        runs = store.recent_runs(10)
        assert [run.action for run in runs] == ["uncertain", "skipped", "posted"]
        assert runs[2].text == "Hello from my Pi" and runs[2].url.endswith("/1890000000000000001")
        assert runs[1].reason == "rolled 3 of 4"
        assert store.used_texts() == {"Hello from my Pi", "Second line <b>"}
        # The post to X and Mastodon is one post; the uncertain Bluesky post counts too; the job's posts count.
        assert store.posts_since(WRITTEN - timedelta(seconds=1), WRITTEN + timedelta(days=1)) == 4
        assert store.last_posted_text() == "The monkey has typed 2,000 keys"
        assert store.measured_lengths("x", "3.0.0") == {"Hello from my Pi": (16, ()), "Second line <b>": (15, ())}
        assert store.measured_file("x", "3.0.0") == "abc123"
        # Mastodon failed for a temporary reason while X took the post: a catch-up is owed.
        owed = store.catch_ups(WRITTEN - timedelta(hours=1), ["mastodon"])
        assert [(c.network, c.text) for c in owed] == [("mastodon", "Hello from my Pi")]


def test_the_last_releases_killed_job_is_settled_and_its_thread_continues(old_history: Path) -> None:
    later = WRITTEN + timedelta(days=1)
    with HistoryStore(old_history) as store:
        job = store.open_job("monkey", at=later, run_key="seed-7")
        assert job.threads == {"x": "1890000000000000002"} and job.posts == 1
        posts = store.recent_job_posts(5)
        assert [post.outcome for post in posts] == ["interrupted", "posted"]  # the pending one: may have gone
        attempt = store.begin_job_attempt(job.id, "Done", at=later, final=True, network="x")
        store.record_job_post(
            job.id, attempt, Ending("posted", later, post_id="1890000000000000003", detail=None), "done"
        )
        store.finish_job(job.id, "done", at=later)
        assert store.job(job.id).final_sent and store.job(job.id).outcome == "done"


def test_the_last_releases_history_takes_new_runs_after_reopening(old_history: Path) -> None:
    later = WRITTEN + timedelta(days=2)
    with HistoryStore(old_history) as store:
        run = store.begin_run(at=later, one_in=4, roll=1, forced=False, dry_run=False)
        attempt = store.begin_attempt("Third", run_id=run, at=later, network="bluesky")
        store.finish_attempt(attempt, Ending("posted", later, post_id="at://did:plc:x/post/1", mark_used=True))
        store.finish_run(run, at=later, action="posted", text="Third")
    with HistoryStore(old_history) as store:  # what was written is there after reopening
        assert store.recent_runs(1)[0].text == "Third"
        assert "Third" in store.used_texts()


def _rows(path: Path, id_column: str) -> dict:
    with closing(sqlite3.connect(path)) as conn:
        return {
            table: conn.execute(f"SELECT id, {id_column} FROM {table} ORDER BY id").fetchall()
            for table in ("runs", "attempts")
        }


def test_migration_4_renames_tweet_id_to_post_id_and_keeps_every_row(old_history: Path) -> None:
    before = _rows(old_history, "tweet_id")
    HistoryStore(old_history).close()
    with closing(sqlite3.connect(old_history)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
        columns = {row[1] for row in conn.execute("PRAGMA table_info(attempts)")}
        assert conn.execute("SELECT count(*) FROM missed").fetchone() == (0,)  # migration 10: no line missed yet
        kinds = conn.execute("SELECT DISTINCT error_kind FROM attempts").fetchall()
    assert {"post_id", "error_kind"} <= columns and "tweet_id" not in columns
    assert _rows(old_history, "post_id") == before and any(post_id for _, post_id in before["attempts"])
    assert kinds == [(None,)]  # none of its failures was a refusal of the keys


def test_migration_4_gives_old_refusals_of_the_keys_their_kind(old_history: Path) -> None:
    with closing(sqlite3.connect(old_history)) as conn, conn:
        for detail in ("X rejected the keys (401 Unauthorized): check TWITTER_API_KEY", "X is down (503)"):
            conn.execute(
                "INSERT INTO attempts (source, text, sent_at, outcome, detail, network)"
                " VALUES ('scheduled', 'hi', '2026-11-21T06:00:00.000000Z', 'failed', ?, 'x')",
                (detail,),
            )
    HistoryStore(old_history).close()
    with closing(sqlite3.connect(old_history)) as conn:
        kinds = conn.execute("SELECT detail, error_kind FROM attempts WHERE text = 'hi' ORDER BY id").fetchall()
    assert [kind for _, kind in kinds] == ["unauthorized", None]


def test_migration_6_keeps_costs_and_alerts(old_history: Path) -> None:
    """A 0.1.0 history gains the cost of each post (NULL for its old rows) and the alerts table."""
    HistoryStore(old_history).close()
    with closing(sqlite3.connect(old_history)) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(attempts)")}
        costs = conn.execute("SELECT DISTINCT cost FROM attempts").fetchall()
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "cost" in columns and costs == [(None,)] and "alerts" in tables
    with HistoryStore(old_history) as store:
        assert store.record_alert("run", at=WRITTEN, message="failed") is True
        assert store.record_alert("run", at=WRITTEN, message="failed again") is False
        store.settle_alerts(["run"])
        assert store.open_alerts() == []


def _schema_5_history(path: Path) -> Path:
    """A history as schema 5 made it: an uncertain post with its record key, and one settled."""
    steps = " ".join(schema._MIGRATIONS[version] for version in range(2, 6))
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            f"BEGIN; {schema._SCHEMA} {steps} PRAGMA application_id = {schema.APPLICATION_ID};"
            " PRAGMA user_version = 5; COMMIT;"
        )
        with conn:
            conn.execute(
                "INSERT INTO attempts (text, sent_at, outcome, network, post_group, lookup_key, sent_text)"
                " VALUES ('Maybe sent', '2026-11-21T06:00:00.000000Z', 'uncertain', 'bluesky', 1, '3kabc', 'Maybe sent!')"
            )
            conn.execute(
                "INSERT INTO attempts (text, sent_at, outcome, network, post_group, settled)"
                " VALUES ('Found later', '2026-11-21T07:00:00.000000Z', 'posted', 'x', 2,"
                " 'uncertain → posted (found in the recent posts)')"
            )
    return path


def test_a_schema_5_history_gains_costs_and_alerts_and_keeps_what_it_settled(tmp_path: Path) -> None:
    path = _schema_5_history(tmp_path / "history.sqlite3")
    with HistoryStore(path) as store:
        unsettled = store.unsettled(WRITTEN, ["bluesky", "x"])
        assert [(each.lookup_key, each.sent_text) for each in unsettled] == [("3kabc", "Maybe sent!")]
        assert store.costs_since("x", WRITTEN) == [(None, "Found later")]  # written before costs were kept
        assert store.record_alert("run", at=WRITTEN, message="failed") is True
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
        columns = {row[1] for row in conn.execute("PRAGMA table_info(attempts)")}
        settled = conn.execute("SELECT settled FROM attempts WHERE text = 'Found later'").fetchone()[0]
    assert {"cost", "lookup_key", "sent_text", "settled"} <= columns
    assert settled == "uncertain → posted (found in the recent posts)"


def test_a_0_1_0_history_gains_every_column_of_schemas_5_and_6(old_history: Path) -> None:
    HistoryStore(old_history).close()
    with closing(sqlite3.connect(old_history)) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(attempts)")}
    assert {"cost", "lookup_key", "sent_text", "settled"} <= columns


def test_a_schema_7_history_s_threads_gain_their_parts_texts_and_count_each_part(tmp_path: Path) -> None:
    """Migration 8: a thread's attempts (recorded by 0.2.0 with the whole line as their text) get
    the part each carried and its text as sent, so a later run looks a part up by its own text,
    and the cap counts each part."""
    path = tmp_path / "history.sqlite3"
    with closing(sqlite3.connect(path)) as conn:
        steps = " ".join(schema._MIGRATIONS[version] for version in range(2, 8))
        conn.executescript(
            f"BEGIN; {schema._SCHEMA} {steps} PRAGMA application_id = {schema.APPLICATION_ID};"
            " PRAGMA user_version = 7; COMMIT;"
        )
        at = WRITTEN.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        conn.execute(
            "INSERT INTO threads (id, post_group, network, text, started_at) VALUES (1, 1, 'x', 'A B', ?)", (at,)
        )
        for attempt, outcome in ((1, "posted"), (2, "uncertain")):
            conn.execute(
                "INSERT INTO attempts (id, text, sent_at, outcome, network, post_group, thread_id)"
                " VALUES (?, 'A B', ?, ?, 'x', 1, 1)",
                (attempt, at, outcome),
            )
            conn.execute("INSERT INTO thread_parts VALUES (1, ?, ?, ?)", (attempt, "AB"[attempt - 1], attempt))
        conn.commit()
    with HistoryStore(path) as store:
        unsettled = store.unsettled(WRITTEN - timedelta(hours=1), ["x"])
        assert [each.sent_text for each in unsettled] == ["B"]  # looked up by the part, not the line
        assert store.posts_since(WRITTEN - timedelta(hours=1), WRITTEN + timedelta(hours=1)) == 2
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT part, sent_text FROM attempts ORDER BY id").fetchall() == [(1, "A"), (2, "B")]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 12


def test_a_schema_10_history_gains_the_replies_tables_and_keeps_counting_its_posts(tmp_path: Path) -> None:
    """Migration 11: the mentions read, each network's cursor, the billed reads and the accounts that
    said stop; a schema-10 file's posts still count in the budget, and a billed read counts beside them."""
    path = tmp_path / "history.sqlite3"
    with closing(sqlite3.connect(path)) as conn:
        steps = " ".join(schema._MIGRATIONS[version] for version in range(2, 11))
        conn.executescript(
            f"BEGIN; {schema._SCHEMA} {steps} PRAGMA application_id = {schema.APPLICATION_ID};"
            " PRAGMA user_version = 10; COMMIT;"
        )
        at = WRITTEN.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        conn.execute(
            "INSERT INTO attempts (text, sent_at, outcome, network, post_group, cost) VALUES ('hi', ?, 'posted', 'x', 1, 0.015)",
            (at,),
        )
        conn.commit()
    with HistoryStore(path) as store:
        assert store.mention_cursor("x") == (False, None)
        store.record_mentions("x", [], "x:1", at=WRITTEN + timedelta(minutes=1), requests=1, cost=0.001)
        assert store.mention_cursor("x") == (True, "x:1")
        assert sorted(store.costs_since("x", WRITTEN - timedelta(hours=1))) == [(0.001, ""), (0.015, "hi")]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 12
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"mentions", "mention_cursors", "mention_reads", "stopped_accounts"} <= tables


def _schema_11(path: Path) -> None:
    """A history as the release before schema 12 made it: no post stored with any attempt."""
    with closing(sqlite3.connect(path)) as conn:
        steps = " ".join(schema._MIGRATIONS[version] for version in range(2, 12))
        conn.executescript(
            f"BEGIN; {schema._SCHEMA} {steps} PRAGMA application_id = {schema.APPLICATION_ID};"
            " PRAGMA user_version = 11; COMMIT;"
        )


def test_a_schema_11_history_keeps_every_row_and_its_old_attempts_settle_and_catch_up_as_before(
    home, mastodon_emulator
) -> None:
    """Migration 12 stores a post whole with its attempt; a row written before it has none, and is
    read as before: its uncertain post looked up by its text, its catch-up read from its line (its
    options and all), a thread finished from its text, language and warning."""
    state = home.path / "state"
    state.mkdir()
    path = state / "history.sqlite3"
    _schema_11(path)
    sent = datetime.now(timezone.utc) - timedelta(minutes=20)
    at = sent.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "INSERT INTO runs (id, started_at, finished_at, action, text) VALUES (1, ?, ?, 'posted', 'x')", (at, at)
        )
        conn.executemany(
            "INSERT INTO attempts (id, run_id, text, sent_at, finished_at, outcome, network, post_group, post_id)"
            " VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)",
            [
                (1, "{lang: de} Hallo zusammen", at, at, "posted", "x", 1, "1456012973835780001"),
                (2, "{lang: de} Hallo zusammen", at, at, "temporary", "mastodon", 1, None),
                (3, "Was it posted?", at, at, "uncertain", "x", 3, None),
            ],
        )
        conn.commit()
    home.emulator._create("Was it posted?", None)  # it was
    part_1 = home.emulator._create("Teil eins 1/2", None)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "INSERT INTO attempts (id, run_id, text, sent_at, finished_at, outcome, network, post_group, post_id,"
            " thread_id, part, sent_text) VALUES (5, 1, 'Ein langer Satz', ?, ?, 'posted', 'x', 5, ?, 1, 1, ?)",
            (at, at, part_1.id, "Teil eins 1/2"),
        )
        conn.execute(
            "INSERT INTO threads (id, post_group, network, text, language, started_at) VALUES (1, 5, 'x', ?, 'de', ?)",
            ("Ein langer Satz", at),
        )
        conn.executemany(
            "INSERT INTO thread_parts (thread_id, part, text, attempt_id) VALUES (1, ?, ?, ?)",
            [(1, "Teil eins 1/2", 5), (2, "Teil zwei 2/2", None)],
        )
        conn.commit()
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon", TWEET_ONE_IN="1000000", LOOK_UP_UNCERTAIN="yes")
    ran = home.run("--json")
    assert ran.returncode == 0, ran.stderr
    (status,) = mastodon_emulator.statuses  # the catch-up, read from its line as before
    assert (status.text, status.language) == ("Hallo zusammen", "de")
    posts = home.emulator.posts  # the uncertain post found, never sent again; the thread finished in order
    assert [(post.text, post.reply_to) for post in posts] == [
        ("Was it posted?", None),
        ("Teil eins 1/2", None),
        ("Teil zwei 2/2", part_1.id),
    ]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
        rows = conn.execute("SELECT id, outcome, network, post IS NULL FROM attempts ORDER BY id").fetchall()
        (stored,) = conn.execute("SELECT post FROM attempts WHERE network = 'mastodon' AND id > 5").fetchone()
    assert rows[:3] == [(1, "posted", "x", 1), (2, "temporary", "mastodon", 1), (3, "posted", "x", 1)]
    assert ("posted", "mastodon", 0) in [row[1:] for row in rows[3:]]  # the catch-up keeps its post whole
    assert '"language":"de"' in stored
