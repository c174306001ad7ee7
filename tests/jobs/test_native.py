"""jobs/native.py: a job's compiled kernel is checked at load (its interface version and the
sizes kernel.py lays out), rebuilt or not used when it answers otherwise, never called wrongly;
`bot.py check` shows each kernel's state; a job without one says so once, at WARNING, in the same
words; the switches are settings; the cache keeps other versions' builds while they are used."""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict

import pytest
from conftest import BotHome

from twitterbot.jobs import native
from twitterbot.jobs.pegs import kernel as pegs_kernel

_VERSION = f"#define PEGS_ABI_VERSION {pegs_kernel.ABI.version}u"  # kernel.c's line, as kernel.py expects it

COMPILER = shutil.which("cc")
needs_cc = pytest.mark.skipif(COMPILER is None, reason="NO C COMPILER (cc) ON PATH: the kernels are NOT tested here")


@pytest.fixture(autouse=True)
def as_a_new_process():
    """Each test loads libraries as a fresh process would (native keeps them per process)."""
    for kept in (native._loaded, native._kernels, native._built):
        kept.clear()
    yield
    for kept in (native._loaded, native._kernels, native._built):
        kept.clear()


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the peg kernel's source with one change."""
    text = pegs_kernel.SOURCE.read_text()
    assert old in text
    copy = tmp_path / "variant" / "kernel.c"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(text.replace(old, new))
    return copy


def _compile(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([COMPILER, *native.FLAGS, "-o", str(target), str(source)], check=True, timeout=300)


def _cached_path(cache: Path) -> Path:
    """Where load() keeps the real kernel.c's build."""
    return cache / f"kernel-{native._fingerprint(pegs_kernel.SOURCE, COMPILER, native.FLAGS)}.so"


@needs_cc
def test_a_kernel_built_for_one_bot_is_copied_to_the_next_not_compiled_again(tmp_path: Path, monkeypatch) -> None:
    """`check` of a flock of 50 bots looks at each bot's kernels in its own state folder: the one
    process compiles each kernel once (about 2 s on a PC, far more on a Pi) and copies it after."""
    first = pegs_kernel.state(tmp_path / "ann" / "pegs-cache")
    assert first.in_use and first.build_seconds is not None

    def no_compiler(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(native, "_compile", no_compiler)
    second = pegs_kernel.state(tmp_path / "bob" / "pegs-cache")
    assert second.in_use and second.build_seconds is None, second.words
    assert second.path == _cached_path(tmp_path / "bob" / "pegs-cache")
    assert second.path.read_bytes() == first.path.read_bytes()
    assert [path.name for path in second.path.parent.iterdir()] == [second.path.name]  # no temporary left


@needs_cc
@pytest.mark.parametrize(
    "foreign",
    ["another interface version", "other structure sizes", "no interface function", "not a library at all"],
)
def test_a_cached_kernel_that_answers_another_interface_is_rebuilt(tmp_path: Path, foreign: str) -> None:
    cache = tmp_path / "cache"
    path = _cached_path(cache)
    if foreign == "not a library at all":
        path.parent.mkdir(parents=True)
        path.write_bytes(b"\x7fELF half a library")
    else:
        changes = {
            "another interface version": (_VERSION, f"#define PEGS_ABI_VERSION {pegs_kernel.ABI.version + 5}u"),
            "other structure sizes": ("sizeof(board_t), sizeof(pair_t)", "sizeof(board_t) + 8, sizeof(pair_t)"),
            "no interface function": ("uint32_t pegs_abi(", "uint32_t pegs_abi_of_another_age("),
        }
        _compile(_variant(tmp_path, *changes[foreign]), path)
    state = pegs_kernel.state(cache)
    assert state.in_use, state.words
    assert state.build_seconds is not None  # built again, now
    assert native._abi_of(native._loaded[str(path)], pegs_kernel.ABI) == (
        pegs_kernel.ABI.version,
        pegs_kernel.ABI.sizes,
    )


@needs_cc
def test_a_kernel_c_that_disagrees_with_kernel_py_is_not_used_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = _variant(tmp_path, _VERSION, f"#define PEGS_ABI_VERSION {pegs_kernel.ABI.version + 1}u")
    spec = dataclasses.replace(pegs_kernel.SPEC, source=source)
    with caplog.at_level(logging.INFO):
        kernel = native.load(pegs_kernel.Kernel, spec, tmp_path / "cache", log=logging.getLogger("pegs-test"))
    assert kernel is None
    [record] = [record for record in caplog.records if record.name == "pegs-test"]
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert f"answers interface {pegs_kernel.ABI.version + 1}" in message
    assert f"kernel.py expects interface {pegs_kernel.ABI.version}" in message
    assert message.startswith("pegs: counting with numpy and searching in Python, the kernel ")
    assert pegs_kernel.SPEC.slower in message and "reinstall the bot" in message


@needs_cc
def test_the_interface_sizes_are_those_ctypes_lays_out(tmp_path: Path) -> None:
    """kernel.c's own answer, built here, is what kernel.py expects (the check is not vacuous)."""
    state = pegs_kernel.state(tmp_path)
    assert state.in_use and state.version == pegs_kernel.ABI.version
    from twitterbot.jobs.monkey import kernel as monkey_kernel

    assert monkey_kernel.state(tmp_path / "monkey").in_use


@needs_cc
def test_builds_of_other_versions_are_kept_while_used_and_removed_when_long_unused(tmp_path: Path) -> None:
    import time

    cache = tmp_path / "cache"
    cache.mkdir()
    now = time.time()
    ages = {"kernel-aaaaaaaaaaaaaaaa.so": 2 * 86400, "kernel-bbbbbbbbbbbbbbbb.so": native.KEEP_UNUSED + 86400}
    ages[".kernel-crashed.so"] = 2 * 3600  # a build a crash left behind
    ages[".kernel-building.so"] = 60  # another process's build, in progress
    for name, age in ages.items():
        (cache / name).write_bytes(b"x")
        os.utime(cache / name, (now - age, now - age))
    assert pegs_kernel.state(cache).in_use
    left = sorted(path.name for path in cache.iterdir())
    assert left == sorted([".kernel-building.so", "kernel-aaaaaaaaaaaaaaaa.so", _cached_path(cache).name])
    # Loading marks the build used (its access time), keeping its modification time.
    built = _cached_path(cache).stat().st_mtime_ns
    os.utime(_cached_path(cache), (now - 10 * 86400, now - 10 * 86400))
    native._loaded.clear()
    assert pegs_kernel.state(cache).in_use and pegs_kernel.state(cache).build_seconds is None
    assert _cached_path(cache).stat().st_atime > now - 60 and _cached_path(cache).stat().st_mtime_ns != built


def _without_cc(home: BotHome) -> Dict[str, str]:
    bare = home.path / "bin-without-cc"
    bare.mkdir(exist_ok=True)
    return {"PATH": str(bare)}


def test_check_shows_each_kernel_and_what_its_absence_costs(home: BotHome) -> None:
    result = home.run("check", env=_without_cc(home))
    assert result.returncode == 0, result.stdout + result.stderr  # slower is not a setup problem
    lines = result.stdout.splitlines()
    pegs = next(line for line in lines if line.startswith("note     pegs:"))
    monkey = next(line for line in lines if line.startswith("note     monkey:"))
    for line in (pegs, monkey):
        assert "no C compiler (cc) on PATH" in line and "install one with: sudo apt install gcc" in line
    assert pegs_kernel.SPEC.slower in pegs and "typing with numpy" in monkey
    if COMPILER:
        built = home.run("check")
        assert built.returncode == 0, built.stdout
        assert any(line.startswith("ok       pegs: compiled kernel in use (") for line in built.stdout.splitlines())
        assert any(line.startswith("ok       monkey: compiled kernel in use (") for line in built.stdout.splitlines())
        assert "built now in" in built.stdout  # check builds them: the first job does not pay


def test_a_job_without_its_kernel_warns_once_in_check_s_words(home: BotHome) -> None:
    check = home.run("check", env=_without_cc(home)).stdout
    words = next(line for line in check.splitlines() if line.startswith("note     pegs:"))[len("note     ") :]
    result = home.run("pegs", "count", "plus", "--no-post", env=_without_cc(home))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if " WARNING: " in line]
    assert len(warnings) == 1 and warnings[0].endswith(f"WARNING: {words}")
    assert (
        "plus: 31 positions (up to the start's 8 symmetries) reached in 8 jumps; 16 solutions" in result.stdout
    )  # the same answer


def test_the_switch_in_the_env_file_turns_the_kernel_off(home: BotHome) -> None:
    home.write_env(TWITTERBOT_PEGS_KERNEL="numpy")
    result = home.run("pegs", "count", "plus", "--no-post")
    assert result.returncode == 0, result.stderr  # accepted in .env (it was an unknown setting)
    assert (
        "INFO: pegs: counting with numpy and searching in Python, as TWITTERBOT_PEGS_KERNEL=numpy asks" in result.stderr
    )
    assert not (home.path / "state" / "pegs-cache").exists()
    check = home.run("check")
    assert (
        "note     pegs: counting with numpy and searching in Python, as TWITTERBOT_PEGS_KERNEL=numpy asks"
        in check.stdout
    )
    home.write_env(TWITTERBOT_PEGS_KERNEL="fast")
    refused = home.run("pegs", "count", "plus", "--no-post")
    assert refused.returncode == 78 and "TWITTERBOT_PEGS_KERNEL='fast'" in refused.stderr
