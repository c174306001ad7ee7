"""The link card's fetcher (networks/bluesky/linkcard.py) against pages served on 127.0.0.1 that misbehave
in every way its bounds are for (slow, trickling, huge, redirecting, not HTML, bad pictures), the
link it takes from a line, and the thumbnail it makes."""

from __future__ import annotations

import io
import time
from typing import Iterator

import pytest
from page_server import Page, PageServer

from twitterbot.networks.addresses import refusal
from twitterbot.networks.bluesky.linkcard import USER_AGENT, Limits, describe, fetch_card, summary
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

# The pages below are on this machine: fetched as LINK_CARDS_LOCAL=yes lets an owner fetch
# their own network's (the tests at the end show the default refusing them).
LOCAL = Limits(local=True)


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
    found = fetch_card(server.url + "/start", limits=LOCAL)
    assert found.card is not None and found.reason == ""
    assert (found.card.uri, found.card.title) == (server.url + "/start", "Moved")  # the card links what the user wrote
    thumb = found.card.thumb
    assert thumb is not None and (thumb.width, thumb.height, thumb.mime_type) == (800, 600, "image/jpeg")
    assert thumb.source == server.url + "/articles/pic.jpg"
    assert [path for path, _ in server.requests] == ["/start", "/articles/moved", "/articles/pic.jpg"]
    assert all(agent == USER_AGENT for _, agent in server.requests) and "0." in USER_AGENT


@pytest.mark.parametrize(
    ("path", "title"), [("/latin1", "Caf\u00e9 cr\u00e8me"), ("/meta-charset", "\u201cquoted\u201d")]
)
def test_the_page_is_decoded_in_its_own_charset(server: PageServer, path: str, title: str) -> None:
    found = fetch_card(server.url + path, limits=LOCAL)
    assert found.card is not None and found.card.title == title


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/to-ftp", "redirects to a URL that is not followed (not http or https: ftp)"),
        ("/nowhere", "redirects (302) without saying where"),
        ("/no-title", "has no title (no og:title, no <title>)"),
        ("/empty", "is empty"),
    ],
)
def test_pages_without_a_card_say_why(server: PageServer, path: str, reason: str) -> None:
    found = fetch_card(server.url + path, limits=LOCAL)
    assert found.card is None and reason in found.reason


def test_a_page_that_trickles_forever_is_cut_at_the_time_limit(server: PageServer) -> None:
    started = time.monotonic()
    found = fetch_card(server.url + "/trickle", limits=Limits(seconds=1.5, local=True))
    assert 1.4 < time.monotonic() - started < 2.0
    assert found.card is None and "took over 1.5 s" in found.reason


def test_a_huge_page_with_its_head_first_gives_its_card_after_reading_the_head_only(server: PageServer) -> None:
    found = fetch_card(server.url + "/head-early", limits=LOCAL)
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
    found = fetch_card(server.url + path, limits=LOCAL)
    assert found.card is not None and found.card.thumb is None
    assert reason in found.reason


def test_a_picture_that_never_comes_leaves_the_card_at_the_time_limit(server: PageServer) -> None:
    started = time.monotonic()
    found = fetch_card(server.url + "/slow-picture", limits=Limits(seconds=1.5, local=True))
    assert time.monotonic() - started < 2.0
    assert found.card is not None and found.card.title == "Slow picture" and found.card.thumb is None
    assert "took too long" in found.reason or "took over 1.5 s" in found.reason


def test_nothing_listening_and_a_name_that_does_not_resolve_give_no_card() -> None:
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    refused = fetch_card(f"http://127.0.0.1:{port}/x", limits=Limits(seconds=2, local=True))
    assert refused.card is None and "could not be read" in refused.reason
    bad_port = fetch_card("http://127.0.0.1:99999/x", limits=Limits(seconds=2, local=True))
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


# -- only the public internet, by default ---------------------------------------------------------


def port(server: PageServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f.1", "127.1", "[::ffff:127.0.0.1]", "localhost"])
def test_a_page_on_this_machine_is_refused_by_default_in_any_spelling(server: PageServer, host: str) -> None:
    found = fetch_card(f"http://{host}:{port(server)}/articles/moved")
    assert found.card is None
    assert "loopback" in found.reason and "LINK_CARDS_LOCAL=yes" in found.reason, found.reason
    assert server.requests == []  # refused before connecting
    allowed = fetch_card(f"http://{host}:{port(server)}/articles/moved", limits=LOCAL)
    assert allowed.card is not None and allowed.card.title == "Moved", allowed.reason


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("169.254.169.254", "link-local"),  # a cloud's metadata service
        ("192.168.1.20", "private"),  # a camera on the home network
        ("10.0.0.1", "private"),
        ("100.64.0.1", "shared"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("[fe80::1]", "link-local"),
        ("[fd00::1]", "private"),
        ("[::]", "unspecified"),
        ("[::ffff:10.1.2.3]", "private"),
        ("[2002:c0a8:101::1]", "private"),  # 6to4 of 192.168.1.1
        ("[::127.0.0.1]", "loopback"),  # IPv4-compatible
    ],
)
def test_private_link_local_and_other_non_public_addresses_are_refused_without_connecting(host: str, why: str) -> None:
    started = time.monotonic()
    found = fetch_card(f"http://{host}/admin", limits=Limits(seconds=3))
    assert found.card is None and why in found.reason, found.reason
    assert time.monotonic() - started < 1  # refused at once: no connection was tried


def only_this_server_is_public(address) -> object:
    """The real rule, except that 127.0.0.1 (the test's page server) counts as public: so a
    redirect or a picture that leads elsewhere on this machine shows the rule applied to each hop."""
    return None if str(address) == "127.0.0.1" else refusal(address)


def test_every_redirect_hop_and_the_picture_are_checked(server: PageServer) -> None:
    server.pages["/to-the-router"] = Page(
        status=302, headers={"Location": f"http://127.0.0.2:{port(server)}/articles/moved"}
    )
    server.pages["/camera-picture"] = Page(
        b'<meta property="og:title" content="Look"><meta property="og:image" content="http://[::1]:9/snapshot.jpg">'
    )
    hop = fetch_card(server.url + "/to-the-router", screen=only_this_server_is_public)
    assert hop.card is None and "127.0.0.2 is a loopback address" in hop.reason, hop.reason
    picture = fetch_card(server.url + "/camera-picture", screen=only_this_server_is_public)
    assert picture.card is not None and picture.card.thumb is None
    assert "::1 is a loopback address" in picture.reason, picture.reason
    assert [path for path, _ in server.requests] == ["/to-the-router", "/camera-picture"]  # nothing else


def test_the_connection_goes_to_the_address_that_was_checked(
    server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that resolves to a public address first and to this machine on a second look-up (DNS
    rebinding) is connected to as first checked: there is no second look-up."""
    import socket

    answers = iter([("127.0.0.1", port(server))])
    real = socket.getaddrinfo
    looked_up = []

    def getaddrinfo(host, port, *args, **kwargs):
        looked_up.append(host)
        if host == "pages.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", next(answers))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    found = fetch_card(f"http://pages.test:{port(server)}/latin1", screen=only_this_server_is_public)
    assert found.card is not None and found.card.title == "Caf\u00e9 cr\u00e8me", found.reason
    assert looked_up == ["pages.test"]  # once: a second look-up would have raised StopIteration
    assert [path for path, _ in server.requests] == ["/latin1"]


def test_control_characters_in_a_title_never_reach_the_card_nor_the_terminal(server: PageServer) -> None:
    server.pages["/evil"] = Page(
        "<title>Pegs\x1b[2J\x1b]0;owned\x07 \u202eevil\x00 \x9b31m done</title>"
        '<meta name="description" content="line one&#10;line two&#0;&#27;[31m red">'.encode()
    )
    found = fetch_card(server.url + "/evil", limits=LOCAL)
    assert found.card is not None
    assert found.card.title == "Pegs evil done"
    assert found.card.description == "line one line two�[31m red"  # &#0; is U+FFFD; ESC itself is gone
    shown = "\n".join(describe(found)) + summary(found)
    assert not any(ord(char) < 32 and char != "\n" or 0x7F <= ord(char) < 0xA0 or char == "\u202e" for char in shown)
