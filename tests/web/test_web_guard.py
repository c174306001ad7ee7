"""Whom the status page answers (`web.guard`), the server's dropping of unfinished connections
(`web.server.unfinished_to_drop`) and WEB_PASSWORD's own kind, a passphrase (`web`)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REGISTRY
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.errors import ConfigError
from twitterbot.settings.loading import load_config
from twitterbot.settings.parsers import is_loopback
from twitterbot.web.app import create_app
from twitterbot.web.guard import FREE_TRIES, LONGEST_WAIT, FailedTries, local_host
from twitterbot.web.server import DROP_AT_ONCE, unfinished_to_drop


@pytest.mark.parametrize(
    ("header", "local"),
    [
        ("localhost", True),
        ("localhost:8080", True),
        ("LocalHost.:8080", True),
        ("127.0.0.1", True),
        ("127.0.0.1:8080", True),
        ("127.9.9.9:80", True),
        ("[::1]", True),
        ("[::1]:8080", True),
        ("[::ffff:127.0.0.1]:8080", True),
        ("", False),
        ("evil.example", False),
        ("evil.example:8080", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io:8080", False),
        ("::1", False),  # an IPv6 address in Host needs its brackets
        ("[::1", False),
        ("[::1]x", False),
        ("[::1]:port", False),
        ("localhost:port", False),
        ("[localhost]:80", False),
        ("10.0.0.2:8080", False),
        ("0.0.0.0:8080", False),
        ("[::]:8080", False),
    ],
)
def test_which_host_headers_are_this_machine(header: str, local: bool) -> None:
    assert local_host(header) is local


@given(st.one_of(st.text(max_size=60), st.from_regex(r"\[?[0-9a-fA-F:.]{1,40}\]?(:[0-9]{1,5})?", fullmatch=True)))
def test_any_host_header_is_an_answer_and_only_loopback_is_local(header: str) -> None:
    if local_host(header):  # never raises; and says yes only to a loopback name or address
        host = header.strip()
        name = host[1:].partition("]")[0] if host.startswith("[") else host.rpartition(":")[0] or host
        assert is_loopback(name)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_wrong_passwords_wait_longer_and_longer_and_a_right_one_forgets() -> None:
    clock = Clock()
    tries = FailedTries(clock)
    for _ in range(FREE_TRIES):
        assert tries.wait("192.0.2.7") == 0
        tries.failed("192.0.2.7")
    assert tries.wait("192.0.2.7") == 2.0 and tries.wait("192.0.2.8") == 0  # another address is not held up
    clock.now += 2.0
    assert tries.wait("192.0.2.7") == 0
    tries.failed("192.0.2.7")
    assert tries.wait("192.0.2.7") == 4.0
    for _ in range(40):
        tries.failed("192.0.2.7")
    assert tries.wait("192.0.2.7") == LONGEST_WAIT
    tries.succeeded("192.0.2.7")
    assert tries.wait("192.0.2.7") == 0


def test_the_app_answers_429_then_lets_the_right_password_in_once_the_wait_is_over(tmp_path: Path) -> None:
    config = _config(tmp_path)
    clock = Clock()
    client = create_app(config, password="correct horse battery staple", seconds=clock).test_client()

    def get(password: str) -> int:
        token = base64.b64encode(f"owner:{password}".encode()).decode()
        return client.get("/status.json", headers={"Authorization": f"Basic {token}"}).status_code

    assert [get(f"guess {n}") for n in range(FREE_TRIES)] == [401] * FREE_TRIES
    assert get("correct horse battery staple") == 429
    assert client.get("/status.json").status_code == 429  # waiting, with or without a password
    clock.now += 2.0
    assert get("correct horse battery staple") == 200
    assert get("wrong again") == 401  # the count starts again from the right password


def test_no_password_sent_is_no_wrong_try(tmp_path: Path) -> None:
    client = create_app(_config(tmp_path), password="correct horse battery staple").test_client()
    assert {client.get("/").status_code for _ in range(FREE_TRIES * 3)} == {401}


def test_on_loopback_without_a_password_another_host_is_403(tmp_path: Path) -> None:
    client = create_app(_config(tmp_path), local_only=True).test_client()
    assert client.get("/status.json", headers={"Host": "localhost:8080"}).status_code == 200
    refused = client.get("/status.json", headers={"Host": "rebound.example:8080"})
    assert refused.status_code == 403 and b"history_file" not in refused.data
    assert refused.headers["X-Frame-Options"] == "DENY"


@dataclass
class Channel:
    creation_time: float
    requests: tuple = ()
    total_outbufs_len: int = 0


def test_below_the_limit_nothing_is_dropped() -> None:
    assert unfinished_to_drop([Channel(1.0)], open_now=63, limit=64) == []


def test_at_the_limit_the_oldest_unfinished_go_first_and_one_being_answered_never() -> None:
    answering = Channel(0.0, requests=("a request",))
    sending = Channel(0.5, total_outbufs_len=100)
    unfinished = [Channel(float(second)) for second in range(1, 80)]
    dropped = unfinished_to_drop([answering, sending, *reversed(unfinished)], open_now=81, limit=64)
    assert dropped == unfinished[: 81 - 64 + DROP_AT_ONCE]
    assert answering not in dropped and sending not in dropped


def _config(tmp_path: Path, **environ: str):
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "tweets.txt").write_text("one\n")
    base = {"TWEETS_FILE": str(tmp_path / "tweets.txt"), "BOT_STATE_DIR": str(tmp_path / "state")}
    return load_config(REGISTRY, project_dir=None, environ={**base, **environ})


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs", "Cf", "Co", "Cn")),
        min_size=1,
        max_size=40,
    )
)
def test_a_passphrase_of_printable_characters_is_read_as_written(tmp_path_factory, words: str) -> None:
    phrase = f"{words} with spaces 'and' \"quotes\""
    config = _config(tmp_path_factory.mktemp("home"), WEB_PASSWORD=f"  {phrase} ")
    assert config["WEB_PASSWORD"] == phrase


@pytest.mark.parametrize("bad", ["tab\there", "line\nbreak", "bell\x07", "zero\u200bwidth"])
def test_a_passphrase_with_a_control_character_is_78_and_not_shown(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, WEB_PASSWORD=bad)
    assert "WEB_PASSWORD" in str(caught.value) and "control character" in str(caught.value)
    assert bad not in str(caught.value)
