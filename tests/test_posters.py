"""XPoster: the real tweepy client over HTTP to the local X API emulator."""

from __future__ import annotations

import pytest
from conftest import credentials_for
from x_emulator import ERRORS, FIRST_ID, XEmulator, recorded_create_reply

from twitterbot.config import Credentials
from twitterbot.errors import DuplicatePost, ExitStatus, PostError
from twitterbot.posters import XPoster


def test_a_post_reaches_x_signed_and_comes_back_with_its_id(emulator: XEmulator, poster: XPoster) -> None:
    result = poster.post("Hello from the Pi")
    assert result.tweet_id == str(FIRST_ID) and result.confirmed
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
    poster.post("child", reply_to=first.tweet_id)
    assert emulator.posts[1].reply_to == first.tweet_id


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
    assert poster.post("eventually").tweet_id
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


def test_a_slow_reply_times_out_instead_of_hanging(emulator: XEmulator) -> None:
    emulator.slow_seconds = 1.5
    emulator.fail_next("slow")
    poster = XPoster(credentials_for(emulator), timeout=0.3, retries=0, base_url=emulator.url)
    with pytest.raises(PostError) as caught:
        poster.post("slowly")
    assert caught.value.kind == "timeout" and "X_API_TIMEOUT" in str(caught.value)


def test_a_dropped_connection_is_a_network_error(emulator: XEmulator) -> None:
    emulator.fail_next("drop")
    poster = XPoster(credentials_for(emulator), timeout=2, retries=0, base_url=emulator.url)
    with pytest.raises(PostError) as caught:
        poster.post("hello")
    assert caught.value.kind == "network" and caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE


def test_nothing_listening_is_a_network_error() -> None:
    with XEmulator() as emu:
        url = emu.url
        keys = credentials_for(emu)
    with pytest.raises(PostError) as caught:
        XPoster(keys, timeout=1, retries=0, base_url=url).post("hello")
    assert caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE


def test_a_lost_reply_then_duplicate_means_it_was_posted_once(emulator: XEmulator, poster: XPoster) -> None:
    emulator.fail_next("posted_then_drop")
    result = poster.post("only once")
    assert result.tweet_id is None and not result.confirmed
    assert emulator.texts == ["only once"]


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
