"""The one table of settings: every variable the bot reads, its default, how it is checked, its help.

The settings every run uses are listed here; each network's own settings (keys, servers) are
declared in its module under `twitterbot/networks/` and joined in from the network registry, so a
new network brings its settings with it. `SETTINGS` is the whole table, in the order
config.example.env lists it; the reference page of the docs is generated from it::

    SETTINGS["TWEET_ONE_IN"]              # Setting(default='4', kind='positive_int', help=...)
    [name for name, s in SETTINGS.items() if s.secret]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Iterator, Mapping, Optional

__all__ = ["DEPRECATED", "MAX_DURATION", "MAX_RETRIES", "SETTINGS", "Setting", "all_settings"]

MAX_RETRIES = 5  # API_RETRIES: backoff doubles from 2 s, so 5 retries wait about a minute in all
MAX_DURATION = 366 * 86400.0  # a year: longer durations are typos, and overflow date arithmetic


@dataclass(frozen=True)
class Setting:
    """One configuration variable: its default (as text), how to check it (`kind`, a parser's
    name), its help, whether its value is a secret (scrubbed from every output, never echoed), the
    network it belongs to (None: every run's), and for a secret, where the user finds it."""

    default: str
    kind: str
    help: str
    secret: bool = False
    network: Optional[str] = None
    source: str = ""


# Every run's settings; a network's own come from its module (see `all_settings`).
_CORE: Dict[str, Setting] = {
    # Its default and help name the registered networks (`all_settings`).
    "POST_TO": Setting("", "networks", "where to post"),
    "TWEETS_FILE": Setting("tweets.txt", "path", "the file of posts, one per line"),
    "TWEET_ONE_IN": Setting("4", "positive_int", "post on 1 run in N (1 = every run)"),
    "MAX_POSTS_PER_DAY": Setting("4", "positive_int", "at most this many posts in any 24 hours"),
    "MIN_POST_GAP": Setting("1h", "duration", "at least this long between two scheduled posts (0 = no gap)"),
    "BOT_STATE_DIR": Setting("state", "path", "folder for the history database and the lock"),
    "LOG_FILE": Setting("", "optional_path", "also log to this file (rotated at 1 MB)"),
    "LOG_LEVEL": Setting("INFO", "log_level", "DEBUG, INFO, WARNING or ERROR"),
    "TWEET_TIMES": Setting("00:00,06:00,12:00,18:00", "times", "times of day to run (daemon, cron and systemd)"),
    "TWEET_TIMEZONE": Setting("", "timezone", "time zone of TWEET_TIMES, e.g. Europe/London (default: the system's)"),
    "TWEET_JITTER": Setting("0", "duration", "wait a random 0..this after each time, e.g. 10m"),
    "API_TIMEOUT": Setting("20", "seconds", "seconds to wait for a network before giving up on a request"),
    "API_RETRIES": Setting("2", "count", "retries of a request that certainly made no post (no connection, 5xx)"),
    "PROGRESS_EVERY": Setting("6h", "duration", "progress mode: at most one progress post per this long"),
    "PROGRESS_MILESTONE_EVERY": Setting(
        "1h", "duration", "progress mode: a milestone may post this soon after the last"
    ),
    "PROGRESS_FIRST_AFTER": Setting(
        "5m", "duration", "progress mode: no progress post before the job has run this long"
    ),
    "PROGRESS_THREAD": Setting("yes", "bool", "progress mode: posts of a run reply to its first post"),
    "PROGRESS_TEMPLATE": Setting("", "template", "progress mode: text of a progress post (default: the job's)"),
    "PROGRESS_DONE_TEMPLATE": Setting("", "template", "progress mode: text of the result post"),
    "PROGRESS_FAILED_TEMPLATE": Setting("", "template", "progress mode: text of the failure post"),
    "DASK_SCHEDULER": Setting(
        "",
        "scheduler",
        "long jobs (monkey, pegs count): a Dask scheduler to run them on, e.g. tls://10.0.0.2:8786 (needs the "
        "cluster extra; see the cluster guide); empty: this machine. --cluster overrides it",
    ),
    "PICTURES": Setting("yes", "bool", "jobs attach their pictures (boards, solutions, charts); no: text only"),
    "PICTURES_EVERY": Setting("1d", "duration", "progress mode: at most one picture in progress posts per this long"),
    "WEB_PASSWORD": Setting(
        "",
        "secret",
        "the status page's password (bot.py serve, HTTP Basic auth); required for any --host but 127.0.0.1",
        secret=True,
        source="your password manager",
    ),
    "TWITTERBOT_PEGS_KERNEL": Setting(
        "auto", "kernel", "pegs: auto (or c) uses the compiled kernel where it builds; numpy never (bot.py check shows it)"
    ),
    "TWITTERBOT_MONKEY_KERNEL": Setting(
        "auto", "kernel", "monkey: auto (or c) uses the compiled kernel where it builds; numpy never (bot.py check shows it)"
    ),
}

# Old names still read, each as its new name; `check` says to rename them.
DEPRECATED: Dict[str, str] = {"X_API_TIMEOUT": "API_TIMEOUT", "X_API_RETRIES": "API_RETRIES"}


def all_settings() -> Dict[str, Setting]:
    """Every setting: every run's, then each registered network's, in the registry's order."""
    from .. import networks  # the registry: cheap, it holds each network's facts as data

    table = dict(_CORE)
    names = [network.name for network in networks.registered()]
    table["POST_TO"] = replace(
        table["POST_TO"],
        default=names[0],
        help=f"where to post: {', '.join(names)}, or several, e.g. {','.join(names[1:] or names)}",
    )
    for network in networks.registered():
        for name, setting in network.settings.items():
            table[name] = setting
    return table


class _Table(Mapping[str, Setting]):
    """`all_settings()` as a read-only mapping, assembled when first read: a network registered
    later (a test's fake one) is in it from then on."""

    def _table(self) -> Dict[str, Setting]:
        from .. import networks

        key = networks.generation()
        if getattr(self, "_key", None) != key:
            self._cached, self._key = all_settings(), key
        return self._cached

    def __getitem__(self, name: str) -> Setting:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"SETTINGS({list(self._table())})"


SETTINGS: Mapping[str, Setting] = _Table()
