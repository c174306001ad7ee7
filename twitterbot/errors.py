"""The exception family and the exit codes the command line turns them into.

Every error a user can cause or fix is a `BotError` whose message says what is wrong and what
to do about it; the CLI prints that one sentence and exits with the error's `exit_status`.
"""

from __future__ import annotations

import enum
import errno
import re
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

__all__ = [
    "BotError",
    "CommandError",
    "ConfigError",
    "DuplicatePost",
    "ErrorKind",
    "EXIT_STATUS_HELP",
    "ExitStatus",
    "HistoryError",
    "LockHeld",
    "MissingDependency",
    "PostError",
    "StateError",
    "TweetFileError",
    "UsageError",
]


class ExitStatus(enum.IntEnum):
    """Process exit codes, following sysexits.h where one fits so cron wrappers can tell them apart."""

    OK = 0  # posted, skipped, or dry run
    UNEXPECTED = 1  # a bug: run again with --debug and report it
    USAGE = 64  # EX_USAGE: bad command line
    DATA_ERROR = 65  # EX_DATAERR: the tweets file (or a line X refused) needs fixing
    UNAVAILABLE = (
        69  # EX_UNAVAILABLE: a package missing or broken (a partial install), the cluster extra absent, no scheduler
    )
    CANNOT_CREATE = 73  # EX_CANTCREAT: the state folder cannot be written (permissions, read-only, disk full)
    TEMPORARY_FAILURE = 75  # EX_TEMPFAIL: rate limit, X server error, network, lock held
    PERMISSION_DENIED = 77  # EX_NOPERM: keys rejected, read-only app, no Project, no credits
    CONFIG_ERROR = 78  # EX_CONFIG: a setting is missing or malformed
    BROKEN_PIPE = 141  # as the shell (128 + SIGPIPE): the reader of the output went away, e.g. `| head`
    CANNOT_EXECUTE = 126  # as the shell: watch's command is not executable
    COMMAND_NOT_FOUND = 127  # as the shell: watch's command does not exist


class ErrorKind(str, enum.Enum):
    """What went wrong with a post, as `PostError.kind`: a stable word that `--json`, the history
    and scripts keep (the values never change). Compares equal to its value."""

    DUPLICATE = "duplicate"  # the network already has this text
    TOO_LONG = "too_long"  # the network says the text is too long
    UNAUTHORIZED = "unauthorized"  # the keys, token or password were refused
    READ_ONLY = "read_only"  # the keys may only read
    NOT_IN_PROJECT = "not_in_project"  # X: the app is in no Project
    CREDITS = "credits"  # X: no API credits left
    FORBIDDEN = "forbidden"  # the account may not post (suspended, disabled, scope)
    NOT_FOUND = "not_found"  # the server has no such API
    RATE_LIMITED = "rate_limited"  # too many requests (429)
    SERVER_ERROR = "server_error"  # the network failed (5xx): certainly no post
    UNREACHABLE = "unreachable"  # no connection was made: certainly no post
    TIMEOUT = "timeout"  # sent, and no answer in time: maybe posted
    NETWORK = "network"  # sent, and the connection broke: maybe posted
    EXISTS = "exists"  # Bluesky: a record under this post's key exists already
    BAD_REPLY_TO = "bad_reply_to"  # the post to reply to is not this network's
    REJECTED = "rejected"  # a refusal no rule foresaw
    UNCERTAIN = "uncertain"  # it may or may not have been posted
    PICTURE = "picture"  # a picture cannot be posted: unreadable, too big, refused by the network
    UPLOAD = "upload"  # a picture could not be uploaded (network, server): nothing was posted
    UNEXPECTED = "unexpected"  # the client library failed in a way we do not know

    __str__ = str.__str__  # "rate_limited", not "ErrorKind.RATE_LIMITED", in messages
    __format__ = str.__format__


# What each exit status means and what to do about it: the reference page of exit codes is
# generated from this table (docs/gen_reference.py), so a new status cannot go undocumented.
EXIT_STATUS_HELP: Dict[ExitStatus, Tuple[str, str]] = {
    ExitStatus.OK: ("posted, skipped (by chance or by the cap), or dry run", "nothing"),
    ExitStatus.UNEXPECTED: (
        "unexpected error (a bug)",
        "run again with `--debug` and report it, with `bot.py --version`",
    ),
    ExitStatus.USAGE: (
        "command-line usage error: an unknown flag, a flag the command does not take, a bad flag value "
        "(also: `monkey` asked to resume a checkpoint saved with other options)",
        "see `--help`, or the message",
    ),
    ExitStatus.DATA_ERROR: (
        "the tweets file needs fixing, or a network refused a line (too long, or every line the run tried "
        "was already posted); `monkey`: the `--target` file or texts archive is unusable; `pegs`: the board "
        "file; `puzzle`: the puzzle file (the message names the line)",
        "fix the named line or file",
    ),
    ExitStatus.UNAVAILABLE: (
        "a package the command needs is missing or broken (a partial install), `--help` included: the "
        "message names it and the `pip` command (see [Edge cases](../troubleshooting-edges.md)); or "
        "`--cluster` (or `DASK_SCHEDULER`) without the cluster extra installed, or a Dask scheduler that "
        "cannot be reached or still has no workers after waiting for one",
        "run the `pip` command the message gives (the cluster: `pip install -r requirements-cluster.txt`), "
        "or start the scheduler and workers (docs/cluster.md)",
    ),
    ExitStatus.CANNOT_CREATE: (
        "the state folder cannot be written: it or a file in it belongs to another user (often one made by "
        "a command run with `sudo`) or is read-only, the filesystem is read-only, or the disk is full (a "
        "real run then posts nothing); `puzzle`: also its `--output` file",
        "what the message says, e.g. `sudo chown -R pi: /home/pi/twitterbot/state` or free some space; "
        "keep the history",
    ),
    ExitStatus.TEMPORARY_FAILURE: (
        "temporary: rate limit, a network's server error, no connection, another run holds the lock; "
        "`monkey`: the texts could not be downloaded; `--cluster`: the Dask scheduler went away mid-job (the job saved its checkpoint). Also `uncertain`: the post was sent but the reply "
        "was lost (timeout, dropped connection), so it may or may not be there",
        "nothing; the next run tries again. For `uncertain`, the line counts as posted and is never sent "
        "again: look at the link in the message if you want to know",
    ),
    ExitStatus.PERMISSION_DENIED: (
        "a network refused the keys or the account: 401, read-only app, no Project, no credits, a suspended account",
        "see Troubleshooting",
    ),
    ExitStatus.CONFIG_ERROR: (
        "a setting is missing or malformed, or the history database is unusable; `--cluster`: the nodes run "
        "other versions of Python or the packages",
        "fix the named setting or file",
    ),
    ExitStatus.BROKEN_PIPE: (
        "the reader of the output went away (`bot.py history | head -1`); nothing else is printed, as "
        "with `git log | head`",
        "nothing",
    ),
    ExitStatus.CANNOT_EXECUTE: (
        "`watch`: the command is not an executable file",
        "`chmod +x` it, or run it through its interpreter",
    ),
    ExitStatus.COMMAND_NOT_FOUND: (
        "`watch`: the command was not found",
        "check its spelling; give its full path (cron and systemd have a short `PATH`)",
    ),
}


class BotError(Exception):
    """An error the user can act on; its message says how."""

    exit_status: ExitStatus = ExitStatus.UNEXPECTED
    # What kind of problem, for `--json`'s "error" and for scripts: a stable word, never a class
    # name. A subclass gets its name in snake case without "Error" (ConfigError: "config")
    # unless it names its own.
    kind: str = "error"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            words = re.findall(r"[A-Z][a-z0-9]*", cls.__name__.removesuffix("Error"))
            cls.kind = "_".join(words).lower() or "error"


class UsageError(BotError):
    """The command line asks for something that cannot be done as written."""

    exit_status = ExitStatus.USAGE


class ConfigError(BotError):
    """A setting is missing, unknown or malformed. `problems` holds each one, when there are several
    (the message has one per line), so a user fixes them all in one go."""

    exit_status = ExitStatus.CONFIG_ERROR

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems: Tuple[str, ...] = problems


class TweetFileError(BotError):
    """The tweets file cannot be read or has nothing to post."""

    kind = "tweets_file"
    exit_status = ExitStatus.DATA_ERROR


class HistoryError(BotError):
    """The history database is unusable (corrupt, foreign, newer, or not writable)."""

    exit_status = ExitStatus.CONFIG_ERROR


class StateError(HistoryError):
    """The state folder or a file in it cannot be written: wrong owner or mode, a read-only
    filesystem, a full disk. The history itself is fine; the fix is outside the bot."""

    exit_status = ExitStatus.CANNOT_CREATE


def disk_problem(exc: BaseException) -> Optional[StateError]:
    """A disk that is full or read-only, met anywhere outside the history (a log file, a picture's
    temporary file, a job's checkpoint): the machine's problem, said with what to do (exit 73),
    never a bug's exit 1. None for any other error."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        return None
    what = f"cannot write {exc.filename}" if exc.filename else "cannot write a file"
    if exc.errno == errno.EROFS:
        return StateError(
            f"{what}: it is on a read-only filesystem (an SD card turns read-only after errors: see `dmesg`); "
            "remount it read-write and run again"
        )
    return StateError(
        f"{what}: the disk is full; free some space (`df -h`) and run again: the history keeps what it had"
    )


class LockHeld(BotError):
    """Another run holds the lock; this one must not post."""

    exit_status = ExitStatus.TEMPORARY_FAILURE


class CommandError(BotError):
    """The command `watch` was given cannot be started."""

    def __init__(self, message: str, *, exit_status: ExitStatus) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class PostError(BotError):
    """A network did not take the post. `kind` names the case (`ErrorKind`); the message says what to do."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        exit_status: ExitStatus,
        retry_at: Optional[datetime] = None,
        summary: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.exit_status = exit_status
        self.retry_at = retry_at  # when the network says trying again makes sense (rate limits)
        # What happened, without the advice: an in-run retry says this, then what it does next.
        self.summary = summary or message


class DuplicatePost(PostError):
    """The network already has a post with this exact text: not a failure of the bot, pick another line."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind=ErrorKind.DUPLICATE, exit_status=ExitStatus.DATA_ERROR)


class MissingDependency(BotError):
    """A package a command needs is missing, or installed but broken (a partial `pip install`, a
    shared library gone): the message names the package and the pip command that installs it.
    Made by the CLI's error boundary from the ImportError, with `from_import_error`."""

    kind = "missing_dependency"
    exit_status = ExitStatus.UNAVAILABLE

    @classmethod
    def from_import_error(
        cls, error: ImportError, *, checkout: Optional[Path] = None, features: Mapping[str, Tuple[str, str]] = {}
    ) -> Optional[MissingDependency]:
        """The error to report for `error`, or None when the module that failed is the bot's own
        (a bug, not an install). `checkout` is bot.py's folder, whose requirements.txt holds the
        tested version of every package; `features` maps a module to the feature that needs it and
        the one command that adds it (pip's extra, or Raspberry Pi OS's apt package)."""
        module = _failed_module(error)
        if module is None or module == "twitterbot":
            return None
        if module in features and isinstance(error, ModuleNotFoundError):
            feature, install = features[module]
            return cls(
                f"the package {_package_of(module, None)} is missing ({error}); it is needed by {feature}: "
                f"add it with: {install}"
            )
        python = shlex.quote(sys.executable or "python3")
        if module in _STANDARD_LIBRARY or module in getattr(sys, "stdlib_module_names", ()):
            return cls(
                f"Python's own module {module} is missing from {sys.executable} ({error}): install a complete "
                "Python (Raspberry Pi OS, Debian: sudo apt install python3-full), then make the venv again"
            )
        requirements = checkout / "requirements.txt" if checkout else None
        package = _package_of(module, requirements)
        if isinstance(error, ModuleNotFoundError):
            if requirements and requirements.is_file():
                command = f"{python} -m pip install -r {shlex.quote(str(requirements))}"
                return cls(
                    f"the package {package} is missing ({error}): install it (and every package at the version "
                    f"the bot was tested with) by: {command}"
                )
            return cls(
                f"the package {package} is missing ({error}): install it with: {python} -m pip install {package}"
            )
        version = _installed_version(package)
        pinned = f"{package}=={version}" if version else package
        return cls(
            f"the package {package} is installed but cannot be imported ({type(error).__name__}: {error}): "
            f"reinstall it with: {python} -m pip install --force-reinstall --no-deps --no-cache-dir {shlex.quote(pinned)}"
        )


# Python's own modules a distribution may leave out or split off (sys.stdlib_module_names is 3.10+).
_STANDARD_LIBRARY = {"_ctypes", "ctypes", "_sqlite3", "sqlite3", "_ssl", "ssl", "_lzma", "lzma", "_bz2", "bz2", "zlib"}
# Import names that share nothing with the name pip installs them by.
_UNLIKE = {"PIL": "Pillow", "yaml": "PyYAML"}


def _package_of(module: str, requirements: Optional[Path]) -> str:
    """The name pip installs `module` by: the installed distribution that provides it, else the
    bot's requirement (requirements.txt, or the installed package's metadata) whose name holds the
    module's (dotenv: python-dotenv, twitter_text: twitter-text-parser), else the module's own."""
    from importlib import metadata

    if module in _UNLIKE:
        return _UNLIKE[module]
    providers = getattr(metadata, "packages_distributions", dict)().get(module, [])  # Python 3.10+
    if providers:
        return providers[0]
    names = []
    try:
        if requirements and requirements.is_file():
            lines = requirements.read_text(encoding="utf-8").splitlines()
        else:
            lines = metadata.requires("twitterbot") or []
    except (OSError, UnicodeDecodeError, metadata.PackageNotFoundError):
        lines = []
    for line in lines:
        name = re.split(r"[\s<>=!~;\[#]", line.strip(), maxsplit=1)[0]
        if name and not name.startswith("-"):
            names.append(name)
    wanted = _canonical(module)
    return next((name for name in names if _canonical(name) == wanted), None) or next(
        (name for name in names if f"-{wanted}-" in f"-{_canonical(name)}-"), module
    )


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _failed_module(error: ImportError) -> Optional[str]:
    """The top-level module whose import failed: the one named as missing, else the outermost
    module outside the bot and the import machinery that the traceback passes through."""
    if isinstance(error, ModuleNotFoundError) and error.name:
        return error.name.split(".")[0]
    trace = error.__traceback__
    while trace is not None:
        name = str(trace.tb_frame.f_globals.get("__name__", ""))
        top = name.split(".")[0]
        if top and top not in ("twitterbot", "importlib", "_frozen_importlib", "runpy", "__main__"):
            return top
        trace = trace.tb_next
    return error.name.split(".")[0] if error.name else None


def _installed_version(package: str) -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version(package)
    except (metadata.PackageNotFoundError, OSError, ValueError):  # no metadata, or unreadable: no pin
        return None
