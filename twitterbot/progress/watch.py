"""`bot.py watch -- CMD ARGS...`: run any command and turn its output into progress posts.

The command's output passes through unchanged while each line (or each line matching a
pattern) becomes an update for the reporter. At the end the reporter posts "finished in 3h12m"
or "failed with exit 2 after 40m: <last line>", and `watch` exits with the command's status::

    code = watch(["rsync", "-a", "src/", "dst/"], reporter, patterns=Patterns.compile(r"(?P<percent>\\d+)%"))

SIGINT, SIGTERM and SIGHUP are forwarded to the command. A command stopped that way (say by
``systemctl restart``) has not failed: nothing is posted, and the next start continues the run.

When the reader of watch's output goes away (``bot.py watch -- seq 1 300000 | head -1``), the
command meets the closed pipe at its next write to that stream, as it would without watch: most
tools die of SIGPIPE (watch exits 141, as the shell shows), a Python script gets a BrokenPipeError.
Either way that is the terminal's business, not the job's: a command that ends badly after its
reader went away is stopped, not failed, and nothing is posted. One that carries on and succeeds
posts its result as usual.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import IO, Dict, List, Optional, Pattern, Sequence, Tuple, Union

from ..errors import CommandError, ExitStatus
from .reporter import Reporter
from .reports import NullReporter, Templates
from .statusline import NullStatusLine, StatusLine

__all__ = ["FIELDS", "TEMPLATES", "Patterns", "check_command", "default_name", "watch"]

# The fields watch gives the templates, besides the reporter's own and the pattern's named groups.
FIELDS = ("command", "line", "exit", "exit_code", "last_line")
TEMPLATES = Templates(
    progress="{name}: {message} ({elapsed})",
    done="{name} finished in {elapsed}",
    failed="{name} failed with {exit} after {elapsed}: {message}",
)
log = logging.getLogger(__name__)

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How often a quiet command still gets the reporter's attention (a due post, the status line).
TICK_SECONDS = 1.0
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Patterns:
    """Which output lines are news. `progress` None means every non-empty line; a line matching
    `milestone` is a milestone. The message is the pattern's group named ``message``, or its
    first group if no group is named, or else the whole line; named groups become template fields."""

    progress: Optional[Pattern[str]] = None
    milestone: Optional[Pattern[str]] = None

    @classmethod
    def compile(cls, progress: Optional[str] = None, milestone: Optional[str] = None) -> Patterns:
        """Compile the flags' regular expressions, or raise ValueError saying which one is wrong."""
        compiled = []
        for flag, text in (("--pattern", progress), ("--milestone", milestone)):
            try:
                compiled.append(re.compile(text) if text else None)
            except re.error as exc:
                raise ValueError(f"{flag} {text!r} is not a regular expression ({exc})") from None
        return cls(*compiled)

    @property
    def fields(self) -> List[str]:
        names = set()
        for pattern in (self.progress, self.milestone):
            if pattern:
                names |= set(pattern.groupindex)
        return sorted(names - {"message"})

    def update_for(self, line: str) -> Optional[tuple]:
        """(message, fields, milestone) for a line that is news, else None."""
        milestone = self.milestone.search(line) if self.milestone else None
        match = milestone or (self.progress.search(line) if self.progress else None)
        if match is None and (self.progress is not None or not line.strip()):
            return None
        fields: Dict[str, str] = {}
        message = line
        if match:
            groups = {name: value or "" for name, value in match.groupdict().items()}
            if "message" in groups:
                message = groups.pop("message")
            elif match.re.groups and not match.re.groupindex:
                message = match.group(1) or ""
            fields = groups
        return message, fields, milestone is not None


def default_name(command: Sequence[str]) -> str:
    """The job's name when --name is not given: the program's file name."""
    return os.path.basename(command[0]) or command[0]


def check_command(command: Sequence[str]) -> None:
    """Raise `CommandError` now, before any post, if `command` cannot be run."""
    if not command:
        raise CommandError(
            "no command to watch: put it after --, e.g. bot.py watch -- ./backup.sh", exit_status=ExitStatus.USAGE
        )
    program = command[0]
    found = shutil.which(program) if os.sep not in program else program
    if found is None or not os.path.exists(found):
        raise CommandError(
            f"command not found: {program}: check the spelling, or give its full path "
            "(cron and systemd run with a short PATH)",
            exit_status=ExitStatus.COMMAND_NOT_FOUND,
        )
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise CommandError(
            f"cannot run {program}: it is not an executable file (chmod +x {program}?)",
            exit_status=ExitStatus.CANNOT_EXECUTE,
        )


def watch(
    command: Sequence[str],
    reporter: Union[Reporter, NullReporter],
    *,
    patterns: Optional[Patterns] = None,
    stdout: Optional[IO[bytes]] = None,
    stderr: Optional[IO[bytes]] = None,
    status: Optional[Union[StatusLine, NullStatusLine]] = None,
) -> int:
    """Run `command` to the end, reporting its output; returns the exit status to exit with
    (the command's, or 128 + the signal that killed it)."""
    status = status or NullStatusLine()
    patterns = patterns or Patterns()  # every non-empty line is news
    out = stdout or sys.stdout.buffer
    err = stderr or sys.stderr.buffer
    child = _start(command)
    forwarded: List[int] = []

    def forward(signum: int, frame: object) -> None:
        forwarded.append(signum)
        with contextlib.suppress(ProcessLookupError):  # it has just ended
            child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED_SIGNALS}
    base_fields = {"command": _short(command)}
    try:
        last_line, reader_gone = _relay(child, out, err, reporter, patterns, status, base_fields)
        code = child.wait()
    finally:
        if child.poll() is None:  # we are leaving on an exception: do not leave it running alone
            child.terminate()
            child.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        status.clear()

    fields = _end_fields(base_fields, code, last_line, patterns)
    _report_end(reporter, command, code, last_line, stopped=bool(forwarded), reader_gone=reader_gone, fields=fields)
    status.clear()  # leave the terminal as we found it
    return _exit_status(code)


def _start(command: Sequence[str]) -> subprocess.Popen:
    """Start `command` with its output piped to us, or raise `CommandError` if it cannot run."""
    try:
        # Its own session: a Ctrl-C in the terminal reaches it once, forwarded by us, not twice.
        # (It can still read a terminal on stdin: job control only stops its own session's readers.)
        return subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise CommandError(
            f"command not found: {command[0]}: check the spelling, or give its full path",
            exit_status=ExitStatus.COMMAND_NOT_FOUND,
        ) from None
    except PermissionError:
        raise CommandError(
            f"cannot run {command[0]}: it is not executable (chmod +x {command[0]})",
            exit_status=ExitStatus.CANNOT_EXECUTE,
        ) from None


def _relay(
    child: subprocess.Popen,
    out: IO[bytes],
    err: IO[bytes],
    reporter: Union[Reporter, NullReporter],
    patterns: Patterns,
    status: Union[StatusLine, NullStatusLine],
    base_fields: Dict[str, str],
) -> Tuple[str, bool]:
    """Pass the child's output on to `out` and `err` until both its pipes close, reporting each
    line that is news. Returns the last non-empty line, and whether the reader of `out` or `err`
    went away."""
    assert child.stdout is not None and child.stderr is not None
    streams = {child.stdout.fileno(): out, child.stderr.fileno(): err}
    partial: Dict[int, bytes] = {fd: b"" for fd in streams}
    reader_gone = False
    last_line = ""
    with selectors.DefaultSelector() as selector:
        for pipe in (child.stdout, child.stderr):
            selector.register(pipe, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select(timeout=TICK_SECONDS):
                fd = key.fd
                chunk = os.read(fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    lines, partial[fd] = [partial[fd]], b""
                else:
                    status.clear()
                    if not _pass_on(chunk, streams[fd]):
                        # Our reader went away (`| head`): the command meets the closed pipe
                        # at its next write, as it would have written straight into it.
                        reader_gone = True
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
                        continue
                    *lines, partial[fd] = _LINE_END.split(partial[fd] + chunk)
                for raw in lines:
                    line = raw.decode("utf-8", "replace").strip()
                    if line:
                        last_line = line
                        _report_line(reporter, patterns, line, base_fields)
            reporter.tick()
            status.redraw()
    return last_line, reader_gone


def _report_line(
    reporter: Union[Reporter, NullReporter], patterns: Patterns, line: str, base_fields: Dict[str, str]
) -> None:
    """Tell the reporter about `line` if the patterns make it news."""
    news = patterns.update_for(line)
    if news:
        message, fields, milestone = news
        reporter.update(message, milestone=milestone, **base_fields, line=line, **fields)


def _exit_status(code: int) -> int:
    """The status to exit with for Popen's return code: the command's, or 128 + the signal that killed it."""
    return code if code >= 0 else 128 - code


def _described(code: int) -> str:
    """How the command ended, for the templates' {exit}: "exit 2" or "signal SIGTERM"."""
    return f"exit {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"


def _end_fields(base_fields: Dict[str, str], code: int, last_line: str, patterns: Patterns) -> Dict[str, object]:
    """The template fields of the final post: its pattern fields are there but empty, so that a
    template using them still fills in."""
    fields: Dict[str, object] = dict(
        base_fields, exit=_described(code), exit_code=_exit_status(code), last_line=last_line, line=last_line
    )
    fields.update({name: "" for name in patterns.fields})
    return fields


def _report_end(
    reporter: Union[Reporter, NullReporter],
    command: Sequence[str],
    code: int,
    last_line: str,
    *,
    stopped: bool,
    reader_gone: bool,
    fields: Dict[str, object],
) -> None:
    """Tell the reporter how the run ended: done, failed, or stopped (nothing posted)."""
    if stopped:  # by a forwarded signal (systemctl stop, Ctrl-C), not finished, whatever its exit status
        reporter.stop()
    elif reader_gone and code != 0:
        # It may have failed on the closed pipe (killed by SIGPIPE, or a BrokenPipeError): that is
        # the terminal's business, not the job's; it is stopped, not failed, and nothing is posted.
        log.warning(
            "%s: ended with %s after the reader of its output went away: not a failure, nothing posted",
            getattr(reporter, "name", default_name(command)),
            _described(code),
        )
        reporter.stop()
    elif code == 0:
        reporter.done("", **fields)
    else:
        reporter.failed(last_line or "(no output)", exit_status=_exit_status(code), **fields)


def _pass_on(chunk: bytes, stream: IO[bytes]) -> bool:
    """Write `chunk` to `stream`; False if the stream's reader has gone (a closed pipe). The
    stream is then pointed at /dev/null, so that no later flush (Python's at exit) fails on it."""
    try:
        stream.write(chunk)
        stream.flush()
    except OSError as exc:  # BrokenPipeError is EPIPE
        if exc.errno not in (errno.EPIPE, errno.EIO):  # EIO: the terminal itself went away
            raise
        _discard(stream)
        return False
    return True


def _discard(stream: IO[bytes]) -> None:
    """Make what is still buffered for `stream`, and anything written to it later, go nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
        stream.flush()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a file descriptor (a test's buffer): nothing to silence


def _short(command: Sequence[str], limit: int = 80) -> str:
    text = shlex.join(command)
    return text if len(text) <= limit else text[: limit - 1] + "…"
