"""Bluesky counts graphemes: the Unicode conformance test decides what one is."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from twitterbot.networks.graphemes import count_graphemes, grapheme_clusters

CONFORMANCE = Path(__file__).parents[1] / "fixtures" / "unicode" / "GraphemeBreakTest.txt"


def conformance_cases() -> List[Tuple[str, List[str]]]:
    cases = []
    for line in CONFORMANCE.read_text(encoding="utf-8").splitlines():
        rule = line.split("#", 1)[0].strip()
        if not rule:
            continue
        clusters = [
            "".join(chr(int(cp, 16)) for cp in part.split("×") if cp.strip()) for part in rule.strip("÷ ").split("÷")
        ]
        cases.append(("".join(clusters), clusters))
    return cases


def test_every_case_of_the_unicode_conformance_test() -> None:
    cases = conformance_cases()
    assert len(cases) > 600  # Unicode 15.0 has 602
    wrong = [(text, want, grapheme_clusters(text)) for text, want in cases if grapheme_clusters(text) != want]
    assert wrong == []
    assert all(count_graphemes(text) == len(want) for text, want in cases)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("hello", 5),
        ("a\r\nb", 3),  # CR LF is one
        ("e\u0301", 1),  # a combining accent joins its letter
        ("🇫🇷🇩🇪", 2),  # flags: regional indicators in pairs
        ("👨‍👩‍👧", 1),  # a ZWJ family
        ("👋🏽", 1),  # a skin tone modifier
        ("한국어", 3),  # precomposed Hangul
        ("\u1100\u1161\u11a8", 1),  # conjoining jamo L V T
    ],
)
def test_what_a_reader_sees_as_one_character_counts_one(text: str, count: int) -> None:
    assert count_graphemes(text) == count
