"""Infinite-monkey benchmark: keystrokes per second per core for each mode, against the raw rate
of generating the same random keys (the physical limit here) and a naive per-keystroke Python
loop, all measured in this one run. Run it from the checkout:

    .venv/bin/python benchmarks/monkey.py                    # about a minute; fetches the texts once
    .venv/bin/python benchmarks/monkey.py --keystrokes 1e8   # longer, steadier figures

Speeds are measured where a long run spends its time: records grow by one letter each time the
typing multiplies by about 25, so a run sits at each record for far longer than it takes to
reach it. Each mode is timed from a monkey already holding a record of the given length.

Targets (issue 5): prefix at least 1/2 of the raw rate, anywhere at least 1/4, both at least 100x
the naive loop; the index over the complete works well under 200 MB.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twitterbot.config import PROJECT_DIR, load_config  # noqa: E402
from twitterbot.jobs.monkey.job import Options, prepare  # noqa: E402
from twitterbot.jobs.monkey.simulation import DRAW, KeyStream, Monkey, Simulation  # noqa: E402

KEYS = 27


def per_second(count: int, seconds: float) -> str:
    return f"{count / seconds / 1e6:8.1f} M/s"


def raw_rate(count: int) -> float:
    """Seconds to generate `count` keys exactly as the monkeys get them, doing nothing else."""
    stream = KeyStream(KEYS, 1)
    started = time.perf_counter()
    for _ in range(count // DRAW):
        stream.take(DRAW)
    return time.perf_counter() - started


def numpy_integers(count: int) -> float:
    """For comparison: numpy's own bounded integers (4x slower than our two-keys-per-16-bits)."""
    generator = np.random.default_rng(1)
    started = time.perf_counter()
    for _ in range(count // DRAW):
        generator.integers(0, KEYS, DRAW, dtype=np.uint8)
    return time.perf_counter() - started


def engine(matcher, record: int, count: int) -> float:
    monkey = Monkey(matcher, KeyStream(KEYS, 3), record=record)
    monkey.type(DRAW)  # warm up the caches
    started = time.perf_counter()
    monkey.type(count)
    return time.perf_counter() - started


def side_by_side(matcher, record: int, workers: int, count: int) -> float:
    """Seconds for `workers` monkeys (processes) holding a record of `record` to type `count` each."""
    streams = np.random.SeedSequence(5).spawn(workers)
    monkeys = [
        {"stream": KeyStream(KEYS, stream).state(), "record": record, "tail": [], "typed": 0} for stream in streams
    ]
    simulation = Simulation(matcher, key_count=KEYS, state={"seed": 5, "record": record, "monkeys": monkeys})
    list(simulation.run(keystrokes=workers * DRAW))  # start the processes
    started = time.perf_counter()
    list(simulation.run(keystrokes=workers * (DRAW + count)))
    return time.perf_counter() - started


def naive(setup, record: int, count: int) -> float:
    """The obvious program: one random key per Python step, then check the last record+1 keys
    (a string comparison in prefix mode; a set of every stretch of the works in anywhere mode)."""
    keys = setup.keyboard.keys
    length = record + 1
    if setup.mode == "prefix":
        wanted = setup.works[0].text[:length]
        stretches = None
    else:
        stretches = {work.text[i : i + length] for work in setup.works for i in range(len(work.text) - length + 1)}
    rng = random.Random(1)
    typed = ""
    started = time.perf_counter()
    for _ in range(count):
        typed = (typed + keys[rng.randrange(KEYS)])[-length:]
        if (typed == wanted) if stretches is None else (typed in stretches):
            length += 1
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keystrokes", type=float, default=3e7, help="keystrokes per measurement (default 3e7)")
    parser.add_argument("--naive", type=float, default=3e5, help="keystrokes for the naive loop (default 3e5)")
    args = parser.parse_args()
    count = int(args.keystrokes) // DRAW * DRAW
    config = load_config(project_dir=PROJECT_DIR)
    texts = config.state_dir / "texts"
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}; {count:,} keystrokes per figure\n")

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    anywhere = prepare(Options(mode="anywhere"), texts)
    build = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    prefix = prepare(Options(mode="prefix", work="hamlet"), texts)
    print(
        f"index over the complete works: {anywhere.matcher.nbytes / 1e6:.0f} MB held, built in {build:.1f} s "
        f"(peak RSS grew by {(peak - before) / 1024:.0f} MB while building)\n"
    )

    raw = raw_rate(count)
    print(f"{'raw key generation (the limit)':44} {per_second(count, raw)}")
    print(f"{'numpy Generator.integers, for comparison':44} {per_second(count, numpy_integers(count))}")
    print()
    rows = [
        ("prefix", prefix, 8),
        ("prefix", prefix, 10),
        ("anywhere", anywhere, 10),
        ("anywhere", anywhere, 11),
        ("anywhere", anywhere, 12),
        ("anywhere", anywhere, 13),
    ]
    naive_count = int(args.naive)
    # The naive anywhere loop holds a set of every 7-letter stretch (60 MB); longer ones cost
    # hundreds of MB and change nothing in its speed.
    naive_seconds = {"prefix": naive(prefix, 8, naive_count), "anywhere": naive(anywhere, 6, naive_count)}
    worst = {}
    print(f"{'mode, record held':26} {'engine':>12} {'of raw':>7} {'naive loop':>12} {'x naive':>8}")
    for mode, setup, record in rows:
        seconds = engine(setup.matcher, record, count)
        naive_rate = naive_count / naive_seconds[mode]
        share = raw / seconds
        speedup = (count / seconds) / naive_rate
        worst[mode] = min(worst.get(mode, (9e9, 9e9)), (share, speedup))
        print(
            f"{mode + ', ' + str(record) + ' letters':26} {per_second(count, seconds)} {share:7.2f} "
            f"{naive_rate / 1e6:8.2f} M/s {speedup:8.0f}"
        )

    print()
    workers = os.cpu_count() or 1
    for mode, setup, record in (("prefix", prefix, 8), ("anywhere", anywhere, 11)):
        seconds = side_by_side(setup.matcher, record, workers, count)
        print(
            f"{mode}, --workers {workers}, {record} letters held: {per_second(workers * count, seconds)} in all, "
            f"{per_second(count, seconds).strip()} per monkey"
        )

    print()
    targets = {"prefix": 0.5, "anywhere": 0.25}
    ok = True
    for mode, (share, speedup) in worst.items():
        passed = share >= targets[mode] and speedup >= 100
        ok &= passed
        print(
            f"target {mode}: >= {targets[mode]} of raw and >= 100x naive: {share:.2f}, {speedup:.0f}x "
            f"{'met' if passed else 'MISSED'}"
        )
    memory_ok = anywhere.matcher.nbytes < 200e6
    print(f"target index < 200 MB: {anywhere.matcher.nbytes / 1e6:.0f} MB {'met' if memory_ok else 'MISSED'}")
    return 0 if ok and memory_ok else 1


if __name__ == "__main__":
    sys.exit(main())
