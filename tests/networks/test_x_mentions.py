"""Reading X's mentions (XPoster.mentions: twitterbot/networks/x/reader.py and mentions.py, signed
GETs with requests-oauthlib, tweepy's signer) against the X emulator's ``GET /2/users/:id/mentions``,
and replying under one (X's February 2026 rule: only where the post's author mentioned the account)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from loopback import Answer
from x_emulator import USER_ID, XEmulator

from twitterbot.errors import ErrorKind, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.x import NETWORK, PRICES
from twitterbot.networks.x.poster import XPoster

DAY = 24 * 3600


def a_day_ago() -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=1)


def test_x_listens_and_prices_reads_and_replies() -> None:
    fit = NETWORK.measure("@ada hello")
    assert NETWORK.listens
    assert NETWORK.read_price == PRICES.read == 0.001
    assert NETWORK.reply_price(fit) == PRICES.reply == 0.01
    assert NETWORK.reply_price(NETWORK.measure("@ada see example.com")) == PRICES.post_with_url


def test_the_first_read_goes_back_a_day_oldest_first_and_asks_for_the_account(
    emulator: XEmulator, poster: XPoster
) -> None:
    emulator.mention("@pi_bot from long ago", by="old", ago=2 * DAY)
    first = emulator.mention("@pi_bot hello", by="ada", ago=3600)
    second = emulator.mention("hi @PI_BOT &amp; <friends>", by="grace", ago=60)
    emulator.mention("@pi_bot_fan is not me", by="ada")  # another account's name

    page = poster.mentions(None, not_before=a_day_ago(), limit=10)

    assert [mention.id for mention in page.mentions] == [first.id, second.id]
    hello = page.mentions[0]
    assert hello.network == "x" and hello.reply_to == first.id
    assert hello.author.handle == "@ada" and not hello.author.bot
    assert hello.created_at.tzinfo is not None and abs(hello.created_at.timestamp() - first.at) < 1
    assert page.mentions[1].text == "hi @PI_BOT &amp; <friends>"  # X's escaping undone
    assert page.reads == 2  # GET /2/users/me, then one page
    assert json.loads(page.cursor or "") == {"me": USER_ID, "since": second.id}
    assert emulator.mention_reads == 1 and emulator.reads == 2


def test_a_read_with_nothing_new_costs_one_request(emulator: XEmulator, poster: XPoster) -> None:
    emulator.mention("@pi_bot hello", by="ada")
    cursor = poster.mentions(None, not_before=a_day_ago(), limit=10).cursor
    before = emulator.reads

    again = XPoster(poster._credentials, timeout=2, retries=0, base_url=emulator.url)  # the next run
    page = again.mentions(cursor, not_before=a_day_ago(), limit=10)

    assert page.mentions == () and page.reads == 1 and page.cursor is None  # None: keep the one passed
    assert emulator.reads - before == 1
    assert [seen.path for seen in emulator.seen][-1] == f"/2/users/{USER_ID}/mentions"


def test_the_first_read_with_no_mention_keeps_the_account_in_the_cursor(emulator: XEmulator, poster: XPoster) -> None:
    page = poster.mentions(None, not_before=a_day_ago(), limit=10)
    assert page.mentions == () and page.reads == 2
    assert json.loads(page.cursor or "") == {"me": USER_ID, "since": None}
    later = emulator.mention("@pi_bot now", by="ada")
    assert [m.id for m in poster.mentions(page.cursor, not_before=a_day_ago(), limit=10).mentions] == [later.id]


def test_more_than_the_cap_leaves_the_rest_for_later_none_skipped_none_twice(
    emulator: XEmulator, poster: XPoster
) -> None:
    made = [emulator.mention(f"@pi_bot number {n}", by=f"user{n % 7}", ago=DAY - 600 + n).id for n in range(230)]
    cursor, seen, reads = None, [], []
    for _ in range(30):
        page = poster.mentions(cursor, not_before=a_day_ago(), limit=10)
        seen += [mention.id for mention in page.mentions]
        reads.append(page.reads)
        cursor = page.cursor or cursor
        if not page.mentions:
            break
    assert seen == made  # oldest first, each once
    assert reads[0] == 1 + 3  # the account, then three pages of 100 back to a day ago
    assert reads[-1] == 1


def test_the_account_s_own_posts_are_left_out_and_not_read_again(emulator: XEmulator, poster: XPoster) -> None:
    theirs = emulator.mention("@pi_bot hello", by="ada")
    emulator.mention("note to self @pi_bot", by="pi_bot")
    page = poster.mentions(None, not_before=a_day_ago(), limit=10)
    assert [mention.id for mention in page.mentions] == [theirs.id]
    assert json.loads(page.cursor or "")["since"] == emulator.posts[-1].id  # past its own post


def test_a_reply_to_the_bot_s_post_answers_the_bot_and_bios_are_read(emulator: XEmulator, poster: XPoster) -> None:
    emulator.user("robot", description="I am a bot #nobot")
    own = poster.post("a post of the bot's")
    anew = emulator.mention("@pi_bot hi", by="ada")
    answer = emulator.mention("@pi_bot and you too", by="robot", reply_to=own.post_id)
    elsewhere = emulator.mention("@pi_bot see this", by="grace", reply_to=anew.id)

    page = poster.mentions(None, not_before=a_day_ago(), limit=10)

    by_id = {mention.id: mention for mention in page.mentions}
    assert by_id[answer.id].answers_bot and by_id[answer.id].author.bio == "I am a bot #nobot"
    assert not by_id[anew.id].answers_bot and by_id[anew.id].author.bio == ""
    assert not by_id[elsewhere.id].answers_bot  # a reply, but to someone else


def test_a_reply_is_threaded_under_the_mention(emulator: XEmulator, poster: XPoster) -> None:
    mention = emulator.mention("@pi_bot hello", by="ada")
    read = poster.mentions(None, not_before=a_day_ago(), limit=10).mentions[0]
    result = poster.post(NETWORK.addressed("hello to you", read), PostOptions(reply_to=read.reply_to))
    assert result.confirmed
    assert (
        emulator.posts[-1].reply_to == mention.id and emulator.posts[-1].text == "@ada hello to you"
    )  # as CBDQ began a reply


def test_x_refuses_a_reply_where_the_account_was_not_mentioned(emulator: XEmulator, poster: XPoster) -> None:
    stranger = emulator.mention("a post that does not name the bot", by="ada")
    with pytest.raises(PostError) as caught:
        poster.post("unasked", PostOptions(reply_to=stranger.id))
    assert caught.value.kind is ErrorKind.BAD_REPLY_TO
    assert "mentioned or quoted" in str(caught.value) and "February 2026" in str(caught.value)
    own = poster.post("the bot's own post")
    assert poster.post("its thread goes on", PostOptions(reply_to=own.post_id)).confirmed  # a thread of its own


def test_a_long_post_is_read_whole(emulator: XEmulator, poster: XPoster) -> None:
    long = "@pi_bot " + "words & more " * 40 + "the end"
    emulator.mention(long, by="ada")
    (mention,) = poster.mentions(None, not_before=a_day_ago(), limit=10).mentions
    assert mention.text == long


def test_the_emulator_checks_what_x_checks(emulator: XEmulator, poster: XPoster) -> None:
    from twitterbot.networks.x.api import signer

    session = poster._client.session
    base = "https://api.twitter.com/2/users/"
    auth = signer(poster._credentials)
    assert session.get(base + "999/mentions", auth=auth).status_code == 403  # another account's
    assert session.get(base + f"{USER_ID}/mentions", params={"max_results": 4}, auth=auth).status_code == 400
    assert session.get(base + f"{USER_ID}/mentions", params={"max_results": 101}, auth=auth).status_code == 400
    assert session.get(base + f"{USER_ID}/mentions", params={"user.fields": "bogus"}, auth=auth).status_code == 400
    assert session.get(base + f"{USER_ID}/mentions").status_code == 401  # unsigned
    empty = session.get(base + f"{USER_ID}/mentions", auth=auth).json()
    assert empty == {"meta": {"result_count": 0}}


@pytest.mark.parametrize(
    "body",
    [
        {"data": {"id": "1"}, "meta": {}},
        {"data": [{"id": 1, "author_id": "5", "text": "x", "created_at": "2026-01-01T00:00:00.000Z"}]},
        {"data": [{"author_id": "5", "text": "x", "created_at": "2026-01-01T00:00:00.000Z"}]},
        {"data": [{"id": "1", "text": "x", "created_at": "2026-01-01T00:00:00.000Z"}]},
        {"data": [{"id": "1", "author_id": "5", "created_at": "2026-01-01T00:00:00.000Z"}]},
        {"data": [{"id": "1", "author_id": "5", "text": "x", "created_at": "yesterday"}]},
        {"data": ["a post"]},
        {"data": [], "meta": "none"},
        {"meta": {"next_token": 7}},
        ["not", "an", "object"],
        b"<html>not JSON</html>",
        Answer(None, status=404),  # an error whose body is JSON but not an object
        Answer([], status=429),
    ],
)
def test_an_odd_answer_is_a_post_error(emulator: XEmulator, poster: XPoster, body: object) -> None:
    cursor = json.dumps({"me": USER_ID, "since": "1"})
    emulator.answer_next("mentions", body if isinstance(body, Answer) else Answer(body))
    with pytest.raises(PostError) as caught:
        poster.mentions(cursor, not_before=a_day_ago(), limit=10)
    assert "could not be read" in str(caught.value)


@pytest.mark.parametrize("failure, kind", [("unauthorized", ErrorKind.UNAUTHORIZED), ("credits", ErrorKind.CREDITS),
                                           ("rate_limit", ErrorKind.RATE_LIMITED), ("server_error", ErrorKind.SERVER_ERROR),
                                           ("drop", ErrorKind.NETWORK)])  # fmt: skip
def test_a_failed_read_is_mapped_as_a_post_is(
    emulator: XEmulator, poster: XPoster, failure: str, kind: ErrorKind
) -> None:
    emulator.fail_next(failure)
    with pytest.raises(PostError) as caught:
        poster.mentions(json.dumps({"me": USER_ID, "since": None}), not_before=a_day_ago(), limit=10)
    assert caught.value.kind is kind


def test_a_cursor_it_did_not_write_reads_as_a_first_read(emulator: XEmulator, poster: XPoster) -> None:
    mention = emulator.mention("@pi_bot hello", by="ada")
    page = poster.mentions("not json {", not_before=a_day_ago(), limit=10)
    assert [m.id for m in page.mentions] == [mention.id] and page.reads == 2
