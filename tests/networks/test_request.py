"""networks/request.py, the one bounded request, and every read from outside that goes through it
meeting the red team's server, one that answers a byte at a time (`TrickleServer`): a request,
an ``{img}`` in a post, `check --online`, a round of replies on X, Mastodon and Bluesky, and a
monitor's pings each end at their deadline (a command with exit 75), the lock let go."""

from __future__ import annotations

import base64
import json
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest
from conftest import REGISTRY, BotHome
from trickle_server import TrickleServer

from twitterbot.lock import run_lock
from twitterbot.networks.request import Bounds, Failure, RequestError, request

EVERY = 0.2  # seconds between the server's bytes: each read comes well within any read timeout


@pytest.fixture(params=["headers", "body"])
def trickling(request: pytest.FixtureRequest) -> Iterator[TrickleServer]:
    with TrickleServer(request.param, every=EVERY, content_type="image/png") as server:
        yield server


def _took(started: float) -> float:
    return time.monotonic() - started


def test_a_request_ends_at_its_deadline_however_slowly_the_server_answers(trickling: TrickleServer) -> None:
    started = time.monotonic()
    with pytest.raises(RequestError) as caught:
        request("GET", trickling.url + "/x", Bounds(1.0, 1_000_000, screen=None))
    assert 0.9 < _took(started) < 3  # the deadline, and a loaded machine's moment
    assert caught.value.failure is Failure.TIMEOUT and caught.value.sent
    assert str(caught.value) == "no answer within 1 s"


def test_a_name_look_up_that_hangs_ends_at_the_deadline_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def hanging(*args: object, **kwargs: object) -> list:
        time.sleep(5)
        raise socket.gaierror("too late")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    started = time.monotonic()
    with pytest.raises(RequestError) as caught:
        request("GET", "http://pictures.test/cat.png", Bounds(0.5, 1000, screen=None))
    assert _took(started) < 3  # not the look-up's 5 s
    assert caught.value.failure is Failure.TIMEOUT and not caught.value.sent
    assert "pictures.test did not resolve within 0.5 s" in str(caught.value)


def test_a_body_over_the_cap_is_refused_or_cut_as_its_caller_asks() -> None:
    from page_server import Page, PageServer

    with PageServer({"/big": Page(b"x" * 5000, headers={"Content-Type": "text/plain"})}) as pages:
        with pytest.raises(RequestError) as caught:
            request("GET", pages.url + "/big", Bounds(5, 1000, screen=None))
        assert caught.value.failure is Failure.TOO_LARGE and caught.value.limit == 1000
        cut = request("GET", pages.url + "/big", Bounds(5, 1000, screen=None, cut=True))
        assert (cut.content, cut.whole) == (b"x" * 1000, False)
        whole = request("GET", pages.url + "/big", Bounds(5, 5000, screen=None))
        assert (len(whole.content), whole.whole, whole.status_code) == (5000, True, 200)


# -- what the bot does with such a server ------------------------------------------------------------


def _lock_is_free(home: BotHome) -> bool:
    with run_lock(home.path / "state" / "bot.lock"):
        return True


def _expect_75_within(result: object, started: float, seconds: float) -> None:
    """Exit 75, within `seconds`: the deadline and the run's own work with room for a loaded
    machine (without the deadline the command never ends)."""
    assert result.returncode == 75, result.stdout + result.stderr  # type: ignore[attr-defined]
    assert _took(started) < seconds


def test_an_img_in_a_post_ends_at_fetch_timeout(home: BotHome, trickling: TrickleServer) -> None:
    grammar = home.path / "pictures.json"
    grammar.write_text(json.dumps({"origin": [f"Look: {{img {trickling.url}/cat.png A cat}}"]}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(grammar), LINK_CARDS_LOCAL="yes", FETCH_TIMEOUT="1", BOT_STATE_DIR="state")
    started = time.monotonic()
    result = home.run("--force")
    _expect_75_within(result, started, 8)
    assert "took over 1 s" in result.stderr and home.emulator is not None and home.emulator.posts == []
    assert _lock_is_free(home)


def test_check_online_ends_at_its_deadlines(home: BotHome, trickling: TrickleServer) -> None:
    """Its {img} fetched (FETCH_TIMEOUT) and the account read on X (API_TIMEOUT), each cut off."""
    grammar = home.path / "pictures.json"
    grammar.write_text(json.dumps({"origin": [f"Look: {{img {trickling.url}/cat.png A cat}}"]}), encoding="utf-8")
    home.write_env(
        TWEETS_FILE=str(grammar),
        LINK_CARDS_LOCAL="yes",
        FETCH_TIMEOUT="1",
        API_TIMEOUT="1",
        X_API_BASE_URL=trickling.url,
        BOT_STATE_DIR="state",
    )
    started = time.monotonic()
    result = home.run("check", "--online")
    _expect_75_within(result, started, 12)
    assert "took over 1 s" in result.stdout and "X did not answer in time" in result.stdout, result.stdout
    assert _lock_is_free(home)


def _replying(home: BotHome, **settings: str) -> None:
    (home.path / "replies.json").write_text(json.dumps({"hello": "hi there!"}), encoding="utf-8")
    home.write_env(REPLY_RULES=str(home.path / "replies.json"), API_TIMEOUT="1", BOT_STATE_DIR="state", **settings)


def test_a_round_of_replies_on_x_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    _replying(home, POST_TO="x", X_API_BASE_URL=trickling.url)
    started = time.monotonic()
    _expect_75_within(home.run("replies"), started, 8)
    assert trickling.paths and trickling.paths[0].startswith("/2/users/")
    assert _lock_is_free(home)


def test_a_round_of_replies_on_mastodon_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    _replying(home, POST_TO="mastodon", MASTODON_INSTANCE=trickling.url, MASTODON_ACCESS_TOKEN="a-token-of-40-chars")
    started = time.monotonic()
    _expect_75_within(home.run("replies"), started, 8)
    assert trickling.paths and trickling.paths[0].startswith("/api/v1/")
    assert _lock_is_free(home)


def _saved_session(home: BotHome, handle: str, service: str) -> None:
    """A saved Bluesky session whose access token has an hour left, naming `service` as its PDS:
    the reader trusts it and reads without the SDK."""

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    access = f"{part({'alg': 'ES256K'})}.{part({'exp': int(time.time()) + 3600, 'sub': 'did:plc:bot'})}.c2ln"
    refresh = f"{part({'alg': 'ES256K'})}.{part({'exp': int(time.time()) + 86400})}.c2ln"
    session = ":::".join([handle, "did:plc:bot", access, refresh, service])
    state = home.path / "state"
    state.mkdir(exist_ok=True)
    document = {"service": service, "handle": handle, "session": session}
    (state / "bluesky-session.json").write_text(json.dumps(document), encoding="utf-8")


def test_a_round_of_replies_on_bluesky_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    handle = "pibot.test"
    _replying(
        home,
        POST_TO="bluesky",
        BLUESKY_HANDLE=handle,
        BLUESKY_APP_PASSWORD="abcd-efgh-ijkl-mnop",
        BLUESKY_SERVICE=trickling.url,
    )
    _saved_session(home, handle, trickling.url)
    started = time.monotonic()
    _expect_75_within(home.run("replies"), started, 8)
    assert trickling.paths and "listNotifications" in trickling.paths[0]
    assert _lock_is_free(home)


def test_a_monitor_ping_ends_at_its_wait(tmp_path: Path, trickling: TrickleServer) -> None:
    from twitterbot.monitoring.monitor import LiveMonitor
    from twitterbot.settings.loading import load_config

    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"HEALTHCHECK_URL": trickling.url + "/ping/abc", "BOT_STATE_DIR": str(tmp_path / "state")},
    )
    monitor = LiveMonitor(config, "scheduled run", wait=1.0)
    started = time.monotonic()
    monitor.start()
    monitor.finish(0, "posted")
    assert _took(started) < 5  # 1 s each, in parallel; without the deadline, never
    assert len(trickling.paths) == 2  # the start ping and the end ping, each given up


# -- what a client library sends: its adapter reads within the request's timeout in all ----------


def test_check_online_on_mastodon_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    """Mastodon.py asks for the account (verify_credentials) through the bounded adapter."""
    home.write_env(
        POST_TO="mastodon",
        MASTODON_INSTANCE=trickling.url,
        MASTODON_ACCESS_TOKEN="a-token-of-40-chars",
        API_TIMEOUT="1",
        BOT_STATE_DIR="state",
    )
    started = time.monotonic()
    result = home.run("check", "--online")
    _expect_75_within(result, started, 12)
    assert "Mastodon" in result.stdout and trickling.paths, result.stdout
    assert _lock_is_free(home)


def test_a_post_to_x_through_tweepy_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    home.write_env(X_API_BASE_URL=trickling.url, API_TIMEOUT="1", BOT_STATE_DIR="state")
    started = time.monotonic()
    _expect_75_within(home.run("--force"), started, 8)
    assert trickling.paths == ["/2/tweets"]  # sent once: its answer never came, so it is not sent again
    assert _lock_is_free(home)


def test_a_post_to_bluesky_through_the_sdk_ends_at_api_timeout(home: BotHome, trickling: TrickleServer) -> None:
    """The SDK logs in (createSession) through httpx, whose transport reads within the deadline."""
    home.write_env(
        POST_TO="bluesky",
        BLUESKY_HANDLE="pibot.test",
        BLUESKY_APP_PASSWORD="abcd-efgh-ijkl-mnop",
        BLUESKY_SERVICE=trickling.url,
        API_TIMEOUT="1",
        BOT_STATE_DIR="state",
    )
    started = time.monotonic()
    result = home.run("--force")
    tries = len(trickling.paths)  # the SDK's login, tried again as Bluesky's errors allow
    _expect_75_within(result, started, 6 + 2 * tries)  # a few seconds to import the SDK, then API_TIMEOUT a try
    assert 1 <= tries <= 2 and all("createSession" in path for path in trickling.paths)
    assert _lock_is_free(home)
