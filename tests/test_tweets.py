"""The tweets file: format, X's weighted length, and clear errors for unusable files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.errors import TweetFileError
from twitterbot.tweets import load_tweets, measure, parse_tweets

PATH = Path("tweets.txt")


@pytest.mark.parametrize(
    ("content", "texts"),
    [
        ("one\ntwo\n", ["one", "two"]),
        ("one\r\ntwo\r\n", ["one", "two"]),  # Windows line endings
        ("one\rtwo", ["one", "two"]),  # old Mac line endings
        ("\ufeffone\n", ["one"]),  # a byte-order mark from Notepad
        ("# comment\n\n   \none\n  # indented comment\n", ["one"]),
        ("  padded  \n", ["padded"]),
        ("first line\\nsecond line\n", ["first line\nsecond line"]),
        ("a \\n b\\n\\nc\n", ["a\nb\n\nc"]),
        ("\\#RaspberryPi rocks\n", ["#RaspberryPi rocks"]),
        ("no # comment here\n", ["no # comment here"]),
        ("same\nother\nsame\n", ["same", "other"]),
        ("\\n\nreal\n", ["real"]),  # a line that is only a line break is blank
    ],
)
def test_lines_become_posts(content: str, texts: list) -> None:
    assert [line.text for line in parse_tweets(content.encode(), PATH).lines] == texts


def test_line_numbers_are_the_files_own() -> None:
    tweets = parse_tweets(b"# header\n\nfirst\n\nsecond\n", PATH)
    assert [(line.lineno, line.text) for line in tweets.lines] == [(3, "first"), (5, "second")]


def test_repeated_lines_are_reported_and_kept_once() -> None:
    tweets = parse_tweets(b"same\nsame\n", PATH)
    assert len(tweets.lines) == 1
    assert tweets.problems[0].lineno == 2 and "repeats line 1" in tweets.problems[0].message


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
    assert (measured.weighted_length, measured.has_url, measured.problem) == (weighted, has_url, None)


def test_an_over_long_line_is_reported_with_its_number_and_weighted_length_and_never_picked() -> None:
    tweets = parse_tweets(("ok\n" + "日" * 141 + "\nfine\n").encode(), PATH)
    assert [line.text for line in tweets.lines] == ["ok", "fine"]
    (problem,) = tweets.problems
    assert problem.lineno == 2
    assert "X counts 282 of 280" in problem.message and "shorten" in problem.message


def test_control_characters_are_refused() -> None:
    tweets = parse_tweets(b"fine\nbad\x00char\nalso\x1bbad\n", PATH)
    assert [line.text for line in tweets.lines] == ["fine"]
    assert [problem.lineno for problem in tweets.problems] == [2, 3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "has no lines to post"),
        (b"# only comments\n\n", "has no lines to post"),
        (("x" * 300).encode(), "line 1 is too long: X counts 300 of 280"),
        (b"good line\nbad \xff byte\n", "line 2 is not UTF-8"),
    ],
)
def test_unusable_files_are_clear_errors(content: bytes, message: str) -> None:
    with pytest.raises(TweetFileError) as caught:
        parse_tweets(content, PATH)
    assert message in str(caught.value)
    assert "tweets.txt" in str(caught.value)


def test_a_missing_file_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(TweetFileError, match="does not exist: create it, or set TWEETS_FILE"):
        load_tweets(tmp_path / "nope.txt")


def test_a_folder_is_not_a_tweets_file(tmp_path: Path) -> None:
    with pytest.raises(TweetFileError, match="is a folder"):
        load_tweets(tmp_path)


def test_an_unreadable_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(TweetFileError, match="cannot read tweets file .*check its permissions"):
        load_tweets(tmp_path / "plain" / "tweets.txt")  # a file where a folder should be


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_give_posts_or_a_clear_error(data: bytes) -> None:
    try:
        tweets = parse_tweets(data, PATH)
    except TweetFileError as exc:
        assert "tweets.txt" in str(exc)
        return
    assert tweets.lines
    for line in tweets.lines:
        assert line.text.strip() and line.weighted_length <= 280
        assert not line.text.startswith(("\n", " "))


line_endings = st.sampled_from(["\n", "\r\n", "\r"])
plain_line = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60).filter(
    lambda s: s.strip() and not s.strip().startswith("#") and "\\" not in s
)


@settings(max_examples=200, deadline=None)
@given(st.lists(plain_line, min_size=1, max_size=20), line_endings)
def test_any_text_round_trips_whatever_the_line_endings(lines: list, ending: str) -> None:
    data = ending.join(lines).encode("utf-8")
    try:
        tweets = parse_tweets(data, PATH)
    except TweetFileError:
        assert all(measure(line.strip()).problem for line in lines)
        return
    expected = []
    for line in lines:
        text = line.strip()
        if text not in expected and not measure(text).problem:
            expected.append(text)
    assert [line.text for line in tweets.lines] == expected
