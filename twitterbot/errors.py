"""The exception family and the exit codes the command line turns them into.

Every error a user can cause or fix is a `BotError` whose message says what is wrong and what
to do about it; the CLI prints that one sentence and exits with the error's `exit_status`.
"""

from __future__ import annotations

import enum
import re
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Optional, Tuple

__all__ = [
    "BotError",
    "CommandError",
    "ConfigError",
    "DuplicatePost",
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
    UNAVAILABLE = 69  # EX_UNAVAILABLE: a package the command needs is missing or broken (a partial install)
    DATA_ERROR = 65  # EX_DATAERR: the tweets file (or a line X refused) needs fixing
    CANNOT_CREATE = 73  # EX_CANTCREAT: the state folder cannot be written (permissions, read-only, disk full)
    TEMPORARY_FAILURE = 75  # EX_TEMPFAIL: rate limit, X server error, network, lock held
    PERMISSION_DENIED = 77  # EX_NOPERM: keys rejected, read-only app, no Project, no credits
    CONFIG_ERROR = 78  # EX_CONFIG: a setting is missing or malformed
    BROKEN_PIPE = 141  # as the shell (128 + SIGPIPE): the reader of the output went away, e.g. `| head`
    CANNOT_EXECUTE = 126  # as the shell: watch's command is not executable
    COMMAND_NOT_FOUND = 127  # as the shell: watch's command does not exist


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


class LockHeld(BotError):
    """Another run holds the lock; this one must not post."""

    exit_status = ExitStatus.TEMPORARY_FAILURE


class CommandError(BotError):
    """The command `watch` was given cannot be started."""

    def __init__(self, message: str, *, exit_status: ExitStatus) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class PostError(BotError):
    """X did not take the post. `kind` names the case (see `networks.x`); the message says what to do."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        exit_status: ExitStatus,
        retry_at: Optional[datetime] = None,
        summary: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.exit_status = exit_status
        self.retry_at = retry_at  # when X says trying again makes sense (rate limits)
        # What happened, without the advice: an in-run retry says this, then what it does next.
        self.summary = summary or message


class DuplicatePost(PostError):
    """X already has a post with this exact text: not a failure of the bot, pick another line."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="duplicate", exit_status=ExitStatus.DATA_ERROR)


class MissingDependency(BotError):
    """A package a command needs is missing, or installed but broken (a partial `pip install`, a
    shared library gone): the message names the package and the pip command that installs it.
    Made by the CLI's error boundary from the ImportError, with `from_import_error`."""

    kind = "missing_dependency"
    exit_status = ExitStatus.UNAVAILABLE

    @classmethod
    def from_import_error(cls, error: ImportError, *, checkout: Optional[Path] = None) -> Optional[MissingDependency]:
        """The error to report for `error`, or None when the module that failed is the bot's own
        (a bug, not an install). `checkout` is bot.py's folder, whose requirements.txt holds the
        tested version of every package."""
        module = _failed_module(error)
        if module is None or module == "twitterbot":
            return None
        python = shlex.quote(sys.executable or "python3")
        if module in _STANDARD_LIBRARY or module in getattr(sys, "stdlib_module_names", ()):
            return cls(
                f"Python's own module {module} is missing from {sys.executable} ({error}): install a complete "
                "Python (Raspberry Pi OS, Debian: sudo apt install python3-full), then make the venv again"
            )
        package = _PACKAGES.get(module, module)
        requirements = checkout / "requirements.txt" if checkout else None
        if isinstance(error, ModuleNotFoundError):
            if requirements and requirements.is_file():
                command = f"{python} -m pip install -r {shlex.quote(str(requirements))}"
                return cls(
                    f"the package {package} is missing ({error}): install it (and every package at the version "
                    f"the bot was tested with) by: {command}"
                )
            return cls(f"the package {package} is missing ({error}): install it with: {python} -m pip install {package}")
        version = _installed_version(package)
        pinned = f"{package}=={version}" if version else package
        return cls(
            f"the package {package} is installed but cannot be imported ({type(error).__name__}: {error}): "
            f"reinstall it with: {python} -m pip install --force-reinstall --no-deps {shlex.quote(pinned)}"
        )


# Import name -> the name pip installs it by, where they differ (requirements.txt, the extras).
_PACKAGES = {
    "dotenv": "python-dotenv",
    "twitter_text": "twitter-text-parser",
    "mastodon": "Mastodon.py",
    "dateutil": "python-dateutil",
    "requests_oauthlib": "requests-oauthlib",
    "PIL": "Pillow",
    "yaml": "PyYAML",
}
# Python's own modules a distribution may leave out or split off (sys.stdlib_module_names is 3.10+).
_STANDARD_LIBRARY = {"_ctypes", "ctypes", "_sqlite3", "sqlite3", "_ssl", "ssl", "_lzma", "lzma", "_bz2", "bz2", "zlib"}


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
