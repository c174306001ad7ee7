"""The level-by-level count on every core of this machine (`pegs count --workers N`).

Each level is cut into N shares by a hash of the position (`shares.owners`), and share s of every
level belongs to thread s for the whole count, with its own table. A level becomes the next in
rounds. In a round each thread expands some of its own parents: a child of its own share goes
straight into its table, any other is written to a small buffer for that share's owner; then
each thread adds what the others wrote for it. The kernel's calls let go of Python's lock, so N
threads keep N cores busy, and no table is ever touched by two threads at once. The children
cross between threads once, in bulk, never sorted or merged on the way.

Memory stays that of one process: the N tables together hold what the one table held, and the
buffers are a few MiB per thread. Without the kernel, each thread makes sorted pieces with numpy
(whose sorts also let go of the lock) and merges the pieces sent to it.

A level is then its N shares, each sorted; the figures, level files and checkpoints are those of
the one-thread count (a checkpoint's positions in share order, which nothing relies on)::

    with ThreadPoolExecutor(4) as pool:
        level, stuck = next_shares(board, level, pool, kernel=kernel, expected=..., block=BLOCK)
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

import numpy as np

from .board import Board
from .levels import PRIME, Part, empty_level
from .shares import Accumulator, cut

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = ["BUFFER", "next_shares", "share_level"]

# Records (24 bytes each) in one thread's buffer for the other shares: 6 MiB a thread, whatever N.
# A round's children then cost a few milliseconds, far more than the round's two hand-overs.
BUFFER = 1 << 18


def share_level(level: Part, shares: int, kernel: Optional[Kernel] = None) -> List[Part]:
    """A level (a checkpoint's, or the start) cut into `shares`, each a copy in the order it had."""
    if shares == 1:
        return [level]
    pieces = kernel.cut(level, shares) if kernel is not None else cut(level, shares)
    return [tuple(np.ascontiguousarray(column).copy() for column in piece) for piece in pieces]  # type: ignore[misc]


def next_shares(
    board: Board,
    level: List[Part],
    pool: ThreadPoolExecutor,
    *,
    kernel: Optional[Kernel],
    expected: int,
    block: int,
    after_block: Callable[[int, int], None] = lambda done, total: None,
) -> Tuple[List[Part], Tuple[int, int]]:
    """The next level's shares, from this level's (one per thread of `pool`, share s owned by
    thread s), and the sequences ending on this level (modulo 2^64 and modulo the prime).
    `expected`: about how many positions the next level holds, to size the tables."""
    if kernel is not None:
        return _with_kernel(board, level, pool, kernel, expected, block, after_block)
    return _with_numpy(board, level, pool, block, after_block)


def _everywhere(pool: ThreadPoolExecutor, work: Callable[[int], object], shares: int) -> None:
    """`work(s)` for every share at once, each on a thread; back once all are done (errors raised)."""
    for future in [pool.submit(work, share) for share in range(shares)]:
        future.result()


def _with_kernel(
    board: Board,
    level: List[Part],
    pool: ThreadPoolExecutor,
    kernel: Kernel,
    expected: int,
    block: int,
    after_block: Callable[[int, int], None],
) -> Tuple[List[Part], Tuple[int, int]]:
    from .kernel import Outgoing, contiguous  # the kernel's types: only where it was loaded

    shares = len(level)
    level = [contiguous(part) for part in level]
    total = sum(len(part[0]) for part in level)
    room = max(BUFFER // shares, len(board.jumps))
    outgoing = [Outgoing(shares, room) for _ in range(shares)]
    stuck = [np.zeros(2, dtype=np.uint64) for _ in range(shares)]
    first = [0] * shares
    tables = [kernel.table(expected // shares + 16) for _ in range(shares)]
    try:

        def expand(share: int) -> None:
            if first[share] < len(level[share][0]):
                first[share] += kernel.expand(
                    tables[share], board, level[share], first[share], stuck[share], outgoing[share], own=share
                )

        def absorb(share: int) -> None:
            for other in range(shares):
                if other != share:
                    tables[share].add(outgoing[other].of(share))

        told = -block
        while any(first[share] < len(level[share][0]) for share in range(shares)):
            if sum(first) - told >= block:
                told = sum(first)
                after_block(told, total)
            _everywhere(pool, expand, shares)
            _everywhere(pool, absorb, shares)
            for buffer in outgoing:
                buffer.clear()
        outgoing.clear()  # the buffers go before the tables are sorted
        taken: List[Part] = [empty_level()] * shares

        def take(share: int) -> None:
            taken[share] = tables[share].take(board.size)

        _everywhere(pool, take, shares)
    finally:
        for table in tables:
            table.close()
    return taken, _summed(stuck)


def _with_numpy(
    board: Board, level: List[Part], pool: ThreadPoolExecutor, block: int, after_block: Callable[[int, int], None]
) -> Tuple[List[Part], Tuple[int, int]]:
    shares = len(level)
    total = sum(len(part[0]) for part in level)
    owners = [Accumulator(board, None, 0) for _ in range(shares)]  # each share's sorted pieces, merged as they come
    sent: List[List[List[Part]]] = [[] for _ in range(shares)]
    stuck = [(0, 0) for _ in range(shares)]
    first = [0] * shares

    def expand(share: int) -> None:
        sent[share] = []
        low = first[share]
        if low < len(level[share][0]):
            first[share] = low + block
            parents: Part = tuple(column[low : low + block] for column in level[share])  # type: ignore[assignment]
            sent[share], ended = owners[share].expand(parents, shares, share)
            stuck[share] = (stuck[share][0] + ended[0], stuck[share][1] + ended[1])

    def absorb(share: int) -> None:
        for pieces in sent:
            for piece in pieces[share] if pieces else ():
                owners[share].add(piece)

    while any(first[share] < len(level[share][0]) for share in range(shares)):
        after_block(sum(min(low, len(part[0])) for low, part in zip(first, level)), total)
        _everywhere(pool, expand, shares)
        _everywhere(pool, absorb, shares)
    sent.clear()
    taken: List[Part] = [empty_level()] * shares

    def take(share: int) -> None:
        taken[share] = owners[share].take()

    _everywhere(pool, take, shares)
    return taken, _summed(stuck)


def _summed(stuck: List) -> Tuple[int, int]:
    """The threads' stuck sequences added up (modulo 2^64 and modulo the prime)."""
    return sum(int(s[0]) for s in stuck) % (1 << 64), sum(int(s[1]) for s in stuck) % PRIME
