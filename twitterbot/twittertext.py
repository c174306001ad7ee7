"""twitter-text (the `twitter-text-parser` package), imported without `pkg_resources`.

twitter-text reads its emoji list with `pkg_resources.resource_string`, and nothing else of
setuptools. Importing `pkg_resources` costs a run 130 ms of CPU and 14 MiB (it scans every
installed distribution), and it is not there at all where a venv has no setuptools (Python 3.12
and later make venvs without it; setuptools itself is retiring the module). So for that import
only, a stand-in that reads the file beside the module is put where `pkg_resources` would be, and
taken away again: anything else that imports `pkg_resources` later gets the real one::

    twittertext.load()  # then import from it as usual: its modules are loaded
    from twitter_text import parse_tweet

Its compiled expressions (emoji above all) are 6 MiB that a scheduled run needs only while it
measures new lines, before it imports tweepy: `with twittertext.borrowed():` unloads it again
after the block, if the block loaded it, so that a post after an edit of the tweets file stays
within the 40 MiB a run may take.
"""

from __future__ import annotations

import gc
import re
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["borrowed", "load"]


def load() -> None:
    """Import the `twitter_text` modules the bot uses, once per process."""
    if "twitter_text.parse_tweet" not in sys.modules:
        stand_in = None
        if "pkg_resources" not in sys.modules:
            stand_in = types.ModuleType("pkg_resources", "twitterbot.twittertext's stand-in: resource_string only")
            stand_in.resource_string = _resource_string  # type: ignore[attr-defined]
            sys.modules["pkg_resources"] = stand_in
        try:
            import twitter_text.extract_urls  # noqa: F401
            import twitter_text.has_invalid_characters  # noqa: F401
            import twitter_text.parse_tweet  # noqa: F401
        finally:
            if stand_in is not None and sys.modules.get("pkg_resources") is stand_in:
                del sys.modules["pkg_resources"]


@contextmanager
def borrowed() -> Iterator[None]:
    """twitter-text for the length of a block (`load` it there), then forgotten again if the block
    was what loaded it: its modules leave sys.modules and its compiled expressions the `re`
    cache, and the collector frees them. A later `load` imports it afresh."""
    already = "twitter_text" in sys.modules
    try:
        yield
    finally:
        if not already and "twitter_text" in sys.modules:
            for name in [name for name in sys.modules if name == "twitter_text" or name.startswith("twitter_text.")]:
                del sys.modules[name]
            re.purge()
            gc.collect()


def _resource_string(module: str, name: str) -> bytes:
    """`pkg_resources.resource_string`: the bytes of the file `name` beside the module (or in the
    package) named `module`, which is being imported, so it is in sys.modules already."""
    return (Path(sys.modules[module].__file__ or "").parent / name).read_bytes()
