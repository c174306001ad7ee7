"""An X look-up's read (twitterbot/networks/x/timeline.py): whether a post on the account's
timeline is the one the bot sent, by its words and the links its t.co links expand to; and the
look-up through the real client against the X emulator, which shortens links as X does."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from loopback import Answer
from x_emulator import XEmulator

from twitterbot.errors import PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.x.api import status_url
from twitterbot.networks.x.poster import XPoster
from twitterbot.networks.x.timeline import Match, among_posts, compare
from twitterbot.pictures.prepare import Attachment


def shown(text: str, *links: str, media: Optional[str] = None) -> Dict[str, Any]:
    """A post as X gives it back: each of `links` (in order) a t.co link in `text`'s "{}" marks."""
    shortened = [f"https://t.co/link{number:06d}" for number in range(len(links))]
    urls: List[Dict[str, Any]] = [
        {"url": short, "expanded_url": link, "display_url": link.split("://")[-1]}
        for short, link in zip(shortened, links)
    ]
    body = text.format(*shortened)
    if media:
        urls.append({"url": media, "expanded_url": "https://x.com/pi_bot/status/1/photo/1", "media_key": "3_1"})
        body += " " + media
    return {"id": "1456012973835788293", "text": body, "entities": {"urls": urls}}


@pytest.mark.parametrize(
    "sent, post, expected",
    [
        ("hello", {"id": "1", "text": "hello"}, Match.SAME),
        ("Tom & Jerry <3", {"id": "1", "text": "Tom &amp; Jerry &lt;3"}, Match.SAME),
        ("  spaced\n out  ", {"id": "1", "text": "spaced out"}, Match.SAME),
        ("cafe\u0301", {"id": "1", "text": "caf\u00e9"}, Match.SAME),  # X keeps the text NFC
        ("see https://example.com/1", shown("see {}", "https://example.com/1"), Match.SAME),
        ("(https://example.com/a).", shown("({}).", "https://example.com/a"), Match.SAME),
        ("a picture", shown("a picture", media="https://t.co/picture001"), Match.SAME),
        # The red team's case: the same words, another link: another post.
        ("see https://example.com/1", shown("see {}", "https://example.com/2"), Match.OTHER),
        ("see https://example.com/1", shown("look {}", "https://example.com/1"), Match.OTHER),
        ("hello", {"id": "1", "text": "goodbye"}, Match.OTHER),
        # X did not say what the link stands for: cannot tell.
        ("see https://example.com/1", {"id": "1", "text": "see https://t.co/abcdefghij"}, Match.UNSURE),
        ("see https://example.com/1", {"id": "1", "text": "see https://t.co/abc", "entities": []}, Match.UNSURE),
        (
            "see https://example.com/1",
            {"id": "1", "text": "see https://t.co/abc", "entities": {"urls": [{"url": "https://t.co/abc"}]}},
            Match.UNSURE,
        ),
        # A link X wrote its own way: a bare domain given a scheme, a host in capitals.
        ("visit example.com", shown("visit {}", "http://example.com"), Match.UNSURE),
        ("see https://Example.com/a", shown("see {}", "https://example.com/a"), Match.UNSURE),
        # A picture's link X did not describe, at the end: may be the post.
        ("a picture", {"id": "1", "text": "a picture https://t.co/picture001"}, Match.UNSURE),
        # Links X found and the bot did not, or the other way round, with the same words around.
        ("two https://a.example/1 https://b.example/2", shown("two {}", "https://a.example/1"), Match.UNSURE),
        ("hello", {"id": "1", "text": None}, Match.UNSURE),
        ("hello", {"id": "1"}, Match.UNSURE),
        ("hello", {"id": "1", "text": 5}, Match.UNSURE),
    ],
)
def test_a_post_is_the_one_sent_only_when_its_words_and_links_are(sent: str, post: dict, expected: Match) -> None:
    assert compare(sent, post)[0] is expected


@pytest.mark.parametrize(
    "answer, found",
    [
        ({"data": [shown("see {}", "https://example.com/1")], "meta": {}}, True),
        ({"data": [shown("see {}", "https://example.com/2")], "meta": {}}, False),
        ({"meta": {"result_count": 0}}, False),  # X leaves `data` out when there are no posts
        ({"data": [shown("see {}", "https://example.com/2")], "meta": {"next_token": "b"}}, None),
        ({"data": [{"id": "1", "text": "see https://t.co/abc"}]}, None),  # no entities
        ({"data": [{**shown("see {}", "https://example.com/1"), "id": None}]}, None),  # there, with no id
        ({"data": [{**shown("see {}", "https://example.com/1"), "id": 14560}]}, None),  # an id that is no string
        ({"data": "see"}, None),
        ({"data": {"id": "1", "text": "see"}}, None),
        ({"data": [5, None, "x"]}, None),
        ({"data": None}, None),
        ({"data": [], "meta": []}, None),
        ({"errors": [{"detail": "Could not find user"}]}, None),
        ({"data": [], "errors": "x"}, None),
    ],
)
def test_a_timeline_says_found_not_found_or_cannot_tell(answer: dict, found: Optional[bool]) -> None:
    result = among_posts(answer, "see https://example.com/1", status_url)
    assert result.found is found, result.how
    if found:
        assert result.result and result.result.url == f"https://x.com/i/status/{result.result.post_id}"


# -- through tweepy's session, against the emulator -------------------------------------------------


def test_the_emulator_shortens_links_as_x_does_and_describes_them_when_asked(
    emulator: XEmulator, poster: XPoster
) -> None:
    posted = poster.post("see https://example.com/1 and example.org & more")
    (post,) = emulator.posts
    assert post.text == "see https://example.com/1 and example.org & more"  # as sent
    assert post.shown.startswith("see https://t.co/") and "example" not in post.shown
    assert [url["expanded_url"] for url in post.urls] == ["https://example.com/1", "http://example.org"]
    assert all(post.shown[url["start"] : url["end"]] == url["url"] for url in post.urls)
    found = poster.look_up(post.text, datetime.now(timezone.utc), None)
    assert found.found is None and "X changed" in found.how  # example.org came back as http://example.org
    assert posted.post_id == post.id


def test_the_emulator_refuses_a_field_x_does_not_know(emulator: XEmulator) -> None:
    import requests
    from conftest import credentials_for

    from twitterbot.networks.x.api import DEFAULT_BASE_URL, adapter, signer

    session = requests.Session()
    session.mount(DEFAULT_BASE_URL, adapter(timeout=5, base_url=emulator.url))
    query = {"max_results": 10, "tweet.fields": "entities,colour"}
    auth = signer(credentials_for(emulator))
    refused = session.get(f"{DEFAULT_BASE_URL}/2/users/12345/tweets", params=query, auth=auth)
    assert refused.status_code == 400 and "[colour] is not one of" in refused.text
    query["tweet.fields"] = "entities,created_at"
    assert session.get(f"{DEFAULT_BASE_URL}/2/users/12345/tweets", params=query, auth=auth).status_code == 200


def test_an_uncertain_link_is_not_found_because_another_link_is_there(emulator: XEmulator, poster: XPoster) -> None:
    """The red team's case: `see https://example.com/2` on the timeline is not `.../1`."""
    sent_at = datetime.now(timezone.utc)
    poster.post("see https://example.com/2")
    answer = poster.look_up("see https://example.com/1", sent_at, None)
    assert answer.found is False, answer.how
    poster.post("see https://example.com/1")
    answer = poster.look_up("see https://example.com/1", sent_at, None)
    assert answer.found is True and answer.result.post_id == emulator.posts[-1].id


def test_a_post_with_a_picture_is_found_by_its_words_and_links(
    emulator: XEmulator, poster: XPoster, tmp_path: Path
) -> None:
    """X adds a picture's own t.co link at the end of the text, described with its media_key."""
    from images import photo

    sent_at = datetime.now(timezone.utc) - timedelta(seconds=1)
    picture = Attachment(photo(tmp_path / "garden.jpg", size=(400, 300)), "Runner beans", "garden.jpg")
    poster.post("a picture of https://example.com/p", PostOptions(images=(picture,)))
    assert emulator.posts[0].shown.count("https://t.co/") == 2  # the link, and the picture's own
    answer = poster.look_up("a picture of https://example.com/p", sent_at, None)
    assert answer.found is True, answer.how


@pytest.mark.parametrize(
    "answer",
    [
        Answer({"data": [{"id": None, "text": "hello"}]}),
        Answer({"data": "hello"}),
        Answer({"data": {"id": "1", "text": "hello"}}),
        Answer({"data": [5]}),
        Answer({"meta": []}),
        Answer({"errors": 5}),
        Answer([]),
        Answer("hello"),
        Answer(None),
        Answer(b"<html>Bad Gateway</html>"),
        Answer(b"\xff\xfe{"),
        Answer([], status=400),
        Answer({"errors": 5}, status=400),
        Answer("x", status=429),
        Answer(b"", status=503),
        Answer(size=20 * 1024 * 1024),
    ],
    ids=lambda answer: repr(answer.body)[:30] + f"/{answer.status}/{answer.size}",
)
def test_a_malformed_timeline_cannot_tell_or_is_a_named_error(emulator: XEmulator, poster: XPoster, answer) -> None:
    """Never an exception of another kind: settling catches PostError, and anything else was exit 1."""
    emulator.answer_next("timeline", answer)
    try:
        result = poster.look_up("hello", datetime.now(timezone.utc), None)
    except PostError as exc:
        assert exc.summary
    else:
        assert result.found is None, result


@pytest.mark.parametrize(
    "answer", [Answer({"data": {"id": None}}), Answer({"data": []}), Answer([]), Answer({"data": {"id": 5}})]
)
def test_a_malformed_account_is_a_named_error(answer: Answer) -> None:
    """A token that does not start with the account's id: the look-up asks X for it first."""
    from conftest import credentials_for
    from x_emulator import KEYS

    with XEmulator(keys={**KEYS, "access_token": "abc-emuAccessToken"}) as emulator:
        poster = XPoster(credentials_for(emulator), timeout=5, retries=0, base_url=emulator.url)
        emulator.answer_next("me", answer)
        with pytest.raises(PostError, match="could not be read"):
            poster.look_up("hello", datetime.now(timezone.utc), None)
        assert poster.look_up("hello", datetime.now(timezone.utc), None).found is False  # asked again: fine


def test_a_reply_is_found_only_as_the_reply_to_the_post_it_answered(emulator: XEmulator, poster: XPoster) -> None:
    sent_at = datetime.now(timezone.utc)
    ada = emulator.mention("@pi_bot hello", by="ada", ago=60)
    grace = emulator.mention("@pi_bot hello", by="grace", ago=30)
    posted = poster.post("hi there!", PostOptions(reply_to=ada.id))
    own = poster.look_up("hi there!", sent_at, None, PostOptions(reply_to=ada.id))
    assert own.found and own.result and own.result.post_id == posted.post_id
    other = poster.look_up("hi there!", sent_at, None, PostOptions(reply_to=grace.id))
    assert other.found is False, other.how  # ada's reply is not grace's, whatever its words
    alone = poster.look_up("hi there!", sent_at, None, PostOptions())
    assert alone.found is False, alone.how  # nor a post that answers none
    unknown = poster.look_up("hi there!", sent_at, None)  # recorded before the history kept what it answered
    assert unknown.found
