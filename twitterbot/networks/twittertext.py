"""X's length rule: twitter-text (the `twitter-text-parser` package), imported without
`pkg_resources`, and the cache of the lengths it measured.

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
import logging
import re
import sys
import types
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Collection, Dict, Iterable, Iterator, Mapping, Optional, Tuple

from ..errors import BotError

if TYPE_CHECKING:
    from . import LengthCache

__all__ = [
    "MAX_WEIGHTED_LENGTH",
    "all_known",
    "borrowed",
    "cached_lengths",
    "load",
    "measured_by",
    "remember_lengths",
    "weigh",
]

log = logging.getLogger(__name__)

MAX_WEIGHTED_LENGTH = 280  # X's limit, in twitter-text's weighted characters


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


# Past this many characters a text is over 280 whatever it holds (a URL counts 23 and has at most
# 4,096 characters; anything else counts at least 1 for every 4): refused unmeasured, since
# twitter-text takes about a second per 100,000 characters, on every run (a paste gone wrong).
_CERTAINLY_TOO_LONG = MAX_WEIGHTED_LENGTH * 4096 // 23 + 1


def weigh(text: str) -> Tuple[int, Tuple[str, ...], Optional[str]]:
    """`text` the way X counts it (twitter-text v3: URLs 23, emoji 2, CJK 2, NFC first): its weighted
    length, the URLs in it, and what makes X refuse it (with the fix), or None."""
    if len(text) > _CERTAINLY_TOO_LONG:
        at_least = len(text) * 23 // 4096
        return at_least, (), f"is too long: X counts at least {at_least:,} of {MAX_WEIGHTED_LENGTH}: shorten it"
    load()  # slow to import: only when a line is new
    from twitter_text import extract_urls, parse_tweet
    from twitter_text.has_invalid_characters import has_invalid_characters

    text = _few_dots(text)
    result = parse_tweet(unicodedata.normalize("NFC", text))
    urls = tuple(extract_urls(text))
    problem = None
    if result.weightedLength > MAX_WEIGHTED_LENGTH:
        problem = f"is too long: X counts {result.weightedLength} of {MAX_WEIGHTED_LENGTH}: shorten it"
    else:
        bad = next((ch for ch in text if _is_forbidden(ch) or has_invalid_characters(ch)), None)
        if bad is not None or not result.valid:
            problem = _forbidden_character(bad)
    return result.weightedLength, urls, problem


# twitter-text's link finder takes time in the square of a run of dotted words with no space in it
# ("a.b.c.", 4,000 characters: 18 s a call). A word with more dots than any link has is no link:
# its dots are counted as the letters they weigh the same as, and it is measured in milliseconds.
_MOST_DOTS_IN_A_LINK = 30
_WORD = re.compile(r"\S+")


def _few_dots(text: str) -> str:
    """`text` with the dots of every word that has more than a link would written as letters: the
    same weighted length, no link, and no long search for one."""
    if text.count(".") <= _MOST_DOTS_IN_A_LINK:
        return text
    return _WORD.sub(
        lambda word: word[0].replace(".", "x") if word[0].count(".") > _MOST_DOTS_IN_A_LINK else word[0], text
    )


# Bump when `measure` changes what it returns for a text: cached lengths of other versions are dropped.
_CACHE_FORMAT = 1


def all_known(cache: LengthCache, version: str, texts: Collection[str]) -> bool:
    """Every one of `texts` has a length in the cache, measured by `version`, that X accepts.
    Checked text by text once after the file or the cache changed; then the file's digest says so."""
    if not version:
        return False
    digest = _digest(texts)
    try:
        if cache.measured_file("x", version) == digest:
            return True
        if not cache.measured_texts("x", version, MAX_WEIGHTED_LENGTH).issuperset(texts):
            return False
    except BotError as exc:  # only a cache: the run's own reads and writes report a history that fails
        log.debug("measuring every line: the cached lengths cannot be read (%s)", exc)
        return False
    try:
        cache.remember_measured_file("x", version, digest)
    except BotError as exc:
        log.debug("the next run checks the lines against the cache again (%s)", exc)
    return True


def _digest(texts: Collection[str]) -> str:
    """Names a file's texts, in order. Joined by NULs, which no text in the cache holds (X refuses
    control characters), so with the count it takes one list of texts to make one digest."""
    import hashlib  # here: a run that skips never reads the file (a post imports it anyway, for OAuth)

    return f"{len(texts)} {hashlib.sha256(chr(0).join(texts).encode()).hexdigest()}"


def measured_by() -> str:
    """Names what measures lengths, so lengths measured by anything else are never used: this
    module's format, the limit, Python's Unicode tables and the installed twitter-text's files
    (names, sizes and times, so any upgrade or reinstall shows), without importing it."""
    import binascii
    import importlib.util
    import os

    spec = importlib.util.find_spec("twitter_text")
    if spec is None or not spec.submodule_search_locations:
        return ""  # not installed: measuring fails with the import error, as it would without a cache
    files = []
    for folder in spec.submodule_search_locations:
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            for name in sorted(names):
                info = os.stat(os.path.join(root, name))
                files.append(f"{os.path.relpath(os.path.join(root, name), folder)} {info.st_size} {info.st_mtime_ns}")
    fingerprint = binascii.crc32("\n".join(files).encode())
    return f"{_CACHE_FORMAT} {MAX_WEIGHTED_LENGTH} unicode {unicodedata.unidata_version} twitter-text {fingerprint:08x}"


def cached_lengths(
    cache: Optional[LengthCache], version: str, texts: Optional[Iterable[str]] = None
) -> Dict[str, Tuple[int, Tuple[str, ...]]]:
    if cache is None or not version:
        return {}
    try:
        return cache.measured_lengths("x", version, texts)
    except BotError as exc:  # only a cache: the run's own reads and writes report a history that fails
        log.debug("measuring every line: the cached lengths cannot be read (%s)", exc)
        return {}


def remember_lengths(cache: LengthCache, version: str, lengths: Mapping[str, Tuple[int, Tuple[str, ...]]]) -> None:
    """Keep the lengths of texts X accepts for the next run (a cache: failing to is no error)."""
    if not version:
        return
    try:
        cache.remember_lengths("x", version, lengths)
    except BotError as exc:
        log.debug("the lengths measured cannot be kept for the next run (%s)", exc)


_ALLOWED_CONTROLS = {"\n", "\t"}


def _is_forbidden(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS


def _forbidden_character(ch: Optional[str]) -> str:
    """The problem with a line holding a character X refuses, and the fix: shortening will not help."""
    if ch is None:
        return "contains a character X does not accept: retype the line"
    code = f"U+{ord(ch):04X}"
    if unicodedata.category(ch) == "Cc":
        what = f"the invisible control character {code}"
        caret = "^?" if ch == "\x7f" else f"^{chr(ord(ch) + 64)}" if ord(ch) < 32 else None
        where = f" (cat -A shows it as {caret})" if caret else ""
    else:
        what = f"the invisible character {code} ({unicodedata.name(ch, 'a non-character').lower()})"
        where = ""
    return f"contains {what}, which X does not accept: delete it{where}, or retype the line"
