"""The infinite monkey: random keys typed in bulk, and the records they set against a text.

A record is the longest stretch of typing so far that matches the text: in `prefix` mode it
must equal the text's beginning, in `anywhere` mode it may occur anywhere in the works. Records
grow one letter at a time, so each is reported at the keystroke that completed it::

    matcher = AnywhereMatcher(corpus_codes, key_count=27)       # or PrefixMatcher(target_codes)
    simulation = Simulation(matcher, key_count=27, seed=42, workers=4)
    for event in simulation.run(keystrokes=10**9):
        ...  # NewRecord(keystrokes=..., length=..., codes=...) and Round(keystrokes=..., seconds=...)

Everything here is numpy over blocks of keys, never a Python loop per keystroke; nothing here
knows about posting. The same seed gives the same keys, records and keystroke counts however
the typing is split into calls, and `Simulation.state()` resumes a run exactly. The matchers
(what the typing is compared with) are in `matchers.py`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .matchers import Matcher

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = ["DRAW", "ROOM", "ROUND", "Event", "KeyStream", "Monkey", "NewRecord", "Round", "Simulation"]

# Keys are drawn this many at a time. It is part of what a seed means: change it and every
# seeded stream changes, and checkpoints from before no longer resume.
DRAW = 1 << 18
# Room before each of the compiled kernel's draws for the keys typed before it (a record's
# length, that a record may start in): the matcher then reads them and the draw as one array.
ROOM = 4096
# Each monkey types this many keys per round; the parent reports and checkpoints between rounds.
ROUND = 1 << 22


class KeyStream:
    """Uniform random keys 0..k-1 from a PCG64 generator, two keys per 16 random bits.

    Each 16-bit value below the largest multiple of k*k is a pair of keys; the rare value above
    it (1% for 27 keys) is replaced by a fresh pair, so every key is exactly uniform and
    independent. Keys come in fixed draws of `DRAW`, so the stream does not depend on how
    callers split their requests, and the state is small: the generator before the current draw
    and how much of that draw was used. With `kernel` the draws are made in C, with the same keys
    and the generator left in the same state, into one buffer the stream keeps: a draw is never
    a fresh allocation (a Dask worker's malloc maps each one anew, and page-faulting 256 KiB
    every draw cost it 40% of its typing)."""

    def __init__(
        self,
        key_count: int,
        state: Union[int, np.random.SeedSequence, Dict[str, Any]],
        kernel: Optional[Kernel] = None,
    ) -> None:
        if not 2 <= key_count <= 255:
            raise ValueError(f"{key_count} keys: between 2 and 255 are supported")
        self.key_count = key_count
        span = key_count * key_count
        pair = np.arange(span)
        # pair index -> its two keys as one little-endian 16-bit number (first key, low byte)
        self._pairs = (pair // key_count + (pair % key_count) * 256).astype("<u2")
        self._span = span
        self._fair = (1 << 16) - (1 << 16) % span  # 16-bit values from here up are drawn again
        self._scratch = np.empty(DRAW // 2, dtype=np.uint16)
        self._unfair = np.empty(DRAW // 2, dtype=bool)
        self._kernel = kernel if kernel is not None and kernel.supports(key_count) else None
        self._redraw = np.empty(DRAW // 2 if self._kernel else 0, dtype=np.uint32)
        # The kernel's draws go to one buffer, kept, with ROOM bytes before it for `take_after`.
        self._space = np.empty(ROOM + DRAW if self._kernel else 0, dtype=np.uint8)
        self._joined = np.empty(0, dtype=np.uint8)  # `take_after` where there is no room
        self._bits = np.random.PCG64()
        self._random = np.random.Generator(self._bits)
        self._draw = np.empty(0, dtype=np.uint8)
        self._used = 0
        self._bits.state = state["generator"] if isinstance(state, dict) else np.random.PCG64(state).state
        self._before = self._bits.state  # the generator before the current draw
        if self._kernel is not None:
            # The kernel's generator is six words it moves on in place, and the buffers' addresses
            # are taken once: a draw costs one call, not numpy's state dictionaries each time.
            self._words = self._kernel.words(self._before)
            self._words_before = self._words[:]
            self._keys = self._space[ROOM:]
            self._keys_at = self._keys.ctypes.data
            self._redraw_at = self._redraw.ctypes.data
        if isinstance(state, dict) and state["used"]:
            self._draw, self._used = self._next_draw(), int(state["used"])

    def state(self) -> Dict[str, Any]:
        """JSON-ready: enough to continue this stream exactly."""
        if self._kernel is not None:
            return {"generator": self._kernel.state_of(self._words_before), "used": self._used}
        return {"generator": self._before, "used": self._used}

    def generator(self) -> Dict[str, Any]:
        """The generator's state now, after the current draw, as numpy's PCG64 gives it."""
        return self._kernel.state_of(self._words) if self._kernel is not None else self._bits.state

    def take(self, count: int) -> np.ndarray:
        """The next `count` keys (uint8). Within one draw the array is a view, not a copy, valid
        until the next `take` (the compiled kernel draws into the same buffer again): copy what
        you keep."""
        parts = []
        while count > 0:
            if self._used == len(self._draw):
                if parts:  # the next draw overwrites the buffer the last part views
                    parts[-1] = parts[-1].copy()
                if self._kernel is not None:
                    self._words_before = self._words[:]
                else:
                    self._before = self._bits.state
                self._draw, self._used = self._next_draw(), 0
            size = min(count, len(self._draw) - self._used)
            parts.append(self._draw[self._used : self._used + size])
            self._used += size
            count -= size
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint8)

    def take_after(self, before: np.ndarray, count: int) -> np.ndarray:
        """`before` (a copy, not a view of this stream's keys), then the next `count` keys, as one
        array, valid until the next `take`. Where the keys lie in one of the compiled kernel's
        draws, `before` is written into the room before them (keys already taken): the keys
        themselves are not copied, which a buffer of their own would cost every draw."""
        keys = self.take(count)
        if not len(before):
            return keys
        if keys.base is self._space:  # one view of the kernel's current draw
            at = ROOM + self._used - len(keys)
            if len(before) <= at:
                joined = self._space[at - len(before) : at + len(keys)]
                joined[: len(before)] = before
                return joined
        size = len(before) + len(keys)
        if len(self._joined) < size:  # kept from take to take: a fresh array each time page-faults
            self._joined = np.empty(size, dtype=np.uint8)
        joined = self._joined[:size]
        joined[: len(before)] = before
        joined[len(before) :] = keys
        return joined

    def _next_draw(self) -> np.ndarray:
        """The next DRAW keys: the same as looking each 16-bit value up in the pair table, but
        computed with whole-array SIMD arithmetic in place (a gather is the slow part of numpy):
        pair = v mod k², and its two keys as one little-endian 16-bit number,
        pair // k + (pair mod k) * 256 = 256 * pair - (256k - 1) * (pair // k), modulo 2¹⁶."""
        if self._kernel is not None:
            self._kernel.draw_at(self._words, self.key_count, self._keys_at, DRAW // 8, self._redraw_at)
            return self._keys
        values = self._bits.random_raw(DRAW // 8).view(np.uint16)
        k, quotient, unfair = self.key_count, self._scratch, self._unfair
        np.greater_equal(values, self._fair, out=unfair)
        redraw = unfair.nonzero()[0]
        np.floor_divide(values, self._span, out=quotient)
        quotient *= self._span
        values -= quotient  # the pair index, 0..k²-1
        np.floor_divide(values, k, out=quotient)
        values *= 256
        quotient *= 256 * k - 1
        values -= quotient
        if sys.byteorder == "big":  # pragma: no cover - the keys are defined little-endian
            values.byteswap(inplace=True)
        if redraw.size:
            values[redraw] = self._pairs.take(self._random.integers(0, len(self._pairs), redraw.size))
        return values.view(np.uint8)


class Monkey:
    """One monkey: a key stream, the longest record it has typed, and the last keys it typed
    (as many as the record is long: a longer record could start there). With `kernel`, records
    are searched in C: the same records."""

    def __init__(
        self,
        matcher: Matcher,
        stream: KeyStream,
        *,
        record: int = 0,
        tail: Sequence[int] = (),
        typed: int = 0,
        kernel: Optional[Kernel] = None,
    ) -> None:
        self.matcher = matcher
        self._kernel = kernel
        self.stream = stream
        self.record = record
        self.tail = np.asarray(tail, dtype=np.uint8)
        self.typed = typed

    def type(
        self, count: int, seen: Optional[Callable[[np.ndarray], None]] = None
    ) -> List[Tuple[int, int, np.ndarray]]:
        """Type `count` keys; each new record as (its keystroke index from 0, length, keys).
        `seen`, if given, is shown each block of keys as it is typed (a chunk keeps its ends)."""
        records = []
        while count > 0:
            fresh = len(self.tail)
            typed = self.stream.take_after(self.tail, min(count, DRAW))
            keys = typed[fresh:]
            if seen is not None:
                seen(keys)
            found = self.matcher.find(typed, fresh, self.record, self._kernel)
            for end, length in found:
                records.append((self.typed + end - fresh, length, typed[end - length + 1 : end + 1].copy()))
                self.record = length
            self.tail = typed[max(0, len(typed) - self.record) :].copy() if self.record else self.tail[:0]
            self.typed += len(keys)
            count -= len(keys)
        return records

    def state(self) -> Dict[str, Any]:
        return {"stream": self.stream.state(), "record": self.record, "tail": self.tail.tolist(), "typed": self.typed}

    @classmethod
    def restore(
        cls, matcher: Matcher, key_count: int, state: Dict[str, Any], kernel: Optional[Kernel] = None
    ) -> Monkey:
        return cls(
            matcher,
            KeyStream(key_count, state["stream"], kernel),
            record=state["record"],
            tail=state["tail"],
            typed=state["typed"],
            kernel=kernel,
        )


@dataclass(frozen=True)
class NewRecord:
    """A stretch longer than any before, completed at keystroke `keystrokes` (counting all monkeys)."""

    keystrokes: int
    length: int
    codes: Tuple[int, ...]
    monkey: int


@dataclass(frozen=True)
class Round:
    """Every monkey has typed another round; `keystrokes` in all, `seconds` of typing in this process."""

    keystrokes: int
    seconds: float


Event = Union[NewRecord, Round]


class Simulation:
    """`workers` monkeys typing side by side, each with its own stream (SeedSequence.spawn).

    They type in lockstep: keystroke o of monkey w is keystroke o*workers + w + 1 of the run, so
    the records and their keystroke counts depend only on the seed, never on timing. With more
    than one worker each monkey types in its own process. `kernel` (from `kernel.load`) types
    the same keys and records in C."""

    def __init__(
        self,
        matcher: Matcher,
        *,
        key_count: int,
        seed: Optional[int] = None,
        workers: int = 1,
        state: Optional[Dict[str, Any]] = None,
        kernel: Optional[Kernel] = None,
    ) -> None:
        self.matcher = matcher
        self.key_count = key_count
        if state is not None:
            self.seed = int(state["seed"])
            self.record = int(state["record"])
            monkeys = [Monkey.restore(matcher, key_count, item, kernel) for item in state["monkeys"]]
        else:
            self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy)
            self.record = 0
            streams = np.random.SeedSequence(self.seed).spawn(workers)
            monkeys = [Monkey(matcher, KeyStream(key_count, stream, kernel), kernel=kernel) for stream in streams]
        self.workers = len(monkeys)
        self._states = [monkey.state() for monkey in monkeys]
        self._monkeys = monkeys

    @property
    def keystrokes(self) -> int:
        return sum(state["typed"] for state in self._states)

    def state(self) -> Dict[str, Any]:
        """JSON-ready, as of the end of the last round reported."""
        return {"seed": self.seed, "record": self.record, "monkeys": self._states}

    def run(self, *, keystrokes: Optional[int] = None, until_length: Optional[int] = None) -> Iterator[Event]:
        """Type until `keystrokes` in all (exactly), a record of `until_length` or of the whole
        text, or forever; the caller may also simply stop iterating between events."""
        workers = self.workers
        longest = self.matcher.longest
        pool = _Pool(self._monkeys) if workers > 1 and not self.finished(keystrokes, until_length) else None
        try:
            while True:
                if self._reached(keystrokes, until_length, longest):
                    return
                counts = self._round_counts(keystrokes)
                started = time.perf_counter()
                results = pool.type(counts) if pool else [(self._monkeys[0].type(counts[0]), self._monkeys[0].state())]
                seconds = time.perf_counter() - started
                found = []
                for worker, (records, state) in enumerate(results):
                    found.extend(
                        (index * workers + worker + 1, length, codes, worker) for index, length, codes in records
                    )
                    self._states[worker] = state
                for count, length, codes, worker in sorted(found, key=lambda item: item[0]):
                    if length > self.record:
                        self.record = length
                        yield NewRecord(count, length, tuple(int(c) for c in codes), worker)
                yield Round(self.keystrokes, seconds)
        finally:
            if pool:
                pool.close()

    def finished(self, keystrokes: Optional[int] = None, until_length: Optional[int] = None) -> bool:
        """Whether `run` with these stop conditions would type nothing more: the keystrokes are
        typed, or a record of `until_length` (or of the whole text) is."""
        return self._reached(keystrokes, until_length, self.matcher.longest)

    def _reached(self, keystrokes: Optional[int], until_length: Optional[int], longest: int) -> bool:
        until = longest if until_length is None else min(until_length, longest)
        return self.record >= until or not any(self._round_counts(keystrokes))

    def _round_counts(self, keystrokes: Optional[int]) -> List[int]:
        counts = []
        for worker, state in enumerate(self._states):
            if keystrokes is None:
                counts.append(ROUND)
            else:
                mine = max(0, (keystrokes - worker - 1) // self.workers + 1)  # o*W + w + 1 <= keystrokes
                counts.append(max(0, min(ROUND, mine - state["typed"])))
        return counts


class _Pool:
    """One process per monkey, forked so the corpus index is shared, not copied."""

    def __init__(self, monkeys: List[Monkey]) -> None:
        context = multiprocessing.get_context("fork")
        self._pipes = []
        self._processes = []
        for monkey in monkeys:
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(monkey, child), daemon=True)
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)

    def type(self, counts: List[int]) -> List[Tuple[list, Dict[str, Any]]]:
        for pipe, count in zip(self._pipes, counts):
            pipe.send(count)
        return [pipe.recv() for pipe in self._pipes]

    def close(self) -> None:
        for pipe in self._pipes:
            with contextlib.suppress(OSError):  # the monkey is gone already
                pipe.send(None)
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


def _serve(monkey: Monkey, pipe: Any) -> None:
    # The parent decides when to stop (and checkpoints first); a signal meant for the whole
    # service must not kill a monkey mid-round.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            count = pipe.recv()
        except EOFError:
            return
        if count is None:
            return
        pipe.send((monkey.type(count), monkey.state()))
