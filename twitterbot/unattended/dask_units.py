"""systemd units for a Dask cluster of Pis: the scheduler on one, a worker on each of the others
(``python bot.py systemd --dask``; docs/cluster.md walks through it).

The address comes from DASK_SCHEDULER. A tls:// address gives units that use the certificates in
BOT_STATE_DIR/cluster (made once, docs/cluster.md "TLS"). A tcp:// address must be a loopback one:
a scheduler runs the pickled code it is sent, so a plain one that other machines reach is anyone's
to run programs on, and is refused (`ConfigError`, exit 78). Without DASK_SCHEDULER the
scheduler listens on 127.0.0.1: nothing faces any network until you say which one, with TLS.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Dict, NamedTuple
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..settings.loading import Config
from ..settings.parsers import is_loopback
from .install import Paths, unit_text, unit_uri

__all__ = ["DASK_SCHEDULER_UNIT", "DASK_WORKER_UNIT", "dask_units"]

DASK_SCHEDULER_UNIT, DASK_WORKER_UNIT = "twitterbot-dask-scheduler.service", "twitterbot-dask-worker.service"
# A Raspberry Pi 4 or 5 (4 cores): one single-threaded worker per core (the tasks hold the GIL),
# each allowed a fifth of the memory, so four leave a fifth for the system. Dask pauses a worker at
# 80% of its limit and restarts it at 95%, rather than let the kernel's OOM killer choose.
WORKERS_PER_PI = 4
# The certificates in BOT_STATE_DIR/cluster: the names jobs/cluster.py's TLS_FILES gives the client
# (unattended/ may not import jobs/; tests/unattended/test_dask_units.py checks they agree).
TLS_FILES = {"ca": "ca.pem", "cert": "node.pem", "key": "node-key.pem"}
MEMORY_LIMIT = "0.2"


def dask_units(config: Config, paths: Paths, *, system: bool) -> Dict[str, str]:
    """The scheduler's and the workers' units, for the address in DASK_SCHEDULER; ConfigError for
    a plain tcp:// address off loopback."""
    address = str(config["DASK_SCHEDULER"] or "") or "tcp://127.0.0.1:8786"
    parts = urlsplit(address)
    host, port = parts.hostname or "127.0.0.1", parts.port or 8786
    local = is_loopback(host)
    if parts.scheme == "tcp" and not local:
        raise ConfigError(
            f"DASK_SCHEDULER={address} would give a scheduler that other machines reach over plain tcp://,"
            " unencrypted and with no password, and a Dask scheduler runs whatever pickled code it is sent:"
            " anyone on that network could run programs on every Pi of the cluster. Make the certificates as"
            " docs/cluster.md ('TLS') says and set DASK_SCHEDULER=tls://"
            f"{_shown(host)}:{port}, or use tcp://127.0.0.1:{port} for this Pi alone"
        )
    dask = unit_text(shlex.quote(str(paths.python.parent / "dask")))  # the venv's: the same versions as the bot
    tls = ""
    if parts.scheme == "tls":
        folder = config.state.cluster
        tls = unit_text(
            f" --tls-ca-file {shlex.quote(str(folder / TLS_FILES['ca']))}"
            f" --tls-cert {shlex.quote(str(folder / TLS_FILES['cert']))}"
            f" --tls-key {shlex.quote(str(folder / TLS_FILES['key']))}"
        )
    who = f"User={paths.user}\n" if system else ""
    head = (
        "Wants=network-online.target\nAfter=network-online.target\n"
        f"Documentation={unit_uri(paths.project_dir / 'docs' / 'cluster.md')}\n"
    )
    common = _Common(paths, who, "multi-user.target" if system else "default.target", head)
    return {
        DASK_SCHEDULER_UNIT: _scheduler_unit(common, address, host, port, dask, tls, local),
        DASK_WORKER_UNIT: _worker_unit(common, address, dask, tls, local),
    }


class _Common(NamedTuple):
    paths: Paths
    who: str  # User=..., for a system unit
    wanted_by: str
    head: str  # the [Unit] lines both share


def _environment(name: str, path: Path) -> str:
    """NAME=path as Environment= holds it: in double quotes when the path holds a space, % doubled."""
    value = unit_text(f"{name}={path}")
    return f'"{value}"' if " " in value else value


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _scheduler_unit(common: _Common, address: str, host: str, port: int, dask: Path, tls: str, local: bool) -> str:
    if local:
        reach = f"# Listens on {_shown(host)}:{port}, this Pi's loopback: only workers and jobs on this Pi reach it."
    else:
        reach = (
            f"# Listens on {_shown(host)}:{port} with TLS: only a client or worker holding a certificate of the cluster's\n"
            "# authority (BOT_STATE_DIR/cluster) may connect; plain connections are refused. Whoever may connect\n"
            "# runs code on every node: never forward this port on a router."
        )
    return f"""[Unit]
Description=twitterbot: the Dask scheduler of the long jobs' cluster ({address})
{common.head}
[Service]
{common.who}WorkingDirectory={unit_text(str(common.paths.project_dir))}
# The scheduler unpickles the jobs' tasks too: it must import this checkout's twitterbot.
Environment={_environment("PYTHONPATH", common.paths.project_dir)}
{reach}
# The dashboard stays on this Pi (ssh -L 8787:127.0.0.1:8787 pi@{_shown(host)} to look at it).
ExecStart={dask} scheduler --host {host} --port {port} --dashboard-address 127.0.0.1:8787{tls}
Restart=on-failure
RestartSec=10s
NoNewPrivileges=yes
UMask=0077

[Install]
WantedBy={common.wanted_by}
"""


def _worker_unit(common: _Common, address: str, dask: Path, tls: str, local: bool) -> str:
    if local:
        reach = f"# Connects to the scheduler on this Pi ({address}); a worker on another Pi cannot reach it."
    else:
        reach = (
            f"# Connects to the scheduler at {address} with TLS and the cluster's certificate, and listens, with TLS\n"
            "# too, on the interface that reaches it, for the scheduler and the other workers."
        )
    return f"""[Unit]
Description=twitterbot: Dask workers of the long jobs' cluster (scheduler {address})
{common.head}
[Service]
{common.who}WorkingDirectory={unit_text(str(common.paths.project_dir))}
Environment={_environment("PYTHONPATH", common.paths.project_dir)}
# {WORKERS_PER_PI} single-threaded workers, each limited to {MEMORY_LIMIT} of this Pi's memory. A Pi 3
# or Zero 2 (1 GB): --nworkers 2 --memory-limit 0.35. No dashboard.
{reach}
ExecStart={dask} worker {address} --nworkers {WORKERS_PER_PI} --nthreads 1 --memory-limit {MEMORY_LIMIT} --no-dashboard{tls}
Restart=on-failure
RestartSec=10s
NoNewPrivileges=yes
UMask=0077

[Install]
WantedBy={common.wanted_by}
"""
