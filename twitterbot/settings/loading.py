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
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Dict, List, Mapping, Optional, Tuple

from dotenv import dotenv_values

from ..errors import ConfigError
from .parsers import check_jitter_fits, did_you_mean, parser_for, show
from .secrets import Scrubber, looks_like_a_key
from .table import DEPRECATED, SETTINGS

__all__ = ["FIELDS", "PROJECT_DIR", "Config", "check_setting", "env_file_warnings", "load_config"]


def _checkout_dir() -> Optional[Path]:
    """The folder holding bot.py beside the package, or None for an installed package (site-packages)."""
    folder = Path(__file__).resolve().parents[2]
    return folder if (folder / "bot.py").is_file() else None


# In a checkout (or `pip install -e .`), bot.py's folder holds the default .env, tweets.txt and
# state/. An installed package has no such folder: a default there would be site-packages, or the
# current directory, which differs between cron and a terminal (two histories, the cap bypassed).
PROJECT_DIR: Optional[Path] = _checkout_dir()


@dataclass(frozen=True)
class Config:
    """Everything a run needs to know, resolved to absolute paths and checked types. A network's
    own settings are in `values` by name; its module reads them (`networks.account`)."""

    post_to: Tuple[str, ...]  # the networks to post to, in the order given
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
    progress_every: float  # seconds
    progress_milestone_every: float
    progress_first_after: float  # seconds
    progress_thread: bool
    progress_template: str  # "" = the job's default
    progress_done_template: str
    progress_failed_template: str
    pictures: bool
    pictures_every: float  # seconds
    env_file: Optional[Path]  # the env file that was read, if any
    base_dir: Optional[Path]  # where relative paths were resolved from (None: installed, no env file)
    # Every setting's checked value by name (secrets too: kept out of repr()).
    values: Mapping[str, object] = field(default_factory=dict, repr=False, compare=False)
    # Old names in use: (old name, new name, where it was set), for `check`.
    deprecated: Tuple[Tuple[str, str, str], ...] = ()

    def secrets(self) -> Tuple[str, ...]:
        """Every non-empty secret of every network, for scrubbing text before it is shown."""
        return tuple(
            str(self.values[name]) for name, setting in SETTINGS.items() if setting.secret and self.values.get(name)
        )

    def missing(self) -> List[str]:
        """The settings the networks in POST_TO still need, each network's in its module's order."""
        from .. import networks

        return [name for network in self.post_to for name in networks.get(network).missing(self.values)]

    def setting(self, name: str) -> object:
        """The checked value of the setting `name` (a network's module reads its own this way)."""
        return self.values[name]

    @property
    def history_file(self) -> Path:
        return self.state_dir / "history.sqlite3"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "bot.lock"


# Config's fields and the settings that set them; the rest of the settings are read by networks.
FIELDS = {
    "post_to": "POST_TO",
    "tweets_file": "TWEETS_FILE",
    "one_in": "TWEET_ONE_IN",
    "max_posts_per_day": "MAX_POSTS_PER_DAY",
    "min_post_gap": "MIN_POST_GAP",
    "state_dir": "BOT_STATE_DIR",
    "log_file": "LOG_FILE",
    "log_level": "LOG_LEVEL",
    "times": "TWEET_TIMES",
    "timezone": "TWEET_TIMEZONE",
    "jitter": "TWEET_JITTER",
    "api_timeout": "API_TIMEOUT",
    "api_retries": "API_RETRIES",
    "progress_every": "PROGRESS_EVERY",
    "progress_milestone_every": "PROGRESS_MILESTONE_EVERY",
    "progress_first_after": "PROGRESS_FIRST_AFTER",
    "progress_thread": "PROGRESS_THREAD",
    "progress_template": "PROGRESS_TEMPLATE",
    "progress_done_template": "PROGRESS_DONE_TEMPLATE",
    "progress_failed_template": "PROGRESS_FAILED_TEMPLATE",
    "pictures": "PICTURES",
    "pictures_every": "PICTURES_EVERY",
}


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
    looks like a key is never repeated in it. An old name (`DEPRECATED`) is read as its new one.
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
    table = dict(SETTINGS)

    # Each value with where it came from, and where its problem goes in the report: the env
    # file's in line order, then the environment's, then the command line's.
    problems: List[Tuple[int, str]] = []
    # name -> (text, where, order, the name it was set by: an old name is quoted in its problem)
    raw: Dict[str, Tuple[str, str, int, str]] = {
        name: (s.default, "the default", 0, name) for name, s in table.items()
    }
    old_names: List[Tuple[str, str, str]] = []

    def take(name: str, value: str, where: str, order: int) -> None:
        new = DEPRECATED.get(name)
        if new is None:
            raw[name] = (value, where, order, name)
            return
        old_names.append((name, new, where))
        # A later source wins, as ever; within one source, the new name does.
        if _source_rank(raw[new][2]) < _source_rank(order) or raw[new][3] != new:
            raw[new] = (value, where, order, name)

    if env_path:
        file_values, file_problems = _read_env_file(env_path, table)
        problems += file_problems
        for name, (value, where, line) in file_values.items():
            if value:
                take(name, value, where, line)
    for name in (*table, *DEPRECATED):
        value = environ.get(name, "")
        if value:
            take(name, value, "the environment", _FROM_ENVIRONMENT)
    for name, value in (overrides or {}).items():
        if name not in table:
            raise ValueError(f"unknown setting {name}")  # a bug in the caller, not the user's doing
        if value != "":
            raw[name] = (value, "the command line", _FROM_COMMAND_LINE, name)

    values: Dict[str, object] = {}
    for name, (text, where, order, written) in raw.items():
        try:
            values[name] = parser_for(table[name].kind)(written, text, where, base_dir)
        except ConfigError as exc:
            problems += [(order, problem) for problem in exc.problems]
    if "TWEET_JITTER" in values and "TWEET_TIMES" in values:
        _, where, order, _ = raw["TWEET_JITTER"]
        try:
            check_jitter_fits(values["TWEET_JITTER"], values["TWEET_TIMES"], where)  # type: ignore[arg-type]
        except ConfigError as exc:
            problems += [(order, problem) for problem in exc.problems]
    if problems:
        # A key (or a piece of one) pasted into the wrong setting may be quoted above: hide every
        # form of every key, and every value that looks like one.
        secrets = [raw[name][0].strip() for name, setting in table.items() if setting.secret]
        pasted = [text.strip() for text, _, _, _ in raw.values() if looks_like_a_key(text, secrets)]
        scrub = Scrubber([*secrets, *pasted])
        raise ConfigError(
            *(scrub(problem, keep=table) for _, problem in sorted(problems, key=lambda item: item[0]))
        )
    return Config(
        **{attribute: values[name] for attribute, name in FIELDS.items()},  # type: ignore[arg-type]
        env_file=env_path,
        base_dir=base_dir,
        values=MappingProxyType(values),
        deprecated=tuple(old_names),
    )


def env_file_warnings(config: Config) -> List[str]:
    """Warnings about the env file's permissions: it holds the keys to the user's accounts."""
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


def check_setting(name: str, text: str, where: str) -> None:
    """Raise `ConfigError` if `text` is not a valid value of the setting `name`. The command line
    checks a flag's value with it while parsing (a bad flag is a usage error, exit 64), by the
    same rule the env file's value is read with (exit 78)."""
    parser_for(SETTINGS[name].kind)(name, text, where, Path("."))


_FROM_ENVIRONMENT = 10**9  # after every line of the env file, in the order problems are reported
_FROM_COMMAND_LINE = 2 * 10**9


def _source_rank(order: int) -> int:
    """0 the default, 1 the env file (any line), 2 the environment, 3 the command line."""
    return 0 if order == 0 else 1 if order < _FROM_ENVIRONMENT else 2 if order < _FROM_COMMAND_LINE else 3


def _read_env_file(path: Path, table: Mapping[str, object]) -> Tuple[Dict[str, Tuple[str, str, int]], List[Tuple[int, str]]]:
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
    for line, key in _keys_by_line(text):
        if key is None:
            problems.append(
                (line, f"{path} line {line} is not a NAME=value setting: fix or remove it (comments start with #)")
            )
        elif key not in table and key not in DEPRECATED:
            plain = key.isascii() and key.isidentifier() and not looks_like_a_key(key)
            shown = key if plain else show(key)
            problems.append((line, f"{path} line {line}: unknown setting {shown}: {_suggest(key, table)}"))
        else:
            lines[key] = line

    with _quiet_dotenv():
        values = dotenv_values(stream=io.StringIO(text))
    found = {name: (values.get(name) or "", f"{path} line {line}", line) for name, line in lines.items()}
    return found, problems


def _keys_by_line(text: str) -> List[Tuple[int, Optional[str]]]:
    """Each statement's first line and the name it sets (None: python-dotenv cannot parse it),
    through python-dotenv's public `dotenv_values` one statement at a time. A quoted value may
    span lines: a line that does not parse alone is read together with the lines after it."""
    rows = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: List[Tuple[int, Optional[str]]] = []
    index = 0
    with _quiet_dotenv():
        while index < len(rows):
            stripped = rows[index].strip()
            if not stripped or stripped.startswith("#"):
                index += 1
                continue
            key, used = None, 1
            for end in range(index + 1, len(rows) + 1):
                parsed = dotenv_values(stream=io.StringIO("\n".join(rows[index:end])), interpolate=False)
                if len(parsed) == 1 and next(iter(parsed)) in rows[index].split("=", 1)[0]:
                    key, used = next(iter(parsed)), end - index
                    break
                if '"' not in rows[index] and "'" not in rows[index]:
                    break  # only a quote can carry a value over to the next line
            found.append((index + 1, key))
            index += used
    return found


class _quiet_dotenv:  # noqa: N801 - used as a `with` block
    """Keep python-dotenv's own "could not parse" warnings out of the log: the bot reports each
    such line itself, with its number and the fix."""

    def __enter__(self) -> None:
        self._logger = logging.getLogger("dotenv.main")
        self._was = self._logger.disabled
        self._logger.disabled = True

    def __exit__(self, *exc_info: object) -> None:
        self._logger.disabled = self._was


def _suggest(name: str, table: Mapping[str, object]) -> str:
    return did_you_mean(name.upper(), table) or "remove it (config.example.env lists every setting)"
