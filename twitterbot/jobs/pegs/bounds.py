"""What can be known of a game before searching it: the position-class proof that it cannot be
won, and pagoda weights that bound what a position can still reach. The solvers use them to
refuse impossible games at once and to prune the search::

    proof = position_class_proof(builtin("french"))   # why it cannot be won, or None
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .board import Board, Jump

__all__ = ["distances", "pagoda_towards", "pagoda_weights", "position_class_proof"]


def position_class_proof(board: Board) -> Optional[str]:
    """Why the game cannot be won, by the position-class argument, or None if it may be.

    Every jump flips exactly three holes (two pegs out, one in), so after any jumps the position
    differs from the start by a sum (exclusive-or) of jumps' flip patterns. A finish that differs
    from the start by something outside their span is out of reach: that is the classic
    position-class argument, done by linear algebra over the two-element field so that it holds
    for every jump kind and every board shape.
    """
    basis = _span(board.jumps)
    finishes = [board.goal] if board.goal is not None else [1 << hole for hole in board.end_holes]
    if any(_reduce(board.start ^ finish, basis) == 0 for finish in finishes):
        return None
    if board.kind == "orthogonal" and board.goal is not None and board.target is not None:
        start, end = _classes(board, board.start), _classes(board, board.goal)
        if start != end:
            return (
                f"impossible: count the pegs on each of the three diagonal colour classes ((row+col) mod 3, and "
                f"(row-col) mod 3). Every jump changes each count by one, so their odd/even pattern can only flip "
                f"as a whole. The start's patterns are {_show(start)}; a single peg in {board.name_of(board.target)} "
                f"has {_show(end)}, which no sequence of jumps can reach"
            )
    if board.kind == "orthogonal" and board.goal is None and board.ends is None:
        start = _classes(board, board.start)
        if all(_classes(board, 1 << hole) != start for hole in range(board.size)):
            return (
                "impossible: count the pegs on each of the three diagonal colour classes ((row+col) mod 3, and "
                "(row-col) mod 3). Every jump changes each count by one, so their odd/even pattern can only flip "
                f"as a whole. The start's patterns are {_show(start)}, and no single peg anywhere has them"
            )
    where = board.goal_text
    return (
        f"impossible (position classes): every jump flips three holes, so a reachable position differs from "
        f"the start by an exclusive-or of jumps; the start and {where} differ by a pattern no combination of "
        f"this board's {len(board.jumps)} jumps makes, so no sequence of jumps gets there"
    )


def pagoda_weights(board: Board) -> Optional[List[float]]:
    """A pagoda function for a goal of one peg on a given hole, or None without one.

    A pagoda function gives each hole a weight such that for every jump a over b into c,
    w(a) + w(b) >= w(c): a jump never raises the total weight of the pegs. So a position whose
    pegs weigh less than the goal can never reach it. With w = s^d, d the number of steps to the
    goal hole along the board's lattice and s = 0.618 (1/golden ratio, so that s^2 + s = 1), a
    jump two steps nearer keeps the total, any other lowers it (Conway's soldiers argument)."""
    if board.target is None:
        return None
    return pagoda_towards(board, board.target)


def pagoda_towards(board: Board, target: int) -> Optional[List[float]]:
    """`pagoda_weights` for a goal of one peg in `target`, whatever the board's own goal: every
    hole gives one, and any of them bounds any goal (a position weighing less than a goal's
    pegs, by any pagoda function, cannot reach it)."""
    steps = distances(board, target)
    ratio = (5**0.5 - 1) / 2
    weights = [ratio**step if step >= 0 else 0.0 for step in steps]
    for jump in board.jumps:  # the lattice distance makes it so; check rather than trust
        if weights[jump.start] + weights[jump.over] < weights[jump.end] - 1e-12:
            return None
    return weights


def distances(board: Board, target: int) -> List[int]:
    """Steps from each hole to `target` moving between neighbours of the lattice (-1: none)."""
    neighbours: List[List[int]] = [[] for _ in board.cells]
    for jump in board.jumps:
        neighbours[jump.start].append(jump.over)
        neighbours[jump.over].append(jump.end)
    found = [-1] * board.size
    found[target] = 0
    frontier = [target]
    while frontier:
        following = []
        for hole in frontier:
            for other in neighbours[hole]:
                if found[other] < 0:
                    found[other] = found[hole] + 1
                    following.append(other)
        frontier = following
    return found


def _span(jumps: Sequence[Jump]) -> Dict[int, int]:
    """A basis of the jumps' flip patterns over GF(2), keyed by each vector's highest bit."""
    basis: Dict[int, int] = {}
    for jump in jumps:
        vector = _reduce(jump.flips, basis)
        if vector:
            basis[vector.bit_length() - 1] = vector
    return basis


def _reduce(vector: int, basis: Dict[int, int]) -> int:
    while vector:
        top = vector.bit_length() - 1
        if top not in basis:
            return vector
        vector ^= basis[top]
    return 0


def _classes(board: Board, position: int) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    sums, diffs = [0, 0, 0], [0, 0, 0]
    for i, (row, col) in enumerate(board.cells):
        if position >> i & 1:
            sums[(row + col) % 3] ^= 1
            diffs[(row - col) % 3] ^= 1
    # Up to flipping all three: normalise so that the first parity is even.
    return tuple(p ^ sums[0] for p in sums), tuple(p ^ diffs[0] for p in diffs)


def _show(classes: Tuple[Tuple[int, ...], Tuple[int, ...]]) -> str:
    def word(parities: Tuple[int, ...]) -> str:
        return "/".join("odd" if p else "even" for p in parities)

    return f"{word(classes[0])} and {word(classes[1])}"
