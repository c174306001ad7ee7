"""networks/fetch.py: a picture fetched by URL for a post, held to the link cards' address rules,
within its size and time limits."""

from __future__ import annotations

import io
from typing import Iterator

import pytest
from page_server import Page, PageServer
from PIL import Image

from twitterbot.networks.addresses import refusal
from twitterbot.networks.fetch import USER_AGENT, FetchError, fetch_picture


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(out, "PNG")
    return out.getvalue()


PNG = _png()


def _trickle() -> Iterator[bytes]:
    while True:
        yield b"\x89PNG....."


@pytest.fixture
def server() -> Iterator[PageServer]:
    pages = {
        "/cat.png": Page(PNG, headers={"Content-Type": "image/png"}),
        "/untyped": Page(PNG, headers={}),
        "/moved": Page(status=302, headers={"Location": "/cat.png"}),
        "/loop": Page(status=302, headers={"Location": "/loop"}),
        "/page": Page(b"<title>not a picture</title>"),
        "/gone": Page(b"no", status=404, headers={"Content-Type": "text/plain"}),
        "/busy": Page(b"later", status=503, headers={"Content-Type": "text/plain"}),
        "/huge": Page(b"\0" * 300_000, headers={"Content-Type": "image/png"}),
        "/endless": Page(_trickle, headers={"Content-Type": "image/png"}),
        "/slow": Page(_trickle, headers={"Content-Type": "image/png"}, pause=0.2),
    }
    with PageServer(pages) as running:
        yield running


def _fetch(url: str, **given: object) -> bytes:
    options = {"allow_local": True, "max_bytes": 100_000, "timeout": 5.0, **given}
    return fetch_picture(url, **options)  # type: ignore[arg-type]


def test_a_picture_is_fetched_through_redirects_with_the_bots_user_agent(server: PageServer) -> None:
    assert _fetch(server.url + "/moved") == PNG
    assert _fetch(server.url + "/untyped") == PNG
    assert [agent for _, agent in server.requests] == [USER_AGENT] * 3


@pytest.mark.parametrize(
    ("path", "said", "temporary"),
    [
        ("/page", "is not a picture (the server says text/html)", False),
        ("/gone", "answered 404", False),
        ("/busy", "answered 503 Service Unavailable: try again later", True),
        ("/loop", "redirects more than 3 times", False),
        ("/huge", "is 300,000 bytes, over 100,000", False),
        ("/endless", "is over 100,000 bytes", False),
    ],
)
def test_what_is_not_a_picture_within_the_limits_is_refused_saying_why(
    server: PageServer, path: str, said: str, temporary: bool
) -> None:
    with pytest.raises(FetchError) as caught:
        _fetch(server.url + path)
    assert said in str(caught.value) and caught.value.temporary is temporary
    assert caught.value.exit_status == (75 if temporary else 65)


def test_a_picture_that_trickles_is_cut_at_the_time_limit(server: PageServer) -> None:
    with pytest.raises(FetchError, match="took over 1 s|timed out") as caught:
        _fetch(server.url + "/slow", timeout=1.0, max_bytes=10_000_000)
    assert caught.value.temporary


def test_this_machine_is_refused_unless_the_owner_allows_it(server: PageServer) -> None:
    with pytest.raises(FetchError, match="loopback address.*LINK_CARDS_LOCAL=yes"):
        _fetch(server.url + "/cat.png", allow_local=False)
    assert server.requests == []  # refused before connecting


def test_a_redirect_from_a_public_server_to_a_private_one_is_refused(server: PageServer) -> None:
    """127.0.0.1 counts as public here, so the redirect's target shows the rule applied to each hop."""
    port = server.url.rsplit(":", 1)[1]
    server.pages["/to-router"] = Page(status=302, headers={"Location": f"http://127.0.0.2:{port}/cat.png"})

    def public_here(address: object) -> object:
        return None if str(address) == "127.0.0.1" else refusal(address)  # type: ignore[arg-type]

    with pytest.raises(FetchError, match="127.0.0.2 is a loopback address"):
        _fetch(server.url + "/to-router", allow_local=False, screen=public_here)
    assert [path for path, _ in server.requests] == ["/to-router"]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/a.png", "cat.png", "http://:80/x"])
def test_only_http_and_https_urls_are_fetched(url: str) -> None:
    with pytest.raises(FetchError, match="not an http or https URL"):
        _fetch(url)
