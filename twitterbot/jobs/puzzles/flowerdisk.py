"""The flower disk rotation puzzle: stacked disks on one pole, each with holes and solid parts in a
ring of (usually) twelve places; turn the disks so that every place is covered by a solid part of
at least one disk.

The file has one line per disk, top to bottom, each place ``1`` (solid) or ``0`` (a hole), written
as in the seed (``[0,0,1,...]``) or plain (``0 0 1 ...``, ``0,0,1,...`` or ``001...``); ``#``
starts a comment. The first disk stays put (turning the whole stack changes nothing), so a
solution is one rotation per disk, the first always 0.

Rotation direction (the seed's ``shift``): a disk turned by ``r`` shows at place ``i`` what its
line has at place ``(i + r) mod 12``, i.e. the line read ``r`` places further on, which is the
line moved ``r`` places towards its start. When no set of rotations works, the search also tries
each disk flipped over (its line reversed): the seed's own disks have no solution as given and
exactly one with the last disk flipped.

    puzzle = parse(EXAMPLE)
    for event in solve(puzzle, all_solutions=True):
        ...
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError

__all__ = [
    "ABOUT",
    "ALL_BY_DEFAULT",
    "EXAMPLE",
    "NAME",
    "FlowerDisks",
    "parse",
    "render",
    "rotate",
    "solution_json",
    "solve",
    "summary_json",
]

NAME = "flowerdisk"
ABOUT = "turn stacked flower disks until every hole is covered (and, if none works, try each disk flipped)"
ALL_BY_DEFAULT = True

# The seed's disks as the seed's author bought them (no solution: the last one was flipped).
EXAMPLE = """\
# The seed's flower disk puzzle: one disk per line, 1 solid, 0 a hole.
[0,0,0,0,0,1,0,1,0,0,1,0]
[1,0,0,1,0,0,0,0,0,0,0,1]
[0,1,0,0,0,0,0,1,0,1,0,0]
[0,0,0,1,0,0,1,0,0,0,0,1]
"""


@dataclass(frozen=True)
class FlowerDisks:
    """The disks as written, top to bottom, and where they came from (for messages)."""

    disks: Tuple[Tuple[int, ...], ...]
    source: str = "example"

    @property
    def places(self) -> int:
        return len(self.disks[0])


def parse(text: str, source: str = "example", **options: Any) -> FlowerDisks:
    """Read one disk per line; raises `PuzzleFileError` naming the line that is not a disk."""
    if options:
        raise PuzzleFileError(f"flowerdisk takes no options (got {', '.join(sorted(options))}): remove them")
    disks: List[Tuple[int, ...]] = []
    first_line = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        body = line[1:-1] if line.startswith("[") and line.endswith("]") else line
        if re.fullmatch(r"[01]+", body):
            places = tuple(int(char) for char in body)
        else:
            parts = [part for part in re.split(r"[\s,]+", body.strip()) if part]
            if not parts or any(part not in ("0", "1") for part in parts):
                raise PuzzleFileError(
                    f"{source} line {number} is not a disk: {raw.strip()!r}; write one disk per line as 0 (hole) "
                    "and 1 (solid), e.g. [0,0,0,0,0,1,0,1,0,0,1,0]"
                )
            places = tuple(int(part) for part in parts)
        if disks and len(places) != len(disks[0]):
            raise PuzzleFileError(
                f"{source} line {number} has {len(places)} places but line {first_line} has {len(disks[0])}: "
                "every disk needs the same number of places"
            )
        if not disks:
            first_line = number
        disks.append(places)
    if not disks:
        raise PuzzleFileError(f"{source} has no disks: write one line of 0 (hole) and 1 (solid) per disk")
    if len(disks[0]) < 2:
        raise PuzzleFileError(f"{source} line {first_line} has {len(disks[0])} place: a disk needs at least 2")
    return FlowerDisks(tuple(disks), source)


def rotate(places: Sequence[int], rotation: int) -> Tuple[int, ...]:
    """The disk turned by `rotation`: place i shows what the line has at place i + rotation."""
    rotation %= len(places)
    return tuple(places[rotation:]) + tuple(places[:rotation])


@dataclass(frozen=True)
class Solution:
    """One rotation per disk (the first 0); `flipped` is the 0-based disk turned over, if any."""

    rotations: Tuple[int, ...]
    flipped: Optional[int] = None


def _masks(disk: Sequence[int]) -> List[int]:
    """The disk's solid places as a bitmask, for each rotation."""
    found = []
    for rotation in range(len(disk)):
        mask = 0
        for place, solid in enumerate(rotate(disk, rotation)):
            if solid:
                mask |= 1 << place
        found.append(mask)
    return found


def _search(disks: Sequence[Sequence[int]]) -> Iterator[Tuple[Tuple[int, ...], int]]:
    """Every rotation set covering all places, depth first over bitmasks, with the count of
    nodes visited since the last solution. A branch is cut when the disks still to turn have
    fewer solid parts than there are uncovered places."""
    full = (1 << len(disks[0])) - 1
    masks = [_masks(disk) for disk in disks]
    solid_after = [sum(sum(disk) for disk in disks[index:]) for index in range(len(disks) + 1)]
    rotations = [0] * len(disks)
    nodes = 0
    # An explicit stack of (disk index, covered so far, next rotation to try).
    stack: List[List[int]] = [[1, masks[0][0], 0]]
    if len(disks) == 1:
        if masks[0][0] == full:
            yield (0,), 1
        return
    while stack:
        frame = stack[-1]
        index, covered, rotation = frame
        if rotation == len(disks[0]):
            stack.pop()
            continue
        frame[2] = rotation + 1
        nodes += 1
        rotations[index] = rotation
        now = covered | masks[index][rotation]
        if index + 1 == len(disks):
            if now == full:
                yield tuple(rotations), nodes
                nodes = 0
            continue
        if bin(full & ~now).count("1") > solid_after[index + 1]:
            continue
        stack.append([index + 1, now, 0])
    if nodes:
        yield (), nodes


def solve(
    puzzle: FlowerDisks,
    *,
    all_solutions: bool,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.perf_counter,
    report_every: float = 1.0,
) -> Iterator[Event]:
    """Yield `Found` for each rotation set that covers every place (only the first unless
    `all_solutions`), then `Finished`; when there is none, `Finished.extra["flipped"]` lists, for
    each disk whose flipping gives solutions, how many and the first. The whole search is a few
    thousand nodes, so it does not checkpoint (`resume` is ignored)."""
    started = clock()
    nodes = 0
    solutions = 0
    next_report = started + report_every
    complete = True
    for rotations, visited in _search(puzzle.disks):
        nodes += visited
        if not rotations:
            break
        solutions += 1
        yield Found(Solution(rotations), nodes, clock() - started)
        if not all_solutions:
            complete = False
            break
        now = clock()
        if now >= next_report:
            next_report = now + report_every
            yield Progress(nodes, now - started, solutions)
    extra: Dict[str, Any] = {}
    if solutions == 0:
        flipped = []
        for index in range(len(puzzle.disks)):
            disks = list(puzzle.disks)
            disks[index] = tuple(reversed(disks[index]))
            count = 0
            first: Tuple[int, ...] = ()
            for rotations, visited in _search(disks):
                nodes += visited
                if rotations:
                    count += 1
                    first = first or rotations
            if count:
                flipped.append({"disk": index + 1, "solutions": count, "solution": Solution(first, index)})
        extra["flipped"] = flipped
    yield Finished(solutions, complete, nodes, clock() - started, extra)


def render(puzzle: FlowerDisks, solution: Solution) -> str:
    """The rotations and the stack as turned, one disk per line, as the seed prints it."""
    lines = []
    if solution.flipped is not None:
        lines.append(f"disk {solution.flipped + 1} flipped over (its line reversed)")
    lines.append(f"rotations={list(solution.rotations)}")
    for index, disk in enumerate(puzzle.disks):
        if index == solution.flipped:
            disk = tuple(reversed(disk))
        lines.append(str(list(rotate(disk, solution.rotations[index]))))
    return "\n".join(lines)


def solution_json(puzzle: FlowerDisks, solution: Solution) -> object:
    """The rotation of each disk (place i shows the line's place i + rotation)."""
    return list(solution.rotations)


def summary_json(puzzle: FlowerDisks, finished: Finished) -> Dict[str, Any]:
    """`flipped` when the disks as given have no solution: each disk (1-based) whose flipping
    gives solutions, how many, and the first one's rotations."""
    if "flipped" not in finished.extra:
        return {}
    return {
        "flipped": [
            {"disk": entry["disk"], "solutions": entry["solutions"], "solution": list(entry["solution"].rotations)}
            for entry in finished.extra["flipped"]
        ]
    }
