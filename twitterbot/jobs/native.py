"""Optional compiled kernels for the jobs: a C file in the package, built with the system C
compiler at first use (or by `bot.py check`) and loaded with ctypes. A job that has one always
has a numpy path giving the same results, so a kernel that cannot be used is a slower run, never
a failure; the job then says so once, at WARNING, in the same words as `bot.py check`::

    kernel = native.load(Kernel, SPEC, cache_dir, log=log)       # a Kernel, or None
    state = native.inspect(Kernel, SPEC, cache_dir)              # what `check` prints

The library is kept in the job's cache folder as `kernel-<hash>.so`, the hash covering the
source, the flags, the compiler and the platform, so an edit or another machine builds afresh.
Other builds beside it may belong to another checkout or version sharing the state folder: each
load marks its library used (its access time), and only builds unused for `KEEP_UNUSED` are
removed. At load the library's interface is checked (`Abi`: a version and the sizes of what
kernel.py lays out); one that answers otherwise is rebuilt once, then not used.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, TypeVar

__all__ = [
    "FLAGS",
    "INSTALL_COMPILER",
    "KEEP_UNUSED",
    "Abi",
    "KernelState",
    "Spec",
    "Unbuilt",
    "build",
    "choice",
    "inspect",
    "load",
]

K = TypeVar("K")

# No -march=native: the state folder may move to another Pi with the SD card.
FLAGS = ("-O3", "-fPIC", "-shared", "-std=c99", "-fno-strict-aliasing")
INSTALL_COMPILER = "sudo apt install gcc"  # Raspberry Pi OS Lite and minimal Debian ship no cc
KEEP_UNUSED = 30 * 86400.0  # another version's build is kept until unused this long (seconds)
_ABI_ROOM = 16  # sizes a kernel may report
_loaded: Dict[str, ctypes.CDLL] = {}  # a library is loaded once per process, whoever asks
_kernels: Dict[Tuple[Path, Callable], object] = {}  # and wrapped once
_built: Dict[str, Path] = {}  # a library's name (its fingerprint) to where this process built or found it


class Unbuilt(Exception):
    """Why a kernel could not be built or loaded, in words for a log line; `fix` says what to do."""

    def __init__(self, reason: str, fix: str = "") -> None:
        super().__init__(reason)
        self.fix = fix


@dataclass(frozen=True)
class Abi:
    """The interface kernel.py was written against: `symbol` is the C function
    ``uint32_t symbol(uint64_t *sizes, uint32_t room)`` that returns the kernel's version and
    writes the sizes (structures, size_t, limits) kernel.py expects to be `sizes`."""

    symbol: str
    version: int
    sizes: Tuple[int, ...]


@dataclass(frozen=True)
class Spec:
    """A job's kernel, as data: the check and the warning are made from it."""

    job: str  # "pegs"
    source: Path  # kernel.c
    variable: str  # the setting that turns it off: TWITTERBOT_PEGS_KERNEL=numpy
    instead: str  # what the job does without it: "counting with numpy and searching in Python"
    slower: str  # how much slower, measured: "pegs count english takes 4.1x as long (...)"
    abi: Abi
    unsupported: Optional[str] = None  # the job's own reason not to try on this machine
    flags: Tuple[str, ...] = ()  # beyond FLAGS (the tests build variants)


@dataclass(frozen=True)
class KernelState:
    """Whether a job's kernel is built, loadable and in use, and if not why, what it costs and
    the fix; `words` is the sentence both `bot.py check` and the job's WARNING say."""

    job: str
    in_use: bool
    path: Optional[Path] = None
    reason: str = ""  # why it is not in use
    fix: str = ""
    chosen: bool = False  # turned off by its setting: the owner's choice, not a problem
    build_seconds: Optional[float] = None  # when this call compiled it
    version: Optional[int] = None
    instead: str = ""
    slower: str = ""

    @property
    def check_line(self) -> Tuple[str, str]:
        """As `bot.py check` prints it: "ok" in use; otherwise a "note", not a problem (the job
        runs, the same results, slower)."""
        return ("ok" if self.in_use else "note", self.words)

    @property
    def words(self) -> str:
        if self.in_use:
            built = f"; built now in {self.build_seconds:.1f} s" if self.build_seconds is not None else ""
            return f"{self.job}: compiled kernel in use ({self.path}, interface {self.version}{built})"
        text = f"{self.job}: {self.instead}, {self.reason}: {self.slower}"
        return f"{text}; {self.fix}" if self.fix else text


def load(
    make: Callable[[ctypes.CDLL, Path], K],
    spec: Spec,
    cache_dir: Optional[Path],
    *,
    log: logging.Logger,
    environ: Mapping[str, str] = os.environ,
    switch: Optional[str] = None,
) -> Optional[K]:
    """A job's kernel: `spec.source` built into `cache_dir` (without one, a temporary folder
    removed once loaded) and wrapped by `make(library, path)`; or None, after one WARNING (INFO
    when its setting turned it off) saying why, what it costs and the fix. `switch` is the
    setting's value (the config's); without it the environment's. Never raises: a job that has a
    kernel has a numpy path giving the same results."""
    kernel, state = _obtain(make, spec, cache_dir, environ=environ, switch=switch)
    if kernel is None:  # a job loads its kernel once a run: this is said once
        log.log(logging.INFO if state.chosen else logging.WARNING, "%s", state.words)
    else:
        log.debug("%s", state.words)
    return kernel


def inspect(
    make: Callable[[ctypes.CDLL, Path], object],
    spec: Spec,
    cache_dir: Optional[Path],
    *,
    environ: Mapping[str, str] = os.environ,
    switch: Optional[str] = None,
) -> KernelState:
    """What `bot.py check` says of a job's kernel: built (it builds it now if it can, so the
    job's first run does not pay for it), loadable, in use; if not, why, the cost and the fix."""
    return _obtain(make, spec, cache_dir, environ=environ, switch=switch)[1]


def choice(
    variable: str, environ: Mapping[str, str], fallback: str = "numpy", value: Optional[str] = None
) -> Optional[str]:
    """Why the setting turns the kernel off (`variable=numpy`, or a value that is not one of
    auto, c, numpy), or None when it may be used. `value` is the setting's, else the environment's."""
    value = (environ.get(variable, "") if value is None else value).strip().lower()
    if value == fallback:
        return f"as {variable}={fallback} asks"
    if value not in ("", "auto", "c"):
        return f"{variable}={value!r} is not one of auto, c, {fallback}"
    return None


def _obtain(
    make: Callable[[ctypes.CDLL, Path], K],
    spec: Spec,
    cache_dir: Optional[Path],
    *,
    environ: Mapping[str, str],
    switch: Optional[str],
) -> Tuple[Optional[K], KernelState]:
    off = choice(spec.variable, environ, value=switch)
    base = {"job": spec.job, "instead": spec.instead, "slower": spec.slower}
    if off or spec.unsupported:
        chosen = off is not None and off.startswith("as ")  # =numpy, not a value it does not know
        return None, KernelState(in_use=False, reason=off or spec.unsupported or "", chosen=chosen, **base)
    seconds: Optional[float] = None
    try:
        started = time.monotonic()
        library, path, compiled = _build(spec, cache_dir, environ)
        if compiled:
            seconds = time.monotonic() - started
        version = _check_abi(library, spec.abi, path)
        kernel = _kernels.get((path, make)) or make(library, path)
    except Unbuilt as exc:
        return None, KernelState(in_use=False, reason=str(exc), fix=exc.fix, **base)
    except AttributeError as exc:  # passed the version check, yet a function is missing: never call it
        reason = f"the kernel {path} lacks a function kernel.py calls ({exc})"
        return None, KernelState(in_use=False, reason=reason, fix=_REINSTALL, **base)
    _kernels[(path, make)] = kernel
    return kernel, KernelState(in_use=True, path=path, build_seconds=seconds, version=version, **base)


_REINSTALL = "kernel.c and kernel.py come from different versions: reinstall the bot (git status shows local edits)"


def _check_abi(library: ctypes.CDLL, abi: Abi, path: Path) -> int:
    """The kernel's interface version, or Unbuilt if it is not the one kernel.py expects."""
    answered = _abi_of(library, abi)
    if answered != (abi.version, abi.sizes):
        raise Unbuilt(
            f"the kernel {path} answers {_abi_text(answered)}, kernel.py expects {_abi_text((abi.version, abi.sizes))}",
            _REINSTALL,
        )
    return abi.version


def _abi_of(library: ctypes.CDLL, abi: Abi) -> Optional[Tuple[int, Tuple[int, ...]]]:
    """(version, sizes) as the library states them; None if it has no such function."""
    try:
        function = getattr(library, abi.symbol)
    except AttributeError:
        return None
    function.restype = ctypes.c_uint32
    function.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    sizes = (ctypes.c_uint64 * _ABI_ROOM)()
    version = int(function(sizes, _ABI_ROOM))
    return version, tuple(int(size) for size in sizes[: len(abi.sizes)])


def _abi_text(abi: Optional[Tuple[int, Tuple[int, ...]]]) -> str:
    if abi is None:
        return "no interface version"
    return f"interface {abi[0]} with sizes {', '.join(map(str, abi[1]))}"


def build(
    source: Path,
    folder: Optional[Path],
    *,
    stem: str,
    environ: Mapping[str, str] = os.environ,
    flags: Sequence[str] = (),
) -> Tuple[ctypes.CDLL, Path]:
    """The library built from `source` into `folder` (without one, into a temporary folder
    removed once loaded) and its path. Raises Unbuilt, saying why, when there is no compiler,
    the compiler fails, or the library does not load."""
    spec = Spec(stem, source, "", "", "", Abi("", 0, ()), flags=tuple(flags))
    library, path, _ = _build(spec, folder, environ, stem=stem)
    return library, path


def _build(
    spec: Spec, folder: Optional[Path], environ: Mapping[str, str], *, stem: str = "kernel"
) -> Tuple[ctypes.CDLL, Path, bool]:
    """(library, path, whether it was compiled now). A library in the cache that does not load,
    or does not answer the interface kernel.py expects, is compiled again, once."""
    source = spec.source
    if not source.is_file():
        raise Unbuilt(f"{source} is not installed", _REINSTALL)
    compiler = shutil.which("cc", path=environ.get("PATH", os.defpath))
    if compiler is None:
        raise Unbuilt("no C compiler (cc) on PATH for the faster kernel", f"install one with: {INSTALL_COMPILER}")
    flags = (*FLAGS, *spec.flags)
    name = f"{stem}-{_fingerprint(source, compiler, flags)}.so"
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="twitterbot-kernel-") as temporary:
            return _build_and_load(compiler, flags, spec, Path(temporary), name, stem)
    return _build_and_load(compiler, flags, spec, folder, name, stem)


def _fingerprint(source: Path, compiler: str, flags: Sequence[str]) -> str:
    parts = [source.read_bytes(), " ".join(flags).encode(), os.path.realpath(compiler).encode()]
    parts += [platform.machine().encode(), sys.platform.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _build_and_load(
    compiler: str, flags: Sequence[str], spec: Spec, folder: Path, name: str, stem: str
) -> Tuple[ctypes.CDLL, Path, bool]:
    path = folder / name
    if str(path) in _loaded:
        return _loaded[str(path)], path, False
    if path.is_file():
        library = _open(path)
        if library is not None and (
            not spec.abi.symbol or _abi_of(library, spec.abi) == (spec.abi.version, spec.abi.sizes)
        ):
            _loaded[str(path)] = library
            _mark_used(path)
            _remove_unused(folder, stem, keep=path)
            return library, path, False
        # Not what this kernel.c makes (a truncated or foreign file): build it again. dlopen knows
        # a library by its path, so the new one is loaded from its temporary name.
        path.unlink(missing_ok=True)
    built = _built.get(name)
    copied = _copied(built, folder, path, stem) if built is not None else None
    library = copied or _compile(compiler, flags, spec.source, folder, path, stem)
    _loaded[str(path)], _built[name] = library, path
    _remove_unused(folder, stem, keep=path)
    return library, path, copied is None


def _copied(built: Path, folder: Path, path: Path, stem: str) -> Optional[ctypes.CDLL]:
    """The library this process built into another folder (another bot's state folder of the same
    flock: the same source, compiler and flags, so the same name), copied here and loaded, in
    place of compiling it again; None if it cannot be (then it is compiled). Written as `_compile`
    writes: under a temporary name, loaded, then renamed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{stem}-", suffix=".so", dir=folder)
    except OSError:
        return None
    try:
        with os.fdopen(handle, "wb") as copy, built.open("rb") as original:
            shutil.copyfileobj(original, copy)
        library = ctypes.CDLL(temporary)
        os.replace(temporary, path)
        return library
    except OSError:
        return None
    finally:
        Path(temporary).unlink(missing_ok=True)


def _open(path: Path) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(str(path))
    except OSError:
        return None


def _compile(compiler: str, flags: Sequence[str], source: Path, folder: Path, path: Path, stem: str) -> ctypes.CDLL:
    """Compile to a temporary name, load it from there and rename it: a crash or a second run at
    the same moment never leaves half a library under the real name."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{stem}-", suffix=".so", dir=folder)
        os.close(handle)
    except OSError as exc:
        raise Unbuilt(
            f"cannot write the kernel into {folder} ({exc.strerror or exc})",
            f"make {folder} writable by this user (its owner: ls -ld {folder})",
        ) from None
    try:
        try:
            done = subprocess.run(
                [compiler, *flags, "-o", temporary, str(source)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise Unbuilt(
                f"the C compiler {compiler} could not run ({exc})", f"reinstall it with: {INSTALL_COMPILER}"
            ) from None
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
            raise Unbuilt(
                f"{compiler} could not build the kernel: {first.strip()[:300]}",
                f"a complete compiler and C library headers build it: {INSTALL_COMPILER}",
            )
        try:
            library = ctypes.CDLL(temporary)
        except OSError as exc:
            raise Unbuilt(
                f"the kernel built from {source} could not be loaded ({exc})",
                f"a complete compiler and C library build it: {INSTALL_COMPILER}",
            ) from None
        os.replace(temporary, path)
        return library
    finally:
        Path(temporary).unlink(missing_ok=True)


def _mark_used(path: Path) -> None:
    """Set the library's access time to now (its modification time stays: when it was built):
    what `_remove_unused` reads, whatever the filesystem's noatime or relatime."""
    with contextlib.suppress(OSError):  # a read-only state folder: the build is kept longer, no harm
        os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns))


def _remove_unused(folder: Path, stem: str, *, keep: Path, now: Optional[float] = None) -> None:
    """Remove the builds beside `keep` that no checkout has loaded for KEEP_UNUSED (another
    version sharing this state folder loads its own and keeps it), and temporary files a crash
    left behind more than an hour ago."""
    now = time.time() if now is None else now
    for old in [*folder.glob(f"{stem}-*.so"), *folder.glob(f".{stem}-*.so")]:
        if old == keep:
            continue
        try:
            status = old.stat()
        except OSError:
            continue
        last_used = max(status.st_atime, status.st_mtime)
        limit = 3600.0 if old.name.startswith(".") else KEEP_UNUSED
        if now - last_used > limit:
            old.unlink(missing_ok=True)
