"""XPoster: the real tweepy client over HTTP to the local X API emulator."""

from __future__ import annotations

import logging
import socket
import time

import pytest
import requests
import urllib3
from conftest import credentials_for
from loopback import Answer
from x_emulator import ERRORS, FIRST_ID, XEmulator, recorded_create_reply

from twitterbot.errors import DuplicatePost, ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.dryrun import DryRunPoster
from twitterbot.networks.x.api import Credentials
from twitterbot.networks.x.errors import network_error
from twitterbot.networks.x.poster import XPoster


def test_a_post_reaches_x_signed_and_comes_back_with_its_id(emulator: XEmulator, poster: XPoster) -> None:
    result = poster.post("Hello from the Pi")
    assert result.post_id == str(FIRST_ID) and result.confirmed
    assert result.url == f"https://x.com/i/status/{FIRST_ID}"
    assert emulator.texts == ["Hello from the Pi"]
    (seen,) = emulator.seen
    assert (seen.method, seen.path, seen.status, seen.body) == ("POST", "/2/tweets", 201, {"text": "Hello from the Pi"})


def test_the_emulator_answers_in_the_recorded_shape() -> None:
    status, headers, body = recorded_create_reply()
    assert status == 201 and set(body["data"]) <= {"id", "text", "edit_history_tweet_ids"}
    assert headers["location"].endswith("/2/tweets/" + body["data"]["id"])


def test_replies_carry_in_reply_to(emulator: XEmulator, poster: XPoster) -> None:
    first = poster.post("root")
    poster.post("child", PostOptions(reply_to=first.post_id))
    assert emulator.posts[1].reply_to == first.post_id


def test_a_wrong_secret_fails_the_signature_check(emulator: XEmulator) -> None:
    keys = credentials_for(emulator)
    wrong = Credentials(keys.api_key, "not-the-secret", keys.access_token, keys.access_token_secret)
    with pytest.raises(PostError) as caught:
        XPoster(wrong, timeout=2, retries=0, base_url=emulator.url).post("hi")
    assert caught.value.kind == "unauthorized" and caught.value.exit_status == ExitStatus.PERMISSION_DENIED
    assert emulator.posts == []


@pytest.mark.parametrize(
    ("failure", "kind", "status", "advice"),
    [
        ("unauthorized", "unauthorized", ExitStatus.PERMISSION_DENIED, "check TWITTER_API_KEY"),
        ("read_only", "read_only", ExitStatus.PERMISSION_DENIED, "'Read and write', then regenerate the Access Token"),
        ("not_in_project", "not_in_project", ExitStatus.PERMISSION_DENIED, "add the app to a Project"),
        ("credits", "credits", ExitStatus.PERMISSION_DENIED, "buy credits"),
        ("too_long", "too_long", ExitStatus.DATA_ERROR, "shorten"),
        ("rate_limit", "rate_limited", ExitStatus.TEMPORARY_FAILURE, "posting works again after"),
        ("usage_cap", "rate_limited", ExitStatus.TEMPORARY_FAILURE, "usage cap"),
    ],
)
def test_each_refusal_says_what_to_do(emulator: XEmulator, poster: XPoster, failure, kind, status, advice) -> None:
    emulator.fail_next(failure)
    with pytest.raises(PostError) as caught:
        poster.post("hello")
    error = caught.value
    assert (error.kind, error.exit_status) == (kind, status)
    assert advice in str(error)
    assert len(emulator.seen) == 1  # refusals are not retried
    assert emulator.posts == []


def test_rate_limit_reports_when_it_resets(emulator: XEmulator, poster: XPoster) -> None:
    emulator.fail_next("rate_limit")
    with pytest.raises(PostError) as caught:
        poster.post("hello")
    assert caught.value.retry_at is not None


def test_the_24_hour_limit_is_told_apart(emulator: XEmulator, poster: XPoster) -> None:
    emulator.posts_per_day = 1
    poster.post("one")
    with pytest.raises(PostError, match="24-hour per-user limit"):
        poster.post("two")


def test_a_duplicate_is_its_own_outcome(emulator: XEmulator, poster: XPoster) -> None:
    poster.post("same words")
    with pytest.raises(DuplicatePost):
        poster.post("same words")
    assert emulator.texts == ["same words"]


def test_server_errors_are_retried_with_backoff_then_succeed(emulator: XEmulator) -> None:
    sleeps = []
    poster = XPoster(credentials_for(emulator), timeout=2, retries=2, base_url=emulator.url, sleep=sleeps.append)
    emulator.fail_next("server_error", "server_error")
    assert poster.post("eventually").post_id
    assert sleeps == [2.0, 4.0]
    assert emulator.texts == ["eventually"]


def test_retries_are_bounded(emulator: XEmulator) -> None:
    sleeps = []
    poster = XPoster(credentials_for(emulator), timeout=2, retries=2, base_url=emulator.url, sleep=sleeps.append)
    emulator.fail_next("server_error", "server_error", "server_error", "server_error")
    with pytest.raises(PostError) as caught:
        poster.post("never")
    assert caught.value.kind == "server_error" and caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert len(emulator.seen) == 3 and len(sleeps) == 2


def test_a_slow_reply_times_out_instead_of_hanging_and_is_uncertain(emulator: XEmulator) -> None:
    emulator.slow_seconds = 1.5
    emulator.fail_next("slow")
    poster = XPoster(credentials_for(emulator), timeout=0.3, retries=2, base_url=emulator.url, sleep=lambda s: None)
    result = poster.post("slowly")
    assert not result.confirmed and result.post_id is None
    assert "did not answer in time" in result.uncertain
    assert len(emulator.seen) <= 1  # sent once, never again


@pytest.mark.parametrize("fault", ["posted_then_drop", "posted_then_slow", "drop"])
def test_a_request_that_may_have_reached_x_is_never_sent_again(fault: str) -> None:
    with XEmulator(duplicate_check=False, slow_seconds=0.6) as emulator:
        poster = XPoster(credentials_for(emulator), timeout=0.3, retries=3, base_url=emulator.url, sleep=lambda s: None)
        emulator.fail_next(fault)
        result = poster.post("only once")
        time.sleep(0.7 if fault == "posted_then_slow" else 0)  # let the emulator finish its slow reply
        posts = [post for post in emulator.posts if post.text == "only once"]
        received = [seen for seen in emulator.seen if seen.path == "/2/tweets"]
    assert not result.confirmed and result.post_id is None
    assert len(posts) == (0 if fault == "drop" else 1)  # zero doubles, with no duplicate check to save us
    assert len(received) == 1
    assert result.check_url == "https://x.com/intent/user?user_id=12345"  # from the access token "12345-..."


def test_failures_that_never_reached_x_are_retried(emulator: XEmulator) -> None:
    sleeps = []
    poster = XPoster(credentials_for(emulator), timeout=2, retries=2, base_url=emulator.url, sleep=sleeps.append)
    emulator.fail_next("server_error")
    assert poster.post("after a 503").confirmed
    assert sleeps == [2.0]


def test_each_network_states_how_it_makes_a_retry_safe(poster: XPoster) -> None:
    assert "no idempotency key" in XPoster.retry_safety
    assert DryRunPoster().retry_safety
    refused = PostError("x", kind="unreachable", exit_status=ExitStatus.TEMPORARY_FAILURE)
    server = PostError("x", kind="server_error", exit_status=ExitStatus.TEMPORARY_FAILURE)
    timeout = PostError("x", kind="timeout", exit_status=ExitStatus.TEMPORARY_FAILURE)
    dropped = PostError("x", kind="network", exit_status=ExitStatus.TEMPORARY_FAILURE)
    assert poster.may_retry(refused) and poster.may_retry(server)
    assert not poster.may_retry(timeout) and not poster.may_retry(dropped)


def test_retry_lines_say_only_what_is_true(emulator: XEmulator, caplog) -> None:
    poster = XPoster(credentials_for(emulator), timeout=2, retries=1, base_url=emulator.url, sleep=lambda s: None)
    emulator.fail_next("server_error")
    with caplog.at_level(logging.WARNING):
        poster.post("retried")
    (line,) = [record.getMessage() for record in caplog.records]
    assert line == "X had a server error (503 Service Unavailable); trying again in 2 s (retry 1 of 1)"


def test_nothing_listening_is_retried_then_a_network_error() -> None:
    with XEmulator() as emu:
        url = emu.url
        keys = credentials_for(emu)
    sleeps = []
    with pytest.raises(PostError) as caught:
        XPoster(keys, timeout=1, retries=1, base_url=url, sleep=sleeps.append).post("hello")
    assert caught.value.kind == "unreachable" and caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert "connection refused" in str(caught.value) and len(sleeps) == 1


def test_an_unresolvable_name_never_reached_x() -> None:
    # Built as requests builds it, so no test asks a real DNS server.
    cause = urllib3.exceptions.NameResolutionError(
        "api.twitter.com", None, socket.gaierror(-2, "Name or service not known")
    )
    wrapped = requests.ConnectionError(urllib3.exceptions.MaxRetryError(None, "/2/tweets", cause))
    error = network_error(wrapped)
    assert error.kind == "unreachable" and "the name did not resolve" in str(error)


def test_verify_returns_the_account(emulator: XEmulator, poster: XPoster) -> None:
    assert poster.verify() == "pi_bot"
    emulator.fail_next("unauthorized")
    with pytest.raises(PostError, match="401"):
        poster.verify()


def test_every_scripted_x_error_is_classified(emulator: XEmulator, poster: XPoster) -> None:
    for number, failure in enumerate(sorted(ERRORS)):
        emulator.fail_next(failure)
        try:
            poster.post(f"text {number}")
        except PostError as error:
            assert error.kind != "unexpected", failure
        else:
            assert failure == "server_error"  # retried once, then posted


@pytest.mark.parametrize(
    "answer",
    [
        Answer(["not", "an", "object"], status=201),
        Answer("a string", status=201),
        Answer(b"[" * 100_000 + b"]" * 100_000, status=201),  # nested past what a JSON reader takes
        Answer(["errors"], status=403),
        Answer({"errors": "not a list", "title": 3}, status=400),
    ],
)
def test_an_answer_to_a_post_x_s_client_cannot_read_is_uncertain_never_a_crash(
    emulator: XEmulator, poster: XPoster, answer: Answer
) -> None:
    """X made the post, then answered something that is not the object its API documents: the
    post may be there, so it is uncertain (counted as posted, looked up later), never exit 1."""
    emulator.answer_next("post", answer)
    try:
        result = poster.post("A post whose answer cannot be read")
    except PostError as exc:  # a refusal X's error body could still say
        assert exc.kind is not None
        return
    assert result.uncertain and "could not be read" in result.uncertain and result.post_id is None
    assert emulator.texts == ["A post whose answer cannot be read"]
