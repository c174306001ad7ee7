"""The monkey's typing cut into chunks, so that any number of cores or machines type the same keys
and find the same records.

Chunk c of a run is CHUNK keys from its own generator, seeded by (seed, monkey 0, chunk c) with
`numpy.random.SeedSequence`: a pure function of those numbers. The run's typing is chunk 0, then
chunk 1, and so on. A piece (part of one chunk) is typed anywhere - in this process, in forked
processes (``--workers N``) or on a Dask cluster (``--cluster``, several pieces to a task, so
that a task's overhead stays small beside its typing) - and gives back its records and its
first and last few keys. The command's process takes the pieces in order: it finds the
records that straddle two pieces from those ends, and counts each piece once, however often a
lost worker made it be typed::

    simulation = ChunkedSimulation(matcher, key_count=27, seed=42, typing=ForkedTyping(matcher, 27, 4))
    for event in simulation.run(keystrokes=10**9):
        ...  # NewRecord and Round, as Simulation gives them

The records depend on the seed and the chunk size only, never on how many typed them.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple

import numpy as np

from .matchers import Matcher
from .simulation import DRAW, Event, KeyStream, Monkey, NewRecord, Round

if TYPE_CHECKING:  # pragma: no cover
    from ..cluster import Cluster
    from .kernel import Kernel

__all__ = [
    "CHUNK",
    "ChunkedSimulation",
    "ClusterTyping",
    "ForkedTyping",
    "LocalTyping",
    "Piece",
    "Typed",
    "stream_keys",
    "TASK_KEYS",
    "type_piece",
    "type_pieces",
]

# Keys in a chunk: part of what a seed means (stored in the checkpoint). A chunk is about a
# second of typing on a PC and a few on a Pi: long enough to dwarf a task's overhead, short
# enough for a worker to answer its heartbeats and for a lost one to cost little.
CHUNK = 1 << 25
# Keys a cluster's task types, at least (several chunks): a few tenths of a second on a PC, a few
# seconds on a Pi, so the scheduler's few milliseconds a task cost about 1%.
TASK_KEYS = 1 << 28
# Keys each piece gives back from each of its ends, at least: records straddling two pieces are
# found from them. (A record longer than this is found by typing the seam again here.)
MARGIN = 64
MONKEY = 0  # one monkey; the seed's spawn key leaves room for more


@dataclass(frozen=True)
class Piece:
    """Keys [start, stop) of chunk `chunk`."""

    chunk: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Typed:
    """What typing a piece found: records (index in the piece, length, keys) of lengths above the
    floor it was given, its first and last `margin` keys, and how long it took."""

    piece: Piece
    records: Tuple[Tuple[int, int, Tuple[int, ...]], ...]
    head: np.ndarray
    tail: np.ndarray
    margin: int
    seconds: float


def chunk_stream(key_count: int, seed: int, chunk: int, kernel: Optional[Kernel] = None) -> KeyStream:
    """Chunk `chunk`'s keys: a stream of its own, a pure function of (seed, monkey, chunk)."""
    return KeyStream(key_count, np.random.SeedSequence(seed, spawn_key=(MONKEY, chunk)), kernel)


def _skip(stream: KeyStream, count: int) -> None:
    while count > 0:
        count -= len(stream.take(min(count, DRAW)))


def type_piece(
    matcher: Matcher,
    key_count: int,
    seed: int,
    piece: Piece,
    floor: int,
    margin: int,
    kernel: Optional[Kernel] = None,
) -> Typed:
    """Type `piece` and find its records longer than `floor`: a pure function of its arguments."""
    started = time.perf_counter()
    stream = chunk_stream(key_count, seed, piece.chunk, kernel)
    _skip(stream, piece.start)
    heads: List[np.ndarray] = []
    ends = {"head": 0, "tail": np.empty(0, dtype=np.uint8)}

    def seen(keys: np.ndarray) -> None:
        if ends["head"] < margin:
            heads.append(keys[: margin - ends["head"]].copy())
            ends["head"] += len(heads[-1])
        ends["tail"] = np.concatenate([ends["tail"], keys[-margin:]])[-margin:]

    found = Monkey(matcher, stream, record=floor, kernel=kernel).type(piece.size, seen)
    records = tuple((int(index), int(length), tuple(int(c) for c in codes)) for index, length, codes in found)
    head = np.concatenate(heads) if heads else np.empty(0, dtype=np.uint8)
    return Typed(piece, records, head, ends["tail"], margin, time.perf_counter() - started)


def stream_keys(key_count: int, seed: int, chunk_size: int, low: int, high: int) -> np.ndarray:
    """The run's keys [low, high), typed again (to check a seam a long record crosses)."""
    parts = []
    at = low
    while at < high:
        chunk, start = divmod(at, chunk_size)
        stop = min(chunk_size, start + high - at)
        stream = chunk_stream(key_count, seed, chunk)
        _skip(stream, start)
        parts.append(np.concatenate([stream.take(min(DRAW, stop - done)).copy() for done in range(start, stop, DRAW)]))
        at += stop - start
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint8)


def type_pieces(
    matcher: Matcher,
    key_count: int,
    seed: int,
    pieces: Tuple[Piece, ...],
    floor: int,
    margin: int,
    kernel: Optional[Kernel] = None,
) -> Tuple[Typed, ...]:
    """`type_piece` for each of `pieces`, in order: one task's work."""
    return tuple(type_piece(matcher, key_count, seed, piece, floor, margin, kernel) for piece in pieces)


class _Later:
    """Pieces typed when their result is asked for (one core: nothing runs meanwhile)."""

    def __init__(self, work: Callable[[], Tuple[Typed, ...]]) -> None:
        self._work = work

    def result(self) -> Tuple[Typed, ...]:
        return self._work()


class LocalTyping:
    """Pieces typed in this process, one at a time.

    Every typing has the same face: `submit(seed, pieces, floor, margin)` gives a handle whose
    `result()` is the pieces' `Typed`, in order; `task_keys` is how many keys a task should hold
    (0: one piece), `window` how many tasks may be out at once, `size` and `where` what the posts
    say."""

    size = 1
    window = 1
    task_keys = 0
    where = "one core of this machine"

    def __init__(self, matcher: Matcher, key_count: int, kernel: Optional[Kernel] = None) -> None:
        self._matcher, self._key_count, self._kernel = matcher, key_count, kernel

    def submit(self, seed: int, pieces: Tuple[Piece, ...], floor: int, margin: int) -> _Later:
        return _Later(lambda: type_pieces(self._matcher, self._key_count, seed, pieces, floor, margin, self._kernel))

    def close(self) -> None:
        pass


def _serve(matcher: Matcher, key_count: int, kernel: Optional[Kernel], pipe: Any) -> None:
    # The parent decides when to stop (and checkpoints first): a signal for the whole service
    # must not kill a worker mid-piece.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            task = pipe.recv()
        except EOFError:
            return
        if task is None:
            return
        number, (seed, pieces, floor, margin) = task
        pipe.send((number, type_pieces(matcher, key_count, seed, pieces, floor, margin, kernel)))


class _Waiting:
    def __init__(self, typing: ForkedTyping, number: int) -> None:
        self._typing, self._number = typing, number

    def result(self) -> Tuple[Typed, ...]:
        return self._typing._wait(self._number)


class ForkedTyping:
    """Pieces typed by `workers` forked processes of this machine (the index is shared, not
    copied), given out in turn."""

    def __init__(self, matcher: Matcher, key_count: int, workers: int, kernel: Optional[Kernel] = None) -> None:
        context = multiprocessing.get_context("fork")
        self._pipes: List[Any] = []
        self._processes: List[Any] = []
        for _ in range(workers):
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(matcher, key_count, kernel, child), daemon=True)
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
        self._done: Dict[int, Tuple[Typed, ...]] = {}
        self._asked = 0
        self.size = workers
        self.window = 2 * workers
        self.task_keys = 0  # a pipe costs next to nothing: a piece at a time
        self.where = f"{workers} processes of this machine"

    def submit(self, seed: int, pieces: Tuple[Piece, ...], floor: int, margin: int) -> _Waiting:
        number = self._asked
        self._asked += 1
        self._pipes[number % self.size].send((number, (seed, pieces, floor, margin)))
        return _Waiting(self, number)

    def _wait(self, number: int) -> Tuple[Typed, ...]:
        pipe = self._pipes[number % self.size]
        while number not in self._done:
            try:
                got, typed = pipe.recv()
            except EOFError:
                raise RuntimeError("a typing process ended unexpectedly (out of memory?): see the system log") from None
            self._done[got] = typed
        return self._done.pop(number)

    def close(self) -> None:
        # The workers ignore SIGTERM and hold nothing worth keeping: they are killed outright.
        for process in self._processes:
            process.kill()
        for process in self._processes:
            process.join(timeout=5)


@functools.lru_cache(maxsize=1)
def _worker_kernel() -> Optional[Kernel]:
    """The compiled kernel in a Dask worker, built once per worker process (None: numpy, the same keys)."""
    from .kernel import load

    return load(None)


def type_pieces_on_worker(
    matcher: Matcher, key_count: int, seed: int, pieces: Tuple[Piece, ...], floor: int, margin: int
) -> Tuple[Typed, ...]:
    """`type_pieces` as a Dask task: with the worker's own kernel, if it can build one."""
    return type_pieces(matcher, key_count, seed, pieces, floor, margin, _worker_kernel())


class _Remote:
    def __init__(self, cluster: Cluster, future: Any) -> None:
        self._cluster, self._future = cluster, future

    def result(self) -> Tuple[Typed, ...]:
        return self._cluster.result(self._future)


class ClusterTyping:
    """Pieces typed by a Dask cluster's workers, at least `task_keys` keys to a task; the index
    goes to each worker once."""

    def __init__(self, cluster: Cluster, matcher: Matcher, key_count: int, task_keys: int = TASK_KEYS) -> None:
        self._cluster = cluster
        self._key_count = key_count
        self._matcher = cluster.scatter(matcher)
        self.size = cluster.workers
        self.window = 2 * self.size + 1
        self.task_keys = task_keys
        self.where = f"a cluster of {self.size} worker{'s' if self.size != 1 else ''}"

    def submit(self, seed: int, pieces: Tuple[Piece, ...], floor: int, margin: int) -> _Remote:
        future = self._cluster.submit(
            type_pieces_on_worker, self._matcher, self._key_count, seed, pieces, floor, margin
        )
        return _Remote(self._cluster, future)

    def close(self) -> None:
        pass  # the caller closes the cluster's client


class ChunkedSimulation:
    """The monkey typing chunk after chunk; the same events and stop conditions as `Simulation`."""

    def __init__(
        self,
        matcher: Matcher,
        *,
        key_count: int,
        seed: Optional[int] = None,
        state: Optional[Dict[str, Any]] = None,
        typing: Any = None,
        chunk: int = CHUNK,
        margin: int = MARGIN,
    ) -> None:
        self.matcher = matcher
        self.key_count = key_count
        self.typing = typing if typing is not None else LocalTyping(matcher, key_count)
        self._margin = margin
        if state is not None:
            self.seed = int(state["seed"])
            self.chunk = int(state["chunk"])
            self.record = int(state["record"])
            self.typed = int(state["typed"])
            self._tail = np.asarray(state["tail"], dtype=np.uint8)
        else:
            self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy)
            self.chunk, self.record, self.typed = chunk, 0, 0
            self._tail = np.empty(0, dtype=np.uint8)

    @property
    def workers(self) -> int:
        return int(self.typing.size)

    @property
    def keystrokes(self) -> int:
        return self.typed

    def state(self) -> Dict[str, Any]:
        """JSON-ready, as of the last piece taken in."""
        return {
            "engine": "chunks",
            "seed": self.seed,
            "chunk": self.chunk,
            "record": self.record,
            "typed": self.typed,
            "tail": self._tail.tolist(),
        }

    def finished(self, keystrokes: Optional[int] = None, until_length: Optional[int] = None) -> bool:
        longest = self.matcher.longest
        until = longest if until_length is None else min(until_length, longest)
        return self.record >= until or (keystrokes is not None and self.typed >= keystrokes)

    def run(self, *, keystrokes: Optional[int] = None, until_length: Optional[int] = None) -> Iterator[Event]:
        """Type until `keystrokes` in all (exactly), a record of `until_length` or of the whole
        text, or forever; the caller may stop iterating between events."""
        pending: Deque[Any] = deque()
        asked = self.typed
        while not self.finished(keystrokes, until_length):
            while len(pending) < self.typing.window and (keystrokes is None or asked < keystrokes):
                pieces = [self._piece_at(asked, keystrokes)]
                asked += pieces[-1].size
                while sum(piece.size for piece in pieces) < self.typing.task_keys and (
                    keystrokes is None or asked < keystrokes
                ):
                    pieces.append(self._piece_at(asked, keystrokes))
                    asked += pieces[-1].size
                pending.append(self.typing.submit(self.seed, tuple(pieces), self.record, self._margin_for(self.record)))
            started = time.perf_counter()
            for typed in pending.popleft().result():
                yield from self._take(typed)
                yield Round(self.typed, time.perf_counter() - started)
                started = time.perf_counter()

    def _piece_at(self, at: int, keystrokes: Optional[int]) -> Piece:
        chunk, start = divmod(at, self.chunk)
        stop = self.chunk if keystrokes is None else min(self.chunk, keystrokes - chunk * self.chunk)
        return Piece(chunk, start, stop)

    def _margin_for(self, record: int) -> int:
        return max(self._margin, 2 * (record + 1))

    def _take(self, typed: Typed) -> List[NewRecord]:
        """The piece's new records, in order, and the run moved past it."""
        piece = typed.piece
        assert piece.chunk * self.chunk + piece.start == self.typed, "pieces are taken in order"
        before, record = self._tail, self.record
        seam = np.concatenate([before, typed.head])
        found: List[Tuple[int, int, np.ndarray]] = []
        for end, length in self.matcher.find(seam, len(before), record) if typed.head.size else []:
            found.append((end - len(before), length, seam[end - length + 1 : end + 1]))
            record = length
        trusted = len(before) >= typed.margin or len(before) == self.typed
        for index, length, codes in typed.records:
            if length > record:
                trusted = trusted and index >= len(typed.head)
                found.append((index, length, np.asarray(codes, dtype=np.uint8)))
                record = length
        if not trusted or record >= typed.margin:
            # A record as long as the ends kept could cross the seam unseen: check it in full.
            return self._take_in_full(piece)
        events = [
            NewRecord(self.typed + index + 1, length, tuple(int(c) for c in codes), MONKEY)
            for index, length, codes in found
        ]
        self.record = record
        keep = self._margin_for(record)
        if piece.size > len(typed.head):
            self._tail = typed.tail[-keep:]
        else:
            self._tail = seam[-keep:]
        self.typed += piece.size
        return events

    def _take_in_full(self, piece: Piece) -> List[NewRecord]:
        """The piece and enough of what came before it typed again here, for its records in full."""
        past = self._margin_for(self.record)
        while True:
            low = max(0, self.typed - past)
            keys = stream_keys(self.key_count, self.seed, self.chunk, low, self.typed + piece.size)
            fresh = self.typed - low
            found = self.matcher.find(keys, fresh, self.record)
            longest = found[-1][1] if found else self.record
            if longest < past or low == 0:
                break
            past *= 4
        events = []
        for end, length in found:
            events.append(NewRecord(low + end + 1, length, tuple(int(c) for c in keys[end - length + 1 : end + 1]), 0))
            self.record = length
        self._tail = keys[-self._margin_for(self.record) :].copy()
        self.typed += piece.size
        return events
