"""Jodici: three rings of six sectors; each digit 1-9 used at most twice, each ring sums to 30 and
each sector (the three cells of a slice) to 15.

The file is the seed's CSV: three lines (the rings, as the seed lays them out), six cells each,
``_`` for empty. The solver fills a whole sector at a time: it lists the digit triples that sum
to 15 and fit the sector's given digits, takes the sector with fewest triples first, and cuts a
branch as soon as a digit is used a third time or a ring can no longer reach 30 with what its
remaining sectors could add. Usage::

    puzzle = parse("3,7,_,_,_,_\\n_,_,1,5,9,_\\n6,_,_,_,_,_\\n")
    for event in solve(puzzle, all_solutions=True): ...
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import product
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError

__all__ = ["ABOUT", "ALL_BY_DEFAULT", "EXAMPLE", "NAME", "Jodici", "parse", "render", "solution_json", "solve"]

NAME = "jodici"
ABOUT = "Jodici: 3 rings x 6 sectors of digits 1-9 (CSV, _ for empty); rings sum to 30, sectors to 15"
ALL_BY_DEFAULT = True
EXAMPLE = """\
3,7,_,_,_,_
_,_,1,5,9,_
6,_,_,_,_,_
"""
RINGS, SECTORS = 3, 6
RING_SUM, SECTOR_SUM, MOST_USES = 30, 15, 2

Solution = Tuple[Tuple[int, ...], ...]  # 3 rings of 6 digits, like the input


@dataclass(frozen=True)
class Jodici:
    """`rings[r][s]` is the digit in ring r (line r of the file), sector s, or None."""

    rings: Tuple[Tuple[Optional[int], ...], ...]
    name: str = "example"


def parse(text: str, source: str = "example", **options: Any) -> Jodici:
    """Read the seed's CSV; blank lines and lines starting with # are skipped."""
    rings: List[Tuple[Optional[int], ...]] = []
    counts: Dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if len(rings) == RINGS:
            raise PuzzleFileError(f"{source} line {number}: a Jodici has {RINGS} rings (lines), this is a fourth")
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != SECTORS:
            raise PuzzleFileError(
                f"{source} line {number} has {len(cells)} cells: each ring has {SECTORS}, e.g. 3,7,_,_,_,_"
            )
        ring: List[Optional[int]] = []
        for column, cell in enumerate(cells, 1):
            if cell and set(cell) == {"_"}:
                ring.append(None)
            elif cell.isdigit() and 1 <= int(cell) <= 9:
                ring.append(int(cell))
            else:
                raise PuzzleFileError(f"{source} line {number}, cell {column}: {cell!r} is not a digit 1-9 or _")
        for digit in ring:
            if digit is not None:
                counts[digit] = counts.get(digit, 0) + 1
                if counts[digit] > MOST_USES:
                    raise PuzzleFileError(
                        f"{source} line {number}: {digit} is given {counts[digit]} times; each digit at most twice"
                    )
        rings.append(tuple(ring))
    if len(rings) != RINGS:
        raise PuzzleFileError(f"{source} has {len(rings)} ring lines: a Jodici needs {RINGS}, of six cells each")
    return Jodici(tuple(rings), source)


def render(puzzle: Jodici, solution: Solution) -> str:
    """The solved rings as the input's CSV lines (given digits as they were, the rest filled in)."""
    return "".join(",".join(str(digit) for digit in ring) + "\n" for ring in solution)


def solution_json(puzzle: Jodici, solution: Solution) -> List[List[int]]:
    return [list(ring) for ring in solution]


def summary_json(puzzle: Jodici, finished: Finished) -> Dict[str, Any]:
    return {}


def _triples(puzzle: Jodici, sector: int) -> List[Tuple[int, ...]]:
    given = [puzzle.rings[ring][sector] for ring in range(RINGS)]
    options = [(digit,) if digit is not None else range(1, 10) for digit in given]
    return [triple for triple in product(*options) if sum(triple) == SECTOR_SUM]


def _ring_bounds(choices: Sequence[Sequence[Tuple[int, ...]]]) -> Tuple[List[List[int]], List[List[int]]]:
    """Per ring, the least and the most the positions from i on can still add, given each
    position's candidate triples `choices[i]` (one more entry, 0, past the last position)."""
    least = [[0] * (SECTORS + 1) for _ in range(RINGS)]
    most = [[0] * (SECTORS + 1) for _ in range(RINGS)]
    for ring in range(RINGS):
        for position in range(SECTORS - 1, -1, -1):
            triples = choices[position]
            least[ring][position] = least[ring][position + 1] + min((t[ring] for t in triples), default=0)
            most[ring][position] = most[ring][position + 1] + max((t[ring] for t in triples), default=0)
    return least, most


def _share_done(options: Sequence[Tuple[int, Sequence[Tuple[int, ...]]]], at: Sequence[int], depth: int) -> float:
    """About how much of the search lies behind the triples being tried at the first `depth` positions."""
    done, weight = 0.0, 1.0
    for position in range(depth):
        total = len(options[position][1])
        done += weight * at[position] / total
        weight /= total
    return done


def solve(
    puzzle: Jodici,
    *,
    all_solutions: bool = True,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.monotonic,
    progress_every: float = 1.0,
) -> Iterator[Event]:
    """Every solution (or the first), as Found events, then Finished. A puzzle with a few givens
    takes milliseconds; an empty one minutes, so Progress comes about every `progress_every`
    seconds, with the share done estimated from the choices made so far, and the branch path as
    its `state`: `resume` with that state goes on where it was, counting what came before."""
    started = clock()
    options = [(sector, _triples(puzzle, sector)) for sector in range(SECTORS)]
    options.sort(key=lambda item: len(item[1]))
    order = [sector for sector, _ in options]
    least, most = _ring_bounds([triples for _, triples in options])
    uses = [0] * 10
    sums = [0] * RINGS
    chosen: List[Tuple[int, ...]] = [()] * SECTORS
    # A resumed search re-enters the branches on the saved path, skipping those before them: every
    # solution found before the checkpoint lies in a skipped branch, so none is found twice.
    path: List[int] = list(resume["path"]) if resume else []
    nodes = int(resume["nodes"]) if resume else 0
    found = int(resume["solutions"]) if resume else 0
    stop = False
    at = [0] * SECTORS  # the index of the triple being tried at each position
    next_report = started + progress_every

    def search(position: int, on_path: bool) -> Iterator[Event]:
        nonlocal nodes, found, stop, next_report
        if position == SECTORS:
            if sums == [RING_SUM] * RINGS:
                found += 1
                rings = tuple(tuple(chosen[sector][ring] for sector in range(SECTORS)) for ring in range(RINGS))
                yield Found(rings, nodes, clock() - started)
                stop = not all_solutions
            return
        first = path[position] if on_path and position < len(path) else 0
        for index, triple in enumerate(options[position][1]):
            if index < first:
                continue
            at[position] = index
            nodes += 1
            if nodes & 4095 == 0 and clock() >= next_report:
                next_report = clock() + progress_every
                state = {"path": at[: position + 1], "nodes": nodes - 1, "solutions": found}
                yield Progress(nodes, clock() - started, found, _share_done(options, at, position + 1), state)
            if any(
                not least[ring][position + 1] <= RING_SUM - sums[ring] - triple[ring] <= most[ring][position + 1]
                for ring in range(RINGS)
            ):
                continue
            for digit in triple:
                uses[digit] += 1
            if max(uses[digit] for digit in triple) <= MOST_USES:
                for ring in range(RINGS):
                    sums[ring] += triple[ring]
                chosen[order[position]] = triple
                yield from search(position + 1, on_path and index == first and position + 1 < len(path))
                for ring in range(RINGS):
                    sums[ring] -= triple[ring]
            for digit in triple:
                uses[digit] -= 1
            if stop:
                return

    if any(not triples for _, triples in options):
        yield Finished(0, True, 0, clock() - started)
        return
    yield from search(0, bool(path))
    yield Finished(found, not stop, nodes, clock() - started)
