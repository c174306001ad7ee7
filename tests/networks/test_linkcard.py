"""The link card's fetcher (networks/bluesky/linkcard.py) against pages served on 127.0.0.1 that misbehave
in every way its bounds are for (slow, trickling, huge, redirecting, not HTML, bad pictures), the
link it takes from a line, and the thumbnail it makes."""

from __future__ import annotations

import io
import time
from typing import Iterator

import pytest
from page_server import Page, PageServer

from twitterbot.networks.bluesky.linkcard import USER_AGENT, Limits, fetch_card
from twitterbot.networks.bluesky.records import first_link


@pytest.mark.parametrize(
    ("text", "link"),
    [
        ("no link here", None),
        ("see https://example.com/a and https://example.org/b", "https://example.com/a"),
        ("bare example.com/pegs works too", "https://example.com/pegs"),
        ("with a trailing dot https://example.com/x.", "https://example.com/x"),
        ("(in brackets https://example.com/y)", "https://example.com/y"),
        ("ftp://example.com/file is not a link card", None),
    ],
)
def test_the_link_is_the_first_the_facets_find(text: str, link: str) -> None:
    assert first_link(text) == link


# -- the fetcher, against pages served on 127.0.0.1 ---------------------------------------------


def _jpeg(width: int, height: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (90, 160, 30)).save(out, "JPEG")
    return out.getvalue()


def _one_bit_png(width: int, height: int) -> bytes:
    """A picture of many pixels in few bytes (and little memory to make)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (width, height)).save(out, "PNG")
    return out.getvalue()


def _flat_webp(width: int, height: int) -> bytes:
    """A WebP of many pixels in few bytes."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 40, 40)).save(out, "WEBP", quality=10)
    return out.getvalue()


def _trickle() -> Iterator[bytes]:
    yield b"<html><head><!--"
    while True:
        yield b" "


@pytest.fixture
def server() -> Iterator[PageServer]:
    pytest.importorskip("PIL", reason="Pillow makes the thumbnails (requirements.txt installs it)")
    card = '<head><meta property="og:title" content="{}"><meta property="og:image" content="{}"></head>'
    with PageServer(
        {
            "/start": Page(status=301, headers={"Location": "/articles/moved"}),
            "/articles/moved": Page(card.format("Moved", "pic.jpg").encode()),
            "/articles/pic.jpg": Page(_jpeg(800, 600), headers={"Content-Type": "image/jpeg"}),
            "/latin1": Page(
                "<title>Caf\u00e9 cr\u00e8me</title>".encode("latin-1"),
                headers={"Content-Type": "text/html; charset=ISO-8859-1"},
            ),
            "/meta-charset": Page(
                '<meta charset="windows-1252"><title>\u201cquoted\u201d</title>'.encode("cp1252"), headers={}
            ),
            "/to-ftp": Page(status=302, headers={"Location": "ftp://example.com/x"}),
            "/nowhere": Page(status=302, headers={}),
            "/trickle": Page(_trickle, pause=0.05),
            "/slow-picture": Page(card.format("Slow picture", "/never.jpg").encode()),
            "/never.jpg": Page(hang=True),
            "/big-picture": Page(card.format("Big picture", "/big.jpg").encode()),
            "/big.jpg": Page(b"\xff" * 6_000_000, headers={"Content-Type": "image/jpeg"}),
            "/html-picture": Page(card.format("Not a picture", "/start").encode()),
            "/broken-picture": Page(card.format("Broken picture", "/broken.jpg").encode()),
            "/broken.jpg": Page(b"\xff\xd8\xffnot really", headers={"Content-Type": "image/jpeg"}),
            "/many-pixels": Page(card.format("Many pixels", "/many.png").encode()),
            "/many.png": Page(_one_bit_png(8000, 7000), headers={"Content-Type": "image/png"}),
            "/many-webp-pixels": Page(card.format("Many WebP pixels", "/many.webp").encode()),
            "/many.webp": Page(_flat_webp(4000, 2000), headers={"Content-Type": "image/webp"}),
            "/no-title": Page(b"<html><head><meta name=description content=x></head><body><h1>Hi</h1></body></html>"),
            "/empty": Page(b""),
            "/head-early": Page(_big_after_head, length=50 * 2**20),
        }
    ) as pages:
        yield pages


def _big_after_head() -> Iterator[bytes]:
    yield b'<html><head><meta property="og:title" content="Head first"></head><body>'
    for _ in range(50 * 16):
        yield b"z" * 65536


def test_redirects_are_followed_and_the_picture_resolved_against_the_final_page(server: PageServer) -> None:
    found = fetch_card(server.url + "/start")
    assert found.card is not None and found.reason == ""
    assert (found.card.uri, found.card.title) == (server.url + "/start", "Moved")  # the card links what the user wrote
    thumb = found.card.thumb
    assert thumb is not None and (thumb.width, thumb.height, thumb.mime_type) == (800, 600, "image/jpeg")
    assert thumb.source == server.url + "/articles/pic.jpg"
    assert [path for path, _ in server.requests] == ["/start", "/articles/moved", "/articles/pic.jpg"]
    assert all(agent == USER_AGENT for _, agent in server.requests) and "0." in USER_AGENT


@pytest.mark.parametrize(("path", "title"), [("/latin1", "Caf\u00e9 cr\u00e8me"), ("/meta-charset", "\u201cquoted\u201d")])
def test_the_page_is_decoded_in_its_own_charset(server: PageServer, path: str, title: str) -> None:
    found = fetch_card(server.url + path)
    assert found.card is not None and found.card.title == title


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/to-ftp", "ftp://example.com/x is not an http or https link"),
        ("/nowhere", "redirects (302) without saying where"),
        ("/no-title", "has no title (no og:title, no <title>)"),
        ("/empty", "is empty"),
    ],
)
def test_pages_without_a_card_say_why(server: PageServer, path: str, reason: str) -> None:
    found = fetch_card(server.url + path)
    assert found.card is None and reason in found.reason


def test_a_page_that_trickles_forever_is_cut_at_the_time_limit(server: PageServer) -> None:
    started = time.monotonic()
    found = fetch_card(server.url + "/trickle", limits=Limits(seconds=1.5))
    assert 1.4 < time.monotonic() - started < 2.0
    assert found.card is None and "took over 1.5 s" in found.reason


def test_a_huge_page_with_its_head_first_gives_its_card_after_reading_the_head_only(server: PageServer) -> None:
    found = fetch_card(server.url + "/head-early")
    assert found.card is not None and found.card.title == "Head first"
    assert server.sent["/head-early"] < 10 * 2**20


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/big-picture", "is too big (6,000,000 bytes, over 5,000,000)"),
        ("/html-picture", "is not an image (text/html)"),
        ("/broken-picture", "is not a picture (JPEG, PNG, GIF or WebP)"),
        ("/many-pixels", "is 8,000x7,000 pixels (56.0 megapixels in"),
        # An og:image WebP of 8 megapixels: libwebp's own buffers would take 160 MiB to decode it.
        ("/many-webp-pixels", "is 4,000x2,000 pixels (8.0 megapixels in"),
    ],
)
def test_a_picture_that_cannot_be_used_leaves_a_card_without_a_thumbnail(
    server: PageServer, path: str, reason: str
) -> None:
    found = fetch_card(server.url + path)
    assert found.card is not None and found.card.thumb is None
    assert reason in found.reason


def test_a_picture_that_never_comes_leaves_the_card_at_the_time_limit(server: PageServer) -> None:
    started = time.monotonic()
    found = fetch_card(server.url + "/slow-picture", limits=Limits(seconds=1.5))
    assert time.monotonic() - started < 2.0
    assert found.card is not None and found.card.title == "Slow picture" and found.card.thumb is None
    assert "took too long" in found.reason or "took over 1.5 s" in found.reason


def test_nothing_listening_and_a_name_that_does_not_resolve_give_no_card() -> None:
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    refused = fetch_card(f"http://127.0.0.1:{port}/x", limits=Limits(seconds=2))
    assert refused.card is None and "could not be read" in refused.reason
    bad_port = fetch_card("http://127.0.0.1:99999/x", limits=Limits(seconds=2))
    assert bad_port.card is None


def test_a_plain_run_never_loads_the_card_fetcher() -> None:
    """Importing the Bluesky module and measuring a line (what every scheduled run does) loads
    neither the fetcher, nor ssl, nor Pillow: only a post with a link does."""
    import subprocess
    import sys

    from conftest import REPO

    code = (
        "import sys; from twitterbot.networks.bluesky.text import measure; measure('see https://example.com'); "
        "print(sorted(m for m in sys.modules if m in ('ssl', 'PIL', 'html.parser', 'twitterbot.networks.bluesky.linkcard')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
