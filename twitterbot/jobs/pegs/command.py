"""The peg solitaire job's command: ``bot.py pegs solve|count|boards [BOARD]``."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any, List, Optional

from ...arguments import Commands, Parser, absolute, add_command, one_of, positive_int
from ...errors import ExitStatus, UsageError
from ...progress.commands import add_progress_flags
from ...progress.reports import NullReporter
from ...progress.session import JobSettings, open_reporter
from ...progress.statusline import status_line_for
from ...settings.loading import Config
from ...state.folder import ensure_state_dir
from ..cluster import add_cluster_flag, cluster_for
from . import TWITTERBOT_PEGS_KERNEL
from .board import BoardFileError, builtin, check_countable, load_board, with_empty_hole
from .boards import BOARDS

__all__ = ["register"]


def register(parser: Parser, commands: Commands) -> None:
    _add_pegs(commands)


def _pegs(args: argparse.Namespace, config: Config) -> int:
    """Solve or count a peg solitaire board, posting progress and the result."""
    if args.workers is not None and args.action != "count":
        raise UsageError(f"--workers is for pegs count, not pegs {args.action}: drop it")
    if args.action == "boards":
        for name, (_, kind, _, about) in BOARDS.items():
            print(f"{name:16} {kind:11} {builtin(name).goal_text:18} {about}")
        return int(ExitStatus.OK)
    if args.animate and (args.action != "solve" or args.batch or args.fewest_moves):
        raise UsageError("--animate is for pegs solve of one board (not --batch or --fewest-moves): drop it")
    if args.batch:
        return _batch(args, config)
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
    if args.cluster and args.action != "count":
        raise UsageError(f"--cluster is for pegs count and pegs solve --batch, not pegs {args.action}: drop it")
    if args.workers is not None and args.cluster:
        raise UsageError(
            "--workers N counts on this machine's cores, --cluster on a cluster's workers: give one of them"
        )
    cluster = cluster_for(args, config) if args.action == "count" else None  # before anything is posted
    name = args.name or f"pegs {args.action} {board.name}"
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter()
        if args.no_post
        else open_reporter(
            name, config=config, job=JobSettings(pictures=not args.no_pictures), dry_run=args.dry_run, status=status
        )
    )
    try:
        with reporter as report:
            return _run(args, config, board, report, status, cluster)
    finally:
        if cluster is not None:
            cluster.close()


def _batch(args: argparse.Namespace, config: Config) -> int:
    """`pegs solve --batch FILE`: every board of the file solved (on the cluster, if one is named),
    printed in the file's order."""
    from ..batch import in_order
    from .job import solve_text, solve_text_on_worker
    from .kernel import load as load_kernel

    if args.action != "solve" or args.board or args.file or args.fewest_moves or args.empty:
        raise UsageError("--batch FILE goes with pegs solve alone: the boards are the file's lines")
    boards = _batch_boards(absolute(args.batch), args.finish)
    cluster = cluster_for(args, config)
    try:
        if cluster is None:
            kernel = load_kernel(config.state.file("pegs-cache"), switch=config[TWITTERBOT_PEGS_KERNEL])
            texts = in_order(lambda board: solve_text(board, kernel), [(board,) for board in boards])
        else:
            texts = in_order(solve_text_on_worker, [(board,) for board in boards], cluster)
        for number, text in enumerate(texts, 1):
            sys.stdout.write(f"== {number}/{len(boards)}: {boards[number - 1].name} ==\n{text}")
            sys.stdout.flush()
    finally:
        if cluster is not None:
            cluster.close()
    return int(ExitStatus.OK)


def _batch_boards(path: Path, finish: Optional[str]) -> List[Any]:
    """The boards of a batch file: one a line, a built-in name or a board file (relative to the
    batch file's folder), then optionally the hole to leave empty; # starts a comment."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardFileError(f"cannot read the batch file {path} ({getattr(exc, 'strerror', None) or exc})") from None
    boards = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2:
            raise BoardFileError(f"{path} line {number}: write a board and at most one empty hole, e.g. 'english d4'")
        name = words[0]
        board = builtin(name, finish=finish) if name in BOARDS else load_board(path.parent / name, finish=finish)
        boards.append(with_empty_hole(board, words[1]) if len(words) == 2 else board)
    if not boards:
        raise BoardFileError(f"{path} names no board: one a line, e.g. 'english' or 'boards/cross.txt d4'")
    return boards


def _run(args: argparse.Namespace, config: Config, board: Any, report: Any, status: Any, cluster: Any) -> int:
    """The action, with the reporter open."""
    from .job import CountSetup, run_count, run_fewest, run_solve  # the counter needs numpy: only for this command
    from .kernel import load as load_kernel

    if args.action == "solve":
        if args.fewest_moves:
            ensure_state_dir(config.state.path)
            levels = config.state.file(f"pegs-fewest-{board.name}")
            try:
                run_fewest(
                    board,
                    report,
                    output=absolute(args.output),
                    status=status,
                    folder=levels,
                    kernel=load_kernel(
                        config.state.file("pegs-cache"), switch=config[TWITTERBOT_PEGS_KERNEL]
                    ),  # None: numpy, the same levels
                )
            finally:
                shutil.rmtree(levels, ignore_errors=True)  # the count's levels were only for this search
        else:
            run_solve(
                board,
                report,
                output=absolute(args.output),
                status=status,
                animate=args.animate,
                kernel=load_kernel(
                    config.state.file("pegs-cache"), switch=config[TWITTERBOT_PEGS_KERNEL]
                ),  # None: the search runs in Python
            )
        return int(ExitStatus.OK)  # solved, or proved impossible: either is an answer
    ensure_state_dir(config.state.path)
    levels = config.state.file(f"pegs-levels-{board.name}")
    levels.mkdir(exist_ok=True)
    setup = CountSetup(
        checkpoint=config.state.file(f"pegs-count-{board.name}" + (".cluster" if cluster else ".npz")),
        levels=levels,
        kernel=load_kernel(
            config.state.file("pegs-cache"), switch=config[TWITTERBOT_PEGS_KERNEL]
        ),  # None: numpy, the same levels
        cluster=cluster,
        workers=args.workers or _cores(),
    )
    run_count(board, report, setup, status=status)
    shutil.rmtree(levels, ignore_errors=True)  # finished: the level files were only for this count
    return int(ExitStatus.OK)


def _cores() -> int:
    """The CPU cores this process may run on (a container or `taskset` may allow fewer than the
    machine has)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


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
    pegs.add_argument(
        "--batch",
        metavar="FILE",
        help="solve: every board of FILE (one a line: a built-in name or board file, then optionally the hole to "
        "leave empty), printed in the file's order; with --cluster, on its workers",
    )
    pegs.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="count: threads counting side by side on this machine, each owning a share of every level "
        "(default: one per CPU core); the same figures",
    )
    add_cluster_flag(pegs)
    pegs.add_argument("--name", help="the job's name in posts (default: 'pegs ACTION BOARD')")
    add_progress_flags(pegs, "every", "first_after")
    pegs.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    pegs.add_argument("--no-pictures", action="store_true", help="posts without the board's pictures (PICTURES)")
    pegs.add_argument(
        "--animate",
        action="store_true",
        help="solve: the result's picture is a short video of the solution, jump by jump (an MP4 made by ffmpeg; "
        "without ffmpeg, the still)",
    )
