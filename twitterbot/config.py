"""Settings: read once at start-up into a frozen `Config`.

Sources, later wins: built-in defaults, the env file (``.env`` beside ``bot.py`` unless
``--env-file`` names another), the process environment, command-line flags. Relative paths in
the env file or the environment resolve from the env file's folder, never from the current
directory, because cron starts jobs in ``$HOME``. An installed package (``pip install .``) has no
``bot.py`` folder, so it needs ``--env-file`` (or absolute paths). Every problem is reported at
once, in one `ConfigError` with one line per problem::

    config = load_config(project_dir=Path("/home/pi/twitterbot"), environ=os.environ)
    config.tweets_file   # PosixPath('/home/pi/twitterbot/tweets.txt')
"""

from __future__ import annotations

import io
import math
import os
import re
import stat
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from .errors import ConfigError
from .secrets import Scrubber, looks_like_a_key

__all__ = [
    "CREDENTIAL_NAMES",
    "SECRET_NAMES",
    "BlueskyAccount",
    "MastodonAccount",
    "PROJECT_DIR",
    "SETTINGS",
    "Config",
    "Credentials",
    "check_setting",
    "did_you_mean",
    "env_file_warnings",
    "load_config",
    "parse_duration",
    "time_to_seconds",
]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _checkout_dir() -> Optional[Path]:
    """The folder holding bot.py beside the package, or None for an installed package (site-packages)."""
    folder = Path(__file__).resolve().parent.parent
    return folder if (folder / "bot.py").is_file() else None


# In a checkout (or `pip install -e .`), bot.py's folder holds the default .env, tweets.txt and
# state/. An installed package has no such folder: a default there would be site-packages, or the
# current directory, which differs between cron and a terminal (two histories, the cap bypassed).
PROJECT_DIR: Optional[Path] = _checkout_dir()

MAX_RETRIES = 5  # X_API_RETRIES: backoff doubles from 2 s, so 5 retries wait about a minute in all
MAX_DURATION = 366 * 86400.0  # a year: longer durations are typos, and overflow date arithmetic


@dataclass(frozen=True)
class Setting:
    """One configuration variable: its default (as text) and how to check it."""

    default: str
    kind: str  # a key of _PARSERS
    help: str


# The one list of settings. config.example.env and README document each of these; a test checks it.
SETTINGS: Dict[str, Setting] = {
    "TWITTER_API_KEY": Setting("", "secret", "API Key (consumer key) from the X developer portal"),
    "TWITTER_API_SECRET": Setting("", "secret", "API Key Secret (consumer secret)"),
    "TWITTER_ACCESS_TOKEN": Setting("", "secret", "Access Token (with Read and write permission)"),
    "TWITTER_ACCESS_TOKEN_SECRET": Setting("", "secret", "Access Token Secret"),
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
    "X_API_TIMEOUT": Setting("20", "seconds", "seconds to wait for X before giving up on a request"),
    "X_API_RETRIES": Setting("2", "count", "retries of a request that certainly made no post (no connection, 5xx)"),
    "X_API_BASE_URL": Setting("https://api.twitter.com", "url", "where requests go (tests, proxies)"),
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
    "POST_TO": Setting("x", "networks", "where to post: x, mastodon, bluesky, or several, e.g. mastodon,bluesky"),
    "MASTODON_INSTANCE": Setting("", "optional_url", "Mastodon: your server's address, e.g. https://mastodon.social"),
    "MASTODON_ACCESS_TOKEN": Setting(
        "", "secret", "Mastodon: access token of an application (Preferences > Development)"
    ),
    "MASTODON_VISIBILITY": Setting("unlisted", "visibility", "Mastodon: public, unlisted, private or direct"),
    "BLUESKY_HANDLE": Setting("", "handle", "Bluesky: your handle, e.g. alice.bsky.social"),
    "BLUESKY_APP_PASSWORD": Setting("", "app_password", "Bluesky: an app password (never your account password)"),
    "BLUESKY_SERVICE": Setting(
        "https://bsky.social", "url", "Bluesky: your PDS (the default serves bsky.social accounts)"
    ),
    "BLUESKY_LINK_CARDS": Setting(
        "yes",
        "bool",
        "Bluesky: a post with a link and no images shows the linked page's card (title, description, "
        "picture), fetched at post time within 10 s; no turns it off",
    ),
}

CREDENTIAL_NAMES = (
    "TWITTER_API_KEY",
    "TWITTER_API_SECRET",
    "TWITTER_ACCESS_TOKEN",
    "TWITTER_ACCESS_TOKEN_SECRET",
)
# Every network's secrets: scrubbed from all output, and never echoed when pasted elsewhere.
SECRET_NAMES = (*CREDENTIAL_NAMES, "MASTODON_ACCESS_TOKEN", "BLUESKY_APP_PASSWORD")
NETWORK_NAMES = ("x", "mastodon", "bluesky")  # networks.NETWORKS; config cannot import networks
MASTODON_VISIBILITIES = ("public", "unlisted", "private", "direct")


@dataclass(frozen=True)
class Credentials:
    """OAuth 1.0a user keys. Kept out of repr() so they never reach a log or a traceback."""

    api_key: str = field(repr=False)
    api_secret: str = field(repr=False)
    access_token: str = field(repr=False)
    access_token_secret: str = field(repr=False)

    def missing(self) -> List[str]:
        """Names of the settings that are still empty."""
        values = (self.api_key, self.api_secret, self.access_token, self.access_token_secret)
        return [name for name, value in zip(CREDENTIAL_NAMES, values) if not value]

    def secrets(self) -> Tuple[str, ...]:
        """The non-empty secret values, for scrubbing text before it is shown."""
        values = (self.api_key, self.api_secret, self.access_token, self.access_token_secret)
        return tuple(value for value in values if value)


@dataclass(frozen=True)
class MastodonAccount:
    """Where and as whom to post on Mastodon. The token is kept out of repr()."""

    instance: str  # base URL, "" when not set
    access_token: str = field(repr=False)
    visibility: str = "unlisted"


@dataclass(frozen=True)
class BlueskyAccount:
    """Where and as whom to post on Bluesky. The app password is kept out of repr()."""

    handle: str  # "" when not set
    app_password: str = field(repr=False)
    service: str = "https://bsky.social"
    link_cards: bool = True  # BLUESKY_LINK_CARDS


@dataclass(frozen=True)
class Config:
    """Everything a run needs to know, resolved to absolute paths and checked types."""

    credentials: Credentials
    post_to: Tuple[str, ...]  # the networks to post to, in the order given
    mastodon: MastodonAccount
    bluesky: BlueskyAccount
    tweets_file: Path
    one_in: int
    max_posts_per_day: int
    min_post_gap: float  # seconds
    state_dir: Path
    log_file: Optional[Path]
    log_level: str
    times: Tuple[str, ...]  # "HH:MM", sorted
    timezone: Optional[str]  # an IANA name, or None for the system's zone
    jitter: float  # seconds
    api_timeout: float
    api_retries: int
    api_base_url: str
    progress_every: float  # seconds
    progress_milestone_every: float
    progress_first_after: float  # seconds
    progress_thread: bool
    progress_template: str  # "" = the job's default
    progress_done_template: str
    progress_failed_template: str
    env_file: Optional[Path]  # the env file that was read, if any
    base_dir: Optional[Path]  # where relative paths were resolved from (None: installed, no env file)

    def secrets(self) -> Tuple[str, ...]:
        """Every non-empty secret of every network, for scrubbing text before it is shown."""
        extra = (self.mastodon.access_token, self.bluesky.app_password)
        return (*self.credentials.secrets(), *(value for value in extra if value))

    def missing(self) -> List[str]:
        """The settings the networks in POST_TO still need, in the order config.example.env lists them."""
        needs = {
            "x": self.credentials.missing(),
            "mastodon": [
                name
                for name, value in (
                    ("MASTODON_INSTANCE", self.mastodon.instance),
                    ("MASTODON_ACCESS_TOKEN", self.mastodon.access_token),
                )
                if not value
            ],
            "bluesky": [
                name
                for name, value in (
                    ("BLUESKY_HANDLE", self.bluesky.handle),
                    ("BLUESKY_APP_PASSWORD", self.bluesky.app_password),
                )
                if not value
            ],
        }
        return [name for network in self.post_to for name in needs[network]]

    @property
    def history_file(self) -> Path:
        return self.state_dir / "history.sqlite3"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "bot.lock"


def load_config(
    *,
    project_dir: Optional[Path],
    env_file: Optional[Path] = None,
    environ: Optional[Mapping[str, str]] = None,
    overrides: Optional[Mapping[str, str]] = None,
) -> Config:
    """Build the `Config` from defaults, env file, environment and `overrides` (later wins).

    `env_file` None means ``project_dir/.env`` if it exists; a named env file must exist.
    `project_dir` None (an installed package) has no default env file, and relative paths are
    errors unless an env file gives them a folder. `overrides` maps setting names to text, as
    command-line flags give them; paths in it should already be absolute. Raises one `ConfigError`
    listing every problem, each naming the setting, where it came from, and the fix; a value that
    looks like an X key is never repeated in it.
    """
    environ = os.environ if environ is None else environ
    if env_file is None:
        default = project_dir / ".env" if project_dir else None
        env_path: Optional[Path] = default if default and default.exists() else None
    else:
        env_path = Path(env_file).expanduser().absolute()
        if not env_path.is_file():
            raise ConfigError(
                f"env file {env_path} does not exist: check the --env-file path, or copy config.example.env to it"
            )
    base_dir = env_path.parent if env_path else project_dir

    # Each value with where it came from, and where its problem goes in the report: the env
    # file's in line order, then the environment's, then the command line's.
    problems: List[Tuple[int, str]] = []
    raw: Dict[str, Tuple[str, str, int]] = {name: (s.default, "the default", 0) for name, s in SETTINGS.items()}
    if env_path:
        file_values, file_problems = _read_env_file(env_path)
        problems += file_problems
        for name, (value, where, line) in file_values.items():
            if value:
                raw[name] = (value, where, line)
    for name in SETTINGS:
        value = environ.get(name, "")
        if value:
            raw[name] = (value, "the environment", _FROM_ENVIRONMENT)
    for name, value in (overrides or {}).items():
        if name not in SETTINGS:
            raise ValueError(f"unknown setting {name}")  # a bug in the caller, not the user's doing
        if value != "":
            raw[name] = (value, "the command line", _FROM_COMMAND_LINE)

    values: Dict[str, object] = {}
    for name, (text, where, order) in raw.items():
        try:
            values[name] = _PARSERS[SETTINGS[name].kind](name, text, where, base_dir)
        except ConfigError as exc:
            problems += [(order, problem) for problem in exc.problems]
    if "TWEET_JITTER" in values and "TWEET_TIMES" in values:
        _, where, order = raw["TWEET_JITTER"]
        try:
            _check_jitter_fits(values["TWEET_JITTER"], values["TWEET_TIMES"], where)
        except ConfigError as exc:
            problems += [(order, problem) for problem in exc.problems]
    if problems:
        # A key (or a piece of one) pasted into the wrong setting may be quoted above: hide every
        # form of every key, and every value that looks like one.
        secrets = [raw[name][0].strip() for name in SECRET_NAMES]
        pasted = [text.strip() for text, _, _ in raw.values() if looks_like_a_key(text, secrets)]
        scrub = Scrubber([*secrets, *pasted])
        raise ConfigError(*(scrub(problem) for _, problem in sorted(problems, key=lambda item: item[0])))
    return Config(
        credentials=Credentials(*(values[name] for name in CREDENTIAL_NAMES)),
        post_to=values["POST_TO"],
        mastodon=MastodonAccount(
            values["MASTODON_INSTANCE"], values["MASTODON_ACCESS_TOKEN"], values["MASTODON_VISIBILITY"]
        ),
        bluesky=BlueskyAccount(
            values["BLUESKY_HANDLE"],
            values["BLUESKY_APP_PASSWORD"],
            values["BLUESKY_SERVICE"],
            values["BLUESKY_LINK_CARDS"],
        ),
        tweets_file=values["TWEETS_FILE"],
        one_in=values["TWEET_ONE_IN"],
        max_posts_per_day=values["MAX_POSTS_PER_DAY"],
        min_post_gap=values["MIN_POST_GAP"],
        state_dir=values["BOT_STATE_DIR"],
        log_file=values["LOG_FILE"],
        log_level=values["LOG_LEVEL"],
        times=values["TWEET_TIMES"],
        timezone=values["TWEET_TIMEZONE"],
        jitter=values["TWEET_JITTER"],
        api_timeout=values["X_API_TIMEOUT"],
        api_retries=values["X_API_RETRIES"],
        api_base_url=values["X_API_BASE_URL"],
        progress_every=values["PROGRESS_EVERY"],
        progress_milestone_every=values["PROGRESS_MILESTONE_EVERY"],
        progress_first_after=values["PROGRESS_FIRST_AFTER"],
        progress_thread=values["PROGRESS_THREAD"],
        progress_template=values["PROGRESS_TEMPLATE"],
        progress_done_template=values["PROGRESS_DONE_TEMPLATE"],
        progress_failed_template=values["PROGRESS_FAILED_TEMPLATE"],
        env_file=env_path,
        base_dir=base_dir,
    )


def env_file_warnings(config: Config) -> List[str]:
    """Warnings about the env file's permissions: it holds the keys to the user's X account."""
    path = config.env_file
    if path is None or not config.secrets():
        return []
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return []
    if mode & 0o077:
        return [f"{path} holds your keys but other users can read it (mode {mode:04o}): run chmod 600 {path}"]
    return []


_FROM_ENVIRONMENT = 10**9  # after every line of the env file, in the order problems are reported
_FROM_COMMAND_LINE = 2 * 10**9


def _read_env_file(path: Path) -> Tuple[Dict[str, Tuple[str, str, int]], List[Tuple[int, str]]]:
    """Read the env file strictly: each value with where it came from and its line, and a problem
    (with its line) for each line python-dotenv cannot parse or that names an unknown setting. A
    byte-order mark (Notepad) is not part of the first line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}): save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read env file {path}: {exc.strerror}") from None

    lines: Dict[str, int] = {}
    problems: List[Tuple[int, str]] = []
    for binding in parse_stream(io.StringIO(text)):
        line = binding.original.line
        if binding.error:
            problems.append(
                (line, f"{path} line {line} is not a NAME=value setting: fix or remove it (comments start with #)")
            )
        elif binding.key is None:
            continue  # a blank line or a comment
        elif binding.key not in SETTINGS:
            plain = binding.key.isascii() and binding.key.isidentifier() and not looks_like_a_key(binding.key)
            shown = binding.key if plain else _show(binding.key)
            problems.append((line, f"{path} line {line}: unknown setting {shown}: {_suggest(binding.key)}"))
        else:
            lines[binding.key] = line

    values = dotenv_values(stream=io.StringIO(text))
    found = {name: (values.get(name) or "", f"{path} line {line}", line) for name, line in lines.items()}
    return found, problems


def did_you_mean(word: str, choices: Iterable[str]) -> Optional[str]:
    """ "did you mean X?" for the one of `choices` closest to a misspelt `word`, or None."""
    import difflib  # only for a mistake

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]}?" if close else None


def _suggest(name: str) -> str:
    return did_you_mean(name.upper(), SETTINGS) or "remove it (config.example.env lists every setting)"


def check_setting(name: str, text: str, where: str) -> None:
    """Raise `ConfigError` if `text` is not a valid value of the setting `name`. The command line
    checks a flag's value with it while parsing (a bad flag is a usage error, exit 64), by the
    same rule the env file's value is read with (exit 78)."""
    _PARSERS[SETTINGS[name].kind](name, text, where, Path("."))


def _show(text: str, limit: int = 40) -> str:
    """A value quoted for an error message: shortened, and hidden if it looks like an X key
    (a key pasted into the wrong setting must not end up in a log or cron mail)."""
    if looks_like_a_key(text):
        return "(a value that looks like an X key, not shown)"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


# Keys and tokens are printable ASCII; anything else is a paste gone wrong (and would break a header).
_SECRET_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F)) - set("\"'")


def _parse_secret(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip()
    if not set(value) <= _SECRET_CHARACTERS:
        # Never echo the value: it is a secret.
        raise ConfigError(
            f"{name} from {where} contains spaces, quotes or characters keys never have: "
            f"paste the value exactly as {_SECRET_SOURCE.get(name, 'the X developer portal')} shows it"
        )
    return value


_SECRET_SOURCE = {
    "MASTODON_ACCESS_TOKEN": "your Mastodon server (Preferences > Development > your application)",
    "BLUESKY_APP_PASSWORD": "Bluesky (Settings > Privacy and security > App passwords)",
}


def _parse_networks(name: str, text: str, where: str, base_dir: Optional[Path]) -> Tuple[str, ...]:
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [part for part in names if part not in NETWORK_NAMES]
    if unknown or not names:
        what = f"{_show(unknown[0])} is not a network" if unknown else "it names no network"
        hint = (
            "X was called Twitter: write x"
            if unknown and unknown[0] == "twitter"
            else did_you_mean(unknown[0], NETWORK_NAMES)
            if unknown
            else None
        )
        raise ConfigError(
            f"{name}={_show(text)} from {where}: {what}"
            f"{f' ({hint})' if hint else ''}: use x, mastodon or bluesky, or several separated by commas"
        )
    return tuple(dict.fromkeys(names))  # each once, in the order given


def _parse_optional_url(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    return _parse_url(name, text, where, base_dir) if text.strip() else ""


def _parse_visibility(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().lower()
    if value not in MASTODON_VISIBILITIES:
        raise ConfigError(
            f"{name}={_show(text)} from {where} is not a visibility: use {', '.join(MASTODON_VISIBILITIES)}"
            " (unlisted keeps a bot out of the public timelines, as most servers ask)"
        )
    return value


# A Bluesky handle is a domain name: letters, digits and hyphens in dot-separated parts. Kept as
# text: `re` compiles it (and caches it) only for a run that has a handle to check.
_HANDLE = r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?"


def _parse_handle(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().lstrip("@").lower()
    if value and not re.fullmatch(_HANDLE, value):
        raise ConfigError(
            f"{name}={_show(text)} from {where} is not a Bluesky handle: write it like alice.bsky.social"
            " (your profile shows it after the @)"
        )
    return value


# Bluesky makes app passwords as four groups of four letters and digits: xxxx-xxxx-xxxx-xxxx.
_APP_PASSWORD = r"[a-z0-9]{4}(-[a-z0-9]{4}){3}"  # text, as _HANDLE


def _parse_app_password(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip()
    if value and not re.fullmatch(_APP_PASSWORD, value):
        # Never echo it: it may be the account's real password.
        raise ConfigError(
            f"{name} from {where} is not an app password (they look like xxxx-xxxx-xxxx-xxxx): make one in"
            " Bluesky's Settings > Privacy and security > App passwords; never put your account password here"
        )
    return value


def _parse_path(name: str, text: str, where: str, base_dir: Optional[Path]) -> Path:
    value = text.strip()
    if "\0" in value:
        raise ConfigError(f"{name} from {where} contains a NUL byte (\\0): retype the path")
    try:
        path = Path(value).expanduser()
    except RuntimeError:  # ~ with no home folder to expand it to
        raise ConfigError(
            f"{name} from {where} starts with ~ but there is no home folder: write the full path"
        ) from None
    if path.is_absolute():
        return path
    if base_dir is None:
        raise ConfigError(
            f"{name}={_show(value)} from {where} is a relative path, and the installed twitterbot command has no "
            "project folder to resolve it from: pass --env-file PATH (relative paths then resolve from its "
            f"folder), or set {name} to an absolute path"
        )
    return base_dir / path


def _parse_optional_path(name: str, text: str, where: str, base_dir: Optional[Path]) -> Optional[Path]:
    return _parse_path(name, text, where, base_dir) if text.strip() else None


def _parse_int(name: str, text: str, where: str, minimum: int, maximum: Optional[int], example: str) -> int:
    value = int(text.strip()) if _ASCII_INTEGER.fullmatch(text.strip()) else None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        bounds = f"of {minimum} or more" if maximum is None else f"from {minimum} to {maximum}"
        raise ConfigError(f"{name}={_show(text)} from {where} is not a whole number {bounds}: set it to e.g. {example}")
    return value


_ASCII_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")  # more digits than 10**18 is never a count of anything


def _parse_positive_int(name: str, text: str, where: str, base_dir: Optional[Path]) -> int:
    example = "4 (1 = post on every run)" if name == "TWEET_ONE_IN" else "4"
    return _parse_int(name, text, where, 1, None, example)


def _parse_count(name: str, text: str, where: str, base_dir: Optional[Path]) -> int:
    return _parse_int(name, text, where, 0, MAX_RETRIES, "2")


def _parse_seconds(name: str, text: str, where: str, base_dir: Optional[Path]) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        value = 0.0
    if not 0 < value <= 600:  # also refuses nan and inf
        raise ConfigError(
            f"{name}={_show(text)} from {where} is not a number of seconds between 0 and 600: set it to e.g. 20"
        )
    return value


def _parse_log_level(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().upper()
    if value not in LOG_LEVELS:
        raise ConfigError(f"{name}={_show(text)} from {where} is not a log level: use one of {', '.join(LOG_LEVELS)}")
    return value


def _parse_url(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().rstrip("/")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:  # e.g. http://[::1 (an unclosed IPv6 bracket)
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or not value.isascii()
        or any(ch.isspace() or not ch.isprintable() for ch in value)
    ):
        raise ConfigError(
            f"{name}={_show(text)} from {where} is not a base URL like https://api.twitter.com: "
            "leave it unset unless you test against an emulator or proxy"
        )
    return value


_TIME_FIELD = re.compile(r"[0-9]{1,2}")  # ASCII digits only: '²'.isdigit() is True, int('²') fails


def _parse_times(name: str, text: str, where: str, base_dir: Optional[Path]) -> Tuple[str, ...]:
    times = set()
    for part in text.replace(" ", "").split(","):
        fields = part.split(":")
        numbers = [int(field) for field in fields if _TIME_FIELD.fullmatch(field)]
        if (
            len(fields) not in (2, 3)
            or len(numbers) != len(fields)
            or not all(value < limit for value, limit in zip(numbers, (24, 60, 60)))
        ):
            raise ConfigError(
                f"{name}={_show(text)} from {where}: {_show(part)} is not a time of day: use 24-hour HH:MM times "
                "separated by commas, e.g. 00:00,06:00,12:00,18:00"
            )
        times.add(":".join(f"{value:02d}" for value in numbers))
    return tuple(sorted(times))


def time_to_seconds(time_of_day: str) -> int:
    """Seconds after midnight of an "HH:MM" or "HH:MM:SS" from TWEET_TIMES."""
    hours, minutes, *seconds = (int(part) for part in time_of_day.split(":"))
    return hours * 3600 + minutes * 60 + (seconds[0] if seconds else 0)


def _parse_timezone(name: str, text: str, where: str, base_dir: Optional[Path]) -> Optional[str]:
    value = text.strip()
    if not value:
        return None
    import zoneinfo  # only when a time zone is set: its import is a noticeable part of a run

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, a name too long
        raise ConfigError(
            f"{name}={_show(text)} from {where} is not a time zone: use a name like Europe/London or "
            "America/New_York (timedatectl list-timezones shows them), or leave it empty for the system's"
        ) from None
    return value


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_PART = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,9})?)([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in a duration like 90s, 10m, 6h, 1d or 3h30m, at most a year; "0" is zero.
    ValueError if malformed."""
    value = text.strip().lower().replace(" ", "")
    if value == "0":
        return 0.0
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(number + unit for number, unit in parts) != value:
        raise ValueError(f"{_show(text)} is not a duration: use a number with s, m, h or d, e.g. 10m, 6h or 3h30m")
    seconds = sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    if not math.isfinite(seconds) or seconds > MAX_DURATION:
        raise ValueError(f"{_show(text)} is longer than a year: use at most 366d")
    return seconds


def _parse_duration(name: str, text: str, where: str, base_dir: Optional[Path]) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise ConfigError(f"{name} from {where}: {exc}") from None


_BOOLEANS = {"yes": True, "true": True, "on": True, "1": True, "no": False, "false": False, "off": False, "0": False}


def _parse_bool(name: str, text: str, where: str, base_dir: Optional[Path]) -> bool:
    try:
        return _BOOLEANS[text.strip().lower()]
    except KeyError:
        raise ConfigError(f"{name}={_show(text)} from {where} is not yes or no: set it to yes or no") from None


def _parse_template(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    try:
        list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ConfigError(
            f"{name} from {where} is not a template ({exc}): put fields in braces like {{message}}, "
            "and write a literal brace twice: {{ or }}"
        ) from None
    return text


def _check_jitter_fits(jitter: float, times: Tuple[str, ...], where: str) -> None:
    """A delay longer than the gap between two times would let one run spill into the next slot."""
    seconds = sorted(time_to_seconds(t) for t in times)
    gaps = [later - earlier for earlier, later in zip(seconds, seconds[1:] + [seconds[0] + 24 * 3600])]
    smallest = min(gaps)
    if jitter >= smallest:
        raise ConfigError(
            f"TWEET_JITTER from {where} ({jitter / 60:g} min) must be shorter than the smallest gap between "
            f"TWEET_TIMES ({smallest / 60:g} min): shorten it"
        )


_PARSERS: Dict[str, Callable[[str, str, str, Optional[Path]], object]] = {
    "secret": _parse_secret,
    "path": _parse_path,
    "optional_path": _parse_optional_path,
    "positive_int": _parse_positive_int,
    "count": _parse_count,
    "seconds": _parse_seconds,
    "log_level": _parse_log_level,
    "url": _parse_url,
    "times": _parse_times,
    "timezone": _parse_timezone,
    "duration": _parse_duration,
    "bool": _parse_bool,
    "template": _parse_template,
    "networks": _parse_networks,
    "optional_url": _parse_optional_url,
    "visibility": _parse_visibility,
    "handle": _parse_handle,
    "app_password": _parse_app_password,
}
