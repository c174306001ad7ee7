"""Progress mode: long-running jobs post their progress now and then, and their result, as a thread.

`reporter.py` turns a job's updates into throttled, capped, threaded posts (`text.py` fits their
text, `session.py` wires a reporter to the settings); `statusline.py` is the
terminal's live line; `watch.py` wraps any shell command; `commands.py` registers ``bot.py watch``.
A Python job needs only `open_reporter`::

    from twitterbot.cli import read_config
    from twitterbot.progress.session import open_reporter

    with open_reporter("my job", config=read_config()) as report:
        report.update("half done")
        report.done("finished")
"""

from __future__ import annotations

from ..capability import Capability
from ..settings.parsers import BOOL, DURATION, TEMPLATE
from ..settings.table import Setting, by_name

__all__ = [
    "PICTURES",
    "PICTURES_EVERY",
    "PROGRESS",
    "PROGRESS_DONE_TEMPLATE",
    "PROGRESS_EVERY",
    "PROGRESS_FAILED_TEMPLATE",
    "PROGRESS_FIRST_AFTER",
    "PROGRESS_MILESTONE_EVERY",
    "PROGRESS_TEMPLATE",
    "PROGRESS_THREAD",
]


PROGRESS_EVERY = Setting("PROGRESS_EVERY", "6h", DURATION, "progress mode: at most one progress post per this long")
PROGRESS_MILESTONE_EVERY = Setting(
    "PROGRESS_MILESTONE_EVERY", "1h", DURATION, "progress mode: a milestone may post this soon after the last"
)
PROGRESS_FIRST_AFTER = Setting(
    "PROGRESS_FIRST_AFTER", "5m", DURATION, "progress mode: no progress post before the job has run this long"
)
PROGRESS_THREAD = Setting("PROGRESS_THREAD", "yes", BOOL, "progress mode: posts of a run reply to its first post")
PROGRESS_TEMPLATE = Setting(
    "PROGRESS_TEMPLATE", "", TEMPLATE, "progress mode: text of a progress post (default: the job's)"
)
PROGRESS_DONE_TEMPLATE = Setting("PROGRESS_DONE_TEMPLATE", "", TEMPLATE, "progress mode: text of the result post")
PROGRESS_FAILED_TEMPLATE = Setting("PROGRESS_FAILED_TEMPLATE", "", TEMPLATE, "progress mode: text of the failure post")
PICTURES = Setting("PICTURES", "yes", BOOL, "jobs attach their pictures (boards, solutions, charts); no: text only")
PICTURES_EVERY = Setting(
    "PICTURES_EVERY", "1d", DURATION, "progress mode: at most one picture in progress posts per this long"
)


class Progress(Capability):
    """How often progress posts go out, what they say, and whether jobs attach their pictures;
    the `watch` command."""

    name = "progress"
    title = "Progress mode"
    page = "progress.md"
    settings = by_name(
        PROGRESS_EVERY,
        PROGRESS_MILESTONE_EVERY,
        PROGRESS_FIRST_AFTER,
        PROGRESS_THREAD,
        PROGRESS_TEMPLATE,
        PROGRESS_DONE_TEMPLATE,
        PROGRESS_FAILED_TEMPLATE,
        PICTURES,
        PICTURES_EVERY,
    )
    commands = "twitterbot.progress.commands"
    command_names = ("watch",)


PROGRESS = Progress()
