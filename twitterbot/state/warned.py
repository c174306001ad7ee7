"""The warnings a scheduled run gave, kept for the next run: a run started by cron or a timer is a
process of its own, so what the daemon remembers in memory (`settings.logs.SaidLastRun`) is kept
here between runs, in a small file beside the history (`warned-last-run.json`)::

    record = WarnedLastRun(state_dir / WARNED_FILE)
    last = record.read()                 # the digests of the last run's warnings
    ...                                  # the run, its repeated warnings logged at DEBUG
    record.keep(said, last=last)         # written only if the set changed

It holds digests of the warnings (`settings.logs.warning_digest`), never their text: a warning may
quote a private line of the tweets file. It is written whole or not at all (`files.py`), and only
when the set of warnings changed (a run without warnings removes it), so a run that warns as the
last one did, or warns of nothing, writes nothing: a skipped run stays within what an SD card should take
(docs/long-life.md). A record that cannot be read is taken for none: its warnings are news again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import AbstractSet, FrozenSet

from ..files import open_regular, write_atomically

__all__ = ["WARNED_FILE", "WarnedLastRun"]

log = logging.getLogger(__name__)

# Beside the history, in the state folder.
WARNED_FILE = "warned-last-run.json"
# At most this many digests are kept (17 bytes each in the file): a run with more warnings says
# the ones left out again next time, rather than the record growing without bound.
_MOST = 200
_MOST_BYTES = 16 * 1024  # what is read of the file: more is not a record of ours


class WarnedLastRun:
    """The digests of the warnings the last scheduled run gave, in the file at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> FrozenSet[str]:
        """The digests the last run kept; none if there is no record or it cannot be read."""
        try:
            with open_regular(self.path) as handle:
                data = json.loads(handle.read(_MOST_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return frozenset()
        warned = data.get("warned") if isinstance(data, dict) else None
        if not isinstance(warned, list):
            return frozenset()
        return frozenset(each for each in warned[:_MOST] if isinstance(each, str) and len(each) <= 64)

    def keep(self, said: AbstractSet[str], *, last: AbstractSet[str]) -> None:
        """Keep `said` for the next run, if it is not what `last` (read at the start) already was.
        A state folder that cannot be written loses only this: the run itself says why it failed."""
        kept = sorted(said)[:_MOST]
        if frozenset(kept) == frozenset(last):
            return
        try:
            if kept:
                write_atomically(self.path, json.dumps({"warned": kept}, separators=(",", ":")) + "\n", mode=0o600)
            else:  # no warnings: no record, and removing one writes no data to the card
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.debug("the warnings of this run are not kept for the next (%s): %s", self.path, exc.strerror or exc)
