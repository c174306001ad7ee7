"""`bot.py systemd --dask`: the Dask scheduler's and workers' units."""

from __future__ import annotations

from twitterbot.jobs import cluster
from twitterbot.unattended import dask_units


def test_the_units_and_the_client_name_the_same_certificates() -> None:
    assert dask_units.TLS_FILES == cluster.TLS_FILES


def test_tls_units_for_the_scheduler_and_the_workers(home) -> None:
    home.write_env(DASK_SCHEDULER="tls://10.0.0.2:8786")
    result = home.run("systemd", "--dask")
    assert result.returncode == 0, result.stderr
    scheduler = result.stdout.split("# ---- twitterbot-dask-scheduler.service ----")[1].split("# ----")[0]
    worker = result.stdout.split("# ---- twitterbot-dask-worker.service ----")[1]
    assert "scheduler --host 10.0.0.2 --port 8786 --dashboard-address 127.0.0.1:8787 --tls-ca-file " in scheduler
    assert "worker tls://10.0.0.2:8786 --nworkers 4 --nthreads 1 --memory-limit 0.2 --no-dashboard" in worker
    assert "cluster/node-key.pem" in worker and "PYTHONPATH=" in worker


def test_without_an_address_the_scheduler_listens_on_loopback(home) -> None:
    result = home.run("systemd", "--dask")
    assert result.returncode == 0, result.stderr
    assert "scheduler --host 127.0.0.1 --port 8786" in result.stdout
    assert "--tls" not in result.stdout
