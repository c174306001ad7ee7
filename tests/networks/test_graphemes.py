"""Bluesky counts graphemes: the Unicode conformance test decides what one is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest
from conftest import REPO
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.networks import grapheme_table
from twitterbot.networks.graphemes import count_graphemes, grapheme_clusters

UNICODE = Path(__file__).parents[1] / "fixtures" / "unicode"
CONFORMANCE = UNICODE / "GraphemeBreakTest.txt"


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
    assert CONFORMANCE.read_text(encoding="utf-8").startswith(
        f"# GraphemeBreakTest-{grapheme_table.UNICODE_VERSION}.txt"
    )
    assert len(cases) > 600  # Unicode 16.0 has 766, GB9c's among them
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


@pytest.mark.parametrize(
    ("text", "with_gb9c", "without"),
    [
        ("क्ष", 1, 2),  # KA VIRAMA SSA: one conjunct
        ("नमस्ते", 3, 4),
        ("क्\u200dष", 1, 2),  # a ZWJ inside the conjunct keeps it whole
        ("क्", 1, 1),  # a virama with no consonant after it joins nothing
        ("a्क", 2, 2),  # only a consonant of the six scripts starts a conjunct
    ],
)
def test_an_indic_conjunct_is_one_grapheme_on_bluesky_and_counts_apart_for_mastodon(
    text: str, with_gb9c: int, without: int
) -> None:
    assert count_graphemes(text) == with_gb9c
    assert count_graphemes(text, indic_conjuncts=False) == without


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_leaving_gb9c_out_never_counts_less(text: str) -> None:
    """Mastodon's count (no GB9c) is never under Bluesky's: GB9c only joins, so either is safe where it is used."""
    assert count_graphemes(text, indic_conjuncts=False) >= count_graphemes(text)
    assert "".join(grapheme_clusters(text)) == text


def test_the_table_is_what_the_generator_makes_of_the_unicode_data(tmp_path: Path) -> None:
    """grapheme_table.py is generated, never edited: tools/gen_graphemes.py remakes it from the fixtures."""
    out = tmp_path / "grapheme_table.py"
    subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_graphemes.py"), str(UNICODE), "--output", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_text(encoding="utf-8") == Path(grapheme_table.__file__).read_text(encoding="utf-8")
    assert grapheme_table.CLASSES[14] == "Extended_Pictographic" and grapheme_table.INCB_VALUES[3] == "Linker"
