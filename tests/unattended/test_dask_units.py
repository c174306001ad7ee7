"""`bot.py systemd --dask`: the Dask scheduler's and workers' units."""

from __future__ import annotations

import pytest

from twitterbot import jobs
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


OPEN = ["tcp://0.0.0.0:8786", "tcp://10.0.0.2:8786", "tcp://pi.local:8786", "tcp://[::]:8786", "10.0.0.2:8786"]
CLOSED = [
    "tcp://127.0.0.1:8786",
    "tcp://localhost:8786",
    "tcp://[::1]:8786",
    "tls://0.0.0.0:8786",
    "tls://10.0.0.2:8786",
]


@pytest.mark.parametrize("address", OPEN)
def test_a_plain_tcp_scheduler_other_machines_reach_is_refused_with_78(home, address: str) -> None:
    home.write_env(DASK_SCHEDULER=address)
    result = home.run("systemd", "--dask")
    assert result.returncode == 78, result.stderr
    assert "DASK_SCHEDULER=" in result.stderr and "tls://" in result.stderr and "docs/cluster.md" in result.stderr
    assert "twitterbot-dask-scheduler.service" not in result.stdout and "Traceback" not in result.stderr


@pytest.mark.parametrize("address", CLOSED)
def test_loopback_and_tls_schedulers_are_written(home, address: str) -> None:
    home.write_env(DASK_SCHEDULER=address)
    result = home.run("systemd", "--dask")
    assert result.returncode == 0, result.stderr
    assert "twitterbot-dask-scheduler.service" in result.stdout


def test_each_unit_comment_says_what_it_really_does(home) -> None:
    home.write_env(DASK_SCHEDULER="tcp://127.0.0.1:8786")
    local = home.run("systemd", "--dask").stdout
    assert "this Pi's loopback: only workers and jobs on this Pi reach it" in local
    assert "a worker on another Pi cannot reach it" in local
    assert "private" not in local and "TLS" not in local
    home.write_env(DASK_SCHEDULER="tls://10.0.0.2:8786")
    shared = home.run("systemd", "--dask").stdout
    assert (
        "with TLS: only a client or worker holding a certificate" in shared
        and "plain connections are refused" in shared
    )
    assert "private" not in shared and "loopback" not in shared


@pytest.mark.parametrize("address", OPEN + CLOSED)
def test_check_and_the_units_agree_on_what_is_open(address: str) -> None:
    parse = jobs.SCHEDULER.convert
    value = parse("DASK_SCHEDULER", address, "the test", None, jobs.CLUSTER.settings["DASK_SCHEDULER"])
    assert jobs.open_scheduler(value) == (address in OPEN)


@pytest.mark.parametrize("address", ["tcp://0.0.0.0:8786", "tcp://192.168.1.20:8786"])
def test_check_names_an_open_scheduler_and_exits_78(home, address: str) -> None:
    home.write_env(DASK_SCHEDULER=address)
    result = home.run("check")
    assert result.returncode == 78, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if "DASK_SCHEDULER" in line)
    assert line.startswith("PROBLEM") and "tls://" in line and "docs/cluster.md" in line


def test_check_says_where_the_jobs_run_with_tls(home) -> None:
    home.write_env(DASK_SCHEDULER="tls://10.0.0.2:8786")
    result = home.run("check")
    assert "ok       the long jobs run on the Dask cluster at tls://10.0.0.2:8786" in result.stdout
