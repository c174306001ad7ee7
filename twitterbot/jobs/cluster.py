"""The long jobs on a Dask cluster: connect, check that every node runs the same versions, and
run short pure tasks whose results come back in the order they were asked for.

Dask is an optional extra (``pip install -r requirements-cluster.txt``, or ``.[cluster]``): it is
imported only here, only by a command given ``--cluster`` (or ``DASK_SCHEDULER``), so a bot that
only posts never loads it. Usage::

    with connect("tls://10.0.0.2:8786", tls_dir=state_dir / "cluster") as cluster:
        future = cluster.submit(function, arguments...)     # pure: the same inputs, the same key
        cluster.result(future)                              # ClusterLost if the scheduler is gone

Each task must be a pure function of its arguments, so a task redone after its worker is lost
gives the same answer; the jobs count each result once, by its place in their own sequence.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Optional

from ..errors import BotError, ExitStatus
from . import DASK_SCHEDULER

__all__ = [
    "INSTALL_HINT",
    "TLS_FILES",
    "Cluster",
    "ClusterLost",
    "ClusterMismatch",
    "ClusterUnavailable",
    "WorkerLost",
    "connect",
    "node_versions",
    "steady_allocator",
]

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "the cluster extra is not installed: run `.venv/bin/pip install -r requirements-cluster.txt` "
    "(or `pip install 'twitterbot[cluster]'`) on this machine and on every worker, then try again"
)
# What must be equal on every node: a task pickled here is unpickled and run there.
COMPARED = ("python", "twitterbot", "numpy", "dask", "distributed", "cloudpickle", "msgpack", "tornado")
# A tls:// address takes its certificates from this folder (docs/cluster.md makes them once).
TLS_FILES = {"ca": "ca.pem", "cert": "node.pem", "key": "node-key.pem"}
# How long a result may take before we ask whether the scheduler is still there.
POLL = 2.0
# How long a command waits for the scheduler's first worker: workers started with it (at boot, or
# by `systemctl restart`) join a few seconds after it answers, and a job started by its timer in
# that moment should wait for them, not fail.
FIRST_WORKER = 15.0


class ClusterUnavailable(BotError):
    """`--cluster` without the extra installed, or a scheduler that cannot be reached."""

    exit_status = ExitStatus.UNAVAILABLE


class ClusterLost(BotError):
    """The scheduler went away mid-job: the job checkpoints and the same command continues."""

    exit_status = ExitStatus.TEMPORARY_FAILURE


class ClusterMismatch(BotError):
    """The nodes run different versions of Python or of the packages a task needs."""

    exit_status = ExitStatus.CONFIG_ERROR


class WorkerLost(Exception):
    """A worker watched by `Cluster.watching` left mid-job, and with it the data it held: a job
    whose tasks hold data between steps (the peg count's shares) starts again from its checkpoint.
    Not a BotError: the job catches it."""


def node_versions() -> Dict[str, str]:
    """This process's versions of everything in COMPARED (run on every worker too)."""
    import importlib.metadata  # here: reading package metadata loads email and zipfile, which a run never needs

    versions = {"python": platform.python_version()}
    for name in COMPARED[1:]:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    if versions["twitterbot"] == "not installed":  # a checkout, not an installed package
        from .. import __version__

        versions["twitterbot"] = __version__
    return versions


@dataclass
class Cluster:
    """A connected client. `workers` is the cluster's size when the job started (the posts say it)."""

    client: Any
    address: str
    watching: Optional[FrozenSet[str]] = None  # workers whose loss `result` and `wait` report

    def members(self) -> FrozenSet[str]:
        """The addresses of the workers the scheduler knows now (asks it).

        Not `client.scheduler_info()`: that fetches, then returns the client's cached copy, which
        its own timer replaces every few seconds with one that lists no workers at all. Read
        between the two, every worker looked lost, and a peg count started again from its
        checkpoint (seen twice in one benchmark run).

        Asked with no argument, which every scheduler takes: distributed 2025.4.0 added
        `identity(n_workers=...)` (Python 3.9's last, 2024.8.0, refused it: every cluster command
        failed there), its default -1 meaning every worker, as the scheduler listed before. A
        scheduler that says it lists fewer than it has (its `n_workers`) is asked for them all."""
        identity = self._identity()
        workers = identity.get("workers", {})
        if identity.get("n_workers", 0) > len(workers):
            workers = self._identity(n_workers=-1).get("workers", {})
        return frozenset(workers)

    def _identity(self, **options: int) -> Dict[str, Any]:
        """The scheduler's `identity()`, asked now; WorkerLost when the scheduler is gone."""
        try:
            return self.client.sync(self.client.scheduler.identity, **options)
        except OSError:  # Dask's CommClosedError too: the scheduler is gone
            raise self._lost() from None

    def watch(self) -> FrozenSet[str]:
        """From now on, `result` and `wait` raise WorkerLost once any of today's workers is gone."""
        self.watching = self.members()
        return self.watching

    @property
    def workers(self) -> int:
        return len(self.members())

    def check_versions(self) -> None:
        """Refuse to run on nodes that differ from this machine in any of COMPARED: the workers,
        and the scheduler too, which unpickles every task it is sent (one without this bot's code
        failed the job's first task with Dask's own "Error during deserialization")."""
        mine = node_versions()
        theirs: Dict[str, Dict[str, str]] = {
            f"the scheduler ({self.address})": self._versions_of("scheduler", self.client.run_on_scheduler),
            **self._versions_of("workers", self.client.run),
        }
        problems = [
            f"{worker} has {name} {versions.get(name)}, this machine {mine[name]}"
            for worker, versions in sorted(theirs.items())
            for name in COMPARED
            if versions.get(name) != mine[name]
        ]
        if problems:
            raise ClusterMismatch(
                "the cluster's nodes run other versions than this machine: "
                + "; ".join(problems[:6])
                + ("; ..." if len(problems) > 6 else "")
                + ". Install the same Python and `pip install -r requirements-cluster.txt` everywhere "
                "(docs/cluster.md, 'Several Pis, step by step'), then start the workers again"
            )

    def _versions_of(self, nodes: str, ask: Callable[[Callable[[], Any]], Any]) -> Any:
        """`node_versions` as `ask` runs it on the scheduler or the workers; ClusterMismatch if
        they cannot even unpickle it (they do not see this bot's code)."""
        try:
            return ask(node_versions)
        except Exception as exc:
            raise ClusterMismatch(
                f"the {nodes} of {self.address} cannot run this bot's code ({type(exc).__name__}: {exc}): install "
                "the same twitterbot and requirements-cluster.txt on every node, and start the scheduler and "
                "workers from its folder or with PYTHONPATH naming it (docs/cluster.md, 'Several Pis, step by step')"
            ) from None

    def submit(self, function: Callable[..., Any], *args: Any, key: Optional[str] = None) -> Any:
        """A future for `function(*args)`; pure, so a task asked for twice is computed once and a
        task redone after a lost worker gives the same answer."""
        return self.client.submit(function, *args, pure=True, key=key)

    def submit_on(self, address: str, function: Callable[..., Any], *args: Any) -> Any:
        """A future for `function(*args)` run by the worker at `address` and no other, each time
        it is asked: a task that uses or changes what that worker holds (the peg count's shares).
        If that worker is lost, the task waits for it forever: watch the workers (`watch`)."""
        return self.client.submit(function, *args, pure=False, workers=[address], allow_other_workers=False)

    def send(self, address: str, value: Any) -> Any:
        """`value` copied to the worker at `address` only, as a future."""
        return self.client.scatter(value, workers=[address], hash=False)

    def scatter(self, value: Any) -> Any:
        """`value` copied once to every worker (the monkey's corpus index, a count's board), as a
        future. Its key is its own, not a hash of the value: a second job on this connection
        scattering an equal value while the first one's copy is being released would otherwise
        name data the scheduler is forgetting, and its tasks would fail with lost dependencies."""
        return self.client.scatter(value, broadcast=True, hash=False)

    def result(self, future: Any) -> Any:
        """The future's value; ClusterLost if the scheduler is gone meanwhile."""
        from distributed import TimeoutError as DaskTimeout

        while True:
            try:
                return future.result(timeout=POLL)
            except (DaskTimeout, TimeoutError):
                self._still_there()
            except Exception as exc:
                if self.client.status not in ("running", "connecting", "newly-created"):
                    raise self._lost() from None
                self.check_workers()  # data lost with a worker: WorkerLost, not the task's error
                if type(exc).__name__ in ("CancelledError", "FutureCancelledError", "CommClosedError"):
                    raise self._lost() from None
                raise

    def wait(self, futures: List[Any]) -> None:
        """Until the futures are done, their values left on the workers; ClusterLost as `result`."""
        from distributed import TimeoutError as DaskTimeout
        from distributed import wait

        while True:
            try:
                with self.client.as_current():  # wait asks for the current client
                    wait(futures, timeout=POLL)
                return
            except (DaskTimeout, TimeoutError):
                self._still_there()

    def results(self, futures: List[Any]) -> List[Any]:
        return [self.result(future) for future in futures]

    def _still_there(self) -> None:
        if self.client.status not in ("running", "connecting", "newly-created"):
            raise self._lost()
        self.check_workers()

    def check_workers(self) -> None:
        """WorkerLost if a worker watched since `watch` is gone (asks the scheduler)."""
        if self.watching is None:
            return
        gone = self.watching - self.members()
        if gone:
            raise WorkerLost(
                f"lost {len(gone)} of the cluster's {len(self.watching)} workers ({', '.join(sorted(gone))})"
            )

    def _lost(self) -> ClusterLost:
        return ClusterLost(
            f"lost the Dask scheduler at {self.address}: the job saved its checkpoint; start the scheduler "
            "again (systemctl start twitterbot-dask-scheduler) and run the same command to continue"
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a client whose scheduler is gone can fail to close: nothing to keep
            self.client.close(timeout=5)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    address: str,
    *,
    tls_dir: Optional[Path] = None,
    timeout: float = 10.0,
    check: bool = True,
    wait_for: float = 0.0,
) -> Cluster:
    """Connect to the scheduler at `address` (tcp://127.0.0.1:8786 on this machine, tls://host:8786
    with certificates from `tls_dir`), check the versions, and return the cluster. `wait_for`:
    seconds to wait for at least one worker."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterUnavailable(INSTALL_HINT) from None
    _quiet_dask_logs()
    security = _security(address, tls_dir)
    try:
        client = Client(address, security=security, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterUnavailable(
            f"cannot reach the Dask scheduler at {address} ({exc}): is it running (systemctl status "
            "twitterbot-dask-scheduler)? Check DASK_SCHEDULER or --cluster, and docs/cluster.md"
        ) from None
    cluster = Cluster(client, address)
    try:
        deadline = time.monotonic() + wait_for
        if not cluster.workers and wait_for >= 1:
            log.info("the Dask scheduler at %s has no workers yet: waiting up to %.0f s for one", address, wait_for)
        while not cluster.workers and time.monotonic() < deadline:
            time.sleep(0.2)
        if not cluster.workers:
            waited = f" after {wait_for:.0f} s" if wait_for >= 1 else ""
            raise ClusterUnavailable(
                f"the Dask scheduler at {address} has no workers{waited}: start some (systemctl start "
                "twitterbot-dask-worker on each worker Pi), then run the command again"
            )
        if check:
            cluster.check_versions()
    except BaseException:
        cluster.close()
        raise
    return cluster


def _quiet_dask_logs() -> None:
    """Dask's own ERROR lines and tracebacks (a reconnect that failed, a worker gone) only with
    --debug or -v: the job's one message says what happened and what to do."""
    if logging.getLogger().isEnabledFor(logging.DEBUG):
        return
    names = ["distributed"] + [name for name in logging.root.manager.loggerDict if name.startswith("distributed.")]
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _security(address: str, tls_dir: Optional[Path]) -> Any:
    """Dask's Security for a tls:// address, from the certificates in `tls_dir`; None for tcp://."""
    if not address.startswith("tls://"):
        return None
    from distributed.security import Security

    if tls_dir is None:
        raise ClusterUnavailable(f"{address} is a TLS address but no certificate folder was given")
    files = {name: tls_dir / file for name, file in TLS_FILES.items()}
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        raise ClusterUnavailable(
            f"{address} needs TLS certificates, and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing: make them once "
            "as docs/cluster.md ('TLS') says and copy them to every node"
        )
    return Security(
        tls_ca_file=str(files["ca"]),
        tls_client_cert=str(files["cert"]),
        tls_client_key=str(files["key"]),
        require_encryption=True,
    )


@functools.lru_cache(maxsize=1)
def steady_allocator() -> bool:
    """In a Dask worker, before a job that makes many arrays of a few MiB: keep freed memory for
    the next task instead of handing it back to the system at once. Whether it could.

    Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536, which stops glibc from
    raising its mmap threshold: every array over 128 KiB is then mapped afresh and unmapped once
    freed, and each of its pages costs a fault when first written. The peg count's pieces (a few
    MiB each, thousands of them) spent a third of the workers' CPU there (measured: 12.9 s
    against 9.6 s). With this, arrays up to 8 MiB come from the heap again and up to 32 MiB of
    freed memory is kept for reuse; larger arrays are still mapped and handed back. glibc
    only (Raspberry Pi OS, Debian); elsewhere nothing changes."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    mmap_threshold, trim_threshold = -3, -1  # glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD
    return bool(mallopt(mmap_threshold, 8 << 20) and mallopt(trim_threshold, 32 << 20))


def add_cluster_flag(parser: Any) -> None:
    """`--cluster ADDRESS` on a long job's command (one wording for every job): it sets
    DASK_SCHEDULER, checked by the same rule."""
    parser.add_setting(
        "--cluster",
        setting="DASK_SCHEDULER",
        metavar="ADDRESS",
        help="run the work on the Dask cluster whose scheduler is at ADDRESS, e.g. tls://10.0.0.2:8786 "
        "(default: DASK_SCHEDULER; empty: this machine). Needs requirements-cluster.txt; see docs/cluster.md",
    )


def cluster_for(args: Any, config: Any) -> Optional[Cluster]:
    """The cluster `--cluster` or DASK_SCHEDULER names, connected and checked; None for this machine."""
    address = config[DASK_SCHEDULER]
    if not address:
        return None
    return connect(address, tls_dir=config.state.cluster, wait_for=FIRST_WORKER)
