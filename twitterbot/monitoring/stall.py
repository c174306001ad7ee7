"""The alert for a progress job gone quiet: nothing reported for PROGRESS_STALL. A thread looks
now and then at when the job last reported; one alert per silence, settled when it speaks again::

    with stall_watch(monitor, "hamlet", heard=lambda: reporter.heard_at, stall=6 * 3600):
        ...the job runs...
"""

from __future__ import annotations

import contextlib
import threading
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterator

from ..wording import format_duration
from . import Alert, Monitor

__all__ = ["stall_watch"]

_MOST_BETWEEN_TRIES = timedelta(hours=1)


@contextlib.contextmanager
def stall_watch(
    monitor: Monitor,
    name: str,
    *,
    heard: Callable[[], datetime],
    stall: float,
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> Iterator[None]:
    """While the block runs, alert through `monitor` when `heard()` (the job's last report) is
    `stall` seconds old or more (an alert the monitor did not take is tried again, twice as long
    after each failure, an hour apart at most); settle that alert once it reports again."""
    stopped = threading.Event()
    problem = f"stall:{name}"
    quiet = timedelta(seconds=stall)

    def watch() -> None:
        alerted = False
        tick = min(60.0, max(0.05, stall / 4))
        retry = timedelta(seconds=tick)  # an alert the monitor did not take: tried again, less often each time
        not_before = clock()
        while not stopped.wait(tick):
            now = clock()
            silent = now - heard()
            if silent >= quiet and not alerted and now >= not_before:
                said = format_duration(silent)
                alerted = monitor.alert(
                    Alert(
                        problem,
                        f"no news for {said}",
                        f"the job {name} has reported nothing for {said} (PROGRESS_STALL={format_duration(quiet)}): is it stuck?",
                    )
                )
                if not alerted:
                    not_before, retry = now + retry, min(retry * 2, _MOST_BETWEEN_TRIES)
            elif silent < quiet and alerted:
                monitor.settle([problem])
                alerted = False

    thread = threading.Thread(target=watch, name="twitterbot-stall", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join(1.0)
        monitor.settle([problem])
