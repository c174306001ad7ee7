"""The monkey's kernel where the compiler has no 128-bit integers (32-bit Raspberry Pi OS on
armhf): PCG64's arithmetic in two 64-bit words gives numpy's keys and generator states exactly.

Checked two ways: the same two-word code built for this machine (-DMONKEY_PORTABLE_U128) and
loaded like the real kernel; and kernel.c cross-compiled for 32-bit ARM and run under qemu-arm
(apt install gcc-arm-linux-gnueabihf qemu-user), skipped loudly where those are missing.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Tuple

import numpy as np
import pytest

from twitterbot.jobs import native
from twitterbot.jobs.monkey import kernel as monkey_kernel

HARNESS = Path(__file__).with_name("draw_harness.c")
CROSS = shutil.which("arm-linux-gnueabihf-gcc")
QEMU = shutil.which("qemu-arm")


def numpy_draw(seed: int, key_count: int, words: int) -> Tuple[np.ndarray, dict]:
    """What KeyStream draws, by numpy's own functions: 4 values a word, low first; values at or
    above the last multiple of k*k drawn again with `integers`."""
    bits = np.random.PCG64(seed)
    values = bits.random_raw(words).view("<u2")
    span = key_count * key_count
    pairs = (values % span).astype(np.int64)
    redrawn = np.flatnonzero(values >= 65536 - 65536 % span)
    pairs[redrawn] = np.random.Generator(bits).integers(0, span, redrawn.size)
    keys = np.empty(8 * words, dtype=np.uint8)
    keys[0::2], keys[1::2] = pairs // key_count, pairs % key_count
    return keys, bits.state


def test_the_two_word_arithmetic_built_here_types_numpy_s_keys(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("NO C COMPILER (cc) ON PATH: the kernel's two-word arithmetic is NOT tested here")
    spec = dataclasses.replace(monkey_kernel.SPEC, flags=("-DMONKEY_PORTABLE_U128",))
    kernel = native.load(monkey_kernel.Kernel, spec, tmp_path, log=logging.getLogger("test"))
    assert kernel is not None
    for seed in (0, 1, 2**63 + 5):
        for key_count in (27, 255):
            for words in (3, 64, 129):
                bits = np.random.PCG64(seed)
                keys = kernel.draw(bits, key_count, words, np.empty(4 * words, dtype=np.uint32))
                expected, state = numpy_draw(seed, key_count, words)
                assert np.array_equal(keys, expected) and bits.state == state


def _run_on_arm(binary: Path, state: dict, key_count: int, words: int) -> Tuple[np.ndarray, List[int], str]:
    inner = state["state"]
    g = [inner["state"] >> 64, inner["state"] & (2**64 - 1), inner["inc"] >> 64, inner["inc"] & (2**64 - 1)]
    g += [int(state["has_uint32"]), int(state["uinteger"])]
    done = subprocess.run(
        [QEMU, str(binary), *map(str, g), str(key_count), str(words)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    return np.frombuffer(bytes.fromhex(lines[1]), dtype=np.uint8), [int(word) for word in lines[2:8]], lines[8]


def test_kernel_c_cross_compiled_for_32_bit_arm_types_numpy_s_keys(tmp_path: Path) -> None:
    if CROSS is None or QEMU is None:
        missing = (
            "NO arm-linux-gnueabihf-gcc OR qemu-arm: the monkey kernel on 32-bit ARM is NOT tested here "
            "(apt install gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user)"
        )
        if os.environ.get("TWITTERBOT_REQUIRE_ARM32"):  # CI installs them (.ci/run): it must run this
            pytest.fail(missing)
        pytest.skip(missing)
    binary = tmp_path / "draw-armhf"
    built = subprocess.run(
        [CROSS, *native.FLAGS[:1], "-std=c99", "-static", "-o", str(binary), str(HARNESS), str(monkey_kernel.SOURCE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr  # no 128-bit integers there: the two-word code builds
    for seed in (0, 42, 2**63 + 5):
        for key_count in (27, 255):
            words = 129
            start = np.random.PCG64(seed).state
            keys, g, abi = _run_on_arm(binary, start, key_count, words)
            expected, state = numpy_draw(seed, key_count, words)
            assert np.array_equal(keys, expected)
            inner = state["state"]
            assert g[:4] == [
                inner["state"] >> 64,
                inner["state"] & (2**64 - 1),
                inner["inc"] >> 64,
                inner["inc"] & (2**64 - 1),
            ]
            assert g[4:] == [int(state["has_uint32"]), int(state["uinteger"])]
    # A 32-bit machine's sizes: what kernel.py computes there with ctypes, so the ABI check passes.
    assert abi.split() == [str(monkey_kernel.ABI.version), "48", "4", "4"]
    assert os.path.getsize(binary) > 0
