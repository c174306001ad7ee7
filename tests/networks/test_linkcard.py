"""The link card's reader and fetcher (networks/linkcard.py): the Open Graph parser on a table of
pages and on any text hypothesis makes up; the fetcher against pages served on 127.0.0.1 that
misbehave in every way the bounds are for (slow, trickling, huge, redirecting, not HTML)."""

from __future__ import annotations

import io
import time
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from page_server import Page, PageServer

from twitterbot.networks.bluesky import first_link
from twitterbot.networks.linkcard import USER_AGENT, Limits, PageData, fetch_card, parse_page

BASE = "https://example.com/blog/post.html"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (
            '<head><meta property="og:title" content="OG title"><title>Tag title</title>'
            '<meta property="og:description" content="OG text"><meta name="description" content="meta text">'
            '<meta property="og:image" content="https://cdn.example.com/a.jpg"></head>',
            PageData("OG title", "OG text", "https://cdn.example.com/a.jpg"),
        ),
        (  # the fallbacks: <title> and the meta description
            "<html><head><title>\n  Only   the\ttitle </title><meta name=description content='Said here'></head>",
            PageData("Only the title", "Said here", None),
        ),
        (  # relative pictures resolve against the page's URL
            '<meta property="og:title" content="T"><meta property="og:image" content="../img/p.png">',
            PageData("T", "", "https://example.com/img/p.png"),
        ),
        ('<meta property="og:title" content="T"><meta property="og:image" content="//cdn.example.org/x.jpg">', PageData("T", "", "https://cdn.example.org/x.jpg")),
        (  # entities, named and numeric, in attributes and in text
            '<title>Fish &amp; chips &#8212; &eacute;t&eacute;</title><meta name="description" content="a &lt;b&gt; &quot;c&quot;">',
            PageData("Fish & chips \u2014 \u00e9t\u00e9", 'a <b> "c"', None),
        ),
        (  # a picture that is not http(s) is no picture
            '<title>T</title><meta property="og:image" content="javascript:alert(1)">',
            PageData("T", "", None),
        ),
        (  # the first of each wins; empty values do not count; keys in any case
            '<meta property="OG:TITLE" content=""><meta property="og:title" content="Second">'
            '<meta property="og:title" content="Third"><meta property="og:image:secure_url" content="/s.jpg">',
            PageData("Second", "", "https://example.com/s.jpg"),
        ),
        (  # Twitter's names are a fallback too
            '<meta name="twitter:title" content="Tw"><meta name="twitter:image" content="/t.jpg">',
            PageData("Tw", "", "https://example.com/t.jpg"),
        ),
        (  # the body is not read: a <title> in an SVG of the page is not the page's
            "<html><head></head><body><svg><title>Icon</title></svg></body></html>",
            PageData("", "", None),
        ),
        ("", PageData("", "", None)),
    ],
)
def test_parse_page(html: str, expected: PageData) -> None:
    assert parse_page(html, BASE) == expected


def test_long_titles_and_descriptions_are_cut_at_a_word() -> None:
    page = parse_page(f"<title>{'word ' * 100}</title><meta name=description content='{'x' * 5000}'>", BASE)
    assert len(page.title) <= 300 and page.title.endswith("word…")
    assert len(page.description) == 1000 and page.description.endswith("…")


_TAGS = st.sampled_from(
    [
        "<title>",
        "</title>",
        "<head>",
        "</head>",
        "<body>",
        '<meta property="og:title" content="',
        '<meta property="og:image" content="',
        "<meta name=description content=",
        '">',
        "<!--",
        "-->",
        "<![CDATA[",
        "<![if !IE]>",
        "]]>",
        "<!DOCTYPE html>",
        "<script>",
        "</script>",
        "&amp;",
        "&#x110000;",
        "&#0;",
        "&",
        "<",
        ">",
        "\x00",
        "'",
        '"',
        "<?php ?>",
        "</",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TAGS, st.text(max_size=12)), max_size=40))
def test_the_parser_takes_any_text(pieces: list) -> None:
    """Whatever a page holds, the parser returns one-line texts within their limits and a picture
    that is an absolute http(s) URL or none; it never raises."""
    page = parse_page("".join(pieces), BASE)
    for text, limit in ((page.title, 300), (page.description, 1000)):
        assert len(text) <= limit and "\n" not in text and text == text.strip()
    assert page.image is None or page.image.startswith(("http://", "https://"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_a_title_survives_any_surroundings(junk: str, title: str) -> None:
    """An og:title is read back as written (entities decoded, spaces collapsed) after any junk
    that does not open a tag, comment or attribute of its own."""
    from html import escape

    junk = junk.replace("<", "").replace("&", "")
    html = f'<html><head>{junk}<meta property="og:title" content="{escape(title)}"></head>'
    assert parse_page(html, BASE).title == " ".join(title.split())  # at most 40 characters: never cut


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
        ("/broken-picture", "cannot be used (not an image Pillow can read"),
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


def test_a_thumbnail_is_fitted_and_keeps_no_metadata() -> None:
    pytest.importorskip("PIL", reason="Pillow makes the thumbnails (requirements.txt installs it)")
    from PIL import Image

    from twitterbot.networks.linkcard_thumbnail import fit_thumbnail

    exif = Image.Exif()
    exif[0x0112] = 8  # turn 90 degrees counter-clockwise to view
    gps = exif.get_ifd(0x8825)
    gps.update({1: "S", 2: (33.0, 51.0, 0.0)})
    source = io.BytesIO()
    Image.effect_noise((2400, 1600), 90).convert("RGB").save(source, "JPEG", quality=95, exif=exif)
    data, mime, width, height = fit_thumbnail(source.getvalue(), max_bytes=200_000)
    assert mime == "image/jpeg" and len(data) <= 200_000 and height > width
    image = Image.open(io.BytesIO(data))
    assert not image.getexif() and "exif" not in image.info
