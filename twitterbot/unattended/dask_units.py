"""systemd units for a Dask cluster of Pis: the scheduler on one, a worker on each of the others
(``python bot.py systemd --dask``; docs/cluster.md walks through it).

The address comes from DASK_SCHEDULER. A tls:// address gives units that use the certificates in
BOT_STATE_DIR/cluster (made once, docs/cluster.md "TLS"); tcp:// is for a private network only.
Without DASK_SCHEDULER the scheduler listens on 127.0.0.1: nothing faces any network until
you say which one.
"""

from __future__ import annotations

from typing import Dict
from urllib.parse import urlsplit

from ..settings.loading import Config
from .install import Paths

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
    """The scheduler's and the workers' units, for the address in DASK_SCHEDULER."""
    address = str(config["DASK_SCHEDULER"] or "") or "tcp://127.0.0.1:8786"
    parts = urlsplit(address)
    host, port = parts.hostname or "127.0.0.1", parts.port or 8786
    dask = paths.python.parent / "dask"  # the venv's: the same versions as the bot
    tls = ""
    if parts.scheme == "tls":
        folder = config["BOT_STATE_DIR"] / "cluster"
        tls = (
            f" --tls-ca-file {folder / TLS_FILES['ca']} --tls-cert {folder / TLS_FILES['cert']}"
            f" --tls-key {folder / TLS_FILES['key']}"
        )
    who = f"User={paths.user}\n" if system else ""
    wanted_by = "multi-user.target" if system else "default.target"
    head = (
        "Wants=network-online.target\nAfter=network-online.target\n"
        f"Documentation=file://{paths.project_dir / 'docs' / 'cluster.md'}\n"
    )
    scheduler = f"""[Unit]
Description=twitterbot: the Dask scheduler of the long jobs' cluster ({address})
{head}
[Service]
{who}WorkingDirectory={paths.project_dir}
# The scheduler unpickles the jobs' tasks too: it must import this checkout's twitterbot.
Environment=PYTHONPATH={paths.project_dir}
# Listens on {host}:{port} only: a private network's address, never one the internet reaches.
# The dashboard stays on this Pi (ssh -L 8787:127.0.0.1:8787 pi@{host} to look at it).
ExecStart={dask} scheduler --host {host} --port {port} --dashboard-address 127.0.0.1:8787{tls}
Restart=on-failure
RestartSec=10s
NoNewPrivileges=yes
UMask=0077

[Install]
WantedBy={wanted_by}
"""
    worker = f"""[Unit]
Description=twitterbot: Dask workers of the long jobs' cluster (scheduler {address})
{head}
[Service]
{who}WorkingDirectory={paths.project_dir}
Environment=PYTHONPATH={paths.project_dir}
# {WORKERS_PER_PI} single-threaded workers, each limited to {MEMORY_LIMIT} of this Pi's memory. A Pi 3
# or Zero 2 (1 GB): --nworkers 2 --memory-limit 0.35. No dashboard; the worker listens on the
# interface that reaches the scheduler.
ExecStart={dask} worker {address} --nworkers {WORKERS_PER_PI} --nthreads 1 --memory-limit {MEMORY_LIMIT} --no-dashboard{tls}
Restart=on-failure
RestartSec=10s
NoNewPrivileges=yes
UMask=0077

[Install]
WantedBy={wanted_by}
"""
    return {DASK_SCHEDULER_UNIT: scheduler, DASK_WORKER_UNIT: worker}
