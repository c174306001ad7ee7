"""The one retry policy and the one rate-limit message (`twitterbot/networks/retry.py`)."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks.retry import Backoff, rate_limited


def test_backoff_doubles_and_says_what_comes_next(caplog) -> None:
    slept = []
    policy = Backoff(retries=3, sleep=slept.append)
    error = PostError(
        "X had a server error (503): ...",
        kind=ErrorKind.SERVER_ERROR,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        summary="X had a server error (503)",
    )
    assert list(policy.attempts()) == [0, 1, 2, 3]
    with caplog.at_level(logging.WARNING):
        for retry in (1, 2, 3):
            policy.wait(retry, error, "with the same key" if retry == 3 else "")
    assert slept == [2.0, 4.0, 8.0]
    assert caplog.messages == [
        "X had a server error (503); trying again in 2 s (retry 1 of 3)",
        "X had a server error (503); trying again in 4 s (retry 2 of 3)",
        "X had a server error (503); trying again in 8 s with the same key (retry 3 of 3)",
    ]


def test_a_rate_limit_is_one_message_for_every_network() -> None:
    reset = datetime(2030, 5, 1, 12, 0, tzinfo=timezone.utc)
    error = rate_limited("Mastodon", "429", reset)
    assert error.kind == ErrorKind.RATE_LIMITED and error.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert error.retry_at == reset
    assert str(error).startswith(
        "Mastodon says too many requests (429): nothing was posted; posting works again after "
    )
    assert str(rate_limited("Bluesky", "429 RateLimitExceeded")).endswith("posting works again later")
