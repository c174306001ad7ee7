"""The seed's Panguru solver, re-implemented faithfully as the benchmark's baseline.

As the seed describes it: a move sequence is a chain of nodes (parent, position moved, pebbles
matching); `matching_nodes(turn, matching)` lists every sequence of `turn` moves that ends with
`matching` pebbles on their colour, built from the lists for `turn - 1` with `matching` - 1, + 0
and + 1, finding which pebble a node moves by walking back up its chain (`original_pos`), and
memoised on (turn, matching). The fewest moves is the first `turn` whose list for "all pebbles
matching" is not empty. Since a move changes the matching count by at most one, only sequences
that keep up with the target survive: quick on the seed's board (every pebble misplaced, 16
moves), slow when some pebbles already match and the lists fill with detours. `BENCH_EXAMPLE`
is such a board (16 moves, 569 optimal sequences). The seed's `optimal_moves` returns one more
than the fewest moves (it counts up after the last try); `solve_seed` returns the fewest moves.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

__all__ = ["BENCH_EXAMPLE", "solve_seed"]

_SEED_MOVES = [
    [1, 2, 3, 4, 5, 6, 9, 10, 12, 14],
    [0, 2, 3, 4, 6, 8, 10, 13],
    [0, 1, 4, 5, 7, 9, 11, 14],
    [0, 1, 4, 5, 6, 7, 10, 12],
    [0, 1, 2, 3, 5, 7, 8, 11, 12, 13],
    [0, 2, 3, 4, 8, 9, 12, 14],
    [0, 1, 3, 7, 8, 9, 10, 11],
    [2, 3, 4, 6, 8, 9, 11, 12],
    [1, 4, 5, 6, 7, 9, 12, 13],
    [0, 2, 5, 6, 7, 8, 13, 14],
    [0, 1, 3, 6, 11, 12, 13, 14],
    [2, 4, 6, 7, 10, 12, 13, 14],
    [0, 3, 4, 5, 7, 8, 10, 11, 13, 14],
    [1, 4, 8, 9, 10, 11, 12, 14],
    [0, 2, 5, 9, 10, 11, 12, 13],
]

# The seed's plates and move table with a shuffled start: 16 moves, 569 optimal sequences.
BENCH_EXAMPLE = "plates:  WCBRBOGYGPCORPY\npebbles: GOBPPORRCYBG-CY\n"


class _Node:
    def __init__(self, parent: Optional[_Node], move: int, matching: int) -> None:
        self.parent = parent
        self.move = move
        self.matching = matching

    def original_pos(self, position: int) -> int:
        """Where the pebble now at `position` stood before any move."""
        if self.parent is None:
            return position
        if position == self.move:
            before = self.parent.move
        elif position == self.parent.move:
            before = self.move
        else:
            before = position
        return self.parent.original_pos(before)


def _read(text: str) -> Tuple[str, str, List[List[int]]]:
    lines = [raw.split("#", 1)[0].strip() for raw in text.splitlines()]
    lines = [line for line in lines if line]
    plates = re.sub(r"^plates\s*:?\s*", "", lines[0])
    pebbles = re.sub(r"^pebbles\s*:?\s*", "", lines[1])
    moves = [[int(part) for part in re.findall(r"\d+", line.split(":")[-1])] for line in lines[2:]]
    return plates, pebbles, moves or _SEED_MOVES


def solve_seed(text: str, stop_at: int = 20) -> int:
    """The fewest moves, by the seed's memoised recursion (-1 if none within `stop_at`)."""
    plates, pebbles, moves = _read(text)
    pebble_count = len(pebbles) - pebbles.count("-")
    start_matching = sum(plate == pebble for plate, pebble in zip(plates, pebbles))
    root = _Node(None, pebbles.index("-"), start_matching)
    memo: Dict[Tuple[int, int], List[_Node]] = {}

    def matching_nodes(turn: int, matching: int) -> List[_Node]:
        key = (turn, matching)
        if key in memo:
            return memo[key]
        if turn == 0:
            result = [root] if matching == start_matching else []
        else:
            result = []
            for change in (-1, 0, 1):
                for previous in matching_nodes(turn - 1, matching + change):
                    for move in moves[previous.move]:
                        colour = pebbles[previous.original_pos(move)]
                        was_matching = plates[move] == colour
                        now_matching = plates[previous.move] == colour
                        if was_matching - now_matching == change:
                            result.append(_Node(previous, move, matching))
        memo[key] = result
        return result

    for turn in range(stop_at + 1):
        if matching_nodes(turn, pebble_count):
            return turn
    return -1
