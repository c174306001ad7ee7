"""Reading the account's mentions on Bluesky, against the whole reference network (tests/pds/
network.py: PLC, PDS and the AppView that serves notifications and threads)."""

from __future__ import annotations

from pds.network import BlueskyNetwork


def test_the_appview_tells_the_bot_of_a_mention_and_a_reply_once_indexed(bluesky_network: BlueskyNetwork) -> None:
    bot = bluesky_network.create_account("bot")
    ada = bluesky_network.create_account("ada")
    bluesky_network.set_profile(ada, description="a person", labels=["bot"])
    said = bluesky_network.post(bot, "I am a bot")
    mention = bluesky_network.mention(ada, bot, "hello")
    reply = bluesky_network.post(ada, "and a reply", reply_to=said)
    assert bluesky_network.notifications(bot) == []  # nothing until the AppView indexes

    bluesky_network.index()

    got = bluesky_network.notifications(bot)
    assert [(each["uri"], each["reason"]) for each in got] == [(reply.uri, "reply"), (mention.uri, "mention")]
    author = got[0]["author"]
    assert author["did"] == ada.did and author["description"] == "a person"
    assert {(label["src"], label["val"]) for label in author["labels"]} == {(ada.did, "bot")}
    assert bluesky_network.thread(said.uri)["replies"][0]["post"]["uri"] == reply.uri
