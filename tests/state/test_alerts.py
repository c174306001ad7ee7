"""The alerts table: an alert the monitor took is open until settled; one it did not take is owed,
handed back when its problem is settled first, and owed no more once the owner is told."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from twitterbot.state.alerts import OwedAlert
from twitterbot.state.store import HistoryStore

FIRST = datetime(2026, 5, 1, 6, 0, tzinfo=timezone.utc)


def test_an_owed_alert_is_handed_back_when_its_problem_is_settled(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        store.owe_alert("keys:x", at=FIRST, title="X refused\nthe keys", message="401 Unauthorized\nsee the log")
        store.owe_alert("keys:x", at=FIRST + timedelta(hours=1), title="X refused the keys", message="again")
        assert store.owed_alerts() == ["keys:x"] and store.open_alerts() == []
        assert not store.alert_sent("keys:x")  # owed is not sent: the next run sends it again
        assert store.settle_alerts(["run"]) == []
        owed = store.settle_alerts(["keys:x", "keys:x"])
        assert owed == [OwedAlert("keys:x", FIRST, "X refused the keys", "401 Unauthorized\nsee the log")]
        assert store.settle_alerts(["keys:x"]) == owed  # owed until the owner is told
        store.forget_owed("keys:x")
        assert store.settle_alerts(["keys:x"]) == [] and store.owed_alerts() == []


def test_an_alert_taken_later_pays_what_was_owed(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        store.owe_alert("run", at=FIRST, title="the run failed", message="X did not answer")
        assert store.record_alert("run", at=FIRST + timedelta(hours=1), message="X did not answer") is True
        assert store.owed_alerts() == [] and store.open_alerts() == ["run"] and store.alert_sent("run")
        assert store.settle_alerts(["run"]) == [] and store.open_alerts() == []
