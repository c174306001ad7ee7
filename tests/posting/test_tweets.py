"""The tweets file: format, X's weighted length, and clear errors for unusable files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import X_ONLY
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.errors import StateError, TweetFileError
from twitterbot.networks.x import measure
from twitterbot.posting.tweets import load_tweets, parse_tweets
from twitterbot.state.store import HistoryStore

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
    assert [line.text for line in parse_tweets(content.encode(), PATH, X_ONLY).lines] == texts


def test_line_numbers_are_the_files_own() -> None:
    tweets = parse_tweets(b"# header\n\nfirst\n\nsecond\n", PATH, X_ONLY)
    assert [(line.lineno, line.text) for line in tweets.lines] == [(3, "first"), (5, "second")]


def test_repeated_lines_are_reported_and_kept_once() -> None:
    tweets = parse_tweets(b"same\nsame\n", PATH, X_ONLY)
    assert len(tweets.lines) == 1
    assert tweets.problems[0].lineno == 2 and "repeats line 1" in tweets.problems[0].message


def test_an_over_long_line_is_reported_with_its_number_and_weighted_length_and_never_picked() -> None:
    tweets = parse_tweets(("ok\n" + "日" * 141 + "\nfine\n").encode(), PATH, X_ONLY)
    assert [line.text for line in tweets.lines] == ["ok", "fine"]
    (problem,) = tweets.problems
    assert problem.lineno == 2
    assert "X counts 282 of 280" in problem.message and "shorten" in problem.message


def test_a_line_too_long_for_any_url_to_save_is_refused_without_measuring_it() -> None:
    """A megabyte pasted on one line: twitter-text would take seconds (a minute on a Pi) on every
    run; past 280 * 4096 / 23 characters no text fits, whatever its URLs (the fuzz run found it)."""
    import time

    started = time.perf_counter()
    tweets = parse_tweets(("ok\n" + "word " * 200_000 + "\n").encode(), PATH, X_ONLY)
    assert time.perf_counter() - started < 1.0
    (problem,) = tweets.problems
    assert problem.lineno == 2 and "X counts at least 5,615 of 280: shorten it" in problem.message
    # Just under the bound, a line of long URLs is measured as ever (and X counts each URL 23).
    urls = " ".join(["https://example.com/" + "a" * 4000] * 12)
    assert len(urls) < 49_865 and measure(urls).length == 12 * 23 + 11


def test_control_characters_are_refused() -> None:
    tweets = parse_tweets(b"fine\nbad\x00char\nalso\x1bbad\n", PATH, X_ONLY)
    assert [line.text for line in tweets.lines] == ["fine"]
    assert [problem.lineno for problem in tweets.problems] == [2, 3]


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("bad\x07bell", "control character U+0007, which X does not accept: delete it (cat -A shows it as ^G)"),
        ("bad\x1bescape", "U+001B"),
        ("zero\ufeffwidth", "U+FEFF (zero width no-break space)"),
        ("not\uffffa character", "U+FFFF"),
    ],
)
def test_a_refused_character_is_named_and_the_fix_is_to_delete_it_not_to_shorten(line: str, named: str) -> None:
    (problem,) = parse_tweets(f"fine\n{line}\n".encode(), PATH, X_ONLY).problems
    assert named in problem.message
    assert "shorten" not in problem.message and "delete it" in problem.message


# -- URLs cost more ---------------------------------------------------------------------------------


def test_the_bundled_tweets_file_has_no_line_x_counts_as_a_url() -> None:
    """X charges about 13 times as much for a post with a URL, and "bot.py" is one (.py is a TLD)."""
    from conftest import REPO

    tweets = load_tweets(REPO / "tweets.txt", X_ONLY)
    assert [(line.lineno, line.urls) for line in tweets.lines if line.has_url] == []
    assert tweets.problems == []


def test_check_and_the_dry_run_name_each_line_with_a_url_and_its_cost(tmp_path: Path, capsys) -> None:
    from twitterbot.cli import main

    (tmp_path / "tweets.txt").write_text("plain line\nsee example.com\nalso www.example.org today\n")
    assert main(["check"], environ={}, project_dir=tmp_path) == 78  # no keys: a problem, but the rest is checked
    out = capsys.readouterr().out
    assert "3 lines ready to post (2 with a URL, which costs more)" in out
    tweets_file = tmp_path / "tweets.txt"
    assert (
        f"{tweets_file} line 2 contains a URL (example.com): X charges about $0.20 to post it instead of $0.015" in out
    )
    assert f"{tweets_file} line 3 contains a URL (www.example.org)" in out
    assert f"{tweets_file} line 1 " not in out

    only_links = tmp_path / "links.txt"
    only_links.write_text("# a comment\nsee example.com\n")
    dry_run = ["--dry-run", "--tweets", str(only_links), "--force"]
    assert main(dry_run, environ={}, project_dir=tmp_path) == 0
    err = capsys.readouterr().err
    assert "would post line 2" in err
    assert "contains a URL (example.com): X charges about $0.20 to post it instead of $0.015" in err


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
        parse_tweets(content, PATH, X_ONLY)
    assert message in str(caught.value)
    assert "tweets.txt" in str(caught.value)


def test_a_missing_file_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(TweetFileError, match="does not exist: create it, or set TWEETS_FILE"):
        load_tweets(tmp_path / "nope.txt", X_ONLY)


def test_a_folder_is_not_a_tweets_file(tmp_path: Path) -> None:
    with pytest.raises(TweetFileError, match="is a folder"):
        load_tweets(tmp_path, X_ONLY)


def test_an_unreadable_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(TweetFileError, match="cannot read tweets file .*check its permissions"):
        load_tweets(tmp_path / "plain" / "tweets.txt", X_ONLY)  # a file where a folder should be


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_give_posts_or_a_clear_error(data: bytes) -> None:
    try:
        tweets = parse_tweets(data, PATH, X_ONLY)
    except TweetFileError as exc:
        assert "tweets.txt" in str(exc)
        return
    assert tweets.lines
    for line in tweets.lines:
        assert line.text.strip() and line.weighted_length <= 280
        assert not line.text.startswith(("\n", " "))


line_endings = st.sampled_from(["\n", "\r\n", "\r"])
plain_line = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60).filter(
    lambda s: s.strip() and not s.strip().startswith(("#", "{")) and "\\" not in s and "![" not in s
)  # a line of text: a comment, an option, an escape or a picture (`![alt](path)`) is another test's


@settings(max_examples=200, deadline=None)
@given(st.lists(plain_line, min_size=1, max_size=20), line_endings)
def test_any_text_round_trips_whatever_the_line_endings(lines: list, ending: str) -> None:
    data = ending.join(lines).encode("utf-8")
    try:
        tweets = parse_tweets(data, PATH, X_ONLY)
    except TweetFileError:
        assert all(measure(line.strip()).problem for line in lines)
        return
    expected = []
    for line in lines:
        text = line.strip()
        if text not in expected and not measure(text).problem:
            expected.append(text)
    assert [line.text for line in tweets.lines] == expected


# -- the lengths cache: twitter-text is loaded only for lines it has not measured -------------------


def _cache_rows(history: Path, sql: str) -> None:
    """Change the cached lengths behind the store's back, as a stale or doctored cache would be."""
    import sqlite3

    with sqlite3.connect(history) as conn:
        conn.execute(sql)
    conn.close()


def test_a_cached_line_is_not_measured_again_and_a_changed_line_is(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    first = parse_tweets("hello\nsee example.com\n日本語\n".encode(), PATH, X_ONLY, cache=HistoryStore(history))
    cached = parse_tweets("hello\nsee example.com\n日本語\n".encode(), PATH, X_ONLY, cache=HistoryStore(history))
    assert cached == first and [hash(line) for line in cached.lines] == [hash(line) for line in first.lines]
    with pytest.raises(dataclasses.FrozenInstanceError):  # lines made on the short path are as frozen
        cached.lines[0].text = "changed"  # type: ignore[misc]
    _cache_rows(history, "UPDATE line_lengths SET length = 99 WHERE text = 'hello'")  # proof the cache is read
    again = parse_tweets("hello\nsee example.com now\n日本語!\n".encode(), PATH, X_ONLY, cache=HistoryStore(history))
    assert [(line.text, line.weighted_length, line.urls) for line in again.lines] == [
        ("hello", 99, ()),  # the exact text was cached: not measured again
        ("see example.com now", 31, ("example.com",)),  # changed lines are measured anew
        ("日本語!", 7, ()),
    ]
    later = parse_tweets(b"hello\nsee example.com now\n", PATH, X_ONLY, cache=HistoryStore(history))
    assert [line.weighted_length for line in later.lines] == [99, 31]  # the new lines were kept too


def test_the_cache_never_lets_a_too_long_line_through(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    parse_tweets(("a" * 280 + "\n" + "日" * 140 + "\n").encode(), PATH, X_ONLY, cache=HistoryStore(history))
    # Measured by another twitter-text (or another version of this bot): never trusted.
    _cache_rows(history, "UPDATE line_lengths SET version = 'another twitter-text', length = 1")
    with pytest.raises(TweetFileError, match="line 1 is too long: X counts 281 of 280"):
        parse_tweets(("a" * 281 + "\n").encode(), PATH, X_ONLY, cache=HistoryStore(history))
    tweets = parse_tweets(("a" * 280 + "\n" + "日" * 141 + "\n").encode(), PATH, X_ONLY, cache=HistoryStore(history))
    assert [line.weighted_length for line in tweets.lines] == [280]
    assert "X counts 282 of 280" in tweets.problems[0].message


def test_a_file_x_took_before_reads_only_the_length_of_the_line_asked_for(tmp_path: Path) -> None:
    class Counting(HistoryStore):  # what a scheduled run asks of the cache
        asked: list = []

        def measured_lengths(self, kind: str, version: str, texts: object = None) -> dict:
            self.asked.append(None if texts is None else list(texts))  # type: ignore[call-overload]
            return super().measured_lengths(kind, version, texts)  # type: ignore[arg-type]

    content = "".join(f"line {number}\n" for number in range(1, 201)).encode()
    first = parse_tweets(content, PATH, X_ONLY, cache=Counting(tmp_path / "history.db"))
    Counting.asked.clear()
    tweets = parse_tweets(content, PATH, X_ONLY, cache=Counting(tmp_path / "history.db"))
    assert Counting.asked == []  # every text is known: no length is read yet
    line = tweets.line(41)
    assert Counting.asked == [["line 42"]]
    assert line == first.line(41) and line.lineno == 42
    assert tweets == first and tweets.lines == first.lines


def test_a_file_checked_once_against_the_cache_is_then_known_by_its_digest_until_the_cache_changes(
    tmp_path: Path,
) -> None:
    class Counting(HistoryStore):  # each time a run checks the file's texts one by one
        checked: list = []

        def measured_texts(self, kind: str, version: str, longest: int) -> set:
            self.checked.append(kind)
            return super().measured_texts(kind, version, longest)

    history = tmp_path / "history.db"
    parse_tweets(b"one\ntwo\n", PATH, X_ONLY, cache=Counting(history))  # measured, lengths kept
    Counting.checked.clear()
    parse_tweets(b"one\ntwo\n", PATH, X_ONLY, cache=Counting(history))
    assert Counting.checked == ["x"]  # once text by text
    tweets = parse_tweets(b"one\ntwo\n", PATH, X_ONLY, cache=Counting(history))
    assert Counting.checked == ["x"] and (tweets.texts, tweets.line(1).weighted_length) == (["one", "two"], 3)
    parse_tweets(b"two\none\n", PATH, X_ONLY, cache=Counting(history))
    assert Counting.checked == ["x", "x"]  # another order is another file
    parse_tweets(b"three\n", PATH, X_ONLY, cache=Counting(history))  # its lengths replace the cache's
    Counting.checked.clear()
    again = parse_tweets(b"two\none\n", PATH, X_ONLY, cache=Counting(history))
    assert Counting.checked == ["x"]  # the digest went with the lengths it stood for
    assert [(line.text, line.weighted_length) for line in again.lines] == [("two", 3), ("one", 3)]


def test_problems_are_listed_in_line_order_whatever_found_them() -> None:
    tweets = parse_tweets(b"fine\nbad\x00char\nfine\n" + ("a" * 281).encode() + b"\nfine\n", PATH, X_ONLY)
    assert [(problem.lineno, problem.message.split()[0]) for problem in tweets.problems] == [
        (2, "contains"),
        (3, "repeats"),
        (4, "is"),
        (5, "repeats"),
    ]
    assert (tweets.texts, tweets.linenos) == (["fine"], [1])


def test_a_cache_that_cannot_be_read_or_written_changes_nothing() -> None:
    class Unwritable:  # a history on a full or read-only disk: the run's own writes will say so
        def measured_texts(self, kind: str, version: str, longest: int) -> set:
            raise StateError("cannot read the history")

        def measured_file(self, kind: str, version: str) -> None:
            raise StateError("cannot read the history")

        def remember_measured_file(self, kind: str, version: str, digest: str) -> None:
            raise StateError("cannot write the history")

        def measured_lengths(self, kind: str, version: str, texts: object = None) -> dict:
            raise StateError("cannot read the history")

        def remember_lengths(self, kind: str, version: str, lengths: dict) -> None:
            raise StateError("cannot write the history")

    tweets = parse_tweets(b"one\nsee example.com\n", PATH, X_ONLY, cache=Unwritable())
    assert [(line.text, line.weighted_length) for line in tweets.lines] == [("one", 3), ("see example.com", 27)]


@pytest.mark.parametrize("kind", ["a FIFO (a named pipe)", "a device"])
def test_a_fifo_or_a_device_named_as_a_file_is_refused_before_it_is_read(home, kind: str) -> None:
    """A FIFO would block the run (and its lock) for ever, /dev/zero never ends: a tweets file, a
    grammar and an env file that are one are refused, with their exit codes, in bounded time (the
    runs are processes, so a hang fails the test instead of hanging it)."""
    import os

    def odd(name: str) -> Path:
        if kind == "a device":
            return Path("/dev/zero")
        os.mkfifo(home.path / name)
        return home.path / name

    tweets, grammar, env = odd("tweets-fifo.txt"), odd("grammar-fifo.json"), odd("fifo.env")
    for args in (("--force", "--tweets", str(tweets)), ("--dry-run", "--force", "--tweets", str(grammar))):
        ran = home.run_process(*args, timeout=20)
        assert ran.returncode == 65, ran.stderr
        assert f"is {kind}, not a file: set TWEETS_FILE to the file" in ran.stderr
    home.write_env(TWEETS_FILE=str(tweets))
    checked = home.run_process("check", timeout=20)
    assert checked.returncode == 65 and f"is {kind}, not a file" in checked.stdout + checked.stderr
    bad_env = home.run_process("--env-file", str(env), "--dry-run", timeout=20)
    assert bad_env.returncode == 78 and f"env file {env} is {kind}, not a file" in bad_env.stderr
