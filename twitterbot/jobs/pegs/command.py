"""The peg solitaire job's command: ``bot.py pegs solve|count|boards [BOARD]``."""

from __future__ import annotations

import argparse
import shutil
import sys

from ...arguments import Commands, Parser, absolute, add_command, one_of
from ...errors import ExitStatus, UsageError
from ...progress import NullReporter, open_reporter
from ...progress.commands import add_progress_flags
from ...progress.statusline import status_line_for
from ...settings import Config
from ...state import ensure_state_dir
from .board import BOARDS, builtin, check_countable, load_board, with_empty_hole

__all__ = ["register"]


def register(parser: Parser, commands: Commands) -> None:
    _add_pegs(commands)


def _pegs(args: argparse.Namespace, config: Config) -> int:
    """Solve or count a peg solitaire board, posting progress and the result."""
    from .job import run_count, run_fewest, run_solve  # the counter needs numpy: only for this command
    from .kernel import load as load_kernel

    if args.action == "boards":
        for name, (_, kind, _, about) in BOARDS.items():
            print(f"{name:16} {kind:11} {builtin(name).goal_text:18} {about}")
        return int(ExitStatus.OK)
    if args.fewest_moves and args.action != "solve":
        raise UsageError(f"--fewest-moves is for pegs solve, not pegs {args.action}: drop it, or use solve")
    if args.file and args.board:
        raise UsageError(
            f"pegs {args.action} got both the board {args.board!r} and --file {args.file}: give one of them, not both"
        )
    if args.file:
        board = load_board(absolute(args.file), finish=args.finish)
    else:
        board = builtin(args.board or "english", finish=args.finish)
    if args.empty:
        board = with_empty_hole(board, args.empty)
    if args.action == "count" or args.fewest_moves:  # refused before anything is printed or posted
        check_countable(board, "pegs count" if args.action == "count" else "pegs solve --fewest-moves")
    name = args.name or f"pegs {args.action} {board.name}"
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter()
        if args.no_post
        else open_reporter(name, config=config, dry_run=args.dry_run, status=status, pictures=not args.no_pictures)
    )
    with reporter as report:
        if args.action == "solve":
            if args.fewest_moves:
                ensure_state_dir(config.state_dir)
                levels = config.state_dir / f"pegs-fewest-{board.name}"
                try:
                    run_fewest(
                        board,
                        report,
                        output=absolute(args.output),
                        status=status,
                        folder=levels,
                        kernel=load_kernel(config.state_dir / "pegs-cache"),  # None: numpy, the same levels
                    )
                finally:
                    shutil.rmtree(levels, ignore_errors=True)  # the count's levels were only for this search
            else:
                run_solve(
                    board,
                    report,
                    output=absolute(args.output),
                    status=status,
                    kernel=load_kernel(config.state_dir / "pegs-cache"),  # None: the search runs in Python
                )
            return int(ExitStatus.OK)  # solved, or proved impossible: either is an answer
        ensure_state_dir(config.state_dir)
        levels = config.state_dir / f"pegs-levels-{board.name}"
        levels.mkdir(exist_ok=True)
        run_count(
            board,
            report,
            checkpoint=config.state_dir / f"pegs-count-{board.name}.npz",
            status=status,
            levels=levels,
            kernel=load_kernel(config.state_dir / "pegs-cache"),  # None: numpy, the same levels
        )
        shutil.rmtree(levels, ignore_errors=True)  # finished: the level files were only for this count
        return int(ExitStatus.OK)


def _add_pegs(commands: Commands) -> None:
    pegs = add_command(
        commands,
        "pegs",
        _pegs,
        takes=("dry_run",),
        dry_run_help="print the posts it would send; post nothing",
        help="peg solitaire: solve a board, or count its positions and solutions",
        description="Solve a peg solitaire board or count it level by level, posting progress and "
        "the result (--no-post to keep it local). Boards: " + ", ".join(BOARDS) + ", or --file.",
    )
    pegs.add_argument("action", choices=("solve", "count", "boards"), help="what to do")
    pegs.add_argument(
        "board",
        nargs="?",
        type=one_of(tuple(BOARDS), "built-in board", ", or --file"),
        help="a built-in board (default: english); see: pegs boards",
    )
    pegs.add_argument("--file", metavar="PATH", help="a board file: X peg, O hole, space or . no hole")
    pegs.add_argument(
        "--finish",
        metavar="centre|any|HOLE",
        help="where the last peg must be: centre, any, or a hole such as d4 (default: the board's own goal; "
        "a board file without a finish: line means any)",
    )
    pegs.add_argument(
        "--empty", metavar="HOLE", help="start with every hole full but HOLE (such as a1), instead of the board's start"
    )
    pegs.add_argument(
        "--fewest-moves",
        action="store_true",
        help="solve: the solution with the fewest moves (a move is one peg's run of jumps), proved minimal "
        "(english: 18 moves, about a minute); one peg anywhere: small boards only",
    )
    pegs.add_argument("--output", metavar="PATH", help="solve: also write the solution to this file")
    pegs.add_argument("--name", help="the job's name in posts (default: 'pegs ACTION BOARD')")
    add_progress_flags(pegs, "every", "first_after")
    pegs.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    pegs.add_argument("--no-pictures", action="store_true", help="posts without the board's pictures (PICTURES)")
