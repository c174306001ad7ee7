"""`bot.py new NAME`: a bot's folder in the flock, its `.env` made from config.example.env (mode
600); with `--from FILE`, a grammar moved in from Cheap Bots Done Quick, Cheap Bots Toot Sweet or
Blue Bots Done Quick (docs/moving-in.md), and with `--replies FILE` its reply rules, each copied
into the bot's folder and named in its `.env`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List, Optional

from ..errors import ConfigError, TweetFileError, UsageError
from ..files import NotAFile, read_regular, write_atomically
from .folder import CHECKOUT_BOT, Bot, Flock, bot_name_problem

__all__ = ["EXAMPLE", "GRAMMAR_FILE", "REPLIES_FILE", "make_bot"]

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.env"  # the checkout's
GRAMMAR_FILE, REPLIES_FILE = "bot.json", "replies.json"  # their names in the bot's folder
_MAX_JSON_BYTES = 4 * 1024 * 1024  # a grammar or rules file larger than this is no bot's


def make_bot(
    flock: Flock, name: str, *, grammar: Optional[Path] = None, replies: Optional[Path] = None, example: Path = EXAMPLE
) -> Bot:
    """Make the folder of the bot `name` and its `.env`; refuse a bad or taken name (64), a file
    to move in that is no JSON object (65), or an install without config.example.env (78)."""
    problem = bot_name_problem(name)
    if problem is not None:
        raise UsageError(f"new: {problem}")
    if name == CHECKOUT_BOT and any(bot.checkout for bot in flock.bots):
        raise UsageError(f"new: {name!r} names the bot of the .env beside bot.py: choose another name")
    if flock.home is None:
        raise UsageError("new: there is no flock folder here: name one with --bots DIR (or BOTS_DIR)")
    folder = flock.home / name
    if folder.exists():
        raise UsageError(f"new: {folder} already exists: choose another name, or edit that bot's .env")
    texts = {GRAMMAR_FILE: _json_object(grammar, "grammar")} if grammar else {}
    if replies:
        texts[REPLIES_FILE] = _json_object(replies, "reply rules")
    settings = _example(example)
    if grammar:
        settings = _set(settings, "TWEETS_FILE", GRAMMAR_FILE)
    if replies:
        settings = _set(settings, "REPLY_RULES", REPLIES_FILE)
    folder.mkdir(parents=True, mode=0o700)
    for file_name, text in texts.items():
        write_atomically(folder / file_name, text, mode=0o600)
    write_atomically(folder / ".env", settings, mode=0o600)
    return Bot(name, folder)


def _example(example: Path) -> str:
    try:
        return read_regular(example).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raise ConfigError(
            f"new: cannot read {example}, the settings a new bot starts from: run bot.py from its checkout"
        ) from None


def _set(text: str, name: str, value: str) -> str:
    """`text` with the line that sets `name` setting it to `value`."""
    changed, count = re.subn(rf"(?m)^{name}=.*$", f"{name}={value}", text, count=1)
    return changed if count else f"{text.rstrip()}\n{name}={value}\n"


def _json_object(path: Path, what: str) -> str:
    """The text of the JSON object in `path` (a grammar or reply rules, as the services export
    them), checked to be one; its text is kept as it is."""
    try:
        data = read_regular(path)
    except NotAFile as exc:
        raise UsageError(f"new: the {what} {path} is {exc.kind}, not a file: name the file") from None
    except OSError as exc:
        raise UsageError(f"new: cannot read the {what} {path}: {exc.strerror}") from None
    problems: List[str] = []
    if len(data) > _MAX_JSON_BYTES:
        problems.append(f"it is over {_MAX_JSON_BYTES // 1024 // 1024} MB")
    else:
        try:
            value = json.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append(f"it is not JSON ({exc})")
        else:
            if not isinstance(value, dict):
                problems.append("it is JSON but not an object ({ ... }), as the service's editor shows it")
    if problems:
        raise TweetFileError(f"new: the {what} {path} cannot be moved in: {problems[0]}: copy the whole {{ ... }}")
    return data.decode("utf-8-sig")
