"""Optional compiled kernels for the jobs: a C file in the package, built with the system C
compiler at first use and loaded with ctypes. A job that has one always has a numpy path giving
the same results, so a kernel that cannot be built is a slower run, never a failure::

    try:
        library, path = native.build(SOURCE, cache_dir, stem="kernel")
    except native.Unbuilt as exc:
        log.info("monkey: typing with numpy, %s", exc)

The library is kept in the job's cache folder as `<stem>-<hash>.so`, the hash covering the
source, the flags, the compiler and the platform, so an edit or another machine builds afresh;
older builds beside it are removed.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Tuple, TypeVar

__all__ = ["FLAGS", "Unbuilt", "build", "choice", "load"]

K = TypeVar("K")

# No -march=native: the state folder may move to another Pi with the SD card.
FLAGS = ("-O3", "-fPIC", "-shared", "-std=c99", "-fno-strict-aliasing")
_loaded: Dict[str, ctypes.CDLL] = {}  # a library is loaded once per process, whoever asks
_kernels: Dict[Tuple[Path, Callable], object] = {}  # and wrapped once


class Unbuilt(Exception):
    """Why a kernel could not be built or loaded, in words for a log line."""


def load(
    make: Callable[[ctypes.CDLL, Path], K],
    source: Path,
    cache_dir: Optional[Path],
    *,
    variable: str,
    log: logging.Logger,
    instead: str,
    environ: Mapping[str, str] = os.environ,
    unsupported: Optional[str] = None,
) -> Optional[K]:
    """A job's kernel: `source` built into `cache_dir` (without one, a temporary folder removed
    once loaded) and wrapped by `make(library, path)`; or None after one INFO line, `instead`
    followed by why (`variable` turns it off; `unsupported` is the job's own reason not to try).
    Never raises: a job that has a kernel has a numpy path giving the same results."""
    reason = choice(variable, environ) or unsupported
    if reason:
        log.info("%s, %s", instead, reason)
        return None
    try:
        library, path = build(source, cache_dir, stem="kernel", environ=environ)
        kernel = _kernels.get((path, make)) or make(library, path)
    except Unbuilt as exc:
        log.info("%s, %s", instead, exc)
        return None
    except AttributeError as exc:  # a library without the functions the source defines
        log.info("%s, the kernel %s is not the one %s makes (%s)", instead, path, source.name, exc)
        return None
    _kernels[(path, make)] = kernel
    log.debug("%s: using the compiled kernel %s", source, path)
    return kernel  # type: ignore[return-value]


def choice(variable: str, environ: Mapping[str, str], fallback: str = "numpy") -> Optional[str]:
    """Why the environment turns the kernel off (`variable=numpy`, or a value that is not one of
    auto, c, numpy), or None when it may be used."""
    value = environ.get(variable, "").strip().lower()
    if value == fallback:
        return f"as {variable}={fallback} asks"
    if value not in ("", "auto", "c"):
        return f"{variable}={value!r} is not one of auto, c, {fallback}"
    return None


def build(
    source: Path,
    folder: Optional[Path],
    *,
    stem: str,
    environ: Mapping[str, str] = os.environ,
) -> Tuple[ctypes.CDLL, Path]:
    """The library built from `source` into `folder` (without one, into a temporary folder
    removed once loaded) and its path. Raises Unbuilt, saying why, when there is no compiler,
    the compiler fails, or the library does not load."""
    if not source.is_file():
        raise Unbuilt(f"{source} is not installed")
    compiler = shutil.which("cc", path=environ.get("PATH", os.defpath))
    if compiler is None:
        raise Unbuilt("no C compiler (cc) on PATH for the faster kernel")
    name = f"{stem}-{_fingerprint(source, compiler)}.so"
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="twitterbot-kernel-") as temporary:
            return _build_and_load(compiler, source, Path(temporary), name, stem)
    return _build_and_load(compiler, source, folder, name, stem)


def _fingerprint(source: Path, compiler: str) -> str:
    parts = [source.read_bytes(), " ".join(FLAGS).encode(), os.path.realpath(compiler).encode()]
    parts += [platform.machine().encode(), sys.platform.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _build_and_load(compiler: str, source: Path, folder: Path, name: str, stem: str) -> Tuple[ctypes.CDLL, Path]:
    path = folder / name
    if str(path) in _loaded:
        return _loaded[str(path)], path
    if not path.is_file():
        _build(compiler, source, folder, path, stem)
    try:
        library = ctypes.CDLL(str(path))
    except OSError as exc:
        path.unlink(missing_ok=True)  # the next run builds it again
        raise Unbuilt(f"the kernel {path} could not be loaded ({exc})") from None
    _loaded[str(path)] = library
    return library, path


def _build(compiler: str, source: Path, folder: Path, path: Path, stem: str) -> None:
    """Compile to a temporary name and rename: a crash or a second run at the same moment never
    leaves half a library under the real name. Older builds beside it are removed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{stem}-", suffix=".so", dir=folder)
        os.close(handle)
    except OSError as exc:
        raise Unbuilt(f"cannot write the kernel into {folder} ({exc.strerror or exc})") from None
    try:
        try:
            done = subprocess.run(
                [compiler, *FLAGS, "-o", temporary, str(source)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise Unbuilt(f"the C compiler {compiler} could not run ({exc})") from None
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
            raise Unbuilt(f"{compiler} could not build the kernel: {first.strip()[:300]}")
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    for old in folder.glob(f"{stem}-*.so"):
        if old != path:
            old.unlink(missing_ok=True)
