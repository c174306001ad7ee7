"""Reading the account's mentions on Bluesky, against the whole reference network (tests/pds/
network.py: PLC, PDS and the AppView that serves notifications and threads)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator, List, Optional

import pytest
from bluesky_emulator import LossyProxy
from pds.harness import PdsAccount
from pds.network import BlueskyNetwork

from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.reader import BlueskyReader
from twitterbot.networks.bluesky.records import PostRef
from twitterbot.networks.mentions import Author


def test_the_appview_tells_the_bot_of_a_mention_and_a_reply_once_it_has_caught_up(
    bluesky_network: BlueskyNetwork,
) -> None:
    bot = bluesky_network.create_account("bot")
    ada = bluesky_network.create_account("ada")
    bluesky_network.set_profile(ada, description="a person", labels=["bot"])
    said = bluesky_network.post(bot, "I am a bot")
    bluesky_network.index()  # a reply notifies its parent's author only once the parent is indexed
    mention = bluesky_network.mention(ada, bot, "hello")
    reply = bluesky_network.post(ada, "and a reply", reply_to=said)

    bluesky_network.index()

    got = bluesky_network.notifications(bot)
    assert [(each["uri"], each["reason"]) for each in got] == [(reply.uri, "reply"), (mention.uri, "mention")]
    author = got[0]["author"]
    assert author["did"] == ada.did and author["description"] == "a person"
    assert {(label["src"], label["val"]) for label in author["labels"]} == {(ada.did, "bot")}
    assert bluesky_network.thread(said.uri)["replies"][0]["post"]["uri"] == reply.uri


# -- the poster's mentions(), against the same network -----------------------------------------


@dataclass
class People:
    """The bot's account, its poster (through a counting proxy; `login` makes another, as the
    next run would), and two people: ada, whose profile says she is a bot, and bob."""

    bot: PdsAccount
    poster: BlueskyPoster
    reader: BlueskyReader
    proxy: LossyProxy
    login: Login
    ada: PdsAccount
    bob: PdsAccount


@pytest.fixture
def people(bluesky_network: BlueskyNetwork, tmp_path: Path) -> Iterator[People]:
    bot = bluesky_network.create_account("bot")
    ada = bluesky_network.create_account("ada")
    bob = bluesky_network.create_account("bob")
    bluesky_network.set_profile(ada, description="I post the weather #nobot", labels=["bot"])
    bluesky_network.set_profile(bob, description="")
    password = bluesky_network.app_password(bot)
    with LossyProxy(bluesky_network.url, lose={}) as proxy:
        login = Login(bot.handle, password, proxy.url, tmp_path / "session.json")
        poster = BlueskyPoster(login, timeout=10, retries=0)
        yield People(bot, poster, reader_for(login, poster), proxy, login, ada, bob)


def reader_for(login: Login, poster: BlueskyPoster) -> BlueskyReader:
    """What a round of replies reads with: the saved session as it is, else `poster`."""
    return BlueskyReader(login.handle, login.service, login.session_file, timeout=10, poster=lambda: poster)


def a_day_ago() -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=1)


def test_mentions_and_replies_come_oldest_first_with_their_author_and_thread(
    bluesky_network: BlueskyNetwork, people: People
) -> None:
    net, bot, ada, bob = bluesky_network, people.bot, people.ada, people.bob
    said = net.post(bot, "Today's peg puzzle")
    thread_top = net.post(bob, "a thread of my own")
    net.index()  # a reply notifies its parent's author only once the parent is indexed
    first = net.mention(ada, bot, "hello bot")
    answer = net.post(bob, "nice one", reply_to=said)
    deep = net.mention(bob, bot, "what do you think?", reply_to=thread_top)
    net.mention(bot, bot, "talking to myself")  # the account's own: never a mention to answer
    net.post(ada, "look at this", quote=said)  # a quote speaks of the bot, not to it
    net.post(ada, "not about the bot")
    net.index()

    assert "quote" in {each["reason"] for each in net.notifications(bot)}  # the AppView told of it

    page = people.reader.mentions(None, not_before=a_day_ago(), limit=10)

    assert [mention.id for mention in page.mentions] == [first.uri, answer.uri, deep.uri]
    hello, reply, threaded = page.mentions
    assert hello.network == "bluesky" and hello.text == f"@{bot.handle} hello bot"
    assert hello.author == Author(id=ada.did, handle=f"@{ada.handle}", bot=True, bio="I post the weather #nobot")
    assert reply.author == Author(id=bob.did, handle=f"@{bob.handle}", bot=False, bio="")
    assert PostRef.decode(hello.reply_to) == (first.uri, first.cid, first.uri, first.cid)
    assert PostRef.decode(reply.reply_to) == (answer.uri, answer.cid, said.uri, said.cid)
    assert PostRef.decode(threaded.reply_to) == (deep.uri, deep.cid, thread_top.uri, thread_top.cid)
    assert (hello.answers_bot, reply.answers_bot, threaded.answers_bot) == (False, True, False)
    assert hello.created_at <= reply.created_at <= threaded.created_at
    assert page.reads == 1 and page.cursor


def test_a_read_with_the_cursor_and_nothing_new_is_one_request_and_gives_nothing(
    bluesky_network: BlueskyNetwork, people: People
) -> None:
    bluesky_network.mention(people.ada, people.bot, "hello")
    bluesky_network.index()
    first = people.reader.mentions(None, not_before=a_day_ago(), limit=10)
    assert len(first.mentions) == 1
    before = dict(people.proxy.calls)
    next_run = reader_for(people.login, BlueskyPoster(people.login, timeout=10, retries=0))  # the next run

    again = next_run.mentions(first.cursor, not_before=a_day_ago(), limit=10)

    assert again.mentions == () and again.reads == 1 and again.cursor is None
    made = {method: n - before.get(method, 0) for method, n in people.proxy.calls.items()}
    assert {method: n for method, n in made.items() if n} == {"app.bsky.notification.listNotifications": 1}
    bluesky_network.mention(people.bob, people.bot, "and me")
    bluesky_network.index()
    (later,) = people.reader.mentions(first.cursor, not_before=a_day_ago(), limit=10).mentions
    assert later.text.endswith("and me")


def test_more_mentions_than_the_limit_leave_the_newest_for_the_next_read_none_skipped_none_twice(
    bluesky_network: BlueskyNetwork, people: People
) -> None:
    posts = [bluesky_network.mention(people.bob, people.bot, f"number {n}") for n in range(5)]
    bluesky_network.index()
    seen: List[str] = []
    cursor: Optional[str] = None
    for size in (2, 2, 2):
        page = people.reader.mentions(cursor, not_before=a_day_ago(), limit=size)
        assert page.reads == 1
        seen.extend(mention.id for mention in page.mentions)
        cursor = page.cursor or cursor
    assert seen == [post.uri for post in posts]
    assert people.reader.mentions(cursor, not_before=a_day_ago(), limit=2).mentions == ()


def test_the_first_read_goes_back_to_not_before_and_no_further(bluesky_network: BlueskyNetwork, people: People) -> None:
    # The AppView sorts a post by the earlier of its createdAt and when it was indexed.
    old = bluesky_network.mention(people.ada, people.bot, "from last week", created_at=a_day_ago() - timedelta(days=6))
    recent = bluesky_network.mention(people.ada, people.bot, "from today")
    bluesky_network.index()
    assert {each["uri"] for each in bluesky_network.notifications(people.bot)} == {old.uri, recent.uri}

    page = people.reader.mentions(None, not_before=a_day_ago(), limit=10)

    assert [mention.id for mention in page.mentions] == [recent.uri]


def test_a_reply_to_a_mention_threads_under_it_and_reading_then_replying_logs_in_once(
    bluesky_network: BlueskyNetwork, people: People
) -> None:
    top = bluesky_network.post(people.bob, "my thread")
    bluesky_network.index()
    mention = bluesky_network.mention(people.ada, people.bot, "are you there?", reply_to=top)
    bluesky_network.index()
    (read,) = people.reader.mentions(None, not_before=a_day_ago(), limit=10).mentions

    result = people.poster.post("I am here", PostOptions(reply_to=read.reply_to))

    assert people.proxy.calls["com.atproto.server.createSession"] == 1
    bluesky_network.index()
    thread = bluesky_network.thread(mention.uri)
    (answer,) = thread["replies"]
    assert answer["post"]["author"]["did"] == people.bot.did
    assert answer["post"]["record"]["text"] == "I am here"
    reply = answer["post"]["record"]["reply"]
    assert (reply["parent"]["uri"], reply["parent"]["cid"]) == (mention.uri, mention.cid)
    assert (reply["root"]["uri"], reply["root"]["cid"]) == (top.uri, top.cid)
    assert thread["parent"]["post"]["uri"] == top.uri
    assert PostRef.decode(result.post_id).root_uri == top.uri


def test_the_harness_gives_settings_a_bot_run_posts_with(bluesky_network: BlueskyNetwork, tmp_path: Path) -> None:
    bot = bluesky_network.create_account("bot")
    settings = bluesky_network.settings(bot)
    login = Login(
        settings["BLUESKY_HANDLE"], settings["BLUESKY_APP_PASSWORD"], settings["BLUESKY_SERVICE"], tmp_path / "s"
    )
    BlueskyPoster(login, timeout=10, retries=0).post("hello")
    assert [each["value"]["text"] for each in bluesky_network.posts(bot)] == ["hello"]


def test_a_mention_that_arrives_sorted_below_those_read_is_read_next_time_and_once(
    bluesky_network: BlueskyNetwork, people: People
) -> None:
    bluesky_network.mention(people.ada, people.bot, "first")
    bluesky_network.index()
    first = people.reader.mentions(None, not_before=a_day_ago(), limit=10)
    # Its app's clock is two minutes behind: the AppView sorts it below the mention already read.
    behind = datetime.now(timezone.utc) - timedelta(minutes=2)
    late = bluesky_network.mention(people.bob, people.bot, "late", created_at=behind)
    bluesky_network.index()
    assert [each["uri"] for each in bluesky_network.notifications(people.bot)][-1] == late.uri

    page = people.reader.mentions(first.cursor, not_before=a_day_ago(), limit=10)

    assert [mention.id for mention in page.mentions] == [late.uri] and page.reads == 1
    assert people.reader.mentions(page.cursor, not_before=a_day_ago(), limit=10).mentions == ()
