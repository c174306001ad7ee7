"""The status page's reader (`state/reader.py`): read-only, and a history of 0.1.0 (schema 3) is read
as it is, without being migrated, with the same answers a migrated one gives."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from twitterbot.state.outcomes import Ending
from twitterbot.state.reader import UnreadableHistory, read_history
from twitterbot.state.store import HistoryStore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "state" / "history-schema3.sqlite"
WRITTEN = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)
REFUSAL = "X rejected the keys (401 Unauthorized): check TWITTER_API_KEY"


def test_a_schema_3_history_is_read_as_it_is_and_left_unmigrated(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    shutil.copyfile(FIXTURE, path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "INSERT INTO attempts (source, text, sent_at, outcome, detail, network)"
            " VALUES ('scheduled', 'hi', '2026-11-21T06:00:00.000000Z', 'failed', ?, 'mastodon')",
            (REFUSAL,),
        )
    before = path.read_bytes()
    with read_history(path) as history:
        assert history.posts_since(WRITTEN - timedelta(seconds=1), WRITTEN + timedelta(days=1)) == 4
        assert history.used_texts() == {"Hello from my Pi", "Second line <b>"}
        runs = history.recent_runs(10)
        assert [run.action for run in runs] == ["uncertain", "skipped", "posted"]
        assert any(attempt.post_id == "1890000000000000001" for attempt in runs[2].attempts)
        assert history.keys_refused("mastodon").detail == REFUSAL  # found by its message, as migration 4 does
        assert history.keys_refused("x") is None
        assert [thread.post_id for job in history.latest_jobs(10) for thread in job.threads] == ["1890000000000000002"]
        assert history.missed_lines(WRITTEN - timedelta(days=400), 5) == ()  # no missed table before schema 10
    assert path.read_bytes() == before


def test_refused_keys_are_found_by_the_error_kind(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    at = datetime(2026, 3, 1, tzinfo=timezone.utc)
    with HistoryStore(path) as store:
        for network, detail, kind in (("x", "no words to go by", "unauthorized"), ("bluesky", REFUSAL, "server_error")):
            attempt = store.begin_attempt("hi", run_id=None, at=at, network=network)
            store.finish_attempt(attempt, Ending("failed", at, detail=detail, error_kind=kind))
    with read_history(path) as history:
        assert history.keys_refused("x").detail == "no words to go by"
        assert history.keys_refused("bluesky") is None


def test_a_file_that_is_not_ours_is_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE other (x)")
    with pytest.raises(UnreadableHistory, match="is not a twitterbot history database"), read_history(path):
        pass
