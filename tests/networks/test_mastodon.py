"""MastodonPoster: the real Mastodon.py client over HTTP to mastodon-mock and to the local emulator."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from typing import List

import pytest
from conftest import REPO
from mastodon_server import FIRST_ID, TOKEN, MastodonEmulator, MockInstance

from twitterbot.errors import ConfigError, ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.mastodon.poster import IDEMPOTENCY_KEY_LIFETIME, MastodonPoster
from twitterbot.settings.secrets import encodings


def poster_for(server, *, retries: int = 1, timeout: float = 2, sleeps: List[float] = None, **kwargs) -> MastodonPoster:
    """The real poster, pointed at a test server; never sleeps between retries."""
    settings = server.env()
    return MastodonPoster(
        instance=settings["MASTODON_INSTANCE"],
        access_token=kwargs.pop("access_token", settings["MASTODON_ACCESS_TOKEN"]),
        visibility=kwargs.pop("visibility", "unlisted"),
        timeout=timeout,
        retries=retries,
        sleep=sleeps.append if sleeps is not None else (lambda seconds: None),
        **kwargs,
    )


# -- against mastodon-mock -------------------------------------------------------------------------


def test_a_post_reaches_the_mock_and_comes_back_with_its_id_and_link(mastodon_mock: MockInstance) -> None:
    result = poster_for(mastodon_mock).post("Hello from the Pi")
    assert result.confirmed and result.post_id
    (status,) = mastodon_mock.statuses()
    assert str(status["id"]) == result.post_id and status["visibility"] == "unlisted"
    assert result.url == status["url"]


def test_a_thread_on_the_mock(mastodon_mock: MockInstance) -> None:
    poster = poster_for(mastodon_mock)
    root = poster.post("Job started")
    child = poster.post("Halfway", PostOptions(reply_to=root.post_id))
    statuses = {str(status["id"]): status for status in mastodon_mock.statuses()}
    assert str(statuses[child.post_id]["in_reply_to_id"]) == root.post_id


def test_the_visibility_setting_reaches_the_server(mastodon_mock: MockInstance) -> None:
    for visibility in ("public", "private", "direct"):
        poster_for(mastodon_mock, visibility=visibility).post(f"hi @bob, {visibility}")
    assert [status["visibility"] for status in mastodon_mock.statuses()] == ["direct", "private", "public"]


def test_a_post_may_be_more_private_than_the_setting_never_more_public(mastodon_mock: MockInstance) -> None:
    poster = poster_for(mastodon_mock, visibility="unlisted")
    poster.post("one", PostOptions(visibility="public"))
    poster.post("two", PostOptions(visibility="private"))
    poster.post("three", PostOptions(visibility="direct", sensitive=True))
    seen = {status["content"]: status for status in mastodon_mock.statuses()}
    assert [seen[f"<p>{text}</p>"]["visibility"] for text in ("one", "two", "three")] == [
        "unlisted",
        "private",
        "direct",
    ]
    assert seen["<p>three</p>"]["sensitive"] is True and seen["<p>one</p>"]["sensitive"] is False


def test_a_bad_token_is_unauthorized_on_the_mock(mastodon_mock: MockInstance) -> None:
    poster = poster_for(mastodon_mock, access_token="not-a-token")
    with pytest.raises(PostError) as caught:
        poster.post("hi")
    assert (caught.value.kind, caught.value.exit_status) == ("unauthorized", ExitStatus.PERMISSION_DENIED)
    assert "MASTODON_ACCESS_TOKEN" in str(caught.value)
    with pytest.raises(PostError, match="Preferences > Development"):
        poster.account()


def test_too_long_for_the_mock(mastodon_mock: MockInstance) -> None:
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_mock).post("x" * 501)
    assert (caught.value.kind, caught.value.exit_status) == ("too_long", ExitStatus.DATA_ERROR)
    assert mastodon_mock.statuses() == []


def test_account_and_limit_from_the_mock(mastodon_mock: MockInstance) -> None:
    poster = poster_for(mastodon_mock)
    assert poster.account() == "@alice@mock.local"
    assert poster.account_url == "https://mock.local/@alice"
    assert poster.limit() == 500


def test_the_mocks_rate_limit_says_when_it_resets(mastodon_mock: MockInstance) -> None:
    mastodon_mock.fault({"type": "ratelimit"})
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_mock).post("hi")
    error = caught.value
    assert (error.kind, error.exit_status) == ("rate_limited", ExitStatus.TEMPORARY_FAILURE)
    assert error.retry_at is not None and 200 < error.retry_at.timestamp() - time.time() < 400  # reset: now + 300 s
    assert "posting works again after" in str(error)
    assert mastodon_mock.statuses() == []


def test_a_server_error_from_the_mock_is_retried_then_posts_once(mastodon_mock: MockInstance) -> None:
    sleeps: List[float] = []
    mastodon_mock.fault({"type": "status", "status": 502}, count=2)
    result = poster_for(mastodon_mock, retries=2, sleeps=sleeps).post("eventually")
    assert result.confirmed and sleeps == [2.0, 4.0]
    assert [s["content"] for s in mastodon_mock.statuses()] == ["<p>eventually</p>"]


def test_a_garbled_answer_from_the_mock_is_retried_with_the_same_key(mastodon_mock: MockInstance) -> None:
    """The mock's 'malformed' fault answers before posting; the retry posts, once."""
    mastodon_mock.fault({"type": "malformed"})
    result = poster_for(mastodon_mock, retries=1).post("garbled first")
    assert result.confirmed
    assert len(mastodon_mock.statuses()) == 1


def test_the_mock_replays_a_repeated_idempotency_key(mastodon_mock: MockInstance) -> None:
    """What our retries rely on, checked on the mock with Mastodon.py itself."""
    from mastodon import Mastodon

    client = Mastodon(access_token=mastodon_mock.token, api_base_url=mastodon_mock.url)
    first = client.status_post("once", idempotency_key="same-key")
    again = client.status_post("once", idempotency_key="same-key")
    assert first["id"] == again["id"] and len(mastodon_mock.statuses()) == 1


# -- against the emulator: what the mock cannot do -------------------------------------------------


def test_a_post_to_the_emulator_sends_what_mastodon_reads(mastodon_emulator: MastodonEmulator) -> None:
    result = poster_for(mastodon_emulator).post("Hello https://example.com/" + "p" * 600)
    assert result.post_id == str(FIRST_ID) and result.url == mastodon_emulator.status_url(str(FIRST_ID))
    (seen,) = mastodon_emulator.seen
    assert (seen.method, seen.path, seen.status) == ("POST", "/api/v1/statuses", 200)
    assert seen.fields["visibility"] == "unlisted" and seen.fields["status"].startswith("Hello https://")
    assert seen.headers["Authorization"] == f"Bearer {TOKEN}"
    assert len(seen.headers["Idempotency-Key"]) >= 32


def test_each_post_has_its_own_idempotency_key(mastodon_emulator: MastodonEmulator) -> None:
    poster = poster_for(mastodon_emulator)
    poster.post("one")
    poster.post("two")
    keys = [seen.headers["Idempotency-Key"] for seen in mastodon_emulator.seen]
    assert len(set(keys)) == 2 and mastodon_emulator.texts == ["one", "two"]


def test_a_reply_names_its_parent(mastodon_emulator: MastodonEmulator) -> None:
    poster = poster_for(mastodon_emulator)
    root = poster.post("root")
    poster.post("child", PostOptions(reply_to=root.post_id))
    assert mastodon_emulator.statuses[1].in_reply_to_id == root.post_id


def test_a_reply_to_a_deleted_status_is_refused(mastodon_emulator: MastodonEmulator) -> None:
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_emulator).post("child", PostOptions(reply_to="123"))
    assert (caught.value.kind, caught.value.exit_status) == ("rejected", ExitStatus.DATA_ERROR)
    assert "deleted" in str(caught.value)


@pytest.mark.parametrize(
    ("failure", "kind", "status", "advice"),
    [
        (
            "unauthorized",
            "unauthorized",
            ExitStatus.PERMISSION_DENIED,
            "copy 'Your access token' into MASTODON_ACCESS_TOKEN",
        ),
        ("revoked", "unauthorized", ExitStatus.PERMISSION_DENIED, "Preferences > Development"),
        ("suspended", "forbidden", ExitStatus.PERMISSION_DENIED, "a suspended or disabled account"),
        ("scope", "forbidden", ExitStatus.PERMISSION_DENIED, "write:statuses"),
        ("too_long", "too_long", ExitStatus.DATA_ERROR, "shorten that line"),
        ("rate_limit", "rate_limited", ExitStatus.TEMPORARY_FAILURE, "posting works again after"),
    ],
)
def test_each_refusal_says_what_to_do_and_is_not_retried(
    mastodon_emulator: MastodonEmulator, failure, kind, status, advice
) -> None:
    mastodon_emulator.fail_next(failure)
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_emulator, retries=3).post("hello")
    assert (caught.value.kind, caught.value.exit_status) == (kind, status)
    assert advice in str(caught.value)
    assert len(mastodon_emulator.seen) == 1 and mastodon_emulator.statuses == []


def test_the_emulator_counts_like_mastodon(mastodon_emulator: MastodonEmulator) -> None:
    """A link counts 23 on the server too: 476 + 1 + 23 = 500 fits, one more character does not."""
    poster = poster_for(mastodon_emulator)
    assert poster.post("x" * 476 + " https://example.com/" + "p" * 300).confirmed
    with pytest.raises(PostError) as caught:
        poster.post("x" * 477 + " https://example.com/" + "p" * 300)
    assert caught.value.kind == "too_long" and "character limit of 500" in str(caught.value)


def test_a_rate_limit_reset_is_read_from_mastodons_iso_header(mastodon_emulator: MastodonEmulator) -> None:
    mastodon_emulator.fail_next("rate_limit")
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_emulator).post("hello")
    assert 500 < caught.value.retry_at.timestamp() - time.time() < 700  # the emulator's reset: in 10 minutes


def test_server_errors_are_retried_with_backoff_and_bounded(mastodon_emulator: MastodonEmulator) -> None:
    sleeps: List[float] = []
    mastodon_emulator.fail_next("server_error", "server_error", "server_error")
    with pytest.raises(PostError) as caught:
        poster_for(mastodon_emulator, retries=2, sleeps=sleeps).post("never")
    assert (caught.value.kind, caught.value.exit_status) == ("server_error", ExitStatus.TEMPORARY_FAILURE)
    assert sleeps == [2.0, 4.0] and len(mastodon_emulator.seen) == 3 and mastodon_emulator.statuses == []


@pytest.mark.parametrize("fault", ["posted_then_drop", "posted_then_slow", "posted_then_garble", "drop", "slow"])
def test_a_lost_reply_is_retried_with_the_same_key_and_makes_exactly_one_status(fault: str) -> None:
    with MastodonEmulator(slow_seconds=0.8) as emulator:
        emulator.fail_next(fault)
        result = poster_for(emulator, retries=2, timeout=0.4).post("only once")
        time.sleep(0.9 if "slow" in fault else 0)  # let a slow first try finish on the server
        statuses = [status for status in emulator.statuses if status.text == "only once"]
        tries = [seen for seen in emulator.seen if seen.path == "/api/v1/statuses"]
    assert result.confirmed and len(statuses) == 1 and result.post_id == statuses[0].id
    assert len({seen.headers["Idempotency-Key"] for seen in tries}) == 1  # every try, one key


def test_no_answer_after_every_retry_is_uncertain_not_an_error() -> None:
    with MastodonEmulator() as emulator:
        emulator.fail_next("posted_then_drop", "drop", "drop")
        sleeps: List[float] = []
        result = poster_for(emulator, retries=2, sleeps=sleeps).post("lost")
    assert not result.confirmed and result.post_id is None
    assert "broke after the request was sent" in result.uncertain and "3 tries" in result.uncertain
    assert result.check_url == emulator.url
    assert emulator.texts == ["lost"] and len(sleeps) == 2


def test_an_answer_whose_headers_cannot_be_read_is_uncertain_never_rate_limited() -> None:
    """Mastodon.py raises its rate-limit error for an unreadable X-RateLimit-Reset even on a 200:
    that status exists, so "nothing was posted" would be a lie that leads to a second post."""
    with MastodonEmulator() as emulator:
        emulator.fail_next("posted_then_bad_header")
        unsure = poster_for(emulator, retries=0).post("made it")
        emulator.fail_next("posted_then_bad_header")
        retried = poster_for(emulator, retries=1).post("made it too")
    assert not unsure.confirmed and "rate-limit headers that could not be read" in unsure.uncertain
    # The retry, with the same key, got the first try's status back: confirmed, and no second one.
    assert retried.confirmed and retried.post_id == emulator.statuses[1].id
    assert emulator.texts == ["made it", "made it too"]


def test_a_failure_after_a_maybe_posted_try_is_still_uncertain(mastodon_emulator: MastodonEmulator) -> None:
    """The first try may have made the status; a refusal of the retry says nothing about it."""
    mastodon_emulator.fail_next("posted_then_drop", "rate_limit")
    result = poster_for(mastodon_emulator, retries=2).post("maybe")
    assert not result.confirmed and mastodon_emulator.texts == ["maybe"]


def test_a_key_the_server_has_forgotten_makes_a_second_status() -> None:
    """Why the retry window matters: after an hour the key no longer protects (documented)."""
    with MastodonEmulator(idempotency_ttl=0.0) as emulator:
        emulator.fail_next("posted_then_drop")
        poster_for(emulator, retries=1).post("twice")
    assert emulator.texts == ["twice", "twice"]
    assert IDEMPOTENCY_KEY_LIFETIME == 3600


def test_nothing_listening_is_unreachable_and_retried() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: List[float] = []
    poster = MastodonPoster(
        instance=f"http://127.0.0.1:{port}",
        access_token=TOKEN,
        visibility="unlisted",
        timeout=1,
        retries=1,
        sleep=sleeps.append,
    )
    with pytest.raises(PostError) as caught:
        poster.post("hi")
    assert (caught.value.kind, caught.value.exit_status) == ("unreachable", ExitStatus.TEMPORARY_FAILURE)
    assert "connection refused" in str(caught.value) and "MASTODON_INSTANCE" in str(caught.value)
    assert sleeps == [2.0]


def test_a_server_that_is_not_mastodon_is_a_config_error(mastodon_emulator: MastodonEmulator) -> None:
    poster = MastodonPoster(
        instance=mastodon_emulator.url + "/not-mastodon",
        access_token=TOKEN,
        visibility="unlisted",
        timeout=2,
        retries=0,
    )
    with pytest.raises(PostError) as caught:
        poster.post("hi")
    assert (caught.value.kind, caught.value.exit_status) == ("not_found", ExitStatus.CONFIG_ERROR)


@pytest.mark.parametrize(("instance_api", "limit"), [("v2", 1000), ("v1", 1000), ("legacy", 1000), ("none", 500)])
def test_the_instances_own_limit(instance_api: str, limit: int, caplog: pytest.LogCaptureFixture) -> None:
    with MastodonEmulator(max_characters=1000, instance_api=instance_api) as emulator, caplog.at_level(logging.INFO):
        assert poster_for(emulator).limit() == limit
        paths = [seen.path for seen in emulator.seen]
    assert paths == (["/api/v2/instance"] if instance_api == "v2" else ["/api/v2/instance", "/api/v1/instance"])
    assert ("default 500" in caplog.text) == (instance_api == "none")


def test_account_names_the_handle(mastodon_emulator: MastodonEmulator) -> None:
    poster = poster_for(mastodon_emulator)
    assert poster.account_url is None
    assert poster.account() == "@pibot@example.social"
    assert poster.account_url == "https://example.social/@pibot"


def test_a_bad_visibility_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ConfigError, match="MASTODON_VISIBILITY is 'everyone': use one of public, unlisted"):
        MastodonPoster(
            instance="https://example.social", access_token=TOKEN, visibility="everyone", timeout=1, retries=0
        )
    with pytest.raises(ConfigError) as caught:  # a token pasted into the wrong setting is not echoed
        MastodonPoster(instance="https://example.social", access_token=TOKEN, visibility=TOKEN, timeout=1, retries=0)
    assert TOKEN not in str(caught.value)


def test_the_token_appears_in_no_output(mastodon_emulator: MastodonEmulator, caplog: pytest.LogCaptureFixture) -> None:
    """Every outcome, logged at DEBUG (urllib3 and Mastodon.py included): no form of the token."""
    poster = poster_for(mastodon_emulator, retries=1)
    texts = [repr(poster), poster.retry_safety]
    with caplog.at_level(logging.DEBUG):
        for failure in ("unauthorized", "suspended", "too_long", "rate_limit", "server_error", "posted_then_drop"):
            mastodon_emulator.fail_next(failure)
            try:
                texts.append(repr(poster.post(f"after {failure}")))
            except PostError as error:
                texts += [str(error), error.summary]
        texts.append(poster.account())
    texts.append(caplog.text)
    output = "\n".join(texts)
    assert [form for form in encodings(TOKEN) if form.lower() in output.lower()] == []


def test_a_post_imports_mastodon_only_when_a_poster_is_made() -> None:
    code = (
        "import sys\n"
        "import twitterbot.networks.mastodon.poster\n"
        "before = 'mastodon' in sys.modules\n"
        "twitterbot.networks.mastodon.poster.MastodonPoster(instance='https://example.social', access_token='t' * 20,\n"
        "    visibility='unlisted', timeout=1, retries=0)\n"
        "print(before, 'mastodon' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_a_read_that_gets_no_answer_is_not_worded_as_a_post_that_may_have_been_made() -> None:
    """Checking the token posts nothing: a server that never answers is a slow read, not a possible post."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # connections are accepted by the kernel and never answered
        host, port = silent.getsockname()[:2]
        poster = MastodonPoster(
            instance=f"http://{host}:{port}", access_token=TOKEN, visibility="unlisted", timeout=0.3, retries=0
        )
        with pytest.raises(PostError) as raised:
            poster.account()
    assert "may have been made" not in str(raised.value) and "nothing was posted" in str(raised.value)
