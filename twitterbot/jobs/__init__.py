"""Long-running jobs that post their progress and their result (see `twitterbot.progress`).

Every job has the same shape, one folder each (`pegs/`, `monkey/`, `puzzles/`); copy the one
next door when you add a job:

- **A pure part** (a model, a solver, a simulation: `pegs/board.py`, `pegs/solve.py`,
  `pegs/count.py`, `monkey/simulation.py`, `monkey/texts.py`) that knows nothing of posting,
  printing or the command line. It takes its inputs as values, yields progress events
  (dataclasses such as `Searching`, `Solved`, `Impossible`) and, where a run can be long, can
  save and resume its state. It is tested on its own, against an independent brute force.
- **A job module** (`job.py`) that runs the pure part and turns its events into reporter calls:
  `reporter.update(message, milestone=...)` now and then, `reporter.done(result)` once, a live
  status line on a terminal, files written with `files.write_atomically`.
- **A command module** (`command.py`) with ``register(parser, commands)``, which adds the job's
  subcommand with `arguments.add_command` (taking ``--dry-run``; the progress flags through
  `progress.commands.add_progress_flags`), named by the job's capability in its `__init__.py`, which
  is one line in `twitterbot.cli.built_in`.

A job may import progress mode, the scheduled post's modules, the networks and the foundation,
never another job (tests/test_layout.py checks it). What jobs share sits beside their folders:
`native.py` builds a job's optional C kernel (the monkey's `kernel.c`), always with a numpy path
that gives the same results; `cluster.py` is the Dask client the long jobs share, and the
cluster's one setting, `DASK_SCHEDULER`, is declared here (`CLUSTER`), light enough for every run
to read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Optional
from urllib.parse import urlsplit

from ..capability import Capability, CheckLine, Feature
from ..errors import ConfigError
from ..settings.parsers import is_loopback, show
from ..settings.table import Setting, SettingType, by_name

__all__ = ["CLUSTER", "DASK_SCHEDULER", "open_scheduler", "open_scheduler_problem"]


def _parse_scheduler(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """A scheduler's address; HOST:PORT alone means tcp://HOST:PORT, as Dask reads it."""
    value = text.strip()
    if value and "://" not in value:
        value = f"tcp://{value}"
    if value and not re.fullmatch(r"(tcp|tls)://[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5}", value):
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a Dask scheduler address like tls://10.0.0.2:8786 "
            "(or tcp://127.0.0.1:8786 on this machine alone): see docs/cluster.md, or leave it empty"
        )
    return value


SCHEDULER = SettingType("scheduler", _parse_scheduler)


DASK_SCHEDULER = Setting(
    "DASK_SCHEDULER",
    "",
    SCHEDULER,
    "long jobs (monkey, pegs count): a Dask scheduler to run them on, e.g. tls://10.0.0.2:8786 (needs the "
    "cluster extra; see the cluster guide); empty: this machine. --cluster overrides it",
)


class DaskCluster(Capability):
    """Where the long jobs run: the Dask scheduler of a cluster of Pis, or this machine."""

    name = "cluster"
    features = (Feature("the jobs on a Dask cluster (--cluster)", ("dask", "distributed"), "cluster"),)
    title = "Cluster"
    page = "cluster.md"
    settings = by_name(DASK_SCHEDULER)

    def checks(self, config: Any) -> Iterator[CheckLine]:
        """A plain tcp:// scheduler off loopback is a problem: Dask unpickles what it is sent, so
        anyone who reaches the port runs code on every Pi of the cluster."""
        address = config[DASK_SCHEDULER]
        if open_scheduler(address):
            yield "problem", open_scheduler_problem(address)
        elif address:
            yield "ok", f"the long jobs run on the Dask cluster at {address}"


def open_scheduler(address: str) -> bool:
    """Whether `address` is a plain tcp:// scheduler that other machines can reach."""
    parts = urlsplit(address)
    return parts.scheme == "tcp" and not is_loopback(parts.hostname or "")


def open_scheduler_problem(address: str) -> str:
    """What to say about an `open_scheduler` address, and the fix."""
    return (
        f"DASK_SCHEDULER={address} is a plain tcp:// address other machines can reach: a Dask scheduler runs"
        " whatever pickled code is sent to it, unencrypted and with no password, so anyone on that network could"
        " run programs on every Pi of the cluster. Use tls:// with the certificates of docs/cluster.md ('TLS'),"
        " e.g. DASK_SCHEDULER=tls://10.0.0.2:8786, or tcp://127.0.0.1:8786 for this Pi alone"
    )


CLUSTER = DaskCluster()
