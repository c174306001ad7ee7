"""A tweets file line's options (posting/options.py), and threads cut by delivery/threads.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.delivery.threads import GiveUp, PartState, Wait, cut, next_part
from twitterbot.posting.options import NO_OPTIONS, LineOptions, OptionError, language_tag, split_options

NAMES = ("x", "mastodon", "bluesky")


@pytest.mark.parametrize(
    "line, options, text",
    [
        ("plain line", NO_OPTIONS, "plain line"),
        (
            "{cw: Film spoilers; lang: EN; only: mastodon,bluesky} The butler",
            LineOptions("Film spoilers", "en", ("mastodon", "bluesky")),
            "The butler",
        ),
        ("{skip: x} hi", LineOptions(skip=("x",)), "hi"),
        ("{lang: pt-br} olá", LineOptions(language="pt-BR"), "olá"),
        ("\\{braces} stay", NO_OPTIONS, "{braces} stay"),
    ],
)
def test_options_are_read_and_taken_off(line: str, options: LineOptions, text: str) -> None:
    assert split_options(line, NAMES) == (options, text)


@pytest.mark.parametrize(
    "line, said",
    [
        ("{cw: unclosed", "no closing }"),
        ("{colour: red} hi", "unknown option 'colour'"),
        ("{only: myspace} hi", "myspace in only, which is no network"),
        ("{lang: english!} hi", "not a BCP 47 tag"),
        ("{only: x; skip: x} hi", "both only and skip"),
        ("{cw} hi", "without a colon"),
        ("{cw: a; cw: b} hi", "twice"),
    ],
)
def test_bad_options_say_what_is_wrong(line: str, said: str) -> None:
    with pytest.raises(OptionError, match=said):
        split_options(line, NAMES)


@given(st.text())
def test_any_line_is_read_or_refused_with_a_reason(line: str) -> None:
    try:
        options, text = split_options(line, NAMES)
    except OptionError as exc:
        assert line.startswith("{") and str(exc)
        return
    if not line.startswith("{") and not line.startswith("\\{"):
        assert (options, text) == (NO_OPTIONS, line)  # a line without options means what it meant
    assert all(name in NAMES for name in options.only + options.skip)


@given(st.text(alphabet="abcdefghij -;:,", max_size=30), st.text(max_size=40))
def test_written_options_come_back(warning: str, text: str) -> None:
    warning = warning.replace(";", "").replace(":", "").strip()
    text = text.strip()
    if not warning:
        return
    options, rest = split_options(f"{{cw: {warning}; lang: de}} {text}", NAMES)
    assert options.warning == warning and options.language == "de" and rest == text


@pytest.mark.parametrize(
    "tag, usual", [("en", "en"), ("PT-br", "pt-BR"), ("zh-hant-tw", "zh-Hant-TW"), ("x", None), ("en_US", None)]
)
def test_language_tags(tag: str, usual: object) -> None:
    assert language_tag(tag) == usual


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=400),
    st.integers(20, 80),
    st.booleans(),
)
def test_every_part_fits_and_nothing_is_lost(text: str, limit: int, numbers: bool) -> None:
    if not text.strip():
        return
    parts = cut(text, lambda part: len(part) <= limit, numbers)
    assert all(len(part) <= limit for part in parts)
    words = "".join(text.split())
    joined = "".join("".join(part.rsplit(" ", 1)[0].split()) if numbers else "".join(part.split()) for part in parts)
    assert joined == words


def test_a_thread_is_cut_at_sentences_and_numbered() -> None:
    text = "First sentence here. Second sentence here. Third one."
    assert cut(text, lambda part: len(part) <= 30, numbers=True) == [
        "First sentence here. 1/3",
        "Second sentence here. 2/3",
        "Third one. 3/3",
    ]


def test_japanese_is_cut_after_its_full_stops_never_inside_a_sentence() -> None:
    text = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ！"
    parts = cut(text, lambda part: len(part) <= 20)
    assert parts == ["吾輩は猫である。名前はまだ無い。", "どこで生れたかとんと見当がつかぬ！"]  # no space added
    assert cut("一。二。", lambda part: len(part) <= 10) == ["一。二。"]  # one part: joined as written


def test_the_next_part_waits_for_one_that_may_be_there_and_answers_the_part_before_it() -> None:
    parts = [PartState(1, "a", "posted", "10"), PartState(2, "b", "uncertain"), PartState(3, "c")]
    assert next_part(parts) == Wait(2)  # never sent again, and part 3 must answer it: wait for its look-up
    assert next_part([parts[0], PartState(2, "b", "interrupted"), parts[2]]) == Wait(2)
    assert next_part([parts[0], PartState(2, "b", "posted", "11"), parts[2]]) == (parts[2], "11")
    assert next_part([parts[0], PartState(2, "b", "posted", "11")]) is None
    assert next_part([PartState(1, "a", "temporary"), PartState(2, "b")]) == (PartState(1, "a", "temporary"), None)
    assert next_part([PartState(1, "a", "interrupted"), PartState(2, "b")]) == Wait(1)  # never an orphan part 2


def test_a_part_the_network_refused_ends_the_thread() -> None:
    assert next_part([PartState(1, "a", "duplicate"), PartState(2, "b")]) == GiveUp(1, "duplicate")
    assert next_part([PartState(1, "a", "failed"), PartState(2, "b")]) == GiveUp(1, "failed")
    assert next_part([PartState(1, "a", "posted", "10"), PartState(2, "b", "duplicate"), PartState(3, "c")]) == GiveUp(
        2, "duplicate"
    )
    assert next_part([PartState(1, "a", "posted", None), PartState(2, "b")]) == GiveUp(
        1, "posted, but no id to reply to"
    )
