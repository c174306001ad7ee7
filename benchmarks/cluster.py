"""The long jobs on a Dask cluster (issue 28): what two workers buy over one.

    .venv/bin/python benchmarks/cluster.py            # about three minutes on a PC
    .venv/bin/python benchmarks/cluster.py --quick    # the monkey and the task overhead only
    .venv/bin/python benchmarks/cluster.py --french   # and pegs count french: an hour, 5 GiB
    .venv/bin/python benchmarks/cluster.py --no-monkey --count-rounds 1   # the English count, once each

Everything runs on this machine: LocalClusters of one and two single-threaded worker processes
on 127.0.0.1 (a cluster of Pis adds the network, about a millisecond a task on a LAN).

- monkey: keys per second of typing at a short text, anywhere mode, by this process alone (what
  `monkey --workers 1` does: one core, the compiled kernel), by one Dask worker and by two, taken
  in turns, after a warm-up that builds each worker's kernel and sends it the index (targets: a
  worker at least 0.9 of this process, two at least 1.7 times it, on two free cores);
- pegs count english: one process (numpy, and the compiled kernel on one thread and on two with
  `--workers 2`) against two Dask workers, best of --count-rounds each (taken in turn): wall time
  (against the best one-thread run, and paired: the median of each round's ratio), CPU
  time of every process, and each process's peak memory, with the ratios to the one-thread
  process (targets on 2 cores: two Dask workers at most 0.75 of its time), both as the whole
  process and as what the count added to it (each process starts with 65-90 MiB of Python, numpy,
  this package and, in a worker, Dask); for a cluster, where its CPU went: the count's own tasks,
  the rest of the workers (Dask), the client and scheduler, and what the target leaves them;
- with --french, the same for the French board, the board a cluster is for (374 million
  positions), and four Dask workers (targets: `--workers 2` at most 0.6 of the time, two Dask
  workers 0.65 of the time and 0.55 of the peak, four 0.3 of the peak);
- the overhead of a task: many empty tasks at once (throughput) and one at a time (latency).

The figures are in docs/cluster.md. Needs requirements-cluster.txt.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from distributed import LocalCluster  # noqa: E402

from twitterbot.jobs.cluster import connect  # noqa: E402
from twitterbot.jobs.monkey.chunks import CHUNK, TASK_KEYS, ChunkedSimulation, ClusterTyping, LocalTyping  # noqa: E402
from twitterbot.jobs.monkey.kernel import load  # noqa: E402
from twitterbot.jobs.monkey.setup import Options, prepare  # noqa: E402

# The environment as it was before any LocalCluster: starting one sets Dask's variables in this
# process's environment (MALLOC_TRIM_THRESHOLD_=65536 among them), and a one-process count
# started after it would inherit them: the numpy count then took 89 s instead of 31 s.
PLAIN_ENVIRONMENT = dict(os.environ)

# The targets for the wall time of a count on a cluster, as a ratio to one thread's.
TARGETS = {("english", "2 Dask workers"): 0.75, ("french", "2 Dask workers"): 0.65}

VERSE = (
    "to be or not to be that is the question whether tis nobler in the mind to suffer the slings and "
    "arrows of outrageous fortune or to take arms against a sea of troubles and by opposing end them"
)


def cluster_of(workers: int, memory_limit: str = "2GiB") -> LocalCluster:
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=memory_limit,
        silence_logs=40,
    )


def monkey_rates(chunks: int, folder: Path, rounds: int) -> tuple:
    """Keys per second typed by this process alone (`monkey --workers 1`: one core, the compiled
    kernel), by one warm Dask worker and by two, `rounds` runs each taken in turns, so that load
    from other work falls on all three alike: per second of wall time, and per CPU second of the
    processes that type (what a core buys, whatever else the machine runs)."""
    verse = folder / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    setup = prepare(Options(target=verse), folder)
    kernel = load(folder / "kernel")
    rates: dict = {"local": [], 1: [], 2: []}
    per_cpu: dict = {"local": [], 1: [], 2: []}
    with cluster_of(1) as one, cluster_of(2) as two:
        clusters = {1: connect(one.scheduler_address), 2: connect(two.scheduler_address)}
        typings = {n: ClusterTyping(cluster, setup.matcher, setup.keyboard.count) for n, cluster in clusters.items()}
        typings["local"] = LocalTyping(setup.matcher, setup.keyboard.count, kernel)
        for workers, typing in typings.items():  # builds each worker's kernel, sends it the index
            warm = 2 * (workers if workers != "local" else 1) * TASK_KEYS
            for _ in ChunkedSimulation(setup.matcher, key_count=27, seed=1, typing=typing).run(keystrokes=warm):
                pass
        for seed in range(rounds):
            for workers, typing in typings.items():
                simulation = ChunkedSimulation(setup.matcher, key_count=27, seed=2 + seed, typing=typing)
                cpu = typing_cpu(clusters.get(workers))
                started = time.perf_counter()
                for _ in simulation.run(keystrokes=chunks * CHUNK):
                    pass
                rates[workers].append(chunks * CHUNK / (time.perf_counter() - started))
                per_cpu[workers].append(chunks * CHUNK / (typing_cpu(clusters.get(workers)) - cpu))
        for cluster in clusters.values():
            cluster.close()
    return rates, per_cpu


def typing_cpu(cluster) -> float:
    """CPU seconds so far of whoever types: this process, or every worker of `cluster` together."""
    if cluster is None:
        return time.process_time()
    used = cluster.client.run(lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))
    return sum(used.values())


def task_overhead() -> tuple:
    with cluster_of(2) as local, connect(local.scheduler_address) as cluster:
        client = cluster.client
        many = 2000
        started = time.perf_counter()
        client.gather(client.map(abs, range(many), pure=False))
        throughput = (time.perf_counter() - started) / many
        started = time.perf_counter()
        for number in range(200):
            client.submit(abs, number, pure=False).result()
        latency = (time.perf_counter() - started) / 200
        return throughput, latency


ONE_PROCESS = """
import resource, sys, time
sys.path.insert(0, {repo!r})
from twitterbot.jobs.pegs.board import builtin
from twitterbot.jobs.pegs.count import count_levels
from twitterbot.jobs.pegs.kernel import load
kernel = load(None) if {compiled} else None
before = resource.getrusage(resource.RUSAGE_SELF)
started = time.perf_counter()
total = sum(level.positions for level in count_levels(builtin({board!r}), kernel=kernel, workers={workers}))
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
print(total, time.perf_counter() - started, cpu, before.ru_maxrss, after.ru_maxrss)
"""


@dataclass
class Run:
    """One count: its wall and CPU seconds (all processes), and each process's peak (MiB)."""

    total: int
    wall: float
    cpu: float
    peaks: List[float]
    starts: List[float]  # each process's peak before it counted
    in_tasks: float = 0.0  # on a cluster: the CPU of the count's tasks themselves, all workers
    here: float = 0.0  # on a cluster: the CPU of this process (the client and the scheduler)
    sent: Tuple[int, int, int] = (0, 0, 0)  # on a cluster: bytes and pieces of children handed over, rounds

    @property
    def peak(self) -> float:
        return max(self.peaks)

    @property
    def added(self) -> float:
        """What the count added to the largest process."""
        largest = self.peaks.index(self.peak)
        return self.peak - self.starts[largest]


def one_process_count(board: str, compiled: bool, workers: int = 1) -> Run:
    """`count_levels` in a process of its own, with `workers` threads."""
    code = ONE_PROCESS.format(
        repo=str(Path(__file__).resolve().parents[1]), compiled=compiled, board=board, workers=workers
    )
    words = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=PLAIN_ENVIRONMENT
    ).stdout.split()
    return Run(int(words[0]), float(words[1]), float(words[2]), [int(words[4]) / 1024], [int(words[3]) / 1024])


def _usage() -> Tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _workers_cpu_since(cluster, before: Dict[str, Tuple[float, float]]) -> float:
    """The CPU seconds every worker of `cluster` used since `before` (their `_usage` then)."""
    after = cluster.client.run(_usage)
    return sum(after[w][0] - before[w][0] for w in before)


def _time_tasks() -> int:
    """Run on each worker: the count's task functions timed (the CPU of the thread running them),
    so that the count's own work can be told from what Dask spends around it. A task names its
    function by module and name, so the worker unpickles these wrappers instead."""
    import functools

    from twitterbot.jobs.pegs import spread

    tally = spread.__dict__.setdefault("_benchmark", [0.0, 0, 0, 0])  # CPU, bytes, pieces, rounds
    for name in ("_open", "_round", "_finish"):
        task = getattr(spread, name)
        if getattr(task, "__wrapped__", None) is None:

            @functools.wraps(task)
            def wrapper(*args, _task=task, **kwargs):
                if _task.__name__ == "_round":  # (name, share, jumps, low, high, before, *sent)
                    pieces = [piece for sent in args[6:] for piece in sent]
                    tally[1] += sum(column.nbytes for piece in pieces for column in piece)
                    tally[2] += len(pieces)
                    tally[3] += 1
                started = time.thread_time()
                try:
                    return _task(*args, **kwargs)
                finally:
                    tally[0] += time.thread_time() - started

            setattr(spread, name, wrapper)
    return 0


def _tally() -> list:
    from twitterbot.jobs.pegs import spread

    return list(spread.__dict__["_benchmark"])


def cluster_count(board: str, workers: int, memory_limit: str) -> Run:
    """`count_on_cluster` on a fresh LocalCluster of `workers` single-threaded workers. The CPU is
    the workers' and this process's (the client and the LocalCluster's scheduler run here); of
    the workers', how much their count tasks spent themselves (the rest is Dask's: moving the
    children between workers, running the tasks)."""
    from twitterbot.jobs.pegs.board import builtin
    from twitterbot.jobs.pegs.spread import count_on_cluster

    with cluster_of(workers, memory_limit) as local, connect(local.scheduler_address) as cluster:
        cluster.client.run(lambda: __import__("twitterbot.jobs.pegs.kernel", fromlist=["x"]).worker_kernel() and 0)
        cluster.client.run(_time_tasks)
        before, here = cluster.client.run(_usage), _usage()
        started = time.perf_counter()
        total = sum(level.positions for level in count_on_cluster(builtin(board), cluster))
        wall = time.perf_counter() - started
        after, there = cluster.client.run(_usage), _usage()
        tallies = list(cluster.client.run(_tally).values())
        cpu = sum(after[w][0] - before[w][0] for w in before) + there[0] - here[0]
        peaks, starts = [after[w][1] for w in sorted(after)], [before[w][1] for w in sorted(after)]
        sent = (sum(t[1] for t in tallies), sum(t[2] for t in tallies), max(t[3] for t in tallies))
        return Run(
            total, wall, cpu, peaks, starts, in_tasks=sum(t[0] for t in tallies), here=there[0] - here[0], sent=sent
        )


def _make(pieces: int, size: int, before: object = None) -> list:
    import numpy as np

    return [np.ones(size // 8, np.uint64) for _ in range(pieces)]


def _take(before: object, *sent: list) -> int:
    return sum(len(piece) for pieces in sent for piece in pieces)


def dask_handover(sent: Tuple[int, int, int]) -> Tuple[float, float]:
    """What Dask alone spends handing over what a count on two workers handed over (`sent`: bytes
    and pieces in all, rounds of tasks), with no counting: on a fresh two-worker cluster, each
    worker makes its half of the pieces round by round and the other takes them, against the same
    pieces made and taken on one worker. The workers' extra CPU, and the client and scheduler's."""
    size, pieces, rounds = sent
    each = pieces // 2  # a worker's pieces, spread evenly over the rounds
    per_round = [each * (r + 1) // rounds - each * r // rounds for r in range(rounds)]
    piece = size // max(pieces, 1)
    with cluster_of(2) as local, connect(local.scheduler_address) as cluster:
        homes = sorted(cluster.watch())

        def run(handed: bool) -> Tuple[float, float]:
            before, here = cluster.client.run(_usage), _usage()
            taken = [None, None]
            for count in per_round:
                made = [cluster.submit_on(homes[w], _make, count, piece, taken[w]) for w in range(2)]
                taken = [cluster.submit_on(homes[w], _take, taken[w], made[1 - w if handed else w]) for w in range(2)]
                cluster.wait(taken)
            return _workers_cpu_since(cluster, before), _usage()[0] - here[0]

        run(True)  # warm
        alone, handed = run(False), run(True)
        return handed[0] - alone[0], handed[1]


GATHER = """
import sys, time
import numpy as np
values = np.ones(64 << 20, np.uint64)  # 512 MiB, far beyond the caches
at = np.random.default_rng(int(sys.argv[1])).integers(0, len(values), 8_000_000)
values[at].sum()
started = time.perf_counter()
for _ in range(3):
    values[at].sum()
print(time.perf_counter() - started)
"""


def memory_scaling() -> float:
    """How much more random memory access two processes at once get done than one: the count
    waits on memory, not on arithmetic, so no count can scale beyond this on this machine."""

    def run(seeds: List[int]) -> List[float]:
        children = [
            subprocess.Popen(
                [sys.executable, "-c", GATHER, str(seed)], stdout=subprocess.PIPE, text=True, env=PLAIN_ENVIRONMENT
            )
            for seed in seeds
        ]
        return [float(child.communicate()[0]) for child in children]

    alone = min(run([0])[0] for _ in range(2))
    together = min(max(run([0, 1])) for _ in range(2))
    return 2 * alone / together


def best(runs: List[Run]) -> Run:
    """The fastest of the runs (its own peaks: each run's processes are fresh)."""
    return min(runs, key=lambda run: run.wall)


def compare_counts(board: str, rounds: int, numpy_too: bool, memory_limit: str, more_workers: int = 0) -> None:
    """One process (one thread, then two), two Dask workers (and `more_workers`), best of `rounds`
    each, taken in turn; the figures and the ratios to the one-thread process."""
    ways: List[Tuple[str, Callable[[], Run]]] = [
        ("one process, kernel, 1 thread", lambda: one_process_count(board, True, 1)),
        ("one process, kernel, --workers 2", lambda: one_process_count(board, True, 2)),
        ("2 Dask workers", lambda: cluster_count(board, 2, memory_limit)),
    ]
    if more_workers:
        ways.append((f"{more_workers} Dask workers", lambda: cluster_count(board, more_workers, memory_limit)))
    if numpy_too:
        ways.insert(0, ("one process, numpy, 1 thread", lambda: one_process_count(board, False, 1)))
    runs: Dict[str, List[Run]] = {name: [] for name, _ in ways}
    for _ in range(rounds):
        for name, way in ways:
            runs[name].append(way())
    baseline = runs["one process, kernel, 1 thread"]
    alone = best(baseline)
    totals = {run.total for runs_ in runs.values() for run in runs_}
    print(
        f"pegs count {board} (best of {rounds}; {'the same' if len(totals) == 1 else 'DIFFERENT'} totals: {sorted(totals)})"
    )
    for name, _ in ways:
        run = best(runs[name])
        paired = statistics.median(mine.wall / theirs.wall for mine, theirs in zip(runs[name], baseline))
        print(
            f"  {name:34} wall {run.wall:7.1f} s ({run.wall / alone.wall:.2f}x; paired {paired:.2f}x)  CPU {run.cpu:7.1f} s  "
            f"largest peak {run.peak:7,.0f} MiB ({run.peak / alone.peak:.2f}x; {run.added:,.0f} MiB added, "
            f"{run.added / alone.added:.2f}x)  peaks {', '.join(f'{peak:,.0f}' for peak in run.peaks)}"
        )
    print(
        f"  one thread's runs: {', '.join(f'{run.wall:.1f} s' for run in baseline)}; paired: the median of each round's "
        "ratio to the one thread's run of the same round (the machine's speed drifts between rounds)"
    )
    cores = os.cpu_count() or 1
    for name, _ in ways:
        run = best(runs[name])
        if run.in_tasks:
            # Where a cluster's time goes: every process here shares these cores, so a wall time
            # of `ratio` of the one thread's leaves them `cores * ratio * wall` CPU seconds in all.
            target = TARGETS.get((board, name))
            budget = (
                f"; {target} of the one thread's wall on {cores} cores leaves {cores * target * alone.wall:.1f} s"
                if target
                else ""
            )
            print(
                f"  {name}' CPU {run.cpu:.1f} s: {run.in_tasks:.1f} s in the count's tasks, "
                f"{run.cpu - run.in_tasks - run.here:.1f} s else in the workers (Dask: children moved between them, "
                f"tasks run), {run.here:.1f} s client and scheduler{budget}"
            )
            if name == "2 Dask workers":
                workers_cpu, here_cpu = dask_handover(run.sent)
                print(
                    f"  Dask alone handing over the same {run.sent[0] / 1e9:.2f} GB ({run.sent[1]:,} pieces in "
                    f"{run.sent[2]} rounds) between 2 workers, with no counting: {workers_cpu:.1f} s of the workers' "
                    f"CPU, {here_cpu:.1f} s client and scheduler"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the monkey and the task overhead only")
    parser.add_argument("--chunks", type=int, default=512, help="chunks typed per measurement (default 512)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="the monkey's measurements of each, the median kept (default 5)"
    )
    parser.add_argument("--count-rounds", type=int, default=3, help="each peg count's runs, the best kept (default 3)")
    parser.add_argument("--french", action="store_true", help="also pegs count french: an hour, 5 GiB")
    parser.add_argument("--no-monkey", action="store_true", help="the peg counts only")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; chunk {CHUNK:,} keys, "
        f"a task {TASK_KEYS // CHUNK} chunks"
    )
    if not args.no_monkey:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            rates, per_cpu = monkey_rates(args.chunks, Path(folder), args.rounds)
        print(
            f"monkey, {args.chunks * CHUNK:,} keys a run, medians of {args.rounds} rounds taken in turns "
            f"(load average now {os.getloadavg()[0]:.1f}):"
        )
        names = {"local": "this process (--workers 1)", 1: "1 Dask worker", 2: "2 Dask workers"}
        for workers, name in names.items():
            print(
                f"  {name:28} {statistics.median(rates[workers]) / 1e6:7,.0f} M keys/s of wall time, "
                f"{statistics.median(per_cpu[workers]) / 1e6:7,.0f} M keys per CPU second"
            )
        for workers, target in ((1, 0.9), (2, 1.7)):
            walls = [cluster / alone for cluster, alone in zip(rates[workers], rates["local"])]
            cpus = [cluster / alone for cluster, alone in zip(per_cpu[workers], per_cpu["local"])]
            # On free cores a worker's wall-time rate is its CPU rate: `workers` of them type
            # `workers` times what one does.
            free = workers * statistics.median(cpus)
            print(
                f"  {names[workers]} / this process: wall time {statistics.median(walls):.2f} (rounds "
                f"{', '.join(f'{r:.2f}' for r in walls)}); per CPU second {statistics.median(cpus):.2f}, so "
                f"{free:.2f} on {workers} free core{'s' if workers > 1 else ''} (target at least {target}: "
                f"{'met' if free >= target else 'MISSED'})"
            )
        throughput, latency = task_overhead()
        print(
            f"task overhead: {throughput * 1e3:.2f} ms a task in a batch of 2000, {latency * 1e3:.2f} ms one at a time"
        )
    if args.quick:
        return 0
    print(
        f"random memory access (gathers over 512 MiB): two processes at once do {memory_scaling():.2f}x what one "
        "does alone; the count waits on memory, so this bounds what a second core can give here"
    )
    compare_counts("english", args.count_rounds, numpy_too=True, memory_limit="4GiB")
    if args.french:
        compare_counts("french", args.count_rounds, numpy_too=False, memory_limit="16GiB", more_workers=4)
    return 0


if __name__ == "__main__":
    sys.exit(main())
