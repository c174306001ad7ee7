"""The peg solitaire job: run the solver or the counter and turn their events into progress posts.

    python bot.py pegs solve english          # one solution, printed as the seed's result.txt
    python bot.py pegs count english          # positions per level and the number of solutions

The solver (`pegsolve`) and the counter (`pegcount`) know nothing about posting; this module
reads their events and tells the reporter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, TextIO, Union

from .install import write_atomically
from .pegboard import Board
from .pegcount import Level, count_levels
from .pegsolve import Impossible, Searching, Solved, solution_text, solve
from .progress import NullReporter, Reporter

__all__ = ["run_count", "run_solve"]

AnyReporter = Union[Reporter, NullReporter]


def run_solve(board: Board, reporter: AnyReporter, *, output: Optional[Path] = None, out: TextIO = sys.stdout) -> bool:
    """Solve `board`, reporting as it goes; print (and write to `output`) the solution. True if solved."""
    for event in solve(board):
        if isinstance(event, Searching):
            reporter.update(
                f"searched {event.positions:,} positions ({event.per_second:,.0f}/s); "
                f"best so far {event.fewest_pegs} pegs left",
                milestone=event.new_best,
            )
        elif isinstance(event, Solved):
            text = solution_text(board, event.jumps)
            out.write(text)
            if output:
                write_atomically(output, text, 0o644)
            moves = " ".join(board.describe(jump) for jump in event.jumps)
            reporter.done(
                f"solved in {len(event.jumps)} jumps, after trying {event.positions:,} positions in "
                f"{event.seconds:.2f} s: {moves}"
            )
            return True
        elif isinstance(event, Impossible):
            out.write(f"{board.name}: {event.reason}\n")
            reporter.done(event.reason)
            return False
    raise AssertionError("solve() always ends with Solved or Impossible")  # pragma: no cover


def run_count(board: Board, reporter: AnyReporter, *, checkpoint: Optional[Path], out: TextIO = sys.stdout) -> Level:
    """Count `board` level by level, printing a line and reporting each level; returns the last.
    With `checkpoint`, a stopped count resumes after its last finished level."""
    total = 0
    last: Optional[Level] = None
    out.write("jumps  positions   sequences\n")
    for level in count_levels(board, checkpoint=checkpoint):
        total += level.positions
        sequences = f"{level.sequences:,}" if level.sequences >= 0 else "over 2^64"
        out.write(f"{level.jumps:>5}  {level.positions:>10,}  {sequences}\n")
        out.flush()
        reporter.update(
            f"after {level.jumps} jumps: {level.positions:,} distinct positions ({total:,} so far)",
            milestone=True,
        )
        last = level
    assert last is not None  # level 0 always exists
    solutions = last.solutions if last.solutions is not None else 0
    shown = f"{solutions:,}" if solutions >= 0 else "over 2^64"
    summary = f"{total:,} positions reached in {last.jumps} jumps; {shown} solutions"
    out.write(f"{board.name}: {summary} ({last.seconds:.1f} s)\n")
    reporter.done(summary)
    if checkpoint and checkpoint.exists():
        checkpoint.unlink()  # finished: the next count starts afresh
    return last
