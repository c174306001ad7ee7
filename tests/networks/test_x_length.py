"""X's length rule and what a post costs (`twitterbot/networks/x/`, measured by twitter-text
in `networks/twittertext.py`); the tweets file's own tests show the rule at work on lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import X_ONLY

from twitterbot.networks.x import PRICES, measure, url_cost
from twitterbot.posting.tweets import parse_tweets

PATH = Path("tweets.txt")


@pytest.mark.parametrize(
    ("text", "weighted", "has_url"),
    [
        ("hello", 5, False),
        ("a" * 280, 280, False),
        ("日本語", 6, False),  # CJK counts 2
        ("😀", 2, False),  # emoji count 2
        ("👨‍👩‍👧", 2, False),  # a ZWJ family is one emoji
        ("see https://example.com/a/very/long/path/that/goes/on", 27, True),  # URLs count 23
        ("see example.com", 27, True),  # bare domains are URLs too
        ("café", 4, False),  # NFC first
        ("cafe\u0301", 4, False),
    ],
)
def test_weighted_length_is_x_s(text: str, weighted: int, has_url: bool) -> None:
    measured = measure(text)
    assert (measured.length, bool(measured.urls), measured.problem) == (weighted, has_url, None)


def test_url_cost_names_the_urls_and_both_prices_from_the_one_constant() -> None:
    line, plain = parse_tweets(b"run python bot.py and see https://example.com/x\nno link here\n", PATH, X_ONLY).lines
    assert line.urls == ("bot.py", "https://example.com/x")
    note = url_cost(line)
    assert "bot.py, https://example.com/x" in note
    assert f"${PRICES.post_with_url:.2f}" in note and f"${PRICES.post:.3f}" in note
    assert url_cost(plain) is None


def test_a_word_of_many_dots_is_measured_as_x_counts_it_without_searching_it_for_links() -> None:
    """twitter-text's link finder takes time in the square of a run of dotted words ("a.b.c."
    repeated to 4,000 characters took 18 s a call): a word with more dots than a link has is
    measured with its dots as letters of the same weight."""
    from twitterbot.networks import twittertext

    word = "a.b.c." * 700
    assert twittertext._few_dots(word) == word.replace(".", "x")
    assert (
        twittertext._few_dots(f"see https://example.com/a.b.c {word}")
        == f"see https://example.com/a.b.c {word.replace('.', 'x')}"
    )
    assert (
        twittertext._few_dots("a normal line. With a link: example.com.") == "a normal line. With a link: example.com."
    )
    fit = measure(word)
    assert (fit.length, fit.urls, fit.fits) == (4200, (), False)
    assert measure("a.b.c." * 6).length == 36  # as before: few dots, measured as they are
