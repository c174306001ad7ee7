"""bot.py's command line run inside the test's process, through `twitterbot.cli.main`, the way a
process would run it: its own cwd, its own environment, its own stdout and stderr.

Starting Python and importing the bot costs about a second a run; most tests only need what the
command does. A test where the process itself is under test (signals, kills, a reader that goes
away, what a run imports, another user) starts bot.py instead (`BotHome.start`/`run_process`).

The run gets the process-wide things a process of its own would have, and gives them back:
`os.environ` is the test's bare environment during the run (parts of the bot read it directly,
as a process's children do), the cwd is the run's, stdout and stderr are captured. Whatever else
the run changes in the process and leaves changed (a signal handler, the umask, a logging handler,
a warnings filter, sys.argv) is a leak between tests: it fails the test that made it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from twitterbot import cli

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1, signal.SIGUSR2)


class _Capture(io.TextIOWrapper):
    """A text stream with a `.buffer`, as a process's stdout has (watch copies bytes to it)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]


def _process_state() -> Dict[str, Any]:
    """What a run must leave as it found it."""
    root = logging.getLogger()
    umask = os.umask(0o022)
    os.umask(umask)
    return {
        "signal handlers": {number: signal.getsignal(number) for number in _SIGNALS},
        "umask": umask,
        "root logger's handlers": list(root.handlers),
        "root logger's level": root.level,
        "warnings filters": list(warnings.filters),
        "sys.argv": list(sys.argv),
        "recursion limit": sys.getrecursionlimit(),
        "cwd": os.getcwd(),
        "modules": len(sys.modules),
    }


def run_in_process(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str],
    cwd: Path,
    registry: Optional[Any] = None,
) -> subprocess.CompletedProcess:
    """`cli.main(argv)` with `environ` as the whole environment, from `cwd`: its exit status and
    what it printed, as a CompletedProcess (args: the command line)."""
    if "PYTHONPATH" in environ:
        raise ValueError("PYTHONPATH changes what a process imports: run bot.py as a process (run_process)")
    saved_environ = dict(os.environ)
    saved_cwd = os.getcwd()
    out, err = _Capture(), _Capture()
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    before = _process_state()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(list(argv), environ=dict(environ), registry=registry)
            except SystemExit as exc:  # what a process would exit with
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        after = _process_state()
        environ_after = dict(os.environ)
    finally:
        os.environ.clear()
        os.environ.update(saved_environ)
        time.tzset()  # TZ is the test process's again
        os.chdir(saved_cwd)
    leaks: List[str] = [name for name in before if before[name] != after[name]]
    if "warnings filters" in leaks and after["modules"] != before["modules"]:
        leaks.remove("warnings filters")  # a library's own, added when first imported (urllib3's, requests')
    if "modules" in leaks:
        leaks.remove("modules")
    if environ_after != dict(environ):
        leaks.append("os.environ")
    assert not leaks, f"bot.py {' '.join(argv)} left the process changed (a leak between runs): {', '.join(leaks)}"
    return subprocess.CompletedProcess(["bot.py", *argv], int(status), out.text(), err.text())
