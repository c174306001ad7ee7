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

from ...capability import Capability

__all__ = ["KINDS", "PUZZLES"]

KINDS = ("hidoku", "checkerboard", "jodici", "flowerdisk", "equation", "panguru")


class Puzzles(Capability):
    """The seed puzzles' command, `bot.py puzzle KIND`; they have no settings of their own."""

    name = "puzzles"
    title = "Puzzles"
    page = "jobs/puzzles.md"
    commands = "twitterbot.jobs.puzzles.command"
    command_names = ("puzzle",)


PUZZLES = Puzzles()
