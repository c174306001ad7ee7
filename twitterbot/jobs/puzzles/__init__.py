"""Puzzle solvers from the seed documents, one module per kind, all behind one small interface.

Each kind module (``hidoku.py``, ``checkerboard.py``, ...) is pure: it parses the kind's file
format, searches, and yields events; it knows nothing of posting, printing or the command line.
`job.py` turns the events into reporter calls and output, `command.py` registers
``bot.py puzzle KIND``. A kind module provides::

    NAME: str                  # "hidoku": the word typed after `bot.py puzzle`
    ABOUT: str                 # one line for `puzzle --help`
    EXAMPLE: str               # the seed's own puzzle, in the kind's file format
    ALL_BY_DEFAULT: bool       # True where the seed asks for every solution
    def parse(text: str, source: str = "example", **options) -> Puzzle
        # raises PuzzleFileError naming the source and line
    def solve(puzzle, *, all_solutions: bool, resume: Optional[dict] = None) -> Iterator[Event]
        # Progress now and then, Found per solution, then exactly one Finished
    def render(puzzle, solution) -> str          # the solved board as the seed shows it
    def solution_json(puzzle, solution) -> object  # the issue's `solution` shape
    def summary_json(puzzle, finished) -> dict      # extra keys (`up_to_symmetry`, `moves`), or {}

`KINDS` lists the kind modules in `puzzle --help` order: adding a kind is a module and a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Union

from ...capability import Capability
from ...errors import BotError, ExitStatus

__all__ = ["KINDS", "PUZZLES", "Event", "Finished", "Found", "Progress", "PuzzleFileError"]

KINDS = ("hidoku", "checkerboard", "jodici", "flowerdisk", "equation", "panguru")


class PuzzleFileError(BotError):
    """A puzzle file that cannot be read as its kind; the message names the file and line."""

    exit_status = ExitStatus.DATA_ERROR
    kind = "puzzle_file"


@dataclass(frozen=True)
class Progress:
    """Now and then during a search: nodes visited, solutions so far, and an estimate of the share
    of the search tree done (0..1, None when no estimate is possible). `state` is what a restarted
    search needs to resume (JSON-serialisable), or None if this kind cannot resume."""

    nodes: int
    seconds: float
    solutions: int
    done: Optional[float] = None
    state: Optional[Dict[str, Any]] = None

    @property
    def per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Found:
    """One solution, in the kind's own form (passed back to `render` and `solution_json`)."""

    solution: Any
    nodes: int
    seconds: float


@dataclass(frozen=True)
class Finished:
    """The end: how many solutions, whether the search was exhaustive, and kind-specific figures."""

    solutions: int
    complete: bool
    nodes: int
    seconds: float
    extra: Dict[str, Any] = field(default_factory=dict)


Event = Union[Progress, Found, Finished]


class Puzzles(Capability):
    """The seed puzzles' command, `bot.py puzzle KIND`; they have no settings of their own."""

    name = "puzzles"
    title = "Puzzles"
    page = "jobs/puzzles.md"
    commands = "twitterbot.jobs.puzzles.command"


PUZZLES = Puzzles()
