"""Progress mode's command, `watch`, and the progress flags every job's command shares.

python bot.py watch [--every 6h] -- CMD ARGS...    run CMD, post its progress and its result
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, Dict, Tuple

from ..arguments import Commands, Parser, absolute, add_command
from ..errors import UsageError
from ..settings.loading import Config, env_file_warnings
from .reporter import BASE_FIELDS
from .session import JobSettings, open_reporter
from .statusline import status_line_for
from .text import check_template
from .watch import FIELDS, TEMPLATES, Patterns, check_command, default_name, watch

__all__ = ["add_progress_flags", "register"]

log = logging.getLogger(__name__)

FIRST_AFTER_HELP = "no progress post before the job has run this long, e.g. 0 or 10m (PROGRESS_FIRST_AFTER)"


def register(parser: Parser, commands: Commands) -> None:
    _add_watch(commands)


def _watch(args: argparse.Namespace, config: Config) -> int:
    """Run a command to the end, posting its progress; exit with its exit status."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    check_command(command)
    try:
        patterns = Patterns.compile(args.pattern, args.milestone)
    except ValueError as exc:
        raise UsageError(f"{exc}: fix the pattern (Python regular expression syntax)") from None
    for flag, template in (
        ("--template", args.template),
        ("--done-template", args.done_template),
        ("--failed-template", args.failed_template),
    ):
        try:
            check_template(template or "", (*BASE_FIELDS, *FIELDS, *patterns.fields))
        except ValueError as exc:  # the same check as PROGRESS_*TEMPLATE's, but a flag is a usage error
            raise UsageError(f"{flag}: {exc}") from None
    if not args.dry_run:
        for warning in env_file_warnings(config):
            log.warning(warning)
    if bool(args.image) != bool(args.image_alt):
        raise UsageError("--image and --image-alt go together: the picture needs its alt text (what it shows)")
    name = args.name or default_name(command)
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    job = JobSettings(TEMPLATES, (*FIELDS, *patterns.fields), pictures=not args.no_pictures)
    with open_reporter(name, config=config, job=job, dry_run=args.dry_run, status=status) as reporter:
        if args.image:
            reporter = _FinalPicture(reporter, absolute(args.image), args.image_alt)  # type: ignore[assignment]
        return watch(command, reporter, patterns=patterns, status=status)


class _FinalPicture:
    """The reporter, with `watch --image FILE` attached to the result post (read when it is
    posted: the command makes the file)."""

    def __init__(self, reporter: Any, path: Path, alt: str) -> None:
        self._reporter, self._path, self._alt = reporter, path, alt

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reporter, name)

    def done(self, message: str = "", **fields: object) -> Any:
        return self._reporter.done(message, picture=self._picture, **fields)

    def _picture(self) -> Any:
        from ..pictures.draw import Picture

        try:
            return Picture(self._path.read_bytes(), self._alt, self._path.name)
        except OSError as exc:
            log.warning("--image %s cannot be read (%s): the result is posted without it", self._path, exc.strerror)
            return None


def _add_watch(commands: Commands) -> None:
    job = add_command(
        commands,
        "watch",
        _watch,
        takes=("dry_run",),
        dry_run_help="print the posts it would send, with why; post nothing",
        help="run a command; post its progress now and then, and its result",
        usage="%(prog)s [options] -- COMMAND [ARGS...]",
        description="Run COMMAND, pass its output through, post its progress (at most one post per "
        "--every) and, at the end, its result. Exits with COMMAND's exit status.",
    )
    job.add_argument("--name", help="the job's name in posts and history (default: the program's name)")
    add_progress_flags(job, "every", "milestone_every", "first_after", "template", "done_template", "failed_template")
    job.add_argument(
        "--pattern",
        metavar="REGEX",
        help="only lines matching this are progress; its first or (?P<message>...) group is the message",
    )
    job.add_argument("--milestone", metavar="REGEX", help="lines matching this are milestones: they may post sooner")
    add_progress_flags(job, "no_thread")
    job.add_argument("--image", metavar="FILE", help="attach this picture (made by the command) to the result post")
    job.add_argument("--image-alt", metavar="TEXT", help="the alt text of --image: what the picture shows, in words")
    job.add_argument("--no-pictures", action="store_true", help="post without pictures (PICTURES)")
    job.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments, after --")


# dest: (flag, the setting it overrides, argparse options); a job's command picks those it takes.
_PROGRESS_FLAGS: Dict[str, Tuple[str, str, Dict[str, Any]]] = {
    "every": (
        "--every",
        "PROGRESS_EVERY",
        {"metavar": "DURATION", "help": "at most one progress post per this long, e.g. 6h (PROGRESS_EVERY)"},
    ),
    "milestone_every": (
        "--milestone-every",
        "PROGRESS_MILESTONE_EVERY",
        {
            "metavar": "DURATION",
            "help": "a milestone may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
        },
    ),
    "first_after": ("--first-after", "PROGRESS_FIRST_AFTER", {"metavar": "DURATION", "help": FIRST_AFTER_HELP}),
    "template": (
        "--template",
        "PROGRESS_TEMPLATE",
        {"help": "text of a progress post, e.g. '{name}: {message} ({elapsed})'"},
    ),
    "done_template": (
        "--done-template",
        "PROGRESS_DONE_TEMPLATE",
        {"metavar": "TEMPLATE", "help": "text of the result post"},
    ),
    "failed_template": (
        "--failed-template",
        "PROGRESS_FAILED_TEMPLATE",
        {"metavar": "TEMPLATE", "help": "text of the failure post"},
    ),
    "no_thread": (
        "--no-thread",
        "PROGRESS_THREAD",
        {"value": "no", "help": "post each update on its own, not as replies"},
    ),
}


def add_progress_flags(parser: Parser, *which: str, **helps: str) -> None:
    """The progress flags a job's command takes (`which`, by dest), each overriding its
    PROGRESS_* setting; `helps` rewords a flag's help for this job."""
    for dest in which:
        flag, setting, options = _PROGRESS_FLAGS[dest]
        parser.add_setting(flag, setting=setting, dest=dest, **{**options, "help": helps.get(dest, options["help"])})
