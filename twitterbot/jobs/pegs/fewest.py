"""Fewest moves: a move is a sequence of jumps by one peg, so a peg that jumps again straight
after its own jump makes no new move. A 0-1 breadth-first search over (position, the hole the
last jump landed in) finds a winning line with the fewest moves and proves it minimal, for boards
small enough to hold their reachable positions in memory::

    result = fewest_moves(builtin("triangle"))
    result.moves, result.proved       # 9, True
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, List, Optional, Sequence, Tuple

from .board import Board, Jump

__all__ = ["FewestMoves", "fewest_moves", "group_moves"]

# States (position, last landing hole) held before the search gives up: some 400 bytes each in
# its dictionaries, so about 200 MB at most.
MAX_STATES = 500_000


@dataclass(frozen=True)
class FewestMoves:
    """The winning jumps with the fewest moves (None if there is no solution), how many moves,
    whether that is proved minimal, and the states examined."""

    jumps: Optional[Tuple[Jump, ...]]
    moves: int
    proved: bool
    states: int


def group_moves(jumps: Sequence[Jump]) -> List[List[Jump]]:
    """The jumps as moves: a jump by the peg that made the jump before continues that move."""
    moves: List[List[Jump]] = []
    for jump in jumps:
        if moves and moves[-1][-1].end == jump.start:
            moves[-1].append(jump)
        else:
            moves.append([jump])
    return moves


def fewest_moves(board: Board, *, max_states: int = MAX_STATES) -> Optional[FewestMoves]:
    """The solution with the fewest moves, proved minimal; None when the board is too big for
    the search to hold (more than `max_states` states)."""
    State = Tuple[int, int]
    start: State = (board.start, -1)
    cost: Dict[State, int] = {start: 0}
    parent: Dict[State, Tuple[State, Jump]] = {}
    queue: Deque[State] = deque([start])
    done = set()
    while queue:
        state = queue.popleft()
        if state in done:
            continue
        done.add(state)
        position, last = state
        if board.is_won(position):
            path: List[Jump] = []
            while state in parent:
                state, jump = parent[state]
                path.append(jump)
            path.reverse()
            return FewestMoves(tuple(path), cost[(position, last)], True, len(cost))
        here = cost[state]
        for jump in board.moves(position):
            child = (position ^ jump.flips, jump.end)
            step = 0 if jump.start == last else 1
            if child not in cost or here + step < cost[child]:
                cost[child] = here + step
                parent[child] = (state, jump)
                if step:
                    queue.append(child)
                else:
                    queue.appendleft(child)
        if len(cost) > max_states:
            return None
    return FewestMoves(None, 0, True, len(cost))
