"""The peg solitaire job: run the solver or the counter and turn their events into progress posts.

    python bot.py pegs solve english          # one solution, printed as the seed's result.txt
    python bot.py pegs count english          # positions per level and the number of solutions

The solver (`solve`) and the counter (`count`) know nothing about posting; this module
reads their events and tells the reporter.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, TextIO, Union

from ...errors import UsageError
from ...files import write_atomically
from ...progress.reporter import Reporter
from ...progress.reports import NullReporter
from ...progress.statusline import NullStatusLine, StatusLine
from ...progress.text import format_elapsed
from ...wording import plural
from .animation import solution_animation
from .board import Board, count_convention
from .count import count_levels, finishable_counts
from .fewest import Counted, FewestMoves, Searched, TooBig, group_moves, search_fewest
from .kernel import Kernel, worker_kernel
from .levels import Counting, Level
from .picture import solution_picture, start_picture
from .solve import Impossible, Searching, Solved, solution_text, solve

__all__ = ["CountSetup", "run_count", "run_fewest", "run_solve", "solve_text", "solve_text_on_worker"]

AnyReporter = Union[Reporter, NullReporter]
AnyStatus = Union[StatusLine, NullStatusLine]


def run_fewest(
    board: Board,
    reporter: AnyReporter,
    *,
    output: Optional[Path] = None,
    out: Optional[TextIO] = None,
    status: Optional[AnyStatus] = None,
    folder: Optional[Path] = None,
    kernel: Optional[Kernel] = None,
) -> bool:
    """Find the solution with the fewest moves (a move: one peg's run of jumps) and print it as
    `solve` does, with a line of its moves and whether the count is proved minimal. A goal
    position first counts the board (its levels kept in `folder`), which on the English board
    takes most of the time: the status line and the reporter follow both stages."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    status = status or NullStatusLine()
    reporter.opening_picture(lambda: start_picture(board))

    def counting(progress: Counting) -> None:
        status.show(
            f"fewest moves: counting level {progress.jumps}: {progress.done / max(progress.total, 1):.0%} of "
            f"{plural(progress.total, 'position')} expanded",
            part="job",
        )
        reporter.tick()

    result: Optional[FewestMoves] = None
    for event in search_fewest(board, folder=folder, progress=counting, kernel=kernel):
        if isinstance(event, Counted):
            words = f"counted level {event.jumps} of {event.levels - 1}: {plural(event.positions, 'position')}"
            status.show(f"fewest moves: {words}", part="job")
            reporter.update(f"finding the positions that can still reach the goal: {words}")
        elif isinstance(event, Searched):
            words = (
                f"{plural(event.seen, 'position')} within {plural(event.moves, 'move')} of the start, of the "
                f"{event.finishable:,} that can reach the goal"
            )
            status.show(f"fewest moves: {words}", part="job")
            reporter.update(words, milestone=True)
        elif isinstance(event, TooBig):
            status.clear()
            raise UsageError(event.reason)
        else:
            result = event
    status.clear()
    assert result is not None  # search_fewest always ends with FewestMoves or TooBig
    if result.jumps is None:
        text = f"{board.name}: impossible: no sequence of jumps reaches the goal ({result.states:,} positions tried)\n"
        out.write(text)
        reporter.done(text.strip())
        return False
    moves = group_moves(result.jumps)
    proved = "proved the fewest" if result.proved else "not proved the fewest"
    line = " ".join(
        "-".join([board.name_of(move[0].start)] + [board.name_of(jump.end) for jump in move]) for move in moves
    )
    text = solution_text(board, result.jumps) + f"Moves ({len(moves)}, {proved}): {line}\n"
    out.write(text)
    if output:
        write_atomically(output, text, 0o644)
    jumps = result.jumps
    reporter.done(
        f"solved in {plural(len(moves), 'move')} ({proved}), {plural(len(jumps), 'jump')}: {line}",
        picture=lambda: solution_picture(board, jumps, title=f"{board.name}: {plural(len(moves), 'move')}, {proved}"),
    )
    return True


def run_solve(
    board: Board,
    reporter: AnyReporter,
    *,
    output: Optional[Path] = None,
    out: Optional[TextIO] = None,
    status: Optional[AnyStatus] = None,
    kernel: Optional[Kernel] = None,
    animate: bool = False,
) -> bool:
    """Solve `board`, reporting as it goes; print (and write to `output`) the solution, or the
    proof that there is none. True if solved. With `kernel` (kernel.load), the depth-first
    searches run in C; with `animate`, the result's picture is a video of the jumps."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    status = status or NullStatusLine()
    reporter.opening_picture(lambda: start_picture(board))
    for event in solve(board, kernel=kernel):
        if isinstance(event, Searching):
            searched = f"searched {plural(event.positions, 'position')} ({event.per_second:,.0f}/s)"
            status.show(f"{searched}; fewest pegs left so far {event.fewest_pegs}", part="job")
            reporter.update(
                f"{searched}; best so far {plural(event.fewest_pegs, 'peg')} left", milestone=event.new_best
            )
        elif isinstance(event, Solved):
            text = solution_text(board, event.jumps)
            status.clear()
            out.write(text)
            if output:
                write_atomically(output, text, 0o644)
            moves = " ".join(board.describe(jump) for jump in event.jumps)
            reporter.done(
                f"solved in {plural(len(event.jumps), 'jump')}, after trying {plural(event.positions, 'position')} "
                f"in {event.seconds:.2f} s: {moves}",
                picture=lambda jumps=event.jumps: (solution_animation if animate else solution_picture)(board, jumps),
            )
            return True
        elif isinstance(event, Impossible):
            status.clear()
            out.write(f"{board.name}: {event.reason}\n")
            if output:  # the proof is the answer: write it where the solution would have gone
                proof = f"Starting Board\n{board.render(board.start)}\nNo Solution\n\n{board.name}: {event.reason}\n"
                write_atomically(output, proof, 0o644)
            reporter.done(event.reason)
            return False
    raise AssertionError("solve() always ends with Solved or Impossible")  # pragma: no cover


def solve_text(board: Board, kernel: Optional[Kernel] = None) -> str:
    """What `pegs solve` prints for `board`: its solution, or why there is none (a batch's task)."""
    import io

    out = io.StringIO()
    run_solve(board, NullReporter(), out=out, kernel=kernel)
    return out.getvalue()


def solve_text_on_worker(board: Board) -> str:
    """`solve_text` as a Dask task, with the worker's own kernel if it can build one."""
    return solve_text(board, worker_kernel())


@dataclass(frozen=True)
class CountSetup:
    """Where a count keeps its files and what it runs on, as `pegs count` chose them.

    `checkpoint`: a stopped count resumes after its last finished level kept there (None: no
    resuming). `levels`: a folder keeping each level's positions, to count the positions from which
    the goal can still be reached once the count is done (a central game only). `kernel`
    (kernel.load): the levels made in C, the same output, faster. `cluster` (jobs.cluster.Cluster):
    the levels spread over its workers, `checkpoint` then a folder of shares, the output the same
    again. `workers` above 1: over that many threads here."""

    checkpoint: Optional[Path]
    levels: Optional[Path] = None
    kernel: Optional[Kernel] = None
    cluster: Any = None
    workers: int = 1


def run_count(
    board: Board,
    reporter: AnyReporter,
    setup: CountSetup,
    *,
    out: Optional[TextIO] = None,
    status: Optional[AnyStatus] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Level:
    """Count `board` level by level, printing a line and reporting each level; returns the last.
    `setup` says where the count keeps its checkpoint and levels and what it runs on (this
    machine's cores, the compiled kernel, a cluster). On a terminal the status line shows the
    level being counted, how far it is and, at its pace, how long it has left."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    checkpoint, levels, kernel, cluster = setup.checkpoint, setup.levels, setup.kernel, setup.cluster
    status = status or NullStatusLine()
    reporter.opening_picture(lambda: start_picture(board))
    total = 0
    last: Optional[Level] = None
    most = board.pegs(board.start) - 1  # the game cannot last longer

    def counting(progress: Counting) -> None:
        left = progress.seconds_left
        status.show(
            f"counting level {progress.jumps} of at most {most}: {progress.done / max(progress.total, 1):.0%} of "
            f"{plural(progress.total, 'position')} expanded"
            + (f", about {format_elapsed(left)} left in this level" if left is not None else "")
            + f"; {plural(total, 'position')} so far",
            part="job",
        )
        reporter.tick()

    short, long = count_convention(board)
    out.write(f"{board.name}: {long}\n")
    out.write("jumps  positions  sequences  complete games ending here\n")
    games = 0
    on = f" on a cluster of {plural(cluster.workers, 'worker')}" if cluster is not None else ""
    finishable: Optional[List[int]] = [] if cluster is not None else None
    for level in _counted(board, setup, counting, clock, finishable):
        total += level.positions
        games += level.games
        status.clear()
        out.write(f"{level.jumps:>5}  {level.positions:>9,}  {level.sequences:,}  {level.games:,}\n")
        out.flush()
        reporter.update(
            f"after {plural(level.jumps, 'jump')}: {plural(level.positions, 'distinct position')} ({total:,} so far){on}",
            milestone=True,
        )
        last = level
    assert last is not None  # level 0 always exists
    solutions = last.solutions if last.solutions is not None else 0
    summary = (
        f"{plural(total, 'position')} ({short}) reached in {plural(last.jumps, 'jump')}; {plural(solutions, 'solution')}; "
        f"{plural(games, 'complete game')}"
    )
    status.clear()
    out.write(f"{board.name}: {summary} ({last.seconds:.1f} s)\n")
    if levels is not None and cluster is None:
        finishable = finishable_counts(board, levels, last.jumps + 1, kernel=kernel)
    if finishable:
        out.write(
            "positions from which the goal can still be reached, per level (OEIS A112738 for english): "
            + ", ".join(f"{number:,}" for number in finishable)
            + f"; {sum(finishable):,} in all\n"
        )
    reporter.done(summary)
    if checkpoint and checkpoint.is_dir():
        shutil.rmtree(checkpoint, ignore_errors=True)  # finished: the next count starts afresh
    elif checkpoint and checkpoint.exists():
        checkpoint.unlink()
    return last


def _counted(
    board: Board,
    setup: CountSetup,
    progress: Callable[[Counting], None],
    clock: Callable[[], float],
    finishable: Optional[List[int]],
) -> Iterator[Level]:
    """The count's levels: on the cluster's workers (filling `finishable`), or on this machine's cores."""
    if setup.cluster is not None:
        from .spread import count_on_cluster  # needs a cluster: only with --cluster

        return count_on_cluster(
            board, setup.cluster, checkpoint=setup.checkpoint, progress=progress, finishable=finishable
        )
    return count_levels(
        board,
        checkpoint=setup.checkpoint,
        progress=progress,
        clock=clock,
        keep=setup.levels,
        kernel=setup.kernel,
        workers=setup.workers,
    )
