"""The monkey's start-up cache: normalised works and the anywhere index, kept in the state folder.

Normalising the 42 works costs about a second and building the index over them another, on
every start. Both depend only on the texts and the keys, so they are kept here, one folder per
(format version, keys, texts) and rebuilt when any of those changes::

    cache = StartupCache(state_dir / "monkey-cache", texts_dir, keyboard)
    work = cache.work("hamlet_gut")                   # None until stored
    cache.store_work(work)
    index = cache.index()                             # memory-mapped arrays, or None

Every file is written whole or not at all (JSON through `files.write_atomically`, arrays through
a temporary file and a rename), and the index is only used once its manifest, written last,
names arrays of the right sizes: a crash mid-write costs a rebuild, never a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

from ...files import write_atomically
from .texts import Keyboard, Work

__all__ = ["CACHE_VERSION", "StartupCache"]

log = logging.getLogger(__name__)

# Bump when the normalisation, the Work fields or the index's layout change: older folders are
# then stale and removed.
CACHE_VERSION = 1
_ARRAYS = ("corpus", "gram_ok", "codes", "distinct")


class StartupCache:
    """The cache folder for one set of texts and one keyboard."""

    def __init__(self, root: Path, texts_dir: Path, keyboard: Keyboard) -> None:
        self.root = root
        self.keyboard = keyboard
        self.texts = _fingerprint(texts_dir)
        about = {"version": CACHE_VERSION, "keys": keyboard.keys, "texts": self.texts}
        self._about = about
        name = hashlib.sha256(json.dumps(about, sort_keys=True).encode("utf-8")).hexdigest()[:16]
        self.folder = root / name

    def work(self, stem: str) -> Optional[Work]:
        """The normalised work from `stem`_gut.txt... (its file stem), if stored."""
        try:
            item = json.loads((self.folder / "works" / f"{stem}.json").read_text(encoding="utf-8"))
            return Work(
                item["slug"],
                item["title"],
                item["text"],
                tuple(item["line_starts"]),
                tuple((int(line), str(label)) for line, label in item["headings"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store_work(self, stem: str, work: Work) -> None:
        item = {
            "slug": work.slug,
            "title": work.title,
            "text": work.text,
            "line_starts": list(work.line_starts),
            "headings": [list(heading) for heading in work.headings],
        }
        folder = self._ensure() / "works"
        folder.mkdir(exist_ok=True)
        self._write(lambda: write_atomically(folder / f"{stem}.json", json.dumps(item), 0o644))

    def index(self) -> Optional[Dict[str, np.ndarray]]:
        """The anywhere index, memory-mapped (read-only, shared by every worker), if stored whole."""
        folder = self.folder / "index"
        try:
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        except (OSError, ValueError, KeyError):
            return None
        if any(list(arrays[name].shape) != manifest.get(name) for name in _ARRAYS):
            return None
        arrays["distinct"] = np.array(arrays["distinct"])  # small: a plain array
        return arrays

    def store_index(self, arrays: Dict[str, np.ndarray]) -> None:
        folder = self._ensure() / "index"
        folder.mkdir(exist_ok=True)

        def write() -> None:
            for name in _ARRAYS:
                _save_array(folder / f"{name}.npy", np.asarray(arrays[name]))
            manifest = {name: list(np.shape(arrays[name])) for name in _ARRAYS}
            write_atomically(folder / "manifest.json", json.dumps(manifest) + "\n", 0o644)

        self._write(write)

    def _ensure(self) -> Path:
        """The folder, created with its description; stale folders beside it are removed."""
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomically(self.folder / "about.json", json.dumps(self._about) + "\n", 0o644)
            for other in self.root.iterdir():
                if other != self.folder and other.is_dir() and _stale(other, self._about):
                    shutil.rmtree(other, ignore_errors=True)
        return self.folder

    def _write(self, write: Any) -> None:
        """A cache that cannot be written is only slower: say so once and go on."""
        try:
            write()
        except OSError as exc:
            log.warning(
                "the monkey's start-up cache in %s cannot be written (%s): each start rebuilds it", self.root, exc
            )


def _stale(folder: Path, current: Dict[str, Any]) -> bool:
    """A folder for another format version or other texts (another keyboard's is kept)."""
    try:
        about = json.loads((folder / "about.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return about.get("version") != current["version"] or about.get("texts") != current["texts"]


def _fingerprint(texts_dir: Path) -> str:
    """Changes whenever a text file is replaced or edited (name, size and modification time)."""
    entries = []
    for path in sorted(texts_dir.iterdir()) if texts_dir.is_dir() else []:
        stat = path.stat()
        entries.append(f"{path.name}\t{stat.st_size}\t{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()[:16]


def _save_array(path: Path, array: np.ndarray) -> None:
    """`np.save` whole or not at all: a temporary file, flushed, then renamed over `path`."""
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as handle:
        np.save(handle, array, allow_pickle=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
