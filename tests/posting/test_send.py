"""The one send step (`twitterbot/delivery/send.py`): a recorded attempt goes through send ->
outcome -> record, whatever the network answers, with a real history in memory."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from typing import Callable, Optional

import pytest
from conftest import REGISTRY

from twitterbot.delivery.attempts import line_ending
from twitterbot.delivery.send import send
from twitterbot.errors import DuplicatePost, ErrorKind, ExitStatus, PostError
from twitterbot.networks import PostResult
from twitterbot.state.outcomes import Outcome
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
X = REGISTRY.network("x")


def _answer(kind: str) -> Callable[[], PostResult]:
    def post() -> PostResult:
        if kind == "posted":
            return PostResult("hello", post_id="42", url="https://x.com/i/status/42")
        if kind == "uncertain":
            return PostResult("hello", post_id=None, uncertain="no answer came", check_url="https://x.com/pibot")
        if kind == "duplicate":
            raise DuplicatePost("X already has a post with exactly this text")
        status = ExitStatus.TEMPORARY_FAILURE if kind == "temporary" else ExitStatus.PERMISSION_DENIED
        raise PostError(f"{kind} failure", kind=ErrorKind.SERVER_ERROR, exit_status=status)

    return post


@pytest.mark.parametrize(
    ("answer", "outcome", "used", "post_id", "error_kind"),
    [
        ("posted", Outcome.POSTED, True, "42", None),
        ("uncertain", Outcome.UNCERTAIN, True, None, "uncertain"),  # counted as posted: never sent again
        ("duplicate", Outcome.DUPLICATE, True, None, "duplicate"),
        ("temporary", Outcome.TEMPORARY, False, None, "server_error"),  # a later run catches up
        ("failed", Outcome.FAILED, False, None, "server_error"),
    ],
)
def test_each_answer_is_recorded_as_its_outcome(
    tmp_path, answer: str, outcome: Outcome, used: bool, post_id: Optional[str], error_kind: Optional[str]
) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        run = store.begin_run(at=NOW, one_in=1, roll=0, forced=False, dry_run=False)
        attempt = store.begin_attempt("hello", run_id=run, at=NOW, network="x")
        sent = send(_answer(answer), network=X, record=line_ending(store, attempt, clock=lambda: NOW))
        assert sent.outcome == outcome and sent.reached == (outcome in (Outcome.POSTED, Outcome.UNCERTAIN))
        assert ("hello" in store.used_texts()) == used
    query = "SELECT outcome, post_id, error_kind FROM attempts WHERE id = ?"
    row = sqlite3.connect(path).execute(query, (attempt,)).fetchone()
    assert row == (outcome.value, post_id, error_kind)  # the error's kind, as --json's "error"
    assert sent.as_dict()["outcome"] == outcome.value


def test_an_uncertain_post_says_where_to_look() -> None:
    recorded = []
    sent = send(_answer("uncertain"), network=X, record=lambda *args: recorded.append(args))
    assert recorded == [(Outcome.UNCERTAIN, sent.result, "no answer came", ErrorKind.UNCERTAIN)]
    assert sent.error is not None and sent.error.kind == ErrorKind.UNCERTAIN
    assert "X may or may not have posted it (no answer came)" in str(sent.error)
    assert "see https://x.com/pibot to check" in str(sent.error)
