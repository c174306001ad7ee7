"""Puzzle benchmark: for each kind, our solver against the seed's own algorithm (re-implemented in
`benchmarks/puzzle_seeds/`) on the seed's puzzle, plus the hardest of a few generated 10x10
Hidokus. Prints the times and the ratios from one run; run it from the checkout:

    .venv/bin/python benchmarks/puzzles.py              # a few minutes on a 2-core machine
    .venv/bin/python benchmarks/puzzles.py --generated 0 # only the seeds' puzzles

Each row solves the whole question (every solution where the seed asks for all), and both
solvers must agree on the number of solutions. The seed's algorithm gives up after
`--baseline-limit` seconds (the ratio is then a lower bound).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import random
import sys
import time
from pathlib import Path
from typing import Callable, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from twitterbot.jobs.puzzles import hidoku  # noqa: E402
from twitterbot.jobs.puzzles.events import Finished  # noqa: E402
from twitterbot.jobs.puzzles.job import available_kinds  # noqa: E402


def ours(module, text: str) -> Tuple[float, int, int]:
    """Seconds, solutions and nodes of our solver on `text`."""
    started = time.perf_counter()
    puzzle = module.parse(text, "benchmark")
    for event in module.solve(puzzle, all_solutions=module.ALL_BY_DEFAULT, resume=None):
        if isinstance(event, Finished):
            return time.perf_counter() - started, event.solutions, event.nodes
    raise AssertionError("solve() always ends with Finished")


def seeds(solve_seed: Callable[..., int], text: str, limit: float) -> Tuple[float, object]:
    """Seconds and answer of the seed's algorithm, or infinity once it passes `limit` seconds.
    The re-implementations take the limit as `limit=` (seconds) or `deadline=` (a perf_counter
    time); one without either is quick enough to run to the end."""
    accepts = inspect.signature(solve_seed).parameters
    started = time.perf_counter()
    options = {"limit": limit} if "limit" in accepts else {"deadline": started + limit} if "deadline" in accepts else {}
    try:
        answer = solve_seed(text, **options)
    except TimeoutError:
        return float("inf"), None
    return time.perf_counter() - started, answer


def row(label: str, module, text: str, limit: float) -> None:
    seconds, solutions, nodes = ours(module, text)
    try:
        seed_module = importlib.import_module(f"puzzle_seeds.{module.NAME}")
    except ModuleNotFoundError:
        print(f"{label:28} {seconds:>9.3f} s {solutions:>9,} {nodes:>10,}   (no seed baseline yet)")
        return
    baseline, answer = seeds(seed_module.solve_seed, text, limit)
    if baseline == float("inf"):
        seed, ratio, agree = f">{limit:.0f} s", f">{limit / seconds:,.0f}x", ""
    else:
        seed, ratio = f"{baseline:.3f} s", f"{baseline / seconds:,.0f}x"
        agree = "" if answer == solutions or module.NAME == "panguru" else f"  DISAGREE: seed found {answer}"
    print(f"{label:28} {seconds:>9.3f} s {solutions:>9,} {nodes:>10,} {seed:>12}  {ratio:>8}{agree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-limit", type=float, default=120.0, help="seconds to give the seed's algorithm")
    parser.add_argument("--generated", type=int, default=6, help="how many 10x10 Hidokus to generate (0: none)")
    args = parser.parse_args()

    print(f"python {sys.version.split()[0]}, {sys.platform}")
    print(f"{'puzzle':28} {'ours':>11} {'solutions':>9} {'nodes':>10} {'seed':>12}  {'speed-up':>8}")
    for name, module in available_kinds().items():
        row(f"{name} (seed's puzzle)", module, module.EXAMPLE, args.baseline_limit)
        if name == "flowerdisk":  # the seed's disks have no solution as given: also time the one with
            flipped = module.EXAMPLE.rstrip("\n").split("\n")  # its last disk flipped (the seed's finding)
            flipped[-1] = flipped[-1].replace("[", "").replace("]", "")
            flipped[-1] = ",".join(reversed(flipped[-1].split(",")))
            row("flowerdisk (last flipped)", module, "\n".join(flipped) + "\n", args.baseline_limit)
        if name == "panguru":  # the seed's board suits the seed's pruning; a shuffled start does not
            shuffled = importlib.import_module("puzzle_seeds.panguru").BENCH_EXAMPLE
            row("panguru (shuffled start)", module, shuffled, args.baseline_limit)
    if args.generated:
        hardest, most = "", -1
        for seed in range(args.generated):
            puzzle, _ = hidoku.generate(10, 10, random.Random(seed))
            text = hidoku.render_puzzle(puzzle)
            _, _, nodes = ours(hidoku, text)
            if nodes > most:
                hardest, most, chosen = text, nodes, seed
        row(f"hidoku 10x10 generated #{chosen}", hidoku, hardest, args.baseline_limit)


if __name__ == "__main__":
    main()
