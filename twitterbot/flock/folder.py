"""Where the flock lives and which bots it holds: one folder per bot under the flock folder
(`--bots DIR`, the BOTS_DIR variable, else ``bots/`` beside bot.py), each with its own ``.env``,
and the checkout's own bot when a ``.env`` sits beside bot.py (today's layout: a flock of one)::

    flock = Flock.find(None, os.environ, project_dir=Path("/home/pi/twitterbot"))
    flock.bot("poems").env_file   # PosixPath('/home/pi/twitterbot/bots/poems/.env')

A bot's folder is what a checkout is to a bot of one: its settings' relative paths (the tweets
file, REPLY_RULES, pictures, BOT_STATE_DIR) resolve from it, so its history and lock are its own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Optional, Tuple

from ..errors import ConfigError, UsageError
from ..settings.parsers import did_you_mean

__all__ = ["BOTS_VARIABLE", "CHECKOUT_BOT", "Bot", "Flock", "bot_name_problem"]

BOTS_VARIABLE = "BOTS_DIR"  # the environment variable that says where the flock lives
CHECKOUT_BOT = "main"  # the name of the bot whose .env sits beside bot.py
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def bot_name_problem(name: str) -> Optional[str]:
    """What is wrong with `name` as a bot's name (None: nothing). A name is a folder's name and a
    word of the command line, of cron lines and of log lines: lower-case letters, digits, - and _."""
    if _NAME.fullmatch(name):
        return None
    return (
        f"{name!r} cannot name a bot: use up to 40 lower-case letters, digits, - and _,"
        " starting with a letter or a digit (e.g. moon-poems)"
    )


class Bot:
    """One bot of the flock: its name and its folder (the checkout itself for the checkout's bot),
    and whether it is the checkout's (the .env beside bot.py: today's layout). A plain class, as
    the run's other values: every run looks for its flock, and a dataclass costs one to make."""

    __slots__ = ("checkout", "folder", "name")

    def __init__(self, name: str, folder: Path, checkout: bool = False) -> None:
        self.name, self.folder, self.checkout = name, folder, checkout

    @property
    def env_file(self) -> Path:
        return self.folder / ".env"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bot) and (self.name, self.folder, self.checkout) == (
            other.name,
            other.folder,
            other.checkout,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.folder, self.checkout))

    def __repr__(self) -> str:
        return f"Bot({self.name!r}, {str(self.folder)!r}{', checkout=True' if self.checkout else ''})"


class Flock:
    """The bots of one install: the checkout's own (if its .env exists) and one per folder of the
    flock folder, in name order. `problems` names folders that are no bot (a bad name, a clash);
    `home` is where `bot.py new` makes a bot (the flock folder, or bots/ to be)."""

    __slots__ = ("bots", "folder", "home", "problems")

    def __init__(
        self,
        folder: Optional[Path],
        bots: Tuple[Bot, ...],
        problems: Tuple[str, ...] = (),
        home: Optional[Path] = None,
    ) -> None:
        self.folder, self.bots, self.problems = folder, bots, problems
        self.home = folder if home is None else home

    def __repr__(self) -> str:
        return f"Flock({str(self.folder)!r}, {len(self.bots)} bots)"

    @classmethod
    def find(cls, named: Optional[Path], environ: Mapping[str, str], *, project_dir: Optional[Path]) -> Flock:
        """The flock `--bots` names (`named`, absolute), else the one BOTS_DIR names, else
        ``bots/`` beside bot.py if it exists; a folder named that does not exist is an error."""
        folder = _flock_folder(named, environ, project_dir)
        bots, problems = [], []
        if project_dir is not None and (project_dir / ".env").is_file():
            bots.append(Bot(CHECKOUT_BOT, project_dir, checkout=True))
        for entry in sorted(folder.iterdir()) if folder else ():
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            problem = bot_name_problem(entry.name)
            if problem is not None:
                problems.append(f"{entry} is not read as a bot: {problem}, and rename the folder")
            elif bots and entry.name == CHECKOUT_BOT and bots[0].checkout:
                problems.append(
                    f"{entry} is not read as a bot: {CHECKOUT_BOT!r} names the bot of {project_dir}/.env;"
                    " rename the folder"
                )
            else:
                bots.append(Bot(entry.name, entry))
        home = folder or (project_dir / "bots" if project_dir is not None else None)
        return cls(folder, tuple(bots), tuple(problems), home)

    @property
    def many(self) -> bool:
        """Whether this is a flock of more than one bot."""
        return len(self.bots) > 1

    def names(self) -> Tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

    def bot(self, name: str) -> Bot:
        """The bot called `name`; an unknown name is a usage error naming the ones there are."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        if not self.bots:
            where = f"in {self.folder}" if self.folder else "here (no .env beside bot.py, no bots/ folder)"
            raise UsageError(f"--bot {name}: there is no bot {where}: `bot.py new {name}` makes one")
        guess = did_you_mean(name, self.names())
        there = f"the bots are {', '.join(self.names())}" if len(self.bots) <= 10 else "bot.py bots lists them"
        raise UsageError(f"--bot {name}: there is no bot {name!r}: {guess + ' ' if guess else ''}({there})")


def _flock_folder(named: Optional[Path], environ: Mapping[str, str], project_dir: Optional[Path]) -> Optional[Path]:
    """The flock folder: `named` (--bots), else BOTS_DIR, else bots/ beside bot.py if it is there."""
    if named is not None:
        if not named.is_dir():
            raise UsageError(f"--bots {named}: no such folder: make it, or name the folder that holds your bots")
        return named
    text = environ.get(BOTS_VARIABLE, "").strip()
    if text:
        folder = Path(text).expanduser()
        if not folder.is_absolute():
            raise ConfigError(f"{BOTS_VARIABLE}={text} (the environment) is not an absolute path: write it whole")
        if not folder.is_dir():
            raise ConfigError(f"{BOTS_VARIABLE}={text} (the environment): no such folder: make it, or fix the path")
        return folder
    default = project_dir / "bots" if project_dir is not None else None
    return default if default is not None and default.is_dir() else None
