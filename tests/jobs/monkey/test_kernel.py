"""The compiled kernel types exactly what numpy types: the same keys, records, generator states
and checkpoints, and the monkey falls back to numpy (with one log line) where it cannot be built."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

from twitterbot.jobs import native
from twitterbot.jobs.monkey import kernel as kernel_module
from twitterbot.jobs.monkey.kernel import ENV, Kernel, load
from twitterbot.jobs.monkey.matchers import AnywhereMatcher, Matcher, PrefixMatcher
from twitterbot.jobs.monkey.simulation import DRAW, ROOM, KeyStream, NewRecord, Simulation

COMPILER = shutil.which("cc")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Kernel:
    if COMPILER is None:
        pytest.skip("NO C COMPILER (cc) ON PATH: the compiled kernel is NOT tested here")
    built = load(tmp_path_factory.mktemp("kernel-cache"), environ={"PATH": os.environ.get("PATH", "")})
    assert built is not None, "cc is on PATH, so the kernel must build"
    return built


@pytest.mark.parametrize("key_count", [2, 3, 27, 30, 100, 255])
def test_the_kernel_maps_every_16_bit_value_exactly(kernel: Kernel, key_count: int) -> None:
    assert kernel.supports(key_count)


@pytest.mark.parametrize("seed", [0, 1, 42, 2**63 + 5])
@pytest.mark.parametrize("key_count", [2, 27, 30, 255])
def test_draws_and_generator_states_equal_numpy(kernel: Kernel, seed: int, key_count: int) -> None:
    numpy_stream = KeyStream(key_count, np.random.SeedSequence(seed))
    compiled = KeyStream(key_count, np.random.SeedSequence(seed), kernel)
    for _ in range(3):
        assert np.array_equal(compiled._next_draw(), numpy_stream._next_draw())
        assert compiled.generator() == numpy_stream.generator()


def test_a_half_used_32_bit_buffer_carries_over(kernel: Kernel) -> None:
    """numpy's redraws take 32-bit halves and may leave one in the generator's buffer, which the
    next draw's redraws use first: the kernel reads it and leaves it the same way."""
    seen = set()
    for seed in range(12):
        numpy_stream = KeyStream(255, seed)  # 255 keys: 0.8% of values redrawn, many per draw
        compiled = KeyStream(255, seed, kernel)
        for _ in range(2):
            assert np.array_equal(compiled._next_draw(), numpy_stream._next_draw())
            state = numpy_stream.generator()
            assert compiled.generator() == state
            seen.add(state["has_uint32"])
    assert seen == {0, 1}


def test_lemire_rejections_are_redrawn_like_numpy(kernel: Kernel) -> None:
    """numpy's `integers` rejects some 32-bit draws (Lemire's method): with 188 keys, 46% of
    16-bit values are redrawn and about one draw in two has a rejection. Over 40 draws the
    kernel must reject and redraw the same ones."""
    numpy_stream, compiled = KeyStream(188, 11), KeyStream(188, 11, kernel)
    for _ in range(40):
        assert np.array_equal(compiled._next_draw(), numpy_stream._next_draw())
    assert compiled.generator() == numpy_stream.generator()


def _records(matcher: Matcher, key_count: int, seed: int, batches: List[int], kernel: Optional[Kernel]) -> Any:
    simulation = Simulation(matcher, key_count=key_count, seed=seed, kernel=kernel)
    records: List[Tuple[int, int, Tuple[int, ...]]] = []
    total = 0
    for batch in batches:
        total += batch
        for event in simulation.run(keystrokes=total):
            if isinstance(event, NewRecord):
                records.append((event.keystrokes, event.length, event.codes))
    return records, simulation.state()


def anywhere_find(kernel: Kernel, typed: np.ndarray, fresh: int, record: int, matcher: AnywhereMatcher) -> Any:
    """The kernel's anywhere search called directly, on the arrays the matcher hands it."""
    index = matcher.index()
    return kernel.anywhere_find(
        typed,
        fresh,
        record,
        gram_ok=index["gram_ok"],
        codes=index["codes"],
        corpus=matcher.corpus,
        base=matcher.base,
        depth=matcher.depth,
    )


def _prefix(key_count: int) -> PrefixMatcher:
    return PrefixMatcher(np.random.default_rng(7).integers(0, key_count, 400).astype(np.uint8))


def _anywhere(key_count: int) -> AnywhereMatcher:
    corpus = np.random.default_rng(8).integers(0, key_count + 1, 3000).astype(np.uint8)
    return AnywhereMatcher(corpus, key_count)


@pytest.mark.parametrize("mode", ["prefix", "anywhere"])
@pytest.mark.parametrize(
    "seed, key_count, batches",
    [
        (1, 4, [3 * DRAW + 11]),
        (2, 4, [5, 1000, DRAW - 1, DRAW + 2, 77_777]),
        (3, 27, [2 * DRAW, 123_456]),
        (4, 2, [DRAW // 3, DRAW // 3, DRAW]),
    ],
)
def test_records_and_checkpoints_equal_numpy(
    kernel: Kernel, mode: str, seed: int, key_count: int, batches: List[int]
) -> None:
    matcher = _prefix(key_count) if mode == "prefix" else _anywhere(key_count)
    expected = _records(matcher, key_count, seed, batches, None)
    assert expected[0], "the case must find records to compare"
    assert _records(matcher, key_count, seed, batches, kernel) == expected


@pytest.mark.parametrize("first_with_kernel", [True, False])
def test_either_path_resumes_the_others_checkpoint(kernel: Kernel, first_with_kernel: bool) -> None:
    matcher = _prefix(4)
    straight = _records(matcher, 4, 9, [2 * DRAW + 5, DRAW], None)
    first = Simulation(matcher, key_count=4, seed=9, kernel=kernel if first_with_kernel else None)
    records = [
        (e.keystrokes, e.length, e.codes) for e in first.run(keystrokes=2 * DRAW + 5) if isinstance(e, NewRecord)
    ]
    second = Simulation(matcher, key_count=4, state=first.state(), kernel=None if first_with_kernel else kernel)
    records += [
        (e.keystrokes, e.length, e.codes) for e in second.run(keystrokes=3 * DRAW + 5) if isinstance(e, NewRecord)
    ]
    assert (records, second.state()) == straight


def test_the_kernel_finds_prefix_records_at_every_alignment(kernel: Kernel) -> None:
    target = np.random.default_rng(3).integers(0, 27, 50).astype(np.uint8)
    matcher = PrefixMatcher(target)
    rng = np.random.default_rng(4)
    for start in list(range(0, 70)) + [1000, 4095]:
        for length in (1, 2, 3, 7, 9, 50):
            typed = rng.integers(0, 27, 4200).astype(np.uint8)
            typed[start : start + length] = target[:length]
            for fresh, record in ((0, 0), (start, length - 1), (start + length - 1, 0)):
                assert kernel.prefix_find(typed, fresh, record, target) == matcher.find(typed, fresh, record)


def _empty_path(tmp_path: Path) -> Dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    return {"PATH": str(folder)}


def test_without_a_compiler_the_monkey_types_with_numpy(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=kernel_module.__name__):
        fallback = load(tmp_path / "cache", environ=_empty_path(tmp_path))
    assert fallback is None
    lines = [record for record in caplog.records if record.name == kernel_module.__name__]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING  # once, and loud: it costs
    assert "no C compiler (cc) on PATH" in lines[0].getMessage()
    assert kernel_module.SPEC.slower in lines[0].getMessage() and "sudo apt install gcc" in lines[0].getMessage()
    assert not (tmp_path / "cache").exists()
    # ...and types the same records as the kernel (or, with no compiler here, as numpy does)
    matcher = _prefix(4)
    typed = _records(matcher, 4, 5, [DRAW + 3], fallback)
    built = load(tmp_path / "cache") if COMPILER else None
    assert typed == _records(matcher, 4, 5, [DRAW + 3], built)


def test_the_environment_can_turn_the_kernel_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=kernel_module.__name__):
        assert load(tmp_path, environ={ENV: "numpy", "PATH": os.environ.get("PATH", "")}) is None
    assert f"as {ENV}=numpy asks" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_a_compiler_that_fails_means_numpy_and_says_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    environ = _empty_path(tmp_path)
    broken = Path(environ["PATH"]) / "cc"
    broken.write_text("#!/bin/sh\necho 'kernel.c:1: error: this compiler is broken' >&2\nexit 1\n", encoding="utf-8")
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)
    with caplog.at_level(logging.INFO, logger=kernel_module.__name__):
        assert load(tmp_path / "cache", environ=environ) is None
    assert "error: this compiler is broken" in caplog.text
    assert [path.name for path in (tmp_path / "cache").iterdir()] == []  # no half-built library left


def test_the_kernel_is_built_once_and_kept_by_its_source_hash(tmp_path: Path) -> None:
    if COMPILER is None:
        pytest.skip("NO C COMPILER (cc) ON PATH: the compiled kernel is NOT tested here")
    cache = tmp_path / "cache"
    (cache).mkdir()
    # Another version's build, in use by another checkout sharing the state folder, is kept; one
    # unused for longer than native.KEEP_UNUSED is removed.
    (cache / "kernel-0000000000000000.so").write_bytes(b"an older kernel, unused")
    long_ago = time.time() - native.KEEP_UNUSED - 86400
    os.utime(cache / "kernel-0000000000000000.so", (long_ago, long_ago))
    (cache / "kernel-1111111111111111.so").write_bytes(b"another version's kernel, loaded yesterday")
    yesterday = time.time() - 86400
    os.utime(cache / "kernel-1111111111111111.so", (yesterday, long_ago))
    first = load(cache)
    assert first is not None
    assert sorted(path.name for path in cache.iterdir()) == sorted([first.path.name, "kernel-1111111111111111.so"])
    built = first.path.stat().st_mtime_ns
    native._loaded.clear()  # as a new process would
    native._kernels.clear()
    again = load(cache)
    assert again is not None and again.path == first.path and again.path.stat().st_mtime_ns == built


@pytest.mark.parametrize("words", [1, 3, 63, 65, 129])
def test_draws_of_any_size_equal_numpy_s_own_functions(kernel: Kernel, words: int) -> None:
    """Sizes that are not whole chunks of the kernel's loop, against numpy's `random_raw` and
    `integers` directly (not through KeyStream), with 255 keys so that some values are redrawn."""
    for seed in range(4):
        reference, bits = np.random.PCG64(seed), np.random.PCG64(seed)
        keys = kernel.draw(bits, 255, words, np.empty(4 * words, dtype=np.uint32))
        values = reference.random_raw(words).view("<u2")
        span = 255 * 255
        pairs = (values % span).astype(np.int64)
        redrawn = np.flatnonzero(values >= 65536 - 65536 % span)
        pairs[redrawn] = np.random.Generator(reference).integers(0, span, redrawn.size)
        assert np.array_equal(keys[0::2], pairs // 255) and np.array_equal(keys[1::2], pairs % 255)
        assert bits.state == reference.state


def test_the_kernel_finds_anywhere_records_at_every_alignment(kernel: Kernel) -> None:
    """`AnywhereMatcher.find` in C against numpy: stretches of the corpus planted at every
    alignment to the 4-key blocks, records shorter and longer than a sorted code (`depth`), and
    stretches that cross a work's end, which must not count."""
    rng = np.random.default_rng(1)
    corpus = rng.integers(0, 28, 200_000).astype(np.uint8)
    matcher = AnywhereMatcher(corpus, 27)
    works = np.flatnonzero(corpus == 27)
    crossing = corpus[works[10] - 6 : works[10] + 7].copy()
    crossing[6] = 5  # the work's end typed as a letter: not in the corpus
    for size in (1, 16, 17, 4097, 20_000):
        for start in (0, 1, 2, 3, 5, size // 3, size // 3 + 1, size - 40):
            typed = rng.integers(0, 27, size).astype(np.uint8)
            if 0 <= start <= size - 40:
                source = rng.integers(0, len(corpus) - 40)
                stretch = corpus[source : source + 40].copy()
                stretch[stretch == 27] = 0
                typed[start : start + 40] = stretch
                if size > 1000:
                    typed[size // 2 : size // 2 + 13] = crossing
            for fresh, record in ((0, 0), (start, 6), (0, 11), (start + 3, 13), (0, 20), (size // 2, 12)):
                expected = matcher.find(typed, fresh, record)
                assert anywhere_find(kernel, typed, fresh, record, matcher) == expected
                assert matcher.find(typed, fresh, record, kernel) == expected


def test_anywhere_records_longer_than_a_code_are_looked_up_in_the_text(kernel: Kernel) -> None:
    """Past `depth` keys the sorted codes only say the beginning occurs: a window whose first
    `depth` keys occur but not the whole is no record."""
    corpus = np.random.default_rng(2).integers(0, 27, 5000).astype(np.uint8)
    matcher = AnywhereMatcher(corpus, 27)
    depth = matcher.depth
    typed = np.random.default_rng(3).integers(0, 27, 3000).astype(np.uint8)
    typed[100 : 100 + depth + 5] = corpus[700 : 700 + depth + 5]
    typed[100 + depth + 2] = (corpus[700 + depth + 2] + 1) % 27  # occurs for depth + 2 keys only
    typed[2000 : 2000 + depth + 4] = corpus[3000 : 3000 + depth + 4]
    expected = [(2000 + depth + 2, depth + 3), (2000 + depth + 3, depth + 4)]
    assert matcher.find(typed, 0, depth + 2) == expected
    assert anywhere_find(kernel, typed, 0, depth + 2, matcher) == expected


def test_both_copies_of_the_block_sieve_agree_with_numpy(kernel: Kernel) -> None:
    """The AVX2 sieve (x86-64, picked at run time) and the baseline one give numpy's answer for
    every block, in whole words of 64 blocks and in the blocks left after them."""
    rng = np.random.default_rng(5)
    corpus = rng.integers(0, 28, 300_000).astype(np.uint8)
    matcher = AnywhereMatcher(corpus, 27)
    for size in (3, 4, 255, 256, 260, 4 * 64 * 7 + 13, DRAW):
        typed = rng.integers(0, 27, size).astype(np.uint8)
        for at in range(0, size - 8, max(1, size // 50)):  # some blocks that pass
            typed[at : at + 8] = np.minimum(corpus[at : at + 8], 26)
        gram_ok = matcher.index()["gram_ok"]
        expected = gram_ok[matcher._block_codes(typed)]
        assert expected.any() or size < 8
        baseline, vectorised = kernel.block_sieve(typed, gram_ok, vector=False)
        assert not vectorised and np.array_equal(baseline, expected)
        fast, _ = kernel.block_sieve(typed, gram_ok)
        assert np.array_equal(fast, expected)


@pytest.mark.parametrize("with_kernel", [True, False])
def test_keys_joined_to_what_came_before_are_the_stream_s_keys(kernel: Kernel, with_kernel: bool) -> None:
    """`take_after` gives `before` then the next keys, whether they land in the room before one of
    the kernel's draws, straddle two draws, or `before` is longer than that room; the stream's
    keys are the same as `take` gives."""
    reference = KeyStream(27, 12).take(6 * DRAW)
    stream = KeyStream(27, 12, kernel if with_kernel else None)
    rng = np.random.default_rng(4)
    at = 0
    for size, before_size in [(DRAW, 0), (DRAW, 9), (100, 7), (DRAW - 100, ROOM), (DRAW + 50, 3), (7, ROOM + 1)]:
        before = rng.integers(0, 27, before_size).astype(np.uint8)
        joined = stream.take_after(before, size)
        assert np.array_equal(joined, np.concatenate([before, reference[at : at + size]]))
        at += size
    assert np.array_equal(stream.take(DRAW), reference[at : at + DRAW])


def test_typing_maps_no_fresh_memory_per_draw_under_dask_s_malloc_settings(kernel: Kernel, tmp_path: Path) -> None:
    """A Dask worker runs with MALLOC_TRIM_THRESHOLD_ set (the nanny's default), which pins glibc's
    mmap threshold at 128 KiB: a fresh 256 KiB array a draw would be mapped anew and page-faulted
    in every time (40% of a worker's typing). The typing reuses its buffers instead."""
    code = f"""
import resource, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
import numpy as np
from pathlib import Path
from twitterbot.jobs.monkey.kernel import load
from twitterbot.jobs.monkey.matchers import AnywhereMatcher
from twitterbot.jobs.monkey.simulation import DRAW, KeyStream, Monkey
kernel = load(Path({str(kernel.path.parent)!r}))
matcher = AnywhereMatcher(np.random.default_rng(8).integers(0, 28, 3000).astype(np.uint8), 27)
monkey = Monkey(matcher, KeyStream(27, 5, kernel), record=9, kernel=kernel)
monkey.type(4 * DRAW)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
monkey.type(64 * DRAW)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    environ = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}
    faults = int(
        subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True).stdout
    )
    assert faults < 64 * 8, f"{faults} page faults in 64 draws: a draw's memory is mapped afresh ({DRAW // 4096} pages)"
