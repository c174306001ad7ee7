"""The dry-run network: prints each post it would send instead of sending it.

Turning posting off swaps in this poster rather than scattering `if dry_run` checks: everything
after a post (threads, history of a job) behaves as in a real run.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Optional, Sequence, TextIO

from ..errors import PostError
from . import PLAIN, Fit, LookUp, Network, PostOptions, PostResult

__all__ = ["DRY_RUN", "DryRun", "DryRunPoster"]


class DryRun(Network):
    """The network a dry run posts to: none. It stands where a network stands (a job's dry run
    hands its posts to a delivery like any other), measures nothing (the job fits its text to the
    networks in POST_TO) and costs nothing."""

    name = "dry-run"
    label = "dry-run"
    takes_prepared_pictures = False  # its poster writes each picture as every network would get it

    def measure(self, text: str) -> Fit:
        return Fit(self.name, 0, 1)


DRY_RUN = DryRun()


class DryRunPoster:
    """Posts nothing: writes each post it would send to `stream` and makes up an id, so threads
    and everything after a post behave as in a real run."""

    name = "dry-run"
    retry_safety = "not needed: nothing is sent"

    def __init__(
        self, stream: Optional[TextIO] = None, *, networks: Sequence[Network] = (), folder: Optional[Path] = None
    ) -> None:
        self._stream = stream
        self._ids = itertools.count(1)
        self._networks = tuple(networks)  # whose limits a post's pictures are fitted to
        self._folder = folder  # where they are written; a new temporary folder at the first picture
        self._pictures = 0

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        stream = self._stream or sys.stderr
        images = options.images
        to = f" (reply to {options.reply_to})" if options.reply_to else ""
        to += f" (language {options.language})" if options.language else ""
        to += f" (content warning: {options.spoiler})" if options.spoiler else ""
        stream.write(f"dry run, not posted{to}:\n" + "".join(f"    {line}\n" for line in text.splitlines()))
        if images:  # each picture as each network would get it, written where the user can open it
            from ..pictures.dryrun import dry_run_folder, write_prepared
            from ..pictures.prepare import Attachment

            self._folder = self._folder or dry_run_folder()
            limits = [network.image_limits() for network in self._networks]
            given = [image for image in images if isinstance(image, Attachment)]  # a dry run's are never prepared
            said = write_prepared(given, limits, self._folder, start=self._pictures + 1)
            self._pictures += len(images)
            stream.write("".join(f"    {line}\n" for line in said))
        stream.flush()
        return PostResult(text=text, post_id=f"dry-run-{next(self._ids)}")

    def may_retry(self, error: PostError) -> bool:
        return False

    def look_up(self, text: str, sent_at: object, key: Optional[str], options: Optional[PostOptions] = None) -> LookUp:
        return LookUp(None, "not asked: a dry run asks no network")

    def bot_label(self) -> Optional[bool]:
        return None

    def mark_bot(self) -> bool:
        return False
