"""A run that posts nothing writes no row of the history: it joins the day's streak of skipped
runs in one small file, rewritten in place, which the next run that writes anyway (or the first
skip of another day) folds into one row standing for all of them. `history`, the status page and
the clock check read the streak as the newest run; the log says a steady skip once."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import BotHome

from twitterbot.state.reader import read_history
from twitterbot.state.skips import SKIPS_FILE, SkipLog
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def _runs(path: Path) -> list:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT action, runs, started_at, finished_at FROM runs ORDER BY id").fetchall()
    conn.close()
    return rows


def test_skipped_runs_write_no_row_and_are_folded_into_one_by_the_next_run_that_writes(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for minutes in range(5):
            streak = store.record_skip(NOW + timedelta(minutes=minutes), one_in=4, roll=3, reason="rolled 3 of 4")
        assert streak.runs == 5 and _runs(path) == []
        newest = store.recent_runs(3)
        assert [(run.action, run.runs) for run in newest] == [("skipped", 5)]
        assert "the last of 5 runs skipped" in (newest[0].reason or "")
        assert store.last_run_started() == NOW + timedelta(minutes=4)
        run = store.begin_run(at=NOW + timedelta(minutes=10), one_in=4, roll=0, forced=False, dry_run=False)
        store.finish_run(run, at=NOW + timedelta(minutes=10), action="posted", text="hi")
        assert [row[:2] for row in _runs(path)] == [("skipped", 5), ("posted", 1)]
        assert store.skips.read() is None
        assert [(run.action, run.runs) for run in store.recent_runs(5)] == [("posted", 1), ("skipped", 5)]


def test_the_first_skip_of_another_day_folds_the_day_before(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for hours in (0, 1, 2):
            store.record_skip(NOW + timedelta(hours=hours), one_in=4, roll=1, reason="rolled 1 of 4")
        store.record_skip(NOW + timedelta(days=1), one_in=4, roll=2, reason="rolled 2 of 4")
    rows = _runs(path)
    assert [row[:2] for row in rows] == [("skipped", 3)]
    assert rows[0][2].startswith("2026-11-22T12:00") and rows[0][3].startswith("2026-11-22T14:00")
    assert SkipLog(tmp_path / SKIPS_FILE).read().runs == 1  # the new day's streak


def test_a_streak_folded_but_not_cleared_is_not_folded_twice(tmp_path: Path) -> None:
    """A run killed between its commit and clearing the streak's file leaves the streak behind."""
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        store.record_skip(NOW, one_in=4, roll=1, reason="rolled 1 of 4")
        kept = (tmp_path / SKIPS_FILE).read_bytes()
        store.begin_run(at=NOW + timedelta(minutes=1), one_in=4, roll=0, forced=False, dry_run=False)
        (tmp_path / SKIPS_FILE).write_bytes(kept)
        store.begin_run(at=NOW + timedelta(minutes=2), one_in=4, roll=0, forced=False, dry_run=False)
    assert [row[:2] for row in _runs(path)] == [("skipped", 1), ("running", 1), ("running", 1)]


def test_a_damaged_streak_file_is_taken_for_none(tmp_path: Path) -> None:
    (tmp_path / SKIPS_FILE).write_bytes(b'{"runs": 3, "first": "yesterday"')
    assert SkipLog(tmp_path / SKIPS_FILE).read() is None
    (tmp_path / SKIPS_FILE).write_bytes(b"\xff\xfe")
    assert SkipLog(tmp_path / SKIPS_FILE).read() is None
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        assert store.record_skip(NOW, one_in=4, roll=1, reason="rolled 1 of 4").runs == 1


def test_the_record_is_rewritten_in_place_at_one_size(tmp_path: Path) -> None:
    skips = SkipLog(tmp_path / SKIPS_FILE)
    skips.add(NOW, one_in=4, roll=1, reason="a long reason " * 200)  # cut to fit, the counts kept
    size = (tmp_path / SKIPS_FILE).stat().st_size
    skips.add(NOW, one_in=4, roll=1, reason="short")
    assert (tmp_path / SKIPS_FILE).stat().st_size == size == 1024
    assert json.loads((tmp_path / SKIPS_FILE).read_text())["runs"] == 2


def test_the_status_page_reads_the_streak_as_the_newest_run(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        run = store.begin_run(at=NOW, one_in=4, roll=0, forced=False, dry_run=False)
        store.finish_run(run, at=NOW, action="posted", text="hi")
        store.record_skip(NOW + timedelta(hours=1), one_in=4, roll=2, reason="rolled 2 of 4")
        store.record_skip(NOW + timedelta(hours=2), one_in=4, roll=3, reason="rolled 3 of 4")
    with read_history(path) as history:
        runs = history.recent_runs(5)
    assert [run.action for run in runs] == ["skipped", "posted"]
    assert runs[0].started_at == NOW + timedelta(hours=2) and "rolled 3 of 4" in (runs[0].reason or "")


def test_a_run_the_roll_skips_says_so_once_a_streak(home: BotHome) -> None:
    home.write_env(TWEET_ONE_IN="1000000")
    first = home.run()
    second = home.run()
    assert first.returncode == second.returncode == 0
    assert "skipped: rolled" in first.stderr
    assert "skipped" not in second.stderr  # the same news again: at DEBUG only
    assert (
        not (home.path / "state" / "history.sqlite3").exists() or _runs(home.path / "state" / "history.sqlite3") == []
    )
    history = home.run("history")
    assert "the last of 2 runs skipped" in history.stdout
    verbose = home.run(env={"LOG_LEVEL": "DEBUG"})
    assert "skipped 3 runs in a row today" in verbose.stderr


def test_a_skip_the_state_folder_cannot_take_is_a_row_of_the_history(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        store.skips = SkipLog(tmp_path / "gone" / SKIPS_FILE)  # a folder that takes no new file
        assert store.record_skip(NOW, one_in=4, roll=1, reason="rolled 1 of 4").runs == 1
    assert [row[:2] for row in _runs(path)] == [("skipped", 1)]


def test_a_run_s_row_goes_with_its_first_attempt_and_a_dry_run_meanwhile_takes_nothing_of_it(tmp_path: Path) -> None:
    """A real run (holding the run lock) writes its row with its first attempt; a dry run, which
    takes no lock, may write its own row in between: each keeps its own id, and the attempt names
    its own run."""
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as real, HistoryStore(path) as dry:
        planned = real.begin_run(at=NOW, one_in=1, roll=0, forced=False, dry_run=False, held=True)
        assert _runs(path) == []  # nothing written yet
        other = dry.begin_run(at=NOW, one_in=1, roll=0, forced=True, dry_run=True)
        attempt = real.begin_attempt("hello", run_id=planned, at=NOW, network="x")
        real.finish_run(planned, at=NOW, action="posted", text="hello")
    with sqlite3.connect(path) as conn:
        (run_of_attempt,) = conn.execute("SELECT run_id FROM attempts WHERE id = ?", (attempt,)).fetchone()
        rows = dict(conn.execute("SELECT id, dry_run FROM runs").fetchall())
    conn.close()
    assert run_of_attempt == int(planned) != other and rows == {other: 1, int(planned): 0}
