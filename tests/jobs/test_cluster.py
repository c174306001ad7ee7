"""The long jobs on a Dask cluster: a LocalCluster of two worker processes on 127.0.0.1.

The figures must be exactly those of one machine, whatever happens to the cluster meanwhile: a
worker killed mid-job, the scheduler stopped mid-job (exit 75, a checkpoint, and the same
command continues), nodes of other versions (refused), and no extra installed (exit 69).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import pytest
from conftest import REPO

from twitterbot.errors import ExitStatus
from twitterbot.jobs.cluster import Cluster, ClusterMismatch, connect, node_versions

distributed = pytest.importorskip(
    "distributed", reason="NO DASK: the cluster extra (requirements-cluster.txt) is NOT tested here"
)

VERSE = (
    "to be or not to be that is the question whether tis nobler in the mind to suffer the slings and "
    "arrows of outrageous fortune or to take arms against a sea of troubles and by opposing end them"
)
# OEIS A112738: English board positions from which the centre can still be reached, per level.
A112738 = [1, 1, 2, 8, 38, 164, 635, 2089, 6174, 16020, 35749, 68326, 112788, 162319, 204992, 230230]
A112738 += list(reversed(A112738))


@contextlib.contextmanager
def local_cluster():
    """Two workers; this process's environment as it was once they are gone (starting them sets
    Dask's variables in it, MALLOC_TRIM_THRESHOLD_=65536 among them, which every later test's
    subprocesses would otherwise inherit)."""
    saved = dict(os.environ)
    try:
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit="1GiB",
            silence_logs=40,
        ) as cluster:
            yield cluster
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def two_workers():
    with local_cluster() as cluster:
        yield cluster.scheduler_address


def monkey_home(home, *extra: str):
    verse = home.path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    return ("monkey", "--target", str(verse), "--seed", "7", "--no-post", *extra)


def saved(home, name: str) -> dict:
    return json.loads((home.path / "state" / f"monkey-{name}.json").read_text())


def test_the_monkey_on_a_cluster_finds_the_records_of_one_core(home, two_workers: str) -> None:
    common = monkey_home(home, "--keystrokes", "120M")
    spread = home.run(*common, "--cluster", two_workers, "--name", "spread", timeout=120)
    assert spread.returncode == 0, spread.stderr
    assert "on a cluster of 2 workers" in spread.stdout
    alone = home.run(*common, "--name", "alone", timeout=120)
    assert alone.returncode == 0, alone.stderr
    assert saved(home, "spread")["records"] == saved(home, "alone")["records"]
    assert saved(home, "spread")["simulation"] == saved(home, "alone")["simulation"]
    assert len(saved(home, "alone")["records"]) >= 6


def test_a_worker_killed_mid_job_changes_nothing(two_workers: str, tmp_path: Path) -> None:
    from twitterbot.jobs.monkey.chunks import ChunkedSimulation, ClusterTyping, LocalTyping
    from twitterbot.jobs.monkey.setup import Options, prepare
    from twitterbot.jobs.monkey.simulation import NewRecord, Round

    verse = tmp_path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    setup = prepare(Options(target=verse), tmp_path)
    chunk, budget = 1 << 22, 24 << 22  # short tasks: 12 of them, two chunks each
    with connect(two_workers) as cluster:
        typing = ClusterTyping(cluster, setup.matcher, 27, task_keys=2 * chunk)
        simulation = ChunkedSimulation(setup.matcher, key_count=27, seed=11, chunk=chunk, typing=typing)
        pids = cluster.client.run(os.getpid)
        spread, killed = [], False
        for event in simulation.run(keystrokes=budget):
            if isinstance(event, NewRecord):
                spread.append(event)
            elif isinstance(event, Round) and not killed:
                os.kill(next(iter(pids.values())), signal.SIGKILL)  # its pieces are typed again elsewhere
                killed = True
        assert killed and simulation.typed == budget
    alone = ChunkedSimulation(setup.matcher, key_count=27, seed=11, chunk=chunk, typing=LocalTyping(setup.matcher, 27))
    assert [event for event in alone.run(keystrokes=budget) if isinstance(event, NewRecord)] == spread


def test_the_scheduler_stopped_mid_job_exits_75_and_the_same_command_continues(home) -> None:
    common = monkey_home(home, "--keystrokes", "1G")
    with local_cluster() as cluster:
        process = home.start(*common, "--cluster", cluster.scheduler_address)
        assert "on a cluster of 2 workers" in process.stdout.readline()
        process.stdout.readline()  # a record: the typing is under way
    stdout, stderr = process.communicate(timeout=120)  # the cluster is closed: scheduler and workers
    assert process.returncode == ExitStatus.TEMPORARY_FAILURE, stdout + stderr
    assert "lost the Dask scheduler" in stderr and "run the same command to continue" in stderr
    assert 0 < saved(home, "monkey")["simulation"]["typed"] < 1 << 30
    with local_cluster() as cluster:
        resumed = home.run(*common, "--cluster", cluster.scheduler_address, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert "continuing after" in resumed.stderr
    whole = home.run(*common, "--name", "whole", timeout=180)
    assert whole.returncode == 0, whole.stderr
    assert saved(home, "monkey")["records"] == saved(home, "whole")["records"]
    assert saved(home, "monkey")["simulation"] == saved(home, "whole")["simulation"]


def test_the_english_count_on_a_cluster_is_exact(two_workers: str) -> None:
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.spread import count_on_cluster

    finishable: list = []
    with connect(two_workers) as cluster:
        levels = list(count_on_cluster(builtin("english"), cluster, finishable=finishable))
    assert sum(level.positions for level in levels) == 23_475_688  # OEIS A112737, summed
    assert levels[-1].solutions == 40_861_647_040_079_968
    assert sum(level.games for level in levels) == 577_116_156_815_309_849_672
    assert finishable == A112738


def test_a_count_of_many_rounds_is_exact_and_asks_for_its_workers_only_now_and_then(
    two_workers: str, monkeypatch
) -> None:
    """Slices of one position make every level of many rounds (each round adding up the children of
    the round before, a share with nothing left to expand, the last round only adding up); the figures are
    still one process's. The scheduler is asked for the workers once every POLL seconds, not
    once a round: a round-trip a round was CPU on the cores the workers count on."""
    import time

    from twitterbot.jobs import cluster as cluster_module
    from twitterbot.jobs.pegs import spread
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.count import count_levels

    monkeypatch.setattr(spread, "SLICE", 1)
    board = builtin("triangle6")
    rounds, asked = [], []
    with connect(two_workers) as cluster:
        real = cluster.check_workers

        def check_workers() -> None:
            asked.append(1)
            real()

        monkeypatch.setattr(cluster, "check_workers", check_workers)
        began = time.monotonic()
        levels = list(spread.count_on_cluster(board, cluster, progress=rounds.append))
        seconds = time.monotonic() - began
    alone = list(count_levels(board))
    assert [(lv.positions, lv.sequences, lv.solutions, lv.games) for lv in levels] == [
        (lv.positions, lv.sequences, lv.solutions, lv.games) for lv in alone
    ]
    assert len(rounds) > 100
    assert len(asked) <= seconds / cluster_module.POLL + 2


def test_a_count_on_the_cluster_keeps_to_the_start_s_symmetries(two_workers: str) -> None:
    """The triangle from a2, which no symmetry keeps: 2,377 positions, as on one machine."""
    from twitterbot.jobs.pegs.board import builtin, with_empty_hole
    from twitterbot.jobs.pegs.spread import count_on_cluster

    with connect(two_workers) as cluster:
        levels = list(count_on_cluster(with_empty_hole(builtin("triangle"), "a2"), cluster))
    assert sum(level.positions for level in levels) == 2377 and levels[-1].solutions == 14880


def test_one_client_counts_twice_in_a_row(two_workers: str) -> None:
    """The board sent to the workers is the count's own: a second count on the same connection
    (a long-lived process) must not ask for the first one's copy, gone with it."""
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.spread import count_on_cluster

    with connect(two_workers) as cluster:
        first = [level.positions for level in count_on_cluster(builtin("triangle6"), cluster)]
        second = [level.positions for level in count_on_cluster(builtin("triangle6"), cluster)]
    assert first == second and sum(first) > 0


def test_the_workers_are_asked_of_the_scheduler_not_the_clients_cache(two_workers: str, monkeypatch) -> None:
    """Dask's client refreshes its cached scheduler info every few seconds with a copy that lists
    no workers; read then, every worker of a count looked lost. As if that refresh always won:"""
    with connect(two_workers) as cluster:
        # The module's cluster: a test before this one kills a worker, which its nanny restarts.
        cluster.client.wait_for_workers(2, timeout=60)

        async def refreshed_without_workers(n_workers: int = 0) -> None:
            cluster.client._scheduler_identity = {"workers": {}}

        monkeypatch.setattr(cluster.client, "_update_scheduler_info", refreshed_without_workers)
        watched = cluster.watch()
        assert len(watched) == 2 and cluster.workers == 2
        cluster.check_workers()  # no WorkerLost


@contextlib.contextmanager
def in_process_cluster():
    """A LocalCluster of two workers in this process (quick to start), whose scheduler object a
    test can reach: `.scheduler.handlers` answer Dask's RPC."""
    saved = dict(os.environ)
    try:
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
        ) as dask:
            yield dask
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_scheduler_whose_identity_takes_no_arguments_is_asked_without_them() -> None:
    """distributed 2024.8.0, the last for Python 3.9 (Raspberry Pi OS Bullseye), has `identity()`
    with no n_workers (2025.4.0 added it): asked for it, every cluster command ended in exit 1 with
    "identity() got an unexpected keyword argument 'n_workers'". The scheduler answers as 2024.8.0's
    does, through Dask's own RPC, once the (newer) client is connected."""
    with in_process_cluster() as dask, connect(dask.scheduler_address, check=False) as cluster:
        identity = dask.scheduler.identity

        def identity_of_2024() -> dict:
            answer = identity()
            answer.pop("n_workers", None)  # 2024.8.0 does not say how many it has: it lists them all
            return answer

        dask.scheduler.handlers["identity"] = identity_of_2024
        assert len(cluster.watch()) == 2 and cluster.workers == 2
        cluster.check_workers()


def test_a_scheduler_that_lists_fewer_workers_than_it_has_is_asked_for_them_all() -> None:
    """A scheduler whose identity lists only some workers by default (as Dask's client-side cache
    does, five) but says how many it has is asked again for every one of them."""
    with in_process_cluster() as dask, connect(dask.scheduler_address, check=False) as cluster:
        identity = dask.scheduler.identity

        def identity_listing_one(n_workers: int = 1) -> dict:
            answer = identity()  # every worker, on every version
            listed = list(answer["workers"].items())
            shown = listed if n_workers == -1 else listed[:n_workers]
            return {**answer, "n_workers": len(listed), "workers": dict(shown)}

        dask.scheduler.handlers["identity"] = identity_listing_one
        assert cluster.workers == 2


def test_a_checkpoint_of_other_shares_resumes_exactly(two_workers: str, tmp_path: Path) -> None:
    """A checkpoint cut otherwise (0.1.0's shares: more of them, another hash) is read, its shares
    handed to their owners by today's hash, and the count goes on to the same figures."""
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.count import count_levels, load_checkpoint
    from twitterbot.jobs.pegs.spread import count_on_cluster

    board = builtin("english")
    stopped = count_levels(board, checkpoint=tmp_path / "one.npz")
    for _ in range(11):
        next(stopped)
    stopped.close()
    history, (positions, counts, checks) = load_checkpoint(tmp_path / "one.npz", board)
    folder = tmp_path / "pegs-count-english.cluster"
    folder.mkdir()
    names = []
    for share in range(5):  # every fifth position: shares no hash of today's would make
        names.append(f"level-{len(history) - 1}-share-{share}.npz")
        np.savez(folder / names[-1], positions=positions[share::5], counts=counts[share::5], checks=checks[share::5])
    levels = [[lv.jumps, lv.positions, str(lv.sequences), str(lv.solutions), str(lv.games)] for lv in history]
    (folder / "levels.json").write_text(json.dumps({"start": board.start, "shares": names, "levels": levels}))
    with connect(two_workers) as cluster:
        resumed = list(count_on_cluster(board, cluster, checkpoint=folder))
    assert [level.jumps for level in resumed] == list(range(32))
    assert sum(level.positions for level in resumed) == 23_475_688
    assert resumed[-1].solutions == 40_861_647_040_079_968
    assert sum(level.games for level in resumed) == 577_116_156_815_309_849_672


def test_pegs_count_on_a_cluster_prints_what_one_machine_prints(home, two_workers: str) -> None:
    spread = home.run("pegs", "count", "triangle6", "--no-post", "--cluster", two_workers, timeout=120)
    alone = home.run("pegs", "count", "triangle6", "--no-post", timeout=120)
    assert spread.returncode == alone.returncode == 0, spread.stderr + alone.stderr

    assert _figures(spread.stdout) == _figures(alone.stdout)
    assert not list((home.path / "state").glob("pegs-count-*"))  # finished: no checkpoint left


def _figures(text: str) -> list:
    """A count's table, without the seconds each level took."""
    return [line.split(" (")[0] for line in text.splitlines()]


def test_nodes_of_other_versions_are_refused() -> None:
    class Client:
        def run(self, function):
            return {"tcp://10.0.0.3:40000": {**node_versions(), "numpy": "1.26.4"}}

        def run_on_scheduler(self, function):
            return node_versions()

    with pytest.raises(
        ClusterMismatch, match=r"tcp://10\.0\.0\.3:40000 has numpy 1\.26\.4, this machine " + np.__version__
    ):
        Cluster(Client(), "tcp://10.0.0.2:8786").check_versions()


def _free_address() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def _dask(role: str, address: str, cwd: Path, pythonpath: Optional[Path] = None) -> subprocess.Popen:
    """A scheduler or a worker started as a user starts one by hand (dask-scheduler, dask-worker),
    seeing the bot's code only with `pythonpath`."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    if role == "scheduler":
        port = address.rsplit(":", 1)[1]
        arguments = ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"]
    else:
        arguments = ["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard", "--no-nanny"]
    return subprocess.Popen(
        [sys.executable, "-m", *arguments], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


def test_a_command_waits_for_the_first_worker_and_without_one_exits_69(home, tmp_path: Path) -> None:
    """Workers join a few seconds after their scheduler answers (at boot, after a restart): a job
    started in that moment waits for one (FIRST_WORKER seconds at most) instead of failing."""
    address = _free_address()
    scheduler = _dask("scheduler", address, tmp_path, pythonpath=REPO)
    worker = None
    try:
        alone = home.run("pegs", "count", "triangle6", "--no-post", "--cluster", address, timeout=120)
        assert alone.returncode == ExitStatus.UNAVAILABLE == 69, alone.stderr
        assert f"the Dask scheduler at {address} has no workers after 15 s: start some" in alone.stderr
        waiting = home.start("pegs", "count", "triangle6", "--no-post", "--cluster", address)
        said = iter(waiting.stderr.readline, "")
        assert any("has no workers yet: waiting up to 15 s for one" in line for line in said)
        worker = _dask("worker", address, REPO, pythonpath=REPO)  # only now
        stdout, stderr = waiting.communicate(timeout=120)
    finally:
        _stop(*(process for process in (worker, scheduler) if process is not None))
    assert waiting.returncode == 0, stderr
    local = home.run("pegs", "count", "triangle6", "--no-post", "--workers", "1")
    assert local.returncode == 0 and _figures(stdout) == _figures(local.stdout), local.stderr


def test_a_scheduler_without_the_bots_code_is_refused_with_exit_78(home, tmp_path: Path) -> None:
    """A scheduler started by hand outside the checkout cannot unpickle the bot's tasks: one
    message naming it and what to do, not Dask's "Error during deserialization" as exit 1."""
    address = _free_address()
    scheduler = _dask("scheduler", address, tmp_path)
    worker = _dask("worker", address, REPO, pythonpath=REPO)
    try:
        # The worker must have joined before the bot asks, or the bot rightly says "no workers"
        # (exit 69): on a slow machine the worker's start-up lost that race.
        with distributed.Client(address, timeout=60) as watcher:
            watcher.wait_for_workers(1, timeout=60)
        result = home.run("pegs", "count", "triangle6", "--no-post", "--cluster", address, timeout=120)
    finally:
        _stop(worker, scheduler)
    assert result.returncode == ExitStatus.CONFIG_ERROR, result.stderr
    assert f"the scheduler of {address} cannot run this bot's code" in result.stderr
    assert "PYTHONPATH" in result.stderr and "Traceback" not in result.stderr


def test_without_the_extra_cluster_says_how_to_install_it(home, tmp_path: Path) -> None:
    hidden = tmp_path / "no-dask"
    hidden.mkdir()
    (hidden / "distributed.py").write_text("raise ImportError('the cluster extra is not installed')\n")
    result = home.run_process(
        *monkey_home(home, "--keystrokes", "1M"), "--cluster", "tcp://127.0.0.1:9", env={"PYTHONPATH": str(hidden)}
    )
    assert result.returncode == ExitStatus.UNAVAILABLE == 69, result.stderr
    assert "pip install -r requirements-cluster.txt" in result.stderr


def test_a_run_without_cluster_imports_no_dask(home) -> None:
    code = (
        "import sys; from twitterbot.cli import main; status = main(sys.argv[1:]); "
        "print('dask imported' if {'dask', 'distributed'} & set(sys.modules) else 'no dask'); sys.exit(status)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--env-file", str(home.env_file), *monkey_home(home, "--keystrokes", "1M")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "no dask"


def test_batches_on_a_cluster_print_what_one_machine_prints_in_input_order(home, two_workers: str) -> None:
    batch = home.path / "boards.txt"
    batch.write_text("triangle\nenglish\n# impossible, by position classes:\nfrench\ntriangle c3\n")
    spread = home.run("pegs", "solve", "--batch", str(batch), "--no-post", "--cluster", two_workers, timeout=120)
    alone = home.run("pegs", "solve", "--batch", str(batch), "--no-post", timeout=120)
    assert spread.returncode == alone.returncode == 0, spread.stderr + alone.stderr

    def verdicts(text: str) -> list:
        """The boards, their order and each verdict with its number of jumps. Which solution is
        printed is not fixed: the searches take turns by processor time and the first to finish
        wins, so on a busy machine another order may win (seen in a chroot without a compiler)."""
        return [
            line.split(":")[0] if line.startswith("Jumps (") else line
            for line in text.splitlines()
            if line.strip(" XO")
        ]

    assert verdicts(spread.stdout) == verdicts(alone.stdout)
    assert "Jumps (13)" in verdicts(spread.stdout) and "Jumps (31)" in verdicts(spread.stdout)
    headers = [line for line in spread.stdout.splitlines() if line.startswith("== ")]
    assert headers == ["== 1/4: triangle ==", "== 2/4: english ==", "== 3/4: french ==", "== 4/4: triangle =="]

    folder = home.path / "puzzles"
    folder.mkdir()
    example = home.run("puzzle", "hidoku", "--show-example").stdout
    for name in ("b.txt", "a.txt"):
        (folder / name).write_text(example)
    spread = home.run("puzzle", "hidoku", "--batch", str(folder), "--no-post", "--cluster", two_workers, timeout=120)
    alone = home.run("puzzle", "hidoku", "--batch", str(folder), "--no-post", timeout=120)
    assert spread.returncode == alone.returncode == 0, spread.stderr + alone.stderr

    def untimed(text: str) -> list:
        return [line.split(" in ")[0] for line in text.splitlines()]

    assert untimed(spread.stdout) == untimed(alone.stdout)
    assert [line for line in spread.stdout.splitlines() if line.startswith("== ")] == [
        "== 1/2: a.txt ==",
        "== 2/2: b.txt ==",
    ]


def test_a_worker_killed_mid_count_changes_no_figure(two_workers: str, tmp_path: Path) -> None:
    """The killed worker's shares are gone: the count goes on from its checkpoint, exactly."""
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.spread import count_on_cluster

    checkpoint = tmp_path / "pegs-count-english.cluster"
    with connect(two_workers) as cluster:
        pids = cluster.client.run(os.getpid)
        levels = []
        for level in count_on_cluster(builtin("english"), cluster, checkpoint=checkpoint):
            levels.append(level)
            if level.jumps == 12:
                os.kill(next(iter(pids.values())), signal.SIGKILL)
        assert pids != cluster.client.run(os.getpid)  # one of them is a new process
    assert [level.jumps for level in levels] == list(range(32))  # each level once, in order
    assert sum(level.positions for level in levels) == 23_475_688
    assert levels[-1].solutions == 40_861_647_040_079_968
    assert sum(level.games for level in levels) == 577_116_156_815_309_849_672
