"""A test-only network that listens, for the core of replies: "chat", whose whole world (accounts,
posts, what the server does next) is one JSON file, so a bot run in this process, a second one in
another process, and a run killed with SIGKILL mid-send all see the same world.

Every post is {"id", "author", "text", "reply_to", "visibility", "at"}; an account's mentions are
the posts of others that name it (``@name``) or answer one of its posts, oldest first, after a
cursor (the last id read). The world can be told to fail a read, to lose the answer to a post
after making it, or to kill the process at its Nth step (a read, or a post before or after the
server keeps it)::

    world = World(tmp_path / "world.json")
    world.say("ada", "@pibot hello")
    bot.run("replies")                      # POST_TO=chat, CHAT_WORLD=world.json, CHAT_ACCOUNT=pibot
    world.posts_by("pibot")                 # [{'text': '@ada hi!', 'reply_to': '1', ...}]
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks import PLAIN, Fit, LookUp, Network, PostOptions, PostResult
from twitterbot.networks.mentions import Author, Mention, MentionPage
from twitterbot.networks.x import DOLLARS
from twitterbot.settings.parsers import OPTIONAL_PATH, SECRET
from twitterbot.settings.table import Setting

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)


class World:
    """The chat network's server state, in one file, changed under an exclusive lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            self._save({"posts": [], "bots": [], "bios": {}, "steps": 0, "kill_at": None, "faults": []})

    @contextlib.contextmanager
    def changing(self) -> Iterator[Dict[str, Any]]:
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = json.loads(self.path.read_text())
            try:
                yield state
            finally:  # a request the server failed still took its fault
                self._save(state)

    def read(self) -> Dict[str, Any]:
        return json.loads(self.path.read_text())

    def _save(self, state: Dict[str, Any]) -> None:
        temporary = self.path.with_suffix(".new")
        temporary.write_text(json.dumps(state))
        os.replace(temporary, self.path)

    def say(
        self,
        author: str,
        text: str,
        *,
        reply_to: Optional[str] = None,
        at: Optional[datetime] = None,
        visibility: Optional[str] = None,
    ) -> str:
        """A post by `author` (a person, or another bot), as the test's script has it."""
        with self.changing() as state:
            return _add(state, author, text, reply_to, visibility, at or NOW)

    def mark_bot(self, author: str, bio: str = "") -> None:
        with self.changing() as state:
            state["bots"].append(author)

    def set_bio(self, author: str, bio: str) -> None:
        with self.changing() as state:
            state["bios"][author] = bio

    def fault(self, *faults: str) -> None:
        """What the server does to the next requests, one each: "fail_read", "lose_answer", "fail_post"."""
        with self.changing() as state:
            state["faults"].extend(faults)

    def kill_at(self, step: Optional[int]) -> None:
        """SIGKILL the process at its `step`th step (1: its first read; a post is two steps, before
        and after the server keeps it); None: never."""
        with self.changing() as state:
            state["kill_at"], state["steps"] = step, 0

    def posts_by(self, author: str) -> List[Dict[str, Any]]:
        return [post for post in self.read()["posts"] if post["author"] == author]

    def reads(self) -> int:
        return int(self.read().get("reads", 0))


def _add(
    state: Dict[str, Any], author: str, text: str, reply_to: Optional[str], visibility: Optional[str], at: datetime
) -> str:
    post_id = str(len(state["posts"]) + 1)
    state["posts"].append(
        {
            "id": post_id,
            "author": author,
            "text": text,
            "reply_to": reply_to,
            "visibility": visibility,
            "at": at.isoformat(),
        }
    )
    return post_id


def _step(state: Dict[str, Any]) -> None:
    """One step of the process; at the world's kill point, the process dies as a power cut would."""
    state["steps"] = state.get("steps", 0) + 1
    if state.get("kill_at") is not None and state["steps"] >= state["kill_at"]:
        state["kill_at"] = None  # the world keeps what happened so far: the next run is not killed
        raise _Killed()


class _Killed(Exception):
    pass


class ChatPoster:
    """The chat network's poster and listener, as `account`."""

    name = "chat"
    retry_safety = "none: a lost answer leaves the post uncertain"

    def __init__(self, world: World, account: str) -> None:
        self.world, self.account = world, account

    def _changing(self) -> Iterator[Dict[str, Any]]:
        return self.world.changing()

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        reply_to, visibility = options.reply_to, options.visibility
        killed = False
        with self.world.changing() as state:
            try:
                _step(state)
            except _Killed:
                killed = True
            if not killed:
                fault = state["faults"].pop(0) if state["faults"] else None
                if fault == "fail_post":
                    raise PostError(
                        "chat is down", kind=ErrorKind.SERVER_ERROR, exit_status=ExitStatus.TEMPORARY_FAILURE
                    )
                post_id = _add(state, self.account, text, reply_to, visibility, datetime.now(timezone.utc))
                try:
                    _step(state)
                except _Killed:
                    killed = True
        if killed:
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "lose_answer":
            return PostResult(text, None, uncertain="the answer was lost")
        return PostResult(text, post_id, url=f"chat://{self.account}/{post_id}")

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        killed = False
        with self.world.changing() as state:
            try:
                _step(state)
            except _Killed:
                killed = True
            state["reads"] = state.get("reads", 0) + 1
            if not killed and state["faults"] and state["faults"][0] == "fail_read":
                state["faults"].pop(0)
                raise PostError(
                    "chat could not be read", kind=ErrorKind.SERVER_ERROR, exit_status=ExitStatus.TEMPORARY_FAILURE
                )
            slow = bool(state["faults"]) and state["faults"][0] == "slow_read"
            if slow:
                state["faults"].pop(0)
            posts = state["posts"]
        if slow:  # a slow server: the read takes seconds
            time.sleep(2)
        if killed:
            os.kill(os.getpid(), signal.SIGKILL)
        by_id = {post["id"]: post for post in posts}
        found: List[Mention] = []
        for post in posts:
            if post["author"] == self.account:
                continue
            if cursor is not None and int(post["id"]) <= int(cursor):
                continue
            at = datetime.fromisoformat(post["at"])
            if cursor is None and at < not_before:
                continue
            answers = post["reply_to"] is not None and by_id[post["reply_to"]]["author"] == self.account
            if f"@{self.account}" not in post["text"].split() and not answers:
                continue
            author = Author(
                post["author"],
                f"@{post['author']}",
                post["author"] in state["bots"],
                state["bios"].get(post["author"], ""),
            )
            found.append(Mention("chat", post["id"], author, post["text"], at, post["id"], post["visibility"], answers))
        page = found[:limit]
        newest = page[-1].id if page else cursor
        return MentionPage(tuple(page), newest)

    def may_retry(self, error: PostError) -> bool:
        return False

    def account_name(self) -> str:
        return self.account

    def account(self) -> str:  # type: ignore[override]
        return f"@{self.account}"

    def look_up(
        self, text: str, sent_at: datetime, key: Optional[str], options: Optional[PostOptions] = None
    ) -> LookUp:
        mine = [post for post in self.world.posts_by(self.account) if post["text"] == text]
        if options is not None:  # a reply is the one sent only where it answers the same post
            mine = [post for post in mine if post["reply_to"] == options.reply_to]
        if mine:
            return LookUp(
                True,
                "found in the chat",
                PostResult(text, mine[-1]["id"], url=f"chat://{self.account}/{mine[-1]['id']}"),
            )
        return LookUp(False, "not in the chat")

    def bot_label(self) -> Optional[bool]:
        return None

    def mark_bot(self) -> bool:
        return False


class Chat(Network):
    """A network that listens, whose replies name their author (as Mastodon's do), that bills
    reads and replies (as X does), against CHAT_MONTHLY_BUDGET."""

    name = "chat"
    label = "Chat"
    settings = {
        "CHAT_WORLD": Setting("CHAT_WORLD", "", OPTIONAL_PATH, "Chat: the world file"),
        "CHAT_ACCOUNT": Setting("CHAT_ACCOUNT", "", SECRET, "Chat: the bot's account", False, "the test"),
        "CHAT_MONTHLY_BUDGET": Setting("CHAT_MONTHLY_BUDGET", "", DOLLARS, "Chat: the monthly budget in dollars"),
    }
    required = ("CHAT_WORLD", "CHAT_ACCOUNT")
    guide = "Chat keys"
    site = "the chat"
    listens = True
    read_price = 0.001
    budget = "CHAT_MONTHLY_BUDGET"
    post_options = frozenset({"visibility"})

    def measure(self, text: str) -> Fit:
        return Fit("chat", len(text), 100, "characters")

    def price(self, fit: Fit) -> Optional[float]:
        return 0.015

    def reply_price(self, fit: Fit) -> Optional[float]:
        return 0.01

    def addressed(self, text: str, mention: Mention) -> str:
        return f"{mention.author.handle} {text}"

    def post_url(self, post_id: Optional[str]) -> Optional[str]:
        return None

    def poster(self, config: Any) -> ChatPoster:
        return ChatPoster(World(config["CHAT_WORLD"]), str(config["CHAT_ACCOUNT"]))


def main() -> int:
    """bot.py with the chat network (for the tests that need a process of its own)."""
    from twitterbot.cli import built_in
    from twitterbot.cli import main as bot_main

    return bot_main(registry=built_in([Chat()]))


if __name__ == "__main__":
    raise SystemExit(main())
