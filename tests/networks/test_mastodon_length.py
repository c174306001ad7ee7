"""networks.mastodon.status.measure: Mastodon's own count of a status, with no network and no client library."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO
from hypothesis import given
from hypothesis import strategies as st
from mastodon_server import mastodon_count

from twitterbot.networks import Fit
from twitterbot.networks.graphemes import count_graphemes
from twitterbot.networks.mastodon.status import DEFAULT_LIMIT, measure, status_length


@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("Hello from the Pi", 17),
        ("", 0),
        ("   \n ", 0),  # Mastodon counts a blank status as empty
        # A link counts 23, however long, with or without a path or query.
        ("https://example.com/" + "a" * 300, 23),
        ("see http://example.com?x=1 now", 4 + 23 + 4),
        ("two https://a.example.org/x https://b.example.org/y", 4 + 23 + 1 + 23),
        # A link needs its protocol: a bare domain counts letter by letter.
        ("example.com/" + "a" * 20, 32),
        # A remote mention counts as its local part; a local one as written.
        ("@alice@example.social hi", 9),
        ("@alice hi", 9),
        ("cc @Bob_1@mastodon.example.org.", 3 + 6 + 1),
        # Not mentions: an e-mail address, or '@' after a word character or '/'.
        ("mail me@example.com", 19),
        ("a/@b@example.com", 16),
        # A mention followed by an accented letter is no mention.
        ("@josé@example.social", 20),
        # Grapheme clusters: one per user-perceived character.
        ("👍🏽", 1),
        ("👩‍👩‍👧", 1),
        ("🇫🇷🇩🇪", 2),
        ("e\u0301", 1),  # e + combining acute
        ("a\r\nb", 3),  # CR LF is one
        # Devanagari conjuncts: 3 under Unicode 15.1's rule GB9c, which Ruby applies only from 4.0
        # (Mastodon 4.x runs 3.x): counted without it, one more, never less than the server.
        ("नमस्ते", 4),
    ],
)
def test_mastodon_counts_like_its_server(text: str, length: int) -> None:
    assert status_length(text) == length


def test_measure_says_whether_it_fits_mastodons_default_or_the_instances_limit() -> None:
    assert measure("x" * 500) == Fit("mastodon", 500, DEFAULT_LIMIT, "characters")
    assert measure("x" * 500).fits and not measure("x" * 501).fits
    assert measure("x" * 501, limit=1000).fits
    # X's 280 does not apply: 400 characters fit on Mastodon.
    assert measure("word " * 80).fits


def test_a_long_link_fits_where_its_letters_would_not() -> None:
    text = "x" * 470 + " https://example.com/" + "p" * 200
    assert measure(text).length == 470 + 1 + 23 and measure(text).fits
    assert status_length("http://0.ro") == 23  # a short link counts 23 too, as Mastodon counts it


@given(st.text(max_size=80))
def test_counting_never_fails_and_agrees_with_graphemes_when_there_is_nothing_to_shorten(text: str) -> None:
    length = status_length(text)
    assert length >= 0
    if ":" not in text:  # no link (a link counts 23, longer or shorter): a remote mention only shortens
        assert length <= count_graphemes(text, indic_conjuncts=False) or not text.strip()
    if "@" not in text and ":" not in text and text.strip():
        assert length == count_graphemes(text, indic_conjuncts=False)  # Mastodon's Ruby has no GB9c


@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abc xyz.,!é👍🏽\u0301", min_size=1, max_size=12),
            st.sampled_from(["https://example.com/some/long/path?q=1", "@alice@example.social", "@bob"]),
        ),
        max_size=8,
    ).map(" ".join)
)
def test_the_count_agrees_with_the_emulators_independent_count(text: str) -> None:
    """Two ways of counting (ours and the test server's simpler one) agree on plain links and mentions."""
    assert status_length(text) == (mastodon_count(text) if text.strip() else 0)


def test_measuring_imports_no_client_library() -> None:
    """A scheduled run for X never loads Mastodon.py (nor requests through it)."""
    code = (
        "import sys\n"
        "from twitterbot.networks.mastodon import measure\n"
        "measure('hi @a@b.org https://example.com/x \U0001f44d')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mastodon', 'requests', 'dateutil')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
