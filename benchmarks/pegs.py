"""Peg solitaire benchmark: our solver on every board, the seed blog's algorithm on the same boards
as the baseline, and the full English count. Prints its figures; run it from the checkout:

    .venv/bin/python benchmarks/pegs.py            # about a minute on a 2-core machine
    .venv/bin/python benchmarks/pegs.py --no-count # skip the 30 s count

The baseline re-implements the seed's depth-first search faithfully: the board is a dict of
(x, y) -> 'X'/'O'/' ', every move deep-copies it, a position is skipped only if it is already
on the current path (a list membership test), nothing is remembered between branches, and the
goal is one peg anywhere. It stops at its first solution, or gives up after `--baseline-limit`
seconds.
"""

from __future__ import annotations

import argparse
import copy
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twitterbot.jobs.pegs.board import BOARDS, builtin  # noqa: E402
from twitterbot.jobs.pegs.count import count_levels  # noqa: E402
from twitterbot.jobs.pegs.solve import Impossible, Solved, solve  # noqa: E402

A112737_TOTAL = 23_475_688
ENGLISH_SOLUTIONS = 40_861_647_040_079_968


class _Found(Exception):
    pass


class _OutOfTime(Exception):
    pass


def seed_algorithm(text: str, limit: float) -> float:
    """Seconds the seed's search takes to find a solution of the board drawn in `text`."""
    board = {}
    for y, line in enumerate(text.split("\n")):
        for x, char in enumerate(line):
            board[x, y] = char
    width, height = max(x for x, _ in board) + 1, max(y for _, y in board) + 1
    store = []
    deadline = time.perf_counter() + limit

    def single_peg(state) -> bool:
        return sum(1 for value in state.values() if value == "X") == 1

    def moves(state) -> None:
        if single_peg(state):
            raise _Found
        if time.perf_counter() > deadline:
            raise _OutOfTime
        for x, y in list(state):
            if state[x, y] != "X":
                continue
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                over, to = (x + dx, y + dy), (x + 2 * dx, y + 2 * dy)
                if not (0 <= to[0] < width and 0 <= to[1] < height):
                    continue
                if state.get(over) == "X" and state.get(to) == "O":
                    new = copy.deepcopy(state)
                    new[x, y], new[over], new[to] = "O", "O", "X"
                    if new not in store:
                        store.append(new)
                        moves(new)
                        store.remove(new)

    started = time.perf_counter()
    try:
        moves(board)
    except _Found:
        return time.perf_counter() - started
    except _OutOfTime:
        return float("inf")
    return float("nan")  # searched everything without a solution


def ours(name: str) -> tuple:
    board = builtin(name)
    started = time.perf_counter()
    *_, result = solve(board)
    seconds = time.perf_counter() - started
    outcome = f"solved in {len(result.jumps)} jumps" if isinstance(result, Solved) else "proved impossible"
    assert isinstance(result, (Solved, Impossible))
    return seconds, result.positions, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-limit", type=float, default=20.0, help="seconds to give the seed's algorithm")
    parser.add_argument("--no-count", action="store_true", help="skip counting the English board")
    args = parser.parse_args()

    print(f"python {sys.version.split()[0]}, {sys.platform}")
    print(f"{'board':16} {'ours':>10} {'positions':>10}  {'result':22} {'seed algorithm':>15}  speed-up")
    for name in BOARDS:
        seconds, positions, outcome = ours(name)
        baseline = seed_algorithm(BOARDS[name][0], args.baseline_limit)
        if baseline == float("inf"):
            seed, ratio = f">{args.baseline_limit:.0f} s", f">{args.baseline_limit / seconds:,.0f}x"
        elif baseline != baseline:  # nan: it searched everything and found nothing
            seed, ratio = "no solution", "-"
        else:
            seed, ratio = f"{baseline:.3f} s", f"{baseline / seconds:,.0f}x"
        print(f"{name:16} {seconds:>8.3f} s {positions:>10,}  {outcome:22} {seed:>15}  {ratio}")

    if args.no_count:
        return
    started = time.perf_counter()
    total = 0
    for level in count_levels(builtin("english")):
        total += level.positions
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"count english: {total:,} positions (A112737 total {A112737_TOTAL:,}: "
        f"{'ok' if total == A112737_TOTAL else 'WRONG'}), {level.solutions:,} solutions "
        f"({'ok' if level.solutions == ENGLISH_SOLUTIONS else 'WRONG'}) in {seconds:.1f} s, "
        f"peak memory {peak:,.0f} MB"
    )


if __name__ == "__main__":
    main()
