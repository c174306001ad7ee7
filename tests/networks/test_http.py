"""The one bounded reader of network answers (twitterbot/networks/http.py): requests' adapter and
httpx's hooks read an answer whole under the bound and stop past it, compressed or not, declared
or not; and a look-up met with a 300 MB answer stays small, in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from typing import Iterator, List

import httpx
import pytest
import requests
from conftest import REPO
from loopback import Answer, LoopbackServer

from twitterbot.errors import ErrorKind, ExitStatus
from twitterbot.networks.answers import MAX_ANSWER_BYTES
from twitterbot.networks.http import (
    AnswerTooLarge,
    BoundedAdapter,
    bounded_session,
    httpx_error,
    httpx_hooks,
    network_error,
)


class AnswerServer:
    """127.0.0.1, answering each request with the next of `answers`, and counting the requests."""

    def __init__(self) -> None:
        self.answers: List[Answer] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.answers.pop(0).send(self)

        self._server = LoopbackServer(Handler)
        self.url = self._server.url

    def __enter__(self) -> AnswerServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


@pytest.fixture
def server() -> Iterator[AnswerServer]:
    with AnswerServer() as serving:
        yield serving


LIMIT = 64 * 1024  # a small bound, so the tests send little


def requests_get(url: str) -> requests.Response:
    session = requests.Session()
    session.mount("http://", BoundedAdapter(timeout=10, max_bytes=LIMIT))
    return session.get(url)


def httpx_get(url: str) -> httpx.Response:
    with httpx.Client(event_hooks=httpx_hooks(LIMIT), timeout=10) as client:
        return client.get(url)


@pytest.mark.parametrize("get", [requests_get, httpx_get], ids=["requests", "httpx"])
def test_an_answer_under_the_bound_is_read_whole(server: AnswerServer, get) -> None:
    body = {"data": [{"id": str(number), "text": "x" * 100} for number in range(100)]}
    server.answers.append(Answer(body))
    response = get(server.url)
    assert response.status_code == 200 and response.json() == body
    assert len(response.content) < LIMIT


@pytest.mark.parametrize("get", [requests_get, httpx_get], ids=["requests", "httpx"])
@pytest.mark.parametrize(
    "answer",
    [
        Answer(b"x" * (LIMIT + 1)),  # says its length
        Answer(size=10 * LIMIT),  # streamed, no length
        Answer(size=50 * 1024 * 1024, gzip=True),  # small on the wire, huge unpacked
    ],
    ids=["declared", "streamed", "gzip"],
)
def test_an_answer_past_the_bound_is_refused_with_a_named_error(server: AnswerServer, get, answer: Answer) -> None:
    server.answers.append(answer)
    with pytest.raises(AnswerTooLarge) as raised:
        get(server.url + "/2/users/1/tweets?pagination_token=abc")
    assert raised.value.limit == LIMIT
    assert raised.value.url.endswith("/2/users/1/tweets")  # the query is left out


def test_the_session_for_mastodon_reads_within_the_bound_and_times_out() -> None:
    session = bounded_session(timeout=5)
    adapter = session.get_adapter("https://example.social")
    assert isinstance(adapter, BoundedAdapter) and adapter.max_bytes == MAX_ANSWER_BYTES == 8 * 1024 * 1024
    assert adapter.timeout == 5
    assert session.get_adapter("http://127.0.0.1") is adapter and adapter.max_retries.total == 0


@pytest.mark.parametrize("to_error", [network_error, httpx_error], ids=["requests", "httpx"])
def test_an_answer_too_large_is_a_temporary_failure_that_may_have_posted(to_error) -> None:
    """Sent, and no answer the bot would read: like a broken connection, the post may exist."""
    error = to_error(AnswerTooLarge("https://api.x.com/2/tweets", MAX_ANSWER_BYTES), where="X", unreachable="", slow="")
    assert error.kind == ErrorKind.NETWORK and error.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert "X answered with more than 8 MB" in str(error) and "the next run tries again" in str(error)


# The child: an X look-up with the bot's own poster, its peak memory before and after, as JSON.
_CHILD = """
import json, resource, sys
sys.path[:0] = sys.argv[2:4]
from datetime import datetime, timezone
from x_emulator import KEYS
from twitterbot.errors import PostError
from twitterbot.networks.x.api import Credentials
from twitterbot.networks.x.poster import XPoster
keys = Credentials(*(KEYS[k] for k in ("consumer_key", "consumer_secret", "access_token", "access_token_secret")))
poster = XPoster(keys, timeout=60, retries=0, base_url=sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    outcome = repr(poster.look_up("hello", datetime.now(timezone.utc), None))
except PostError as exc:
    outcome = exc.summary
print(json.dumps({"before": before, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "outcome": outcome}))
"""


def test_a_300_mb_timeline_is_refused_at_8_mb_and_the_look_up_stays_small() -> None:
    """Before the bound this look-up held the whole answer: about 1,250 MB at its peak
    (benchmarks/answers.py). Now it stops at 8 MB; the bound here is generous."""
    from x_emulator import XEmulator

    with XEmulator() as emulator:
        emulator.answer_next("timeline", Answer(size=300 * 1024 * 1024))
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, emulator.url, str(REPO), str(REPO / "tests")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert child.returncode == 0, child.stderr
    figures = json.loads(child.stdout)
    assert figures["outcome"].startswith("X answered with more than 8 MB"), figures
    grew_mb = (figures["peak"] - figures["before"]) / 1024  # ru_maxrss is in kilobytes on Linux
    assert grew_mb < 100, figures
