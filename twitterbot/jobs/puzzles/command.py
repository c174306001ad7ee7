"""``bot.py puzzle KIND [FILE]``: solve a puzzle of any kind, posting progress and the result.

    python bot.py puzzle hidoku --example            # the seed's sample, every solution
    python bot.py puzzle jodici my.csv --json --no-post
    python bot.py puzzle hidoku --generate           # post a new daily Hidoku challenge
    python bot.py puzzle hidoku --reveal "hidoku 2026-11-23"   # ... and later its solution

`register(commands)` adds the command to the CLI's subcommands; the handler builds the reporter
from the config and calls `job.run_puzzle` (or the challenge functions).
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from ...arguments import Commands, Parser, absolute, add_command, one_of
from ...errors import ExitStatus, UsageError
from ...progress.commands import add_progress_flags
from ...progress.reports import NullReporter, Templates
from ...progress.session import JobSettings, open_reporter
from ...progress.statusline import status_line_for
from ...registry import registry_of
from ...settings.loading import Config
from ...state.folder import ensure_state_dir
from ..cluster import add_cluster_flag
from . import KINDS
from .events import PuzzleFileError
from .job import (
    Options,
    available_kinds,
    challenge_key,
    challenge_path,
    checkpoint_path,
    load_challenge,
    make_challenge,
    post_challenge,
    reveal_challenge,
    run_puzzle,
    save_challenge,
)

__all__ = ["register"]

log = logging.getLogger(__name__)

_CHALLENGE_TEMPLATES = Templates(progress="{message}", done="{name}: {message}")


def register(parser: Parser, commands: Commands) -> None:
    """Add `puzzle` to the CLI's commands."""
    kinds = available_kinds()
    listing = "\n".join(f"  {name:13} {module.ABOUT}" for name, module in kinds.items())
    parser = add_command(
        commands,
        "puzzle",
        _cmd_puzzle,
        takes=("dry_run", "json"),
        dry_run_help="print the posts it would send; post nothing",
        json_help="print one JSON object",
        help="solve a puzzle (" + ", ".join(kinds) + "), posting progress and the result",
        usage="%(prog)s KIND [FILE] [options]",
        description="Solve a puzzle of one of these kinds, posting progress and the result "
        "(--no-post to keep it local):\n\n" + listing + "\n\nFILE is a puzzle in the kind's format; "
        "--example solves the seed's own puzzle, --show-example prints it in that format.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", type=one_of(KINDS, "puzzle kind"), metavar="KIND", help="one of: " + ", ".join(kinds))
    parser.add_argument("file", nargs="?", metavar="FILE", help="the puzzle file (or --example)")
    parser.add_argument("--example", action="store_true", help="solve the seed's own puzzle of this kind")
    parser.add_argument(
        "--show-example", action="store_true", help="print the seed's puzzle in the file format, then exit"
    )
    parser.add_argument("--all", action="store_true", help="find every solution (the default for these kinds)")
    parser.add_argument("--first", action="store_true", help="stop at the first solution")
    parser.add_argument(
        "--board", metavar="RxC", help="checkerboard: the board's size, e.g. 8x8 (default: from the stones)"
    )
    parser.add_argument("--output", metavar="PATH", help="also write what is printed to this file")
    parser.add_argument(
        "--batch",
        metavar="FOLDER",
        help="solve every file of FOLDER, printed in the order of their names; with --cluster, on its workers",
    )
    add_cluster_flag(parser)
    parser.add_argument("--name", help="the job's name in posts (default: 'puzzle KIND FILE')")
    parser.add_argument("--restart", action="store_true", help="ignore a saved checkpoint and search from the start")
    add_progress_flags(parser, "every", "first_after")
    parser.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    parser.add_argument("--no-pictures", action="store_true", help="post the result without its picture (PICTURES)")
    challenge = parser.add_argument_group("the daily Hidoku challenge (KIND hidoku)")
    challenge.add_argument(
        "--generate", action="store_true", help="make a new puzzle with one solution and post it (its name: --name)"
    )
    challenge.add_argument("--size", default="7x7", type=_size, metavar="RxC", help="the puzzle's size (default 7x7)")
    # Shared: `bot.py --seed 3 puzzle hidoku --generate` means the same as the seed after the kind.
    parser.add_shared("--seed", type=int, metavar="N", help="--generate: seed the generator, to repeat a puzzle")
    challenge.add_argument(
        "--reveal", metavar="NAME", help="post the solution of the challenge NAME as a reply to it, then exit"
    )


def _size(text: str) -> tuple:
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match or int(match.group(1)) * int(match.group(2)) < 2 or max(map(int, match.groups())) > 30:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 7x7 (rows x columns, up to 30x30)")
    return int(match.group(1)), int(match.group(2))


def _cmd_puzzle(args: argparse.Namespace, config: Config) -> int:
    """Solve a puzzle (or post or reveal a Hidoku challenge)."""
    kinds = available_kinds()
    if args.kind not in kinds:
        raise UsageError(f"the puzzle kind {args.kind!r} is not installed in this checkout: use {', '.join(kinds)}")
    module = kinds[args.kind]
    if args.show_example:
        sys.stdout.write(module.EXAMPLE)
        return int(ExitStatus.OK)
    if args.generate or args.reveal:
        return _challenge(args, config)
    if args.batch:
        return _batch(args, config, module)
    if args.file and args.example:
        raise UsageError(f"puzzle {args.kind} got both the file {args.file} and --example: give one of them")
    if args.all and args.first:
        raise UsageError("--all and --first contradict each other: give one of them")
    if args.example:
        text, source = module.EXAMPLE, "example"
    elif args.file:
        path = absolute(args.file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise PuzzleFileError(f"cannot read the puzzle file {path} ({reason}): check the path") from None
        source = args.file
    else:
        raise UsageError(f"puzzle {args.kind} needs a FILE, or --example for the seed's puzzle")
    parsing = {"board": args.board} if args.board else {}
    puzzle = module.parse(text, source, **parsing)
    all_solutions = True if args.all else False if args.first else module.ALL_BY_DEFAULT
    checkpoint = None
    if not args.dry_run:
        ensure_state_dir(config.state.path)
        checkpoint = checkpoint_path(config.state.path, args.kind, text, all_solutions)
        if args.restart and checkpoint.exists():
            checkpoint.unlink()
    options = Options(source, all_solutions, checkpoint=checkpoint, output=absolute(args.output), as_json=args.json)
    name = args.name or f"puzzle {args.kind} {Path(source).name}"
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter()
        if args.no_post
        else open_reporter(
            name, config=config, job=JobSettings(pictures=not args.no_pictures), dry_run=args.dry_run, status=status
        )
    )
    with reporter as report:
        run_puzzle(module, puzzle, report, options, status=status)
    return int(ExitStatus.OK)  # solved, or proved to have no solution: either is an answer


def _batch(args: argparse.Namespace, config: Config, module: Any) -> int:
    """`puzzle KIND --batch FOLDER`: every file of the folder solved (on the cluster, if one is
    named), printed in the order of their names."""
    from ..batch import in_order
    from ..cluster import cluster_for
    from .job import solve_text

    if args.file or args.example or args.json or args.output:
        raise UsageError("--batch FOLDER goes without FILE, --example, --json and --output: the puzzles are its files")
    folder = absolute(args.batch)
    try:
        files = sorted(path for path in folder.iterdir() if path.is_file() and not path.name.startswith("."))
    except OSError as exc:
        raise PuzzleFileError(f"cannot read the folder {folder} ({exc.strerror}): check the path") from None
    if not files:
        raise PuzzleFileError(f"{folder} holds no puzzle file")
    options = {"board": args.board} if args.board else {}
    all_solutions = True if args.all else False if args.first else module.ALL_BY_DEFAULT
    work = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PuzzleFileError(
                f"cannot read the puzzle file {path} ({getattr(exc, 'strerror', None) or exc})"
            ) from None
        module.parse(text, str(path), **options)  # a bad file is refused before any solving starts
        work.append((args.kind, text, str(path), all_solutions, options))
    cluster = cluster_for(args, config)
    try:
        for number, text in enumerate(in_order(solve_text, work, cluster), 1):
            sys.stdout.write(f"== {number}/{len(work)}: {files[number - 1].name} ==\n{text}")
            sys.stdout.flush()
    finally:
        if cluster is not None:
            cluster.close()
    return int(ExitStatus.OK)


def _challenge(args: argparse.Namespace, config: Config) -> int:
    if args.kind != "hidoku":
        raise UsageError(f"--generate and --reveal are for `puzzle hidoku`, not `puzzle {args.kind}`")
    if args.generate and args.reveal:
        raise UsageError("--generate and --reveal go in separate runs: first post the puzzle, later its solution")
    if args.file or args.example:
        raise UsageError("--generate and --reveal take no FILE or --example: the puzzle is generated")
    if args.no_post:
        raise UsageError("--no-post would keep the challenge to itself: use --dry-run to see the post")
    if args.json or args.output:
        raise UsageError("--generate and --reveal print the puzzle or its solution; leave out --json and --output")
    state_dir = None if args.dry_run else config.state.path
    if state_dir:
        ensure_state_dir(state_dir)
    if args.reveal:
        if state_dir is None:
            raise UsageError("--reveal --dry-run has no challenge to read: a dry run keeps no state")
        challenge = load_challenge(state_dir, args.reveal)
        job = JobSettings(_CHALLENGE_TEMPLATES, run_key=challenge_key(challenge.name), first_after=0)
        with open_reporter(challenge.name, config=config, job=job) as reporter:
            reveal_challenge(reporter, challenge)
        return int(ExitStatus.OK)
    name = args.name or f"Hidoku {datetime.now():%Y-%m-%d}"
    if state_dir and challenge_path(state_dir, name).exists():
        log.warning("the challenge %r was already posted: reveal it with --reveal, or give another --name", name)
        return int(ExitStatus.OK)  # one name, one post: a second cron run the same day does nothing
    rows, cols = args.size
    challenge = make_challenge(name, rows, cols, random.Random(args.seed), registry_of(config).default())
    if state_dir:
        save_challenge(state_dir, challenge)
    job = JobSettings(_CHALLENGE_TEMPLATES, run_key=challenge_key(name), every=0, milestone_every=0, first_after=0)
    with open_reporter(name, config=config, job=job, dry_run=args.dry_run) as reporter:
        post_challenge(reporter, challenge)
    return int(ExitStatus.OK)
