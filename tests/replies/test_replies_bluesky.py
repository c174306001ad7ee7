"""Replies end to end on Bluesky, against its whole network (tests/pds/network.py: PLC, the PDS the
bot posts to, the AppView that serves its notifications and threads), through `bot.py replies` run
in this process: a mention gets exactly one reply, threaded under it (root and parent as Bluesky
means them); a second run answers nothing and makes one request; accounts that say they are bots,
`#nobot` bios and "stop" are left alone; two copies of the bot mentioning each other stop within
one reply each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from bluesky_emulator import LossyProxy
from conftest import BotHome
from pds.harness import PdsAccount
from pds.network import BlueskyNetwork, PostRecord
from x_emulator import XEmulator

RULES = {"(?<=\\s|^)hello\\b": "hi there!", ".": ""}


class Bot:
    """A bot's home posting to and listening on Bluesky as `account`, through a proxy that counts
    its requests (`requests`)."""

    def __init__(self, home: BotHome, net: BlueskyNetwork, account: PdsAccount, proxy: LossyProxy) -> None:
        self.home, self.net, self.account, self.proxy = home, net, account, proxy
        settings = {**net.settings(account), "BLUESKY_SERVICE": proxy.url}
        home.write_env(POST_TO="bluesky", REPLY_RULES=str(home.path / "replies.json"), REPLY_COOLDOWN="0", **settings)
        self.rules(RULES)

    def rules(self, rules: Dict[str, str]) -> None:
        (self.home.path / "replies.json").write_text(json.dumps(rules, ensure_ascii=False), encoding="utf-8")

    def replies(self) -> None:
        """One `bot.py replies`, after the AppView has caught up with what was said to the bot."""
        self.net.index()
        ran = self.home.run("replies")
        assert ran.returncode == 0, ran.stderr

    @property
    def requests(self) -> int:
        return sum(self.proxy.calls.values())

    def posts(self) -> List[Dict[str, Any]]:
        return self.net.posts(self.account)


@pytest.fixture
def proxy(bluesky_network: BlueskyNetwork) -> Iterator[LossyProxy]:
    with LossyProxy(bluesky_network.url, lose={}) as counting:
        yield counting


@pytest.fixture
def bot(home: BotHome, bluesky_network: BlueskyNetwork, proxy: LossyProxy) -> Bot:
    return Bot(home, bluesky_network, bluesky_network.create_account("bot"), proxy)


def _reply_refs(net: BlueskyNetwork, bot: Bot, asked: PostRecord) -> List[Dict[str, Any]]:
    """The bot's replies to `asked` in its thread as the AppView shows it (getPostThread)."""
    net.index()
    thread = net.thread(asked.uri)
    return [
        reply["post"]["record"]["reply"]
        for reply in thread.get("replies", [])
        if reply["post"]["author"]["did"] == bot.account.did
    ]


def test_on_bluesky_a_mention_gets_one_reply_threaded_under_it_and_a_second_run_makes_one_request(
    bluesky_network: BlueskyNetwork, bot: Bot
) -> None:
    net = bluesky_network
    ada, bob = net.create_account("ada"), net.create_account("bob")
    top = net.post(bob, "a thread of my own")
    net.index()  # a reply is threaded under what the AppView has seen
    asked = net.mention(ada, bot.account, "hello from inside a thread", reply_to=top)
    bot.replies()
    [reply] = _reply_refs(net, bot, asked)
    assert (reply["root"]["uri"], reply["parent"]["uri"], reply["parent"]["cid"]) == (top.uri, asked.uri, asked.cid)
    [posted] = bot.posts()
    assert posted["value"]["text"] == "hi there!"
    before = bot.requests
    bot.replies()
    assert len(bot.posts()) == 1 and bot.requests - before == 1, bot.proxy.calls


def test_on_bluesky_bots_nobot_bios_and_stop_are_left_alone(
    bluesky_network: BlueskyNetwork, bot: Bot, home: BotHome
) -> None:
    net = bluesky_network
    robo, shy, ada = net.create_account("robo"), net.create_account("shy"), net.create_account("ada")
    net.set_profile(robo, description="I post the weather", labels=["bot"])
    net.set_profile(shy, description="Please no automated replies #nobot")
    from_robo = net.mention(robo, bot.account, "hello")
    net.mention(shy, bot.account, "hello")
    net.mention(ada, bot.account, "stop")
    net.index()
    net.mention(ada, bot.account, "hello again")
    bot.replies()
    assert bot.posts() == []
    check = home.run("check")
    assert f"@{ada.handle} on bluesky said stop" in check.stdout + check.stderr
    home.write_env(REPLY_TO_BOTS="yes")  # a bot's mention then is answered; the kept ones are not asked again
    later = net.mention(robo, bot.account, "hello once more")
    bot.replies()
    assert [reply["parent"]["uri"] for reply in _reply_refs(net, bot, later)] == [later.uri]
    assert _reply_refs(net, bot, from_robo) == [] and len(bot.posts()) == 1


def test_on_bluesky_two_copies_of_the_bot_mentioning_each_other_stop_within_one_reply_each(
    bluesky_network: BlueskyNetwork, tmp_path: Path, emulator: XEmulator, proxy: LossyProxy
) -> None:
    """Real accounts, neither labelled a bot: the conversation rule stops them (REPLY_COOLDOWN 0)."""
    net = bluesky_network
    one_account, two_account = net.create_account("one"), net.create_account("two")
    copies = []
    for name, account, other in (("one", one_account, two_account), ("two", two_account, one_account)):
        home = BotHome(tmp_path / name, emulator)
        home.path.mkdir()
        home.write_tweets("a line\n")
        copy = Bot(home, net, account, proxy)
        copy.rules({".": f"@{other.handle} and hello to you"})  # answers anything, mentioning the other
        copies.append(copy)
    one, two = copies
    net.mention(one_account, two_account, "hello, other bot")  # one's own post starts it
    for _ in range(3):
        two.replies()
        one.replies()
    assert len(two.posts()) == 1 and len(one.posts()) == 2  # its first post and one reply
