"""The Open Graph reader (networks/bluesky/opengraph.py) on a table of pages, and on any text hypothesis
makes up: whatever a page holds, it returns clean one-line texts and an http(s) picture or none."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.networks.bluesky.opengraph import PageData, parse_page
from twitterbot.wording import printable

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
        (
            '<meta property="og:title" content="T"><meta property="og:image" content="//cdn.example.org/x.jpg">',
            PageData("T", "", "https://cdn.example.org/x.jpg"),
        ),
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
        assert not any(unicodedata.category(char) == "Cc" or char in "\u202e\u2066\u2028" for char in text)
    assert page.image is None or page.image.startswith(("http://", "https://"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_a_title_survives_any_surroundings(junk: str, title: str) -> None:
    """An og:title is read back as written (entities decoded, spaces collapsed) after any junk
    that does not open a tag, comment or attribute of its own."""
    from html import escape

    junk = junk.replace("<", "").replace("&", "")
    html = f'<html><head>{junk}<meta property="og:title" content="{escape(title)}"></head>'
    # at most 40 characters: never cut; what a terminal would obey (escapes, NUL, bidi) dropped
    assert parse_page(html, BASE).title == " ".join(printable(title).split())
