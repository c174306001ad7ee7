"""The pictures a grammar's tags ask for, made into attachments (posting/tagpictures.py): fetched
bytes become an attachment with the tag's alt text and the address's name, and a fetch that fails
is one message naming the post and the address, with the exit status that says who must act."""

from __future__ import annotations

import pytest

from twitterbot.errors import ErrorKind, ExitStatus, PostError, TweetFileError
from twitterbot.posting.tagpictures import PictureRules, make_pictures
from twitterbot.posting.tags import Tagged, UrlPicture, read_tags

WHERE = "bot.json expansion 'Moths'"


def test_fetched_bytes_become_attachments_with_their_alt_text_and_name() -> None:
    tagged = read_tags("Moths {img https://example.org/pics/moth%20one.png A pale moth}{img https://example.org/}")
    asked = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return b"\x89PNG\r\n\x1a\n" + url.encode()

    first, second = make_pictures(tagged, PictureRules(), where=WHERE, fetch=fetch)
    assert asked == ["https://example.org/pics/moth%20one.png", "https://example.org/"]
    assert (first.alt, first.name) == ("A pale moth", "moth-20one.png")
    assert (second.alt, second.name) == ("", "picture-2")
    assert first.source == b"\x89PNG\r\n\x1a\nhttps://example.org/pics/moth%20one.png"


def test_no_pictures_fetches_nothing() -> None:
    assert make_pictures(Tagged("words"), PictureRules(), where=WHERE, fetch=lambda url: 1 / 0) == ()


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (OSError(110, "Connection timed out"), ExitStatus.TEMPORARY_FAILURE),
        (
            PostError("the server said 404", kind=ErrorKind.NOT_FOUND, exit_status=ExitStatus.DATA_ERROR),
            ExitStatus.DATA_ERROR,
        ),
        (
            PostError("no answer", kind=ErrorKind.TIMEOUT, exit_status=ExitStatus.TEMPORARY_FAILURE),
            ExitStatus.TEMPORARY_FAILURE,
        ),
    ],
)
def test_a_failed_fetch_names_the_post_and_the_address(raised: Exception, status: ExitStatus) -> None:
    def fetch(url: str) -> bytes:
        raise raised

    tagged = Tagged("Moths", (UrlPicture("https://example.org/moth.png"),), words=("img",))
    with pytest.raises(PostError) as failed:
        make_pictures(tagged, PictureRules(), where=WHERE, fetch=fetch)
    assert failed.value.exit_status == status
    assert str(failed.value).startswith(f"{WHERE}: its picture https://example.org/moth.png cannot be fetched")


class Refused(ValueError):
    """What networks/fetch.py raises: a ValueError with the exit status that says whose it is."""

    def __init__(self, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.exit_status = exit_status


def test_a_picture_the_grammar_must_fix_is_a_data_error_and_a_slow_server_a_temporary_one() -> None:
    tagged = Tagged("Moths", (UrlPicture("https://example.org/moth.html"),), words=("img",))

    def page(url: str) -> bytes:
        raise Refused(f"{url} is not a picture (the server says text/html)", 65)

    with pytest.raises(TweetFileError, match="is not a picture .* fix the grammar's"):
        make_pictures(tagged, PictureRules(), where=WHERE, fetch=page)

    def slow(url: str) -> bytes:
        raise Refused(f"the picture at {url} took over 10 s: try again later", 75)

    with pytest.raises(PostError, match="the next run tries again") as failed:
        make_pictures(tagged, PictureRules(), where=WHERE, fetch=slow)
    assert failed.value.exit_status == ExitStatus.TEMPORARY_FAILURE


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>',
            "is an SVG, which the networks do not take",
        ),
        (b"plain words", "is not a PNG, JPEG, GIF or WebP picture: fix the grammar's {img} address"),
    ],
)
def test_a_fetched_answer_that_is_no_picture_names_the_address(body: bytes, said: str) -> None:
    """It was named as a file to "replace or fix its name", the line to stay "in the round"."""
    tagged = read_tags("Moths {img https://example.org/moth.svg}")
    with pytest.raises(TweetFileError) as refused:
        make_pictures(tagged, PictureRules(), where=WHERE, fetch=lambda url: body)
    assert f"{WHERE}: the picture at https://example.org/moth.svg " + said in str(refused.value)
    assert int(refused.value.exit_status) == 65
