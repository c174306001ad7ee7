"""The seed's flower disk solver, re-implemented faithfully as the benchmark's baseline.

As the seed runs it: a breadth-first search over states (one rotation or "not yet" per disk, the
first disk fixed at 0) kept in a Python list popped from the front; each state's successors turn
the next disk to each of the 12 rotations, with no branch cutting (the seed leaves its validity
check commented out), and each leaf counts, column by column over freshly rotated copies of every
disk, the places no solid part covers.
"""

from __future__ import annotations

from typing import List, Optional

__all__ = ["solve_seed"]


def _read(text: str) -> List[List[int]]:
    disks = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip().strip("[]")
        if line:
            disks.append([int(part) for part in line.replace(",", " ").split()])
    return disks


class _State:
    def __init__(self, disks: List[List[int]], rotations: List[Optional[int]]) -> None:
        self.disks = disks
        self.rotations = rotations

    def rotated(self) -> List[List[int]]:
        rows = []
        for disk, rotation in zip(self.disks, self.rotations):
            shift = (rotation or 0) % len(disk)
            rows.append(disk[shift:] + disk[:shift])
        return rows

    def covered(self, place: int) -> int:
        rows = self.rotated()
        return sum(1 for row, rotation in zip(rows, self.rotations) if rotation is not None and row[place] == 1)

    def open_places(self) -> int:
        return sum(1 for place in range(len(self.disks[0])) if self.covered(place) == 0)

    def is_leaf(self) -> bool:
        return all(rotation is not None for rotation in self.rotations)

    def successors(self) -> List[_State]:
        if self.is_leaf():
            return []
        index = self.rotations.index(None)
        found = []
        for rotation in range(len(self.disks[index])):
            rotations = self.rotations[:]
            rotations[index] = rotation
            found.append(_State(self.disks, rotations))
        return found


def solve_seed(text: str) -> int:
    """How many rotation sets the seed's search finds that cover every place."""
    disks = _read(text)
    states = [_State(disks, [0] + [None] * (len(disks) - 1))]
    solutions = 0
    while states:
        state = states.pop(0)
        if state.is_leaf() and state.open_places() == 0:
            solutions += 1
        states += state.successors()
    return solutions
