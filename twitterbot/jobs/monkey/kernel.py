"""The monkey's optional compiled kernel: kernel.c, built with the system C compiler at first use.

numpy spends most of the monkey's time making keys (each step a pass over memory); the kernel
makes them in one pass and scans for prefix records in the same cache-warm loop, with exactly
the numpy path's keys and records, and leaves the numpy generator in exactly the state numpy
would have: checkpoints do not change and either path resumes the other's. Where it cannot be
built the monkey types with numpy, after one INFO line saying why::

    kernel = load(state_dir / "monkey-cache")        # a Kernel, or None (and the log says why)
    simulation = Simulation(matcher, key_count=27, seed=42, kernel=kernel)

The library is kept beside the start-up cache as `kernel-<hash>.so`, the hash covering the
source, the flags, the compiler and the platform, so an edit or another machine builds afresh.
`TWITTERBOT_MONKEY_KERNEL=numpy` turns it off.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

__all__ = ["ENV", "Kernel", "load"]

log = logging.getLogger(__name__)

ENV = "TWITTERBOT_MONKEY_KERNEL"
SOURCE = Path(__file__).with_name("kernel.c")
# No -march=native: the state folder may move to another Pi with the SD card.
FLAGS = ("-O3", "-fPIC", "-shared", "-std=c99", "-fno-strict-aliasing")
_MASK = (1 << 64) - 1
_ROOM = 64  # records returned per call (more are fetched by calling again)
_loaded: Dict[str, Kernel] = {}


class Kernel:
    """The compiled functions, called through ctypes on numpy arrays."""

    def __init__(self, library: ctypes.CDLL, path: Path) -> None:
        self.path = path
        self._draw = library.monkey_draw
        self._draw.restype = ctypes.c_size_t
        self._draw.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self._find = library.monkey_prefix_find
        self._find.restype = ctypes.c_size_t
        self._find.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
        self._find.argtypes += [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        self._blocks = library.monkey_gram_blocks
        self._blocks.restype = ctypes.c_size_t
        self._blocks.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self._first_blocks = np.empty(0, dtype=np.int64)
        self._bits_of: Optional[np.ndarray] = None
        self._gram_bits = np.empty(0, dtype=np.uint8)
        self._check = library.monkey_check_division
        self._check.restype = ctypes.c_size_t
        self._check.argtypes = [ctypes.c_uint32]
        self._checked: Dict[int, bool] = {}
        self._generator = (ctypes.c_uint64 * 6)()
        self._found = np.empty((2, _ROOM), dtype=np.int64)

    def supports(self, key_count: int) -> bool:
        """Whether the compiled key mapping is exact for `key_count` keys, checked for every
        16-bit value once per process (it is, by construction; this guards the compiler)."""
        if key_count not in self._checked:
            self._checked[key_count] = 2 <= key_count <= 255 and self._check(key_count) == 0
            if not self._checked[key_count]:
                log.info("monkey: typing with numpy, the compiled kernel maps %d keys inexactly", key_count)
        return self._checked[key_count]

    def draw(self, bits: np.random.PCG64, key_count: int, words: int, redraw: np.ndarray) -> np.ndarray:
        """`KeyStream._next_draw` for `words` 64-bit outputs: 8 * words keys, and `bits` moved on
        exactly as numpy's `random_raw` and `Generator.integers` would have. `redraw` is scratch
        room for 4 * words uint32."""
        state = bits.state
        inner, g = state["state"], self._generator
        g[0], g[1] = inner["state"] >> 64, inner["state"] & _MASK
        g[2], g[3] = inner["inc"] >> 64, inner["inc"] & _MASK
        g[4], g[5] = int(state["has_uint32"]), int(state["uinteger"])
        keys = np.empty(8 * words, dtype=np.uint8)
        self._draw(g, key_count, keys.ctypes.data, words, redraw.ctypes.data)
        bits.state = {
            "bit_generator": "PCG64",
            "state": {"state": (g[0] << 64) | g[1], "inc": (g[2] << 64) | g[3]},
            "has_uint32": int(g[4]),
            "uinteger": int(g[5]),
        }
        return keys

    def prefix_find(self, typed: np.ndarray, fresh: int, record: int, target: np.ndarray) -> List[Tuple[int, int]]:
        """`PrefixMatcher.find`, in C."""
        typed = np.ascontiguousarray(typed, dtype=np.uint8)
        found: List[Tuple[int, int]] = []
        ends, lengths = self._found
        while True:
            count = self._find(
                typed.ctypes.data, len(typed), fresh, record, target.ctypes.data, len(target),
                ends.ctypes.data, lengths.ctypes.data, _ROOM,
            )  # fmt: skip
            found += zip(ends[:count].tolist(), lengths[:count].tolist())
            if count < _ROOM:
                return found
            record = found[-1][1]

    def gram_blocks(self, typed: np.ndarray, gram_ok: np.ndarray, needed: int) -> np.ndarray:
        """The first sieve of `AnywhereMatcher._candidates` (4-key blocks, 5 bits a key): the
        aligned blocks j where blocks j .. j+needed-1 all occur in the corpus, in one pass."""
        blocks = len(typed) // 4
        if len(self._first_blocks) < blocks:
            self._first_blocks = np.empty(blocks, dtype=np.int64)
        typed = np.ascontiguousarray(typed, dtype=np.uint8)
        if self._bits_of is not gram_ok:  # one table per matcher: packed once, 128 KiB
            assert gram_ok.dtype == np.bool_ and len(gram_ok) == 1 << 20
            self._bits_of, self._gram_bits = gram_ok, np.packbits(gram_ok, bitorder="little")
        count = self._blocks(
            typed.ctypes.data, blocks, self._gram_bits.ctypes.data, needed, self._first_blocks.ctypes.data
        )
        return self._first_blocks[:count].copy()


def load(cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ) -> Optional[Kernel]:
    """The kernel, built into `cache_dir` if it is not there yet (without one, into a temporary
    folder removed once loaded), or None after one INFO line saying why the monkey types with
    numpy. Never raises: the numpy path gives the same records."""
    reason = _unavailable(environ)
    if reason:
        log.info("monkey: typing with numpy, %s", reason)
        return None
    compiler = shutil.which("cc", path=environ.get("PATH", os.defpath))
    if compiler is None:
        log.info("monkey: typing with numpy, no C compiler (cc) on PATH for the faster kernel")
        return None
    name = f"kernel-{_fingerprint(compiler)}.so"
    try:
        if cache_dir is None:
            with tempfile.TemporaryDirectory(prefix="twitterbot-kernel-") as folder:
                return _build_and_load(compiler, Path(folder), name)
        return _build_and_load(compiler, cache_dir, name)
    except _Unbuilt as exc:
        log.info("monkey: typing with numpy, %s", exc)
        return None


class _Unbuilt(Exception):
    """Why the kernel could not be built or loaded."""


def _unavailable(environ: Mapping[str, str]) -> Optional[str]:
    choice = environ.get(ENV, "").strip().lower()
    if choice == "numpy":
        return f"as {ENV}=numpy asks"
    if choice not in ("", "auto", "c"):
        return f"{ENV}={choice!r} is not one of auto, c, numpy"
    if struct.calcsize("P") < 8:
        return "this is a 32-bit platform: the faster kernel needs 128-bit integers"
    if sys.byteorder != "little":  # pragma: no cover - the keys are defined little-endian
        return "the faster kernel is written for little-endian machines"
    if not SOURCE.is_file():
        return f"{SOURCE} is not installed"
    return None


def _fingerprint(compiler: str) -> str:
    parts = [SOURCE.read_bytes(), " ".join(FLAGS).encode(), os.path.realpath(compiler).encode()]
    parts += [platform.machine().encode(), sys.platform.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _build_and_load(compiler: str, folder: Path, name: str) -> Kernel:
    path = folder / name
    if str(path) in _loaded:
        return _loaded[str(path)]
    if not path.is_file():
        _build(compiler, folder, path)
    try:
        kernel = Kernel(ctypes.CDLL(str(path)), path)
    except (OSError, AttributeError) as exc:
        path.unlink(missing_ok=True)  # the next run builds it again
        raise _Unbuilt(f"the kernel {path} could not be loaded ({exc})") from None
    _loaded[str(path)] = kernel
    log.debug("monkey: typing with the compiled kernel %s", path)
    return kernel


def _build(compiler: str, folder: Path, path: Path) -> None:
    """Compile to a temporary name and rename: a crash or a second run at the same moment never
    leaves half a library under the real name. Older kernels beside it are removed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".kernel-", suffix=".so", dir=folder)
        os.close(handle)
    except OSError as exc:
        raise _Unbuilt(f"cannot write the kernel into {folder} ({exc.strerror or exc})") from None
    try:
        try:
            done = subprocess.run(
                [compiler, *FLAGS, "-o", temporary, str(SOURCE)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise _Unbuilt(f"the C compiler {compiler} could not run ({exc})") from None
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
            raise _Unbuilt(f"{compiler} could not build the kernel: {first.strip()[:300]}")
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    for old in folder.glob("kernel-*.so"):
        if old != path:
            old.unlink(missing_ok=True)
