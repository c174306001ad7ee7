"""A bounded history: runs older than HISTORY_DAYS become daily counts, their rows go, and nothing
the round, the cap, settling, a grammar's memory or a running job needs is ever removed."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import BotHome

from twitterbot.state.outcomes import Ending
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
OLD = NOW - timedelta(days=500)


def _post(store: HistoryStore, text: str, at: datetime, outcome: str = "posted") -> int:
    run = store.begin_run(at=at, one_in=1, roll=0, forced=False, dry_run=False)
    attempt = store.begin_attempt(text, run_id=run, at=at, network="x")
    store.finish_attempt(attempt, Ending(outcome, at, post_id=str(attempt), mark_used=outcome == "posted"))
    store.finish_run(run, at=at, action="posted" if outcome == "posted" else outcome, text=text)
    return attempt


def _count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    conn.close()
    return count


def test_old_runs_become_daily_counts_and_what_is_still_needed_stays(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for day in range(3):
            _post(store, f"old post {day}", OLD + timedelta(days=day))
            store.record_skip(OLD + timedelta(days=day, hours=1), one_in=4, roll=2, reason="rolled 2 of 4")
        _post(store, "an old post whose outcome is not known", OLD + timedelta(days=4), outcome="uncertain")
        job = store.open_job("monkey", at=OLD, run_key=None)  # still running: its posts stay
        store.begin_job_attempt(job.id, "The monkey has typed 1,000 keys", at=OLD, final=False, network="x")
        _post(store, "a recent post", NOW - timedelta(days=1))
        assert store.due_for_pruning(NOW - timedelta(days=400))
        assert store.scheduled_posts() == 4  # a post's number ({n}) counts the posted runs
        store.prune(before=NOW - timedelta(days=400), texts_since=NOW - timedelta(days=365), at=NOW)
        assert not store.due_for_pruning(NOW - timedelta(days=400))
        assert store.scheduled_posts() == 4  # and still counts them once they are daily counts
        assert [run.text for run in store.recent_runs(10) if run.text] == ["a recent post"]
        assert store.posts_since(NOW - timedelta(days=2)) == 1  # the cap counts as before
        assert store.last_posted_text() == "a recent post"
        assert "old post 0" in store.used_texts()  # the round is the bag: untouched
        size = store.size()
        assert size.runs >= 1 and size.folded_days == 4 and size.oldest is not None
    with sqlite3.connect(path) as conn:
        days = conn.execute("SELECT day, runs, posted, skipped FROM days ORDER BY day").fetchall()
        texts = {row[0] for row in conn.execute("SELECT text FROM attempts")}
    conn.close()
    first = f"{OLD:%Y-%m-%d}"
    assert days[0] == (first, 2, 1, 1)  # the day's post and its skipped run
    assert texts == {"an old post whose outcome is not known", "The monkey has typed 1,000 keys", "a recent post"}


def test_a_grammar_s_memory_keeps_its_posts_past_history_days(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        _post(store, "drawn a year and a half ago", NOW - timedelta(days=540))
        _post(store, "drawn 450 days ago", NOW - timedelta(days=450))
        _post(store, "drawn yesterday", NOW - timedelta(days=1))
        store.prune(before=NOW - timedelta(days=400), texts_since=NOW - timedelta(days=500), at=NOW)
        assert store.texts_posted_since(NOW - timedelta(days=500)) == {"drawn 450 days ago", "drawn yesterday"}
    assert _count(path, "runs") == 1  # the runs themselves are folded all the same


def test_a_run_prunes_what_is_older_than_history_days(home: BotHome) -> None:
    home.write_env(HISTORY_DAYS="30", MIN_POST_GAP="0")
    state = home.path / "state"
    state.mkdir()
    with HistoryStore(state / "history.sqlite3") as store:
        _post(store, "a post from long ago", datetime.now(timezone.utc) - timedelta(days=90))
    for _ in range(2):  # the first prunes from the newest record (90 days ago), the second from now
        result = home.run("--force")
        assert result.returncode == 0, result.stderr
    assert _count(state / "history.sqlite3", "days") == 1
    check = home.run("check")
    assert "1 earlier day as daily counts (HISTORY_DAYS=30 keeps runs row by row)" in check.stdout
