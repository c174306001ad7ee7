"""The log: one line per record on stderr from the first moment (so even a bad setting is
reported), then as the settings say: LOG_LEVEL, LOG_FILE (rotated by size), every secret scrubbed
from every handler's lines. The command line sets it up and puts it back as it found it, so that
`cli.main` can run again in the same process::

    kept = logging_as_it_is()
    handler = setup_logging(environ)
    configure_logging(config, handler, secrets=config.secrets(), debug=False)
    ...
    restore_logging(kept)
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import TYPE_CHECKING, Callable, FrozenSet, Iterable, Iterator, List, Mapping, Sequence, Set, Tuple

from ..errors import ConfigError
from ..wording import one_line
from .keys import LOG_FILE, LOG_LEVEL

if TYPE_CHECKING:  # the command line sets the log up before it reads the settings (python-dotenv)
    from .loading import Config

__all__ = [
    "OneLine",
    "SaidLastRun",
    "configure_logging",
    "folding_repeats",
    "logging_as_it_is",
    "restore_logging",
    "setup_logging",
    "warning_digest",
]

# The root logger's handlers and level before the command line set it up.
Kept = Tuple[Sequence[logging.Handler], int]


class OneLine(logging.Formatter):
    """One log record, one line: line breaks and control characters in the message (a job's name,
    a command's output, a server's error detail) are written as escapes, so no text can forge a
    line of its own or steer the terminal. A traceback (--debug, a bug) follows on its own lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        record.message = one_line(record.message)
        return super().formatMessage(record)


class SaidLastRun(logging.Filter):
    """A warning the last run gave, word for word (a bad line of the tweets file, a monitor that
    does not answer), is logged again at DEBUG, not WARNING: the journal or cron.log holds what
    changed, not the same lines every ten minutes, and `-v` still shows it. One that went away for
    a run and came back is news again. Only warnings: a run's own line (INFO) and its failure
    (ERROR) are always written.

    It knows warnings by their digests (`warning_digest`), never by their text, so that what it
    remembers can be kept in a file (a warning may quote a private line). The daemon keeps one in
    memory and calls `next_run()` before each run; a scheduled run started by cron or a timer is
    given the digests its last run kept (`last`) and keeps `said` for the next."""

    def __init__(self, last: Iterable[str] = ()) -> None:
        super().__init__()
        self.last: FrozenSet[str] = frozenset(last)  # the digests of the last run's warnings
        self.said: Set[str] = set()  # and of this one's so far

    def next_run(self) -> None:
        """A run begins: what this one said is now what the last run said."""
        self.last, self.said = frozenset(self.said), set()

    def filter(self, record: logging.LogRecord) -> bool:
        # Every handler asks (stderr, LOG_FILE): the first decides, on the record, for all of them.
        repeated = getattr(record, _REPEATED, None)
        if repeated is None:
            if record.levelno != logging.WARNING:
                return True
            digest = warning_digest(record.getMessage())
            self.said.add(digest)
            repeated = digest in self.last
            setattr(record, _REPEATED, repeated)
            if repeated:
                record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return not repeated or logging.getLogger().isEnabledFor(logging.DEBUG)


# The attribute a warning's record carries once `SaidLastRun` has looked at it: said last run?
_REPEATED = "said_last_run"


def warning_digest(message: str) -> str:
    """What a warning is remembered by: 16 hex digits of its text's SHA-256, the same for the same
    words, telling nothing of them."""
    import hashlib  # here: a run that warns of nothing does without it (start-up)

    return hashlib.sha256(message.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@contextlib.contextmanager
def folding_repeats(last: Iterable[str] = ()) -> Iterator[SaidLastRun]:
    """Every handler of the log gives the warnings the last run gave (`last`, their digests) at
    DEBUG, while this lasts. The daemon calls `next_run()` on what it yields as each run begins; a
    run of its own process keeps what it yields' `said` for the next run."""
    repeats = SaidLastRun(last)
    handlers = tuple(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(repeats)
    try:
        yield repeats
    finally:
        for handler in handlers:
            handler.removeFilter(repeats)


def setup_logging(environ: Mapping[str, str]) -> logging.Handler:
    """Log to stderr from the start, so even a config error is reported."""
    handler = logging.StreamHandler(sys.stderr)
    # journald stamps each line itself; cron mail and terminals get a timestamp from us.
    stamp = "" if environ.get("JOURNAL_STREAM") else "%(asctime)s "
    handler.setFormatter(OneLine(f"{stamp}twitterbot %(levelname)s: %(message)s", "%Y-%m-%d %H:%M:%S"))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def configure_logging(config: Config, stderr_handler: logging.Handler, *, secrets: Sequence[str], debug: bool) -> None:
    """The log as the settings say: LOG_LEVEL, a LOG_FILE beside stderr (1 MB, 3 kept), the
    secrets scrubbed from both; the HTTP libraries' request bodies only with --debug."""
    root = logging.getLogger()
    root.setLevel(config[LOG_LEVEL])
    # tweepy and urllib3 log every request body at DEBUG: only with --debug.
    library_level = logging.DEBUG if debug else logging.WARNING
    for name in ("tweepy", "urllib3", "requests_oauthlib", "oauthlib"):
        logging.getLogger(name).setLevel(library_level)
    handlers: List[logging.Handler] = [stderr_handler]
    log_file = config[LOG_FILE]
    if log_file is not None:
        from logging.handlers import RotatingFileHandler  # only with LOG_FILE

        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = RotatingFileHandler(log_file, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"LOG_FILE {log_file} cannot be opened ({exc.strerror}): fix the path or its permissions"
            ) from None
        file_handler.setFormatter(OneLine("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        file_handler.handleError = _given_up(file_handler, str(log_file))  # type: ignore[method-assign]
        root.addHandler(file_handler)
        handlers.append(file_handler)
    from .secrets import ScrubSecrets

    scrubber = ScrubSecrets(secrets)
    for handler in handlers:
        handler.addFilter(scrubber)


def logging_as_it_is() -> Kept:
    """The root logger's handlers and level, to be put back when the command is over."""
    root = logging.getLogger()
    return tuple(root.handlers), root.level


def _given_up(handler: logging.Handler, log_file: str) -> Callable[[logging.LogRecord], None]:
    """What the log file's handler does when a write fails (a full disk, a read-only SD card):
    says so once on stderr, in one sentence, and writes no more there this run, where logging's
    own answer is a traceback for every line. The run goes on: a post is not stopped by its log."""

    def handle_error(record: logging.LogRecord) -> None:
        if handler.level > logging.CRITICAL:
            return
        problem = sys.exc_info()[1]
        handler.setLevel(logging.CRITICAL + 1)  # nothing more is written there
        with contextlib.suppress(OSError, ValueError):
            handler.close()
        said = getattr(problem, "strerror", None) or problem
        sys.stderr.write(
            f"LOG_FILE {log_file} cannot be written ({said}): this run logs to stderr only; free some space "
            f"(`df -h`) or fix the file's folder\n"
        )

    return handle_error


def restore_logging(kept: Kept) -> None:
    """Undo `setup_logging` and `configure_logging`: the handlers they added flushed, closed and
    removed, the root logger's own handlers and level back, so that the command line can run
    again in the same process (the tests run it in theirs) with nothing of the last run's log."""
    handlers, level = kept
    root = logging.getLogger()
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            with contextlib.suppress(OSError, ValueError):  # a log file's full disk: said already
                handler.flush()
                handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
