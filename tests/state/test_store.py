"""The history store: transactions, crash recovery, the bag, and refusing files that are not ours."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from twitterbot.errors import HistoryError
from twitterbot.state.folder import ensure_state_dir
from twitterbot.state.outcomes import Ending
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def test_a_new_file_gets_the_schema_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        run = store.begin_run(at=NOW, one_in=4, roll=0, forced=False, dry_run=False)
        store.finish_run(run, at=NOW, action="posted", text="hi", post_id="1")
    with HistoryStore(path) as store:
        (record,) = store.recent_runs(5)
    assert (record.action, record.text, record.post_id, record.roll, record.started_at) == (
        "posted",
        "hi",
        "1",
        0,
        NOW,
    )


def test_recent_runs_are_newest_first_and_limited() -> None:
    store = HistoryStore(":memory:")
    for minute in range(5):
        store.begin_run(at=NOW + timedelta(minutes=minute), one_in=4, roll=minute, forced=False, dry_run=False)
    assert [run.roll for run in store.recent_runs(3)] == [4, 3, 2]


def test_posts_since_counts_what_reached_or_may_have_reached_x() -> None:
    store = HistoryStore(":memory:")
    outcomes = ["posted", "failed", "duplicate", "posted", "pending"]
    for hours_ago, outcome in zip([30, 5, 4, 3, 1], outcomes):
        attempt = store.begin_attempt(f"t{hours_ago}", run_id=None, at=NOW - timedelta(hours=hours_ago), network="x")
        if outcome != "pending":
            store.finish_attempt(attempt, Ending(outcome, NOW))
    assert store.posts_since(NOW - timedelta(hours=24)) == 2  # the 3h post and the pending one
    assert store.oldest_post_since(NOW - timedelta(hours=24)) == NOW - timedelta(hours=3)


def test_finishing_a_post_takes_its_text_out_of_the_round_atomically() -> None:
    store = HistoryStore(":memory:")
    attempt = store.begin_attempt("hello", run_id=None, at=NOW, network="x")
    assert store.used_texts() == set()
    store.finish_attempt(attempt, Ending("posted", NOW, post_id="9", mark_used=True))
    assert store.used_texts() == {"hello"}
    assert store.last_posted_text() == "hello"
    store.start_new_round()
    assert store.used_texts() == set()


def test_recovering_a_killed_run_keeps_its_text_out_and_counted() -> None:
    store = HistoryStore(":memory:")
    run = store.begin_run(at=NOW, one_in=1, roll=0, forced=False, dry_run=False)
    store.begin_attempt("maybe sent", run_id=run, at=NOW, network="x")
    assert store.recover_interrupted(at=NOW) == ["maybe sent"]
    assert store.used_texts() == {"maybe sent"}
    assert store.posts_since(NOW - timedelta(hours=1)) == 1
    assert store.recent_runs(1)[0].action == "interrupted"
    assert store.recover_interrupted(at=NOW) == []  # settled once


def test_a_file_that_is_not_a_database_is_refused_not_reset(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"this is not sqlite at all, just some bytes" * 100)
    with pytest.raises(HistoryError, match="damaged or not a history database.*move it aside"):
        HistoryStore(path)
    assert path.read_bytes().startswith(b"this is not sqlite")


def test_a_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER)")
    with pytest.raises(HistoryError, match="not a twitterbot history database"):
        HistoryStore(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryError, match="newer twitterbot"):
        HistoryStore(path)


def test_a_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for number in range(300):
            store.begin_attempt(f"text number {number} " * 5, run_id=None, at=NOW, network="x")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(HistoryError), HistoryStore(path) as store:
        store.posts_since(NOW - timedelta(days=1))


def test_the_state_dir_is_created_private(tmp_path: Path) -> None:
    state = tmp_path / "a" / "state"
    ensure_state_dir(state)
    assert state.is_dir() and (state.stat().st_mode & 0o777) == 0o700


def test_a_state_dir_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("oops")
    with pytest.raises(HistoryError, match="BOT_STATE_DIR"):
        ensure_state_dir(tmp_path / "state")


def test_a_version_1_file_is_upgraded_in_place_and_keeps_its_history(tmp_path: Path) -> None:
    from twitterbot.state import database, schema

    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as conn:  # a file as the first release wrote it
        conn.executescript(
            schema._SCHEMA + f"PRAGMA application_id = {schema.APPLICATION_ID}; PRAGMA user_version = 1;"
        )
        conn.execute(
            "INSERT INTO attempts (text, sent_at, outcome) VALUES ('old post', ?, 'posted')", (database.iso(NOW),)
        )
    conn.close()
    with HistoryStore(path) as store:
        assert store.posts_since(NOW - timedelta(hours=1)) == 1
        job = store.open_job("pegs", at=NOW)
        assert (job.name, job.posts, job.thread_root) == ("pegs", 0, None)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


def test_a_running_job_s_pending_post_is_left_alone_by_a_scheduled_run(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        job = store.open_job("pegs", at=NOW)
        store.begin_job_attempt(
            job.id, "pegs: level 3", at=NOW, final=False, network="x"
        )  # in flight in another process
        store.begin_attempt("scheduled line", run_id=None, at=NOW, network="x")  # left by a killed scheduled run
        assert store.recover_interrupted(at=NOW) == ["scheduled line"]
        assert store.used_texts() == {"scheduled line"}
        # When the job itself restarts, its own pending post is settled as "may have been posted".
        store.open_job("pegs", at=NOW)
        assert store.posts_since(NOW - timedelta(hours=1)) == 2


def test_jobs_are_found_by_name_and_run_key(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        first = store.open_job("pegs", at=NOW)
        assert store.open_job("pegs", at=NOW).id == first.id  # unfinished: continued
        assert store.open_job("monkey", at=NOW).id != first.id
        store.finish_job(first.id, "done", at=NOW)
        assert store.open_job("pegs", at=NOW).id != first.id  # finished: a new run
        keyed = store.open_job("pegs", at=NOW, run_key="english")
        store.finish_job(keyed.id, "done", at=NOW)
        again = store.open_job("pegs", at=NOW, run_key="english")
        assert again.id == keyed.id and again.outcome == "done"


def test_job_posts_are_listed_with_their_job_and_thread(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        job = store.open_job("monkey", at=NOW)
        first = store.begin_job_attempt(job.id, "record 1", at=NOW, final=False, network="x")
        store.record_job_post(job.id, first, Ending("posted", NOW, post_id="100", detail=None), "1")
        result = store.begin_job_attempt(
            job.id, "monkey finished", at=NOW + timedelta(hours=1), final=True, network="x"
        )
        store.record_job_post(
            job.id, result, Ending("posted", NOW + timedelta(hours=1), post_id="101", detail=None), "2"
        )
        store.begin_attempt("a scheduled line", run_id=None, at=NOW, network="x")  # not a job's
        posts = store.recent_job_posts(5)
        assert [(post.text, post.post_id, post.final, post.outcome) for post in posts] == [
            ("monkey finished", "101", True, "posted"),
            ("record 1", "100", False, "posted"),
        ]
        assert {(post.job_name, post.thread_root) for post in posts} == {("monkey", "100")}
        assert [post.text for post in store.recent_job_posts(1)] == ["monkey finished"]


def test_the_history_command_interleaves_runs_and_job_posts(home) -> None:
    import json

    assert home.run("--force").returncode == 0
    watched = home.run("watch", "--first-after", "0", "--name", "backup", "--", "sh", "-c", "echo copying")
    assert watched.returncode == 0, watched.stderr
    scheduled, progress, result = home.emulator.posts
    shown = home.run("history").stdout.splitlines()
    assert len(shown) == 3
    assert "posted" in shown[0] and f"[backup result, thread {progress.id}]" in shown[0]
    assert shown[0].endswith(f"https://x.com/i/status/{result.id}")
    assert '[backup] "backup: copying (0s)"' in shown[1] and shown[1].endswith(progress.id)
    assert "[" not in shown[2] and shown[2].endswith(f"https://x.com/i/status/{scheduled.id}")
    entries = json.loads(home.run("history", "--json").stdout)
    assert [(entry["source"], entry["post_id"]) for entry in entries] == [
        ("job", result.id),
        ("job", progress.id),
        ("scheduled", scheduled.id),
    ]
    assert entries[0]["job"] == "backup" and entries[0]["result"] is True and entries[0]["thread"] == progress.id
    assert all(entry["url"] == f"https://x.com/i/status/{entry['post_id']}" for entry in entries)
    assert all(entry["tweet_id"] == entry["post_id"] for entry in entries)  # the deprecated alias, for one release
    assert len(json.loads(home.run("history", "-n", "2", "--json").stdout)) == 2


def test_an_uncertain_post_counts_against_the_cap_and_leaves_the_round() -> None:
    store = HistoryStore(":memory:")
    attempt = store.begin_attempt("maybe on X", run_id=None, at=NOW, network="x")
    store.finish_attempt(attempt, Ending("uncertain", NOW, detail="read timed out", mark_used=True))
    assert store.posts_since(NOW - timedelta(hours=1)) == 1
    assert store.used_texts() == {"maybe on X"}
    assert store.last_posted_text() == "maybe on X"
    assert store.last_scheduled_post(until=NOW) == NOW


def test_posts_dated_after_until_are_left_out() -> None:
    store = HistoryStore(":memory:")
    for at in (NOW - timedelta(hours=2), NOW + timedelta(days=365)):
        store.finish_attempt(store.begin_attempt(f"t{at}", run_id=None, at=at, network="x"), Ending("posted", at))
    assert store.posts_since(NOW - timedelta(hours=24)) == 2
    assert store.posts_since(NOW - timedelta(hours=24), until=NOW) == 1
    assert store.oldest_post_since(NOW - timedelta(hours=24), until=NOW) == NOW - timedelta(hours=2)
    assert store.last_scheduled_post(until=NOW) == NOW - timedelta(hours=2)


# -- only a missing file starts a new history ----------------------------------------------------


def test_an_empty_file_is_refused_not_taken_for_a_new_history(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.touch()
    with pytest.raises(HistoryError, match=r"history.sqlite3 is empty \(0 bytes\).*restore it from a backup"):
        HistoryStore(path)
    assert path.read_bytes() == b""  # left as found


def test_an_empty_database_with_our_mark_is_a_clear_error(tmp_path: Path) -> None:
    from twitterbot.state import schema

    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    conn.close()
    with pytest.raises(HistoryError, match="marked as a twitterbot history but has no tables"):
        HistoryStore(path)


def test_a_marked_database_missing_a_table_is_refused(tmp_path: Path) -> None:
    from twitterbot.state import schema

    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE bag")
    conn.close()
    with pytest.raises(HistoryError, match="has no bag"):
        HistoryStore(path)
    assert schema.SCHEMA_VERSION >= 2


def test_an_empty_sqlite_database_is_not_ours(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 1")  # a header, no tables, no mark
    conn.close()
    with pytest.raises(HistoryError, match=r"not a twitterbot history database \(an empty database\)"):
        HistoryStore(path)


def test_a_new_history_is_created_whole_at_the_newest_schema(tmp_path: Path) -> None:
    from twitterbot.state import schema

    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    # No temp file left behind; the note of the day its pages were last read for damage.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.sqlite3", "history.sqlite3-verified"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    conn.close()


_CREATE_FOREVER = """
import sys
from pathlib import Path
from twitterbot.state.store import HistoryStore
root = Path(sys.argv[1])
number = 0
while True:
    folder = root / str(number)
    folder.mkdir()
    HistoryStore(folder / "history.sqlite3").close()
    number += 1
"""


def test_a_run_killed_while_creating_the_history_leaves_no_empty_file(tmp_path: Path) -> None:
    """Killed at random moments while creating histories, a run leaves each one whole or absent,
    never a file that the next run would (rightly) refuse."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    repo = Path(__file__).resolve().parents[2]
    rng = random.Random(13)
    for kill in range(6):
        root = tmp_path / f"kill{kill}"
        root.mkdir()
        process = subprocess.Popen([sys.executable, "-c", _CREATE_FOREVER, str(root)], cwd=repo)
        while len(list(root.iterdir())) < 3:  # let it get going (imports take a while)
            assert process.poll() is None, "the creating process failed on its own"
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.2))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        for folder in root.iterdir():
            path = folder / "history.sqlite3"
            if path.exists():
                assert path.stat().st_size > 0, f"kill {kill} left an empty {path}"
                HistoryStore(path).close()  # whole: opens without complaint


def test_a_full_disk_is_named_as_such_never_as_damage(tmp_path: Path) -> None:
    from twitterbot.errors import StateError

    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's page limit stands in for a full disk
    with pytest.raises(StateError, match=f"the disk holding {tmp_path} is full") as raised:
        store.begin_attempt("x" * 50_000, run_id=None, at=NOW, network="x")
    assert "damaged" not in str(raised.value) and "move it aside" not in str(raised.value)
    store.close()
    with HistoryStore(path) as reopened:  # nothing half-written
        assert reopened.posts_since(NOW - timedelta(days=1)) == 0


def _post_to_two(store: HistoryStore, text: str, at: datetime, second: str) -> int:
    """X takes `text`; Mastodon's attempt ends with `second`. Returns the group."""
    first = store.begin_attempt(text, run_id=None, at=at, network="x")
    store.finish_attempt(first, Ending("posted", at, post_id="1", mark_used=True))
    other = store.begin_attempt(text, run_id=None, at=at, network="mastodon", group=first)
    store.finish_attempt(other, Ending(second, at))
    return first


def test_one_post_to_two_networks_counts_once() -> None:
    store = HistoryStore(":memory:")
    _post_to_two(store, "hello", NOW, "posted")
    assert store.posts_since(NOW - timedelta(hours=1)) == 1


def test_a_network_that_failed_for_a_while_is_caught_up_within_the_window_from_the_first_post() -> None:
    store = HistoryStore(":memory:")
    group = _post_to_two(store, "hello", NOW, "temporary")
    _post_to_two(store, "refused for good", NOW, "failed")
    (missed,) = store.catch_ups(NOW - timedelta(hours=24), ["x", "mastodon"])
    assert (missed.group, missed.network, missed.text) == (group, "mastodon", "hello")
    assert store.catch_ups(NOW - timedelta(hours=24), ["x"]) == []  # Mastodon is no longer in POST_TO

    # Retried 23 hours later and failing again: still owed, but only until 24 h after the first post.
    later = NOW + timedelta(hours=23)
    retry = store.begin_attempt("hello", run_id=None, at=later, network="mastodon", group=group, source="catch_up")
    store.finish_attempt(retry, Ending("temporary", later))
    assert [m.text for m in store.catch_ups(later - timedelta(hours=24), ["mastodon"])] == ["hello"]
    after = NOW + timedelta(hours=25)
    assert store.catch_ups(after - timedelta(hours=24), ["mastodon"]) == []

    # Once it went through, it is owed no more.
    done = store.begin_attempt("hello", run_id=None, at=later, network="mastodon", group=group, source="catch_up")
    store.finish_attempt(done, Ending("posted", later))
    assert store.catch_ups(NOW - timedelta(hours=24), ["mastodon"]) == []
    assert store.posts_since(NOW - timedelta(hours=1)) == 2  # the two posts; the catch-up adds none


def test_a_damaged_page_is_found_at_the_first_open_of_a_day_and_by_check(tmp_path: Path) -> None:
    """Reading every page for damage is done once a day (a year's history made it most of what
    opening costs), and by `check` (`verify`) whenever it runs."""
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for number in range(200):
            run = store.begin_run(at=NOW, one_in=4, roll=0, forced=False, dry_run=False)
            store.finish_run(run, at=NOW, action="posted", text=f"text {number} " * 20)
    verified = tmp_path / "history.sqlite3-verified"
    assert verified.read_text().strip() == datetime.now(timezone.utc).strftime("%Y-%m-%d")
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64  # a page the card got wrong
    path.write_bytes(bytes(data))
    # Already verified today: opening does not read every page, `check` does.
    with HistoryStore(path) as store, pytest.raises(HistoryError, match="damaged"):
        store.verify()
    verified.write_text("2000-01-01\n")
    with pytest.raises(HistoryError, match="damaged"):
        HistoryStore(path)
