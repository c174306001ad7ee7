"""Settings: read once at start-up into a frozen `Config`.

Sources, later wins: built-in defaults, the env file (``.env`` beside ``bot.py`` unless
``--env-file`` names another), the process environment, command-line flags. Relative paths in
the env file or the environment resolve from the env file's folder, never from the current
directory, because cron starts jobs in ``$HOME``. An installed package (``pip install .``) has no
``bot.py`` folder, so it needs ``--env-file`` (or absolute paths). Every problem is reported at
once, in one `ConfigError` with one line per problem::

    config = load_config(registry, project_dir=Path("/home/pi/twitterbot"), environ=os.environ)
    config[TWEETS_FILE]   # PosixPath('/home/pi/twitterbot/tweets.txt'), a Path to the type checker
"""

from __future__ import annotations

import io
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Protocol, Tuple, TypeVar, Union, overload

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from ..errors import ConfigError
from ..files import NotAFile, open_regular
from ..state.folder import StateFolder
from ..wording import plural
from .keys import BOT_STATE_DIR
from .parsers import did_you_mean, show
from .secrets import Scrubber, hide_pieces, looks_like_a_key
from .table import DEPRECATED, MAX_SETTING_LENGTH, POST_TO, Parser, Setting

__all__ = ["MAX_ENV_FILE_BYTES", "PROJECT_DIR", "Config", "SettingsTable", "env_file_warnings", "load_config"]


def _checkout_dir() -> Optional[Path]:
    """The folder holding bot.py beside the package, or None for an installed package (site-packages)."""
    folder = Path(__file__).resolve().parents[2]
    return folder if (folder / "bot.py").is_file() else None


# In a checkout (or `pip install -e .`), bot.py's folder holds the default .env, tweets.txt and
# state/. An installed package has no such folder: a default there would be site-packages, or the
# current directory, which differs between cron and a terminal (two histories, the cap bypassed).
PROJECT_DIR: Optional[Path] = _checkout_dir()

T = TypeVar("T")


class SettingsTable(Protocol):
    """What reading the settings asks of the capabilities that declare them: the whole table, each
    setting's parser, the problems between settings, which of them are secrets, and every
    network's name (the words POST_TO and a line's only and skip may use). The registry the
    command line builds (`twitterbot.registry.Registry`) is one; the settings know it only as this."""

    @property
    def settings(self) -> Mapping[str, Setting]: ...

    def parser(self, name: str) -> Parser: ...

    def validate(self, values: Mapping[str, object], where: Mapping[str, str]) -> List[Tuple[str, str]]: ...

    def secret_names(self) -> Tuple[str, ...]: ...

    def names(self) -> Tuple[str, ...]: ...


@dataclass(frozen=True)
class Config:
    """Every setting's checked value, read once at start-up, with where they came from. Code reads
    a setting by its declaration, a typed key: ``config[TWEET_ONE_IN]`` is an int to the type
    checker too. ``config["TWEET_ONE_IN"]`` reads it by name (untyped), where the reader may not
    import the part that declares it."""

    env_file: Optional[Path]  # the env file that was read, if any
    base_dir: Optional[Path]  # where relative paths were resolved from (None: installed, no env file)
    # What declared the settings that were read (the command line's `Registry`). The values are
    # typed: POST_TO's are the networks themselves (``config[POST_TO][0].label``).
    registry: SettingsTable = field(repr=False, compare=False)
    # Every setting's checked value by name (secrets too: kept out of repr()).
    values: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # Old names in use: (old name, new name, where it was set), for `check`.
    deprecated: Tuple[Tuple[str, str, str], ...] = ()

    @overload
    def __getitem__(self, key: Setting[T]) -> T: ...

    @overload
    def __getitem__(self, key: str) -> Any: ...

    def __getitem__(self, key: Union[Setting[Any], str]) -> Any:
        """The checked value of the setting `key` (its declaration, or its name); KeyError names a
        setting no capability declares."""
        return self.values[key if isinstance(key, str) else key.name]

    def secrets(self) -> Tuple[str, ...]:
        """Every non-empty secret, for scrubbing text before it is shown: each secret setting's
        value, and the parts of it that are secrets alone (a monitor URL's password, its check's key:
        a watched command that prints one of them alone must not have it posted)."""
        found: List[str] = []
        for name in self.registry.secret_names():
            value = self.values.get(name)
            if not value:
                continue
            found.append(str(value))
            parts = self.registry.settings[name].kind.secret_parts
            if parts is not None:
                found += parts(value)
        return tuple(dict.fromkeys(found))

    def missing(self) -> List[str]:
        """The settings the networks in POST_TO still need, each network's in its own order."""
        return [setting for network in self[POST_TO] for setting in network.missing(self)]

    @property
    def state(self) -> StateFolder:
        """The state folder (BOT_STATE_DIR), which names every file the bot keeps there:
        ``config.state.history``. The one place BOT_STATE_DIR is read."""
        return StateFolder(self[BOT_STATE_DIR])


def load_config(
    registry: SettingsTable,
    *,
    project_dir: Optional[Path],
    env_file: Optional[Path] = None,
    environ: Optional[Mapping[str, str]] = None,
    overrides: Optional[Mapping[str, str]] = None,
) -> Config:
    """Build the `Config` of `registry`'s settings from defaults, env file, environment and
    `overrides` (later wins).

    `env_file` None means ``project_dir/.env`` if it exists; a named env file must exist.
    `project_dir` None (an installed package) has no default env file, and relative paths are
    errors unless an env file gives them a folder. `overrides` maps setting names to text, as
    command-line flags give them; paths in it should already be absolute. Raises one `ConfigError`
    listing every problem, each naming the setting, where it came from, and the fix; a value that
    looks like a key is never repeated in it. An old name (`DEPRECATED`) is read as its new one.
    """
    environ = os.environ if environ is None else environ
    env_path = _env_file_to_read(project_dir, env_file)
    base_dir = env_path.parent if env_path else project_dir
    table: Mapping[str, Setting] = registry.settings
    raw, old_names, problems = _gather(table, env_path, environ, overrides or {})
    values, value_problems = _parse(registry, table, raw, base_dir)
    problems += value_problems
    if problems:
        raise _scrubbed(problems, table, raw)
    return Config(
        env_file=env_path,
        base_dir=base_dir,
        registry=registry,
        values=MappingProxyType(values),
        deprecated=tuple(old_names),
    )


# A problem with its place in the report: the env file's in line order, then the environment's,
# then the command line's (see `_FROM_ENVIRONMENT`).
_Problem = Tuple[int, str]
# name -> (text, where, order, the name it was set by: an old name is quoted in its problem)
_Raw = Dict[str, Tuple[str, str, int, str]]


def _env_file_to_read(project_dir: Optional[Path], env_file: Optional[Path]) -> Optional[Path]:
    """The env file named, which must exist, else ``project_dir/.env`` if there is one."""
    if env_file is None:
        default = project_dir / ".env" if project_dir else None
        return default if default and default.exists() else None
    env_path = Path(env_file).expanduser().absolute()
    if not env_path.exists():  # one that is not a file is refused as it is read (`_read_env_file`)
        raise ConfigError(
            f"env file {env_path} does not exist: check the --env-file path, or copy config.example.env to it"
        )
    return env_path


def _gather(
    table: Mapping[str, Setting],
    env_path: Optional[Path],
    environ: Mapping[str, str],
    overrides: Mapping[str, str],
) -> Tuple[_Raw, List[Tuple[str, str, str]], List[_Problem]]:
    """Each setting's text with where it came from, a later source winning; the old names in use
    (old name, new name, where); and the env file's own problems (lines that set nothing we know)."""
    problems: List[_Problem] = []
    raw: _Raw = {name: (s.default, "the default", 0, name) for name, s in table.items()}
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
    for name, value in overrides.items():
        if name not in table:
            raise ValueError(f"unknown setting {name}")  # a bug in the caller, not the user's doing
        if value != "":
            raw[name] = (value, "the command line", _FROM_COMMAND_LINE, name)
    return raw, old_names, problems


def _parse(
    registry: SettingsTable, table: Mapping[str, Setting], raw: _Raw, base_dir: Optional[Path]
) -> Tuple[Dict[str, object], List[_Problem]]:
    """Each setting's checked value, and the problems: each setting's alone, then, only when every
    one is good alone, those that show between them (the registry's `validate`)."""
    values: Dict[str, object] = {}
    problems: List[_Problem] = []
    for name, (text, where, order, written) in raw.items():
        try:
            values[name] = registry.parser(name)(written, text, where, base_dir, table[name])
        except ConfigError as exc:
            problems += [(order, problem) for problem in exc.problems]
    if len(values) == len(table):
        sources = {name: where for name, (_, where, _, _) in raw.items()}
        for blamed, problem in registry.validate(values, sources):
            problems.append((raw[blamed][2], problem))
    return values, problems


def _scrubbed(problems: List[_Problem], table: Mapping[str, Setting], raw: _Raw) -> ConfigError:
    """One ConfigError with every problem in report order. A key (or a piece of one) pasted into
    the wrong setting may be quoted in them, whole or shortened: every form of every key (and
    the secret parts of a secret's value, as a monitor URL's password), and every value that
    looks like one, is hidden, and so is every piece of them a problem quotes (each setting's own
    value is hidden where it is read, `SettingType.read`; this hides one setting's value in
    another's problem). A value too long to be read is quoted nowhere."""
    texts = [(text.strip(), table[name].secret) for name, (text, _, _, _) in raw.items()]
    texts = [(text, secret) for text, secret in texts if len(text) <= MAX_SETTING_LENGTH]
    secrets = [text for text, secret in texts if secret]
    secrets += [
        part
        for name, setting in table.items()
        if setting.secret
        and setting.kind.secret_parts is not None
        and name in raw
        and len(raw[name][0].strip()) <= MAX_SETTING_LENGTH
        for part in setting.kind.secret_parts(raw[name][0].strip())
    ]
    pasted = [text for text, _ in texts if looks_like_a_key(text, secrets)]
    scrub = Scrubber([*secrets, *pasted])
    return ConfigError(
        *(
            hide_pieces(scrub(problem, keep=table), [*secrets, *pasted], keep=table)
            for _, problem in sorted(problems, key=lambda item: item[0])
        )
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


_FROM_ENVIRONMENT = 10**9  # after every line of the env file, in the order problems are reported
_FROM_COMMAND_LINE = 2 * 10**9


def _source_rank(order: int) -> int:
    """0 the default, 1 the env file (any line), 2 the environment, 3 the command line."""
    return 0 if order == 0 else 1 if order < _FROM_ENVIRONMENT else 2 if order < _FROM_COMMAND_LINE else 3


def _read_env_file(
    path: Path, table: Mapping[str, Setting]
) -> Tuple[Dict[str, Tuple[str, str, int]], List[Tuple[int, str]]]:
    """Read the env file strictly: each value with where it came from and its line, and a problem
    (with its line) for each line python-dotenv cannot parse, that names an unknown setting, that
    sets a setting again, or that python-dotenv would cut or change a secret on (`_secret_cut`,
    `_secret_escaped`). A secret is read as written (no ``${NAME}`` in it is replaced). A
    byte-order mark (Notepad) is not part of the first line."""
    text = _env_file_text(path)
    statements = _statements(text)
    lines: Dict[str, List[int]] = {}
    problems: List[Tuple[int, str]] = []
    for statement in statements:
        key, line = statement.key, statement.line
        if key is None:
            problems.append(
                (line, f"{path} line {line} is not a NAME=value setting: fix or remove it (comments start with #)")
            )
        elif key not in table and key not in DEPRECATED:
            plain = key.isascii() and key.isidentifier() and not looks_like_a_key(key)
            shown = key if plain else show(key)
            problems.append((line, f"{path} line {line}: unknown setting {shown}: {_suggest(key, table)}"))
        else:
            lines.setdefault(key, []).append(line)
            setting = table.get(DEPRECATED.get(key, key))
            if setting is not None and setting.secret and _secret_cut(statement.text):
                problems.append((line, _cut_problem(path, line, key)))
            elif setting is not None and setting.secret and _secret_escaped(statement.text) is not None:
                problems.append((line, _escape_problem(path, line, key)))
    for key, where in lines.items():
        if len(where) > 1:
            problems.append((where[1], _duplicate_problem(path, key, where)))
    if len(problems) > _MAX_LINE_PROBLEMS:  # a file that is no env file: its first problems say so
        problems.sort(key=lambda item: item[0])
        more = len(problems) - _MAX_LINE_PROBLEMS
        problems[_MAX_LINE_PROBLEMS:] = [
            (
                problems[_MAX_LINE_PROBLEMS][0],
                f"{path}: {plural(more, 'more problem')} after these: is it the env file?",
            )
        ]

    with _quiet_dotenv():
        values = dotenv_values(stream=io.StringIO(text))
    # A secret's value as written: no ${NAME} replaced, and a refused escape not decoded either (so
    # that the problems its decoded form would have do not hide the one that says why).
    literal = {
        statement.key: _secret_escaped(statement.text) or statement.value for statement in statements if statement.key
    }
    found = {}
    for name, where in lines.items():
        setting = table.get(DEPRECATED.get(name, name))
        value = literal[name] if setting is not None and setting.secret else values.get(name)
        found[name] = (value or "", f"{path} line {where[-1]}", where[-1])
    return found, problems


# The longest env file read, in bytes: every setting at its longest (MAX_SETTING_LENGTH) with
# config.example.env's comments fits (that file is 11 KB). A bigger one is not an env file.
MAX_ENV_FILE_BYTES = 256 * 1024


def _env_file_text(path: Path) -> str:
    """The env file's text, if it is a file, of at most `MAX_ENV_FILE_BYTES`, in UTF-8."""
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_ENV_FILE_BYTES + 1)
    except NotAFile as exc:
        raise ConfigError(f"env file {path} is {exc.kind}, not a file: name the env file itself") from None
    except OSError as exc:
        raise ConfigError(f"cannot read env file {path}: {exc.strerror}") from None
    if len(data) > MAX_ENV_FILE_BYTES:
        raise ConfigError(
            f"env file {path} is over {MAX_ENV_FILE_BYTES // 1024} KB, far more than settings need (config.example.env"
            " is 11 KB): check that --env-file names your env file, or remove what is not a setting from it"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}): save it as UTF-8") from None


class _Statement(NamedTuple):
    """One statement of the env file as python-dotenv reads it: its first line, the name it sets
    (None: it cannot be parsed), its value as written (escapes decoded, nothing replaced), and its
    text."""

    line: int
    key: Optional[str]
    value: Optional[str]
    text: str


def _statements(text: str) -> List[_Statement]:
    """Every statement of `text` (comments and blank lines left out), in one pass of python-dotenv's
    own parser, the one `dotenv_values` reads with: a quoted value may span lines, and a line it
    cannot parse is one statement, as it is for python-dotenv."""
    found: List[_Statement] = []
    for binding in parse_stream(io.StringIO(text)):
        original = binding.original.string
        statement = original.lstrip()
        if binding.key is None and not binding.error:
            continue  # a comment, or the blank lines at the end
        # The statement's first line: python-dotenv counts from the blank lines before it.
        leading = original[: len(original) - len(statement)]
        line = binding.original.line + len(_NEWLINE.findall(leading))
        key = None if binding.error else binding.key
        found.append(_Statement(line, key, binding.value, statement))
    return found


_NEWLINE = re.compile(r"\r\n|\n|\r")  # as python-dotenv counts lines


def _secret_cut(statement: str) -> bool:
    """Whether python-dotenv drops part of this statement's value as a comment: a value not in
    quotes ends where whitespace and a # begin, so ``WEB_PASSWORD=my pass #1`` sets 'my pass'.
    A secret may hold ' #', and one silently shorter than the user typed is a weaker password or
    a key that fails with no clue why: the bot refuses rather than guess which was meant."""
    value = statement.split("=", 1)[1].lstrip(" \t") if "=" in statement else ""
    if value[:1] in ("'", '"'):
        return False  # a quoted value is whole; a comment may follow its closing quote
    return bool(re.search(r"\s#", value.rstrip()))


def _secret_escaped(statement: str) -> Optional[str]:
    """This statement's value as written, if it is in double quotes and holds a backslash (else
    None): python-dotenv decodes escapes there (``"ab\\ncd"`` holds a new line, ``"a\\\\b"`` one
    backslash, ``"a\\"b"`` a quote), so a key or password written with a backslash reaches the bot
    changed, or not, depending on the letter after it. Which was meant cannot be known: the bot refuses, and single
    quotes (where a backslash is kept, unless before ' or another backslash) are the fix. A
    backslash in a comment after the closing quote is no part of the value."""
    value = statement.split("=", 1)[1].lstrip(" \t") if "=" in statement else ""
    quoted = _DOUBLE_QUOTED.match(value)
    return quoted.group(1) if quoted and "\\" in quoted.group(1) else None


_DOUBLE_QUOTED = re.compile(r'"((?:\\.|[^"\\])*)"', re.DOTALL)  # python-dotenv's own rule


def _escape_problem(path: Path, line: int, key: str) -> str:
    return (
        f"{path} line {line}: {key}'s value is in double quotes and has a backslash in it, and an env file reads"
        f' a backslash in double quotes as an escape (\\n a new line, \\" a quote), so {key} may not be what you'
        f" wrote: put the value in single quotes instead ({key}='...'), where a backslash stays as written"
        " unless it comes before a ' or another backslash (a ' inside is written \\', two backslashes \\\\\\\\)"
    )


def _cut_problem(path: Path, line: int, key: str) -> str:
    return (
        f"{path} line {line}: {key}'s value has ' #' in it, and an env file reads everything from ' #' on as a"
        f" comment, so {key} would be shorter than you wrote: put the value in single quotes ({key}='...';"
        " a ' inside is written \\'), or move the comment to a line of its own"
    )


def _duplicate_problem(path: Path, key: str, lines: List[int]) -> str:
    """Two lines set one setting: python-dotenv would take the last, silently (whichever the user
    edited), so the bot refuses, as it refuses any setting it cannot read for sure."""
    shown = [f"{line:,}" for line in lines[:-1]] if len(lines) <= 4 else [f"{lines[0]:,}", f"{lines[1]:,}", "..."]
    numbers = ", ".join(shown) + f" and {lines[-1]:,}"
    others = "the other" if len(lines) == 2 else "the others"
    return (
        f"{path} sets {key} on lines {numbers}, and only the last would count: keep the one you mean, delete {others}"
    )


_MAX_LINE_PROBLEMS = 20  # problems of an env file's lines shown, at most: more say it is no env file


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
