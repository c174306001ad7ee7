"""Progress mode: long-running jobs post their progress now and then, and their result, as a thread.

`reporter.py` turns a job's updates into throttled, capped, threaded posts (`text.py` fits their
text, `session.py` wires a reporter to the settings); `statusline.py` is the
terminal's live line; `watch.py` wraps any shell command; `commands.py` registers ``bot.py watch``.
A Python job needs only `open_reporter`::

    from twitterbot.progress import open_reporter

    with open_reporter("my job") as report:
        report.update("half done")
        report.done("finished")
"""

from .reporter import NullReporter, Reporter
from .session import open_reporter

__all__ = ["NullReporter", "Reporter", "open_reporter"]
