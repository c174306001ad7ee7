"""A setting: one variable the bot reads, its default, how it is checked and its help; and the
settings of the foundation, which every command reads.

Every other part of the bot declares its own settings on its capability (`twitterbot.capability`):
the scheduled post, the schedule, progress mode, each job, the status page and each network. The
registry the command line builds (`twitterbot.registry`) joins them into the one table the env
file is read with and the reference page of the docs is generated from. A setting is also the key
its value is read by, typed by its kind (as click's `ParamType` types a parameter)::

    TWEET_ONE_IN = Setting("TWEET_ONE_IN", "4", POSITIVE_INT, "post on 1 run in N (1 = every run)")
    config[TWEET_ONE_IN]   # an int, as the type checker knows
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Generic, Iterable, Optional, Tuple, TypeVar

from ..errors import ConfigError
from .secrets import hide_pieces, looks_like_a_key

__all__ = [
    "DEPRECATED",
    "MAX_DURATION",
    "MAX_RETRIES",
    "MAX_SETTING_LENGTH",
    "NETWORKS",
    "POST_TO",
    "Parser",
    "Setting",
    "SettingType",
    "by_name",
]

T = TypeVar("T", covariant=True)  # a Setting[Tuple[str, ...]] is a Setting[Iterable[str]] too

MAX_RETRIES = 5  # API_RETRIES: backoff doubles from 2 s, so 5 retries wait about a minute in all
MAX_DURATION = 366 * 86400.0  # a year: longer durations are typos, and overflow date arithmetic
# The longest value a setting may have, in characters: a path (Linux's PATH_MAX), a URL with a
# token, a progress template all fit. Hiding a secret costs memory in proportion to its length
# (every encoding of it, in one pattern): a megabyte pasted by mistake cost a gigabyte.
MAX_SETTING_LENGTH = 4096


# A parser: (setting name, text, where it came from, the folder relative paths start from, the
# setting) -> the checked value, or a ConfigError that names the setting, the source and the fix.
Parser = Callable[[str, str, str, Optional[Path], "Setting[Any]"], T]


class SettingType(Generic[T]):
    """One kind of setting and how its text becomes a checked value (as click's `ParamType`):
    `convert` raises a `ConfigError` naming the setting, where its value came from and the fix.
    The shared kinds are in `parsers.py`; a capability declares its own beside its settings. A
    plain class: every run makes the kinds while it reads the settings.

    `secret_parts`, for a kind whose value holds secrets inside it (a URL's password, a check's
    key), names those parts of a checked value, so that a secret setting's parts are masked
    alone too, wherever they turn up (`Config.secrets`)."""

    __slots__ = ("convert", "name", "secret_parts")

    def __init__(
        self, name: str, convert: Parser[T], secret_parts: Optional[Callable[[T], Iterable[str]]] = None
    ) -> None:
        self.name = name  # as the reference and a message name the kind: "duration"
        self.convert = convert
        self.secret_parts = secret_parts

    def __repr__(self) -> str:
        return f"<SettingType {self.name}>"

    def read(self, name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting[Any]) -> T:
        """`convert`, for every source (the env file, the environment, a flag): a value longer than
        any setting needs is refused unread, and a value that looks like a key, or a secret's, is
        never repeated in the error, whole or shortened, whatever the kind's message quotes."""
        if len(text) > MAX_SETTING_LENGTH:
            raise ConfigError(
                f"{name} from {where} is {len(text):,} characters long, more than any setting needs"
                f" (at most {MAX_SETTING_LENGTH:,}): set it to the value you meant"
            )
        try:
            return self.convert(name, text, where, base_dir, setting)
        except ConfigError as exc:
            if not (setting.secret or looks_like_a_key(text)):
                raise
            raise ConfigError(
                *(hide_pieces(problem, [text, text.strip()], keep=[name]) for problem in exc.problems)
            ) from None


def _unbound(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting[Any]) -> Tuple[Any, ...]:
    raise TypeError(f"{name}: the registry reads the networks")  # a bug in the composition


# POST_TO's kind: its words are the registry's networks, so the registry reads it (`Registry`);
# its value is a tuple of `twitterbot.networks.Network`, which the settings do not import.
NETWORKS: SettingType[Tuple[Any, ...]] = SettingType("networks", _unbound)


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One configuration variable: its name, its default (as text), its kind (how it is checked,
    and so the type of its value), its help, whether its value is a secret (scrubbed from every
    output, never echoed), and for a secret, where the user finds it. It is the key its value is
    read by: ``config[TWEET_ONE_IN]``."""

    name: str
    default: str
    kind: SettingType[T]
    help: str
    secret: bool = False
    source: str = ""


def by_name(*settings: Setting[Any]) -> Dict[str, Setting[Any]]:
    """A capability's settings table: each setting by its name, in the order given."""
    return {setting.name: setting for setting in settings}


# Where to post: the scheduled post declares it (`twitterbot.posting`), every network reads it.
# Its default and help name the registry's networks (`Registry`).
POST_TO = Setting("POST_TO", "", NETWORKS, "where to post")


# Old names still read, each as its new name; `check` says to rename them.
DEPRECATED = {"X_API_TIMEOUT": "API_TIMEOUT", "X_API_RETRIES": "API_RETRIES"}
