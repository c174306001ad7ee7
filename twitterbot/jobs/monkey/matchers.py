"""What the monkey's typing is compared with: the beginning of one text (`PrefixMatcher`) or
every stretch of a corpus (`AnywhereMatcher`). Both find the new records in a block of typed keys
with numpy, never a Python loop per keystroke, or with the compiled kernel when given one (the
same records); `simulation.py` feeds them the keys::

    matcher = AnywhereMatcher(corpus_codes, key_count=27)
    matcher.find(typed, fresh=0, record=0)   # [(index of the last key, length), ...]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = ["INDEX_CHUNK", "AnywhereMatcher", "Matcher", "PrefixMatcher"]

# The anywhere index is built this many corpus positions at a time (4 MiB of 64-bit codes): the
# build's working memory beyond the index itself. Any value gives the same index.
INDEX_CHUNK = 1 << 19


class PrefixMatcher:
    """Records against the beginning of one text: the classic monkey simulator."""

    def __init__(self, target: np.ndarray) -> None:
        self.target = np.ascontiguousarray(target, dtype=np.uint8)
        # The target's keys o..o+3 as one little-endian 32-bit word, for o = 0..3 (see _starts).
        padded = np.concatenate([self.target, np.zeros(7, dtype=np.uint8)])
        self._words = [int(padded[o : o + 4].view("<u4")[0]) for o in range(4)]

    def find(
        self, typed: np.ndarray, fresh: int, record: int, kernel: Optional[Kernel] = None
    ) -> List[Tuple[int, int]]:
        """New records in `typed` as (index of the last key, length), in order. `typed[:fresh]`
        was searched before; a record is at least `record` + 1 keys long. With `kernel` the
        search runs in C and gives the same records."""
        if kernel is not None:
            return kernel.prefix_find(typed, fresh, record, self.target)
        found = []
        target = self.target
        while record < len(target):
            length = record + 1
            low, high = max(0, fresh - length + 1), len(typed) - length + 1
            if high <= low:
                break
            starts = self._starts(typed, low, high, length)
            for offset in range(length):
                if not starts.size:
                    break
                starts = starts[typed[starts + offset] == target[offset]]
            if not starts.size:
                break
            found.append((int(starts[0]) + length - 1, length))
            record = length
        return found

    def _starts(self, typed: np.ndarray, low: int, high: int, length: int) -> np.ndarray:
        """Candidate starts in [low, high), sorted, among them every start where the typing
        matches the target's first `length` keys (the caller checks each key)."""
        if length < 7:
            starts = low + np.flatnonzero(typed[low:high] == self.target[0])
            return starts
        # A match of 7 keys or more covers a whole aligned block of four typed keys, typed[4j:4j+4],
        # which then equals the target's keys o..o+3 for the start s = 4j - o (o = 0..3). So one
        # pass over the aligned words, compared with four patterns, finds every candidate.
        first_block = low // 4
        last_block = min((high + 2) // 4 + 1, len(typed) // 4)  # blocks that can lie inside a match
        words = typed[4 * first_block : 4 * last_block].view("<u4")
        hit = words == self._words[0]
        for pattern in self._words[1:]:
            hit |= words == pattern
        blocks = 4 * (first_block + np.flatnonzero(hit))
        starts = (blocks[:, None] - np.arange(4)[None, :]).ravel()
        return np.unique(starts[(starts >= low) & (starts < high)])

    @property
    def longest(self) -> int:
        """No record can be longer than this: the monkey has typed the whole text."""
        return len(self.target)

    def expected_factor(self, length: int, key_count: int) -> float:
        """How many times more typing a record one letter longer is expected to take."""
        return float(key_count)


class AnywhereMatcher:
    """Records against every stretch of a corpus (works separated by the value `key_count`).

    Three sieves, cheapest first. (1) The typing is cut into aligned blocks of `gram` keys, each
    read as one machine word, and looked up in a table of the n-grams the corpus has: small
    enough to stay in cache, and a window can only be a record where its blocks all pass. (2)
    Every n-gram of those few windows is checked. (3) The survivors are looked up among the
    corpus's sorted codes of `depth` letters (as many as fit in 64 bits); longer windows are
    confirmed in the text itself."""

    def __init__(
        self,
        corpus: np.ndarray,
        key_count: int,
        *,
        index: Optional[Dict[str, np.ndarray]] = None,
        chunk: int = INDEX_CHUNK,
    ) -> None:
        """Build the index over `corpus`, `chunk` positions at a time, or take it as `index()`
        gave it (from a cache: the arrays may be read-only memory maps, shared by every process
        that maps the file). The index is the same for any `chunk`; only the build's working
        memory grows with it."""
        if chunk < 1:
            raise ValueError(f"chunk {chunk}: at least 1 position per step")
        self._chunk = chunk
        self.key_count = k = key_count
        self.corpus = np.ascontiguousarray(corpus, dtype=np.uint8)
        self._text = self.corpus.tobytes()
        # n-grams are packed little-endian, `bits` per key, so an aligned block of typing read
        # as one uint32 (or uint16) word needs only shifts and masks to become its code.
        self.gram, self._bits = (4, 5) if k <= 32 else (2, 8)
        self._scratch = np.empty(0, dtype=np.uint32)
        self.base = k + 1
        self.depth = int(math.log(2.0**64, self.base) - 1e-9)
        while self.base**self.depth >= 1 << 64:  # pragma: no cover - float rounding guard
            self.depth -= 1
        if index is None:
            self._gram_ok = self._gram_table()
            self._codes = self._sorted_codes()
            self._distinct = self._count_distinct()
        else:
            self._gram_ok, self._codes = index["gram_ok"], index["codes"]
            self._distinct = index["distinct"]

    def index(self) -> Dict[str, np.ndarray]:
        """The index's arrays, to cache and give back to the constructor."""
        return {"gram_ok": self._gram_ok, "codes": self._codes, "distinct": self._distinct}

    def _pack(self, columns: Sequence[np.ndarray]) -> np.ndarray:
        code = np.zeros(columns[0].shape, dtype=np.int64)
        for j, column in enumerate(columns):
            code |= column.astype(np.int64) << (self._bits * j)
        return code

    def _gram_table(self) -> np.ndarray:
        g, corpus = self.gram, self.corpus
        ok = np.zeros(1 << (self._bits * g), dtype=bool)
        n = len(corpus) - g + 1
        for start in range(0, max(n, 0), self._chunk):  # 64-bit codes for a chunk, not the corpus
            stop = min(n, start + self._chunk)
            columns = [corpus[start + j : stop + j] for j in range(g)]
            crossing = np.any([column == self.key_count for column in columns], axis=0)
            ok[self._pack(columns)[~crossing]] = True
        return ok

    def _block_codes(self, typed: np.ndarray) -> np.ndarray:
        """The packed code of each aligned block typed[g*j : g*j+g]."""
        if self.gram == 2:
            return typed[: len(typed) // 2 * 2].view("<u2")
        words = typed[: len(typed) // 4 * 4].view("<u4")
        if len(self._scratch) < 2 * len(words):  # kept between batches: no allocation per batch
            self._scratch = np.empty(2 * len(words), dtype=np.uint32)
        code, part = self._scratch[: len(words)], self._scratch[len(words) : 2 * len(words)]
        np.bitwise_and(words, 0x1F, out=code)
        for j in range(1, 4):
            np.right_shift(words, 3 * j, out=part)
            part &= 0x1F << (5 * j)
            code |= part
        return code

    def _sorted_codes(self) -> np.ndarray:
        """For every corpus position, its next `depth` letters as one number (base k+1, letter
        values 1..k, 0 after a work's end), sorted and without repeats.

        The codes (8 bytes a letter) are the one array as large as the index itself: they are
        computed, sorted and freed of repeats in place, a chunk at a time, so the build needs
        little more memory than the index it leaves (a user's first run must fit where later
        runs do)."""
        n, depth, base = len(self.corpus), self.depth, np.uint64(self.base)
        # One byte per digit (a 64-bit copy of the corpus would add 8 bytes a letter to the peak).
        digits = np.zeros(n + depth, dtype=np.uint8)
        np.add(self.corpus, 1, out=digits[:n])
        digits[:n][self.corpus == self.key_count] = 0
        codes = np.empty(n, dtype=np.uint64)
        for start in range(0, n, self._chunk):
            stop = min(n, start + self._chunk)
            part = codes[start:stop]
            part[:] = digits[start:stop]
            for j in range(1, depth):
                part *= base
                part += digits[start + j : stop + j]
        del digits
        codes.sort()  # in place
        kept = 1 if n else 0
        last = codes[0] if n else None
        for start in range(1, n, self._chunk):
            # Each chunk's new values move down to `kept` (never past the chunk): copies, so
            # nothing is read after it is overwritten.
            part = codes[start : min(n, start + self._chunk)]
            new = np.empty(len(part), dtype=bool)
            new[0] = part[0] != last
            np.not_equal(part[1:], part[:-1], out=new[1:])
            last = part[-1]  # a scalar: a copy
            values = part[new]
            codes[kept : kept + len(values)] = values
            kept += len(values)
        part = values = None  # no view of the buffer outlives its resizing
        codes.resize(kept, refcheck=False)  # gives the repeats' room back, without a copy
        return codes

    @property
    def longest(self) -> int:
        """No record can be longer than the longest work."""
        # The works' ends, with one before the corpus and one after it; only these few are 64-bit
        # (a corpus padded by Python ints would be a 64-bit copy, 8 bytes a letter).
        ends = np.concatenate([[-1], np.flatnonzero(self.corpus == self.key_count), [len(self.corpus)]])
        return int(np.diff(ends).max() - 1)

    @property
    def nbytes(self) -> int:
        return self.corpus.nbytes + len(self._text) + self._gram_ok.nbytes + self._codes.nbytes

    def _count_distinct(self) -> np.ndarray:
        """How many different stretches of each length 0..depth the corpus has (no work's end
        inside), in one pass over the sorted codes, a chunk at a time: the records' "one more
        letter" factor."""
        counts = np.zeros(self.depth + 1, dtype=np.int64)
        codes, base = self._codes, np.uint64(self.base)
        for start in range(0, len(codes), self._chunk):
            # The code before the chunk too, to tell whether the chunk's first one is new.
            before = 1 if start else 0
            part = codes[start - before : start + self._chunk]
            # How many letters each code has before its first work's end (a 0 digit).
            whole = np.full(len(part), self.depth, dtype=np.uint8)
            rest = part.copy()
            zero = np.empty(len(part), dtype=bool)
            for j in range(self.depth - 1, -1, -1):  # digit j from the top is rest // base^(depth-1-j) % base
                np.equal(rest % base, 0, out=zero)
                whole[zero] = j
                rest //= base
            prefixes = rest  # reused: one buffer as large as the chunk, not one per length
            changed = np.empty(len(part), dtype=bool)
            for length in range(1, self.depth + 1):
                np.floor_divide(part, np.uint64(self.base ** (self.depth - length)), out=prefixes)
                changed[0] = True
                np.not_equal(prefixes[1:], prefixes[:-1], out=changed[1:])
                changed &= whole >= length
                counts[length] += np.count_nonzero(changed[before:])
        return counts

    def distinct(self, length: int) -> int:
        """How many different stretches of `length` letters the corpus has (up to `depth`)."""
        return int(self._distinct[min(length, self.depth)])

    def expected_factor(self, length: int, key_count: int) -> float:
        """How many times more typing a record one letter longer is expected to take: k times the
        corpus's share of length-L stretches over its share of length-(L+1) ones."""
        if length + 1 > self.depth or length < 1:
            return float(key_count)
        return key_count * self.distinct(length) / max(1, self.distinct(length + 1))

    def occurs(self, text: np.ndarray) -> bool:
        """Whether the keys `text` occur somewhere in the corpus (the slow, sure check)."""
        return self._text.find(np.asarray(text, dtype=np.uint8).tobytes()) >= 0

    def find(
        self, typed: np.ndarray, fresh: int, record: int, kernel: Optional[Kernel] = None
    ) -> List[Tuple[int, int]]:
        """As `PrefixMatcher.find`. With `kernel` and 4-key n-grams (32 keys or fewer) it all runs
        in C, the same sieves with the same tables, and gives the same records."""
        if kernel is not None and self.gram == 4:
            return kernel.anywhere_find(
                typed,
                fresh,
                record,
                gram_ok=self._gram_ok,
                codes=self._codes,
                corpus=self.corpus,
                base=self.base,
                depth=self.depth,
            )
        found = []
        while True:
            length = record + 1
            ends = self._candidates(typed, max(fresh, length - 1), length)
            if ends.size:
                ends = ends[self._all_grams_ok(typed, ends, length)]
            if ends.size:
                ends = ends[self._in_corpus(typed, ends, length)]
            if not ends.size:
                return found
            found.append((int(ends[0]), length))
            record = length

    def _candidates(self, typed: np.ndarray, first_end: int, length: int) -> np.ndarray:
        """Ends i >= first_end of windows typed[i-length+1 : i+1] whose first full aligned
        blocks (up to three) all occur in the corpus."""
        g = self.gram
        blocks_inside = (length - g + 1) // g  # full aligned blocks in any window this long
        if blocks_inside < 1 or len(typed) - first_end < 4 * g:
            return np.arange(first_end, len(typed))
        needed = min(blocks_inside, 3)
        ok = self._gram_ok.take(self._block_codes(typed))
        usable = len(ok) - needed + 1
        first = ok[:usable].copy()
        for j in range(1, needed):
            first &= ok[j : usable + j]
        first_blocks = np.flatnonzero(first)
        # A window whose first full block is j starts in (g*(j-1), g*j].
        ends = ((first_blocks * g)[:, None] + (length - g + np.arange(g))[None, :]).ravel()
        # Windows that start before the first block boundary have no first full block.
        ends = np.concatenate([np.arange(first_end, min(len(typed), length - 1 + g)), ends])
        return np.unique(ends[(ends >= first_end) & (ends < len(typed))])

    def _all_grams_ok(self, typed: np.ndarray, ends: np.ndarray, length: int) -> np.ndarray:
        """For each window ending at `ends`, whether each of its n-grams occurs in the corpus."""
        g = self.gram
        keep = np.ones(len(ends), dtype=bool)
        if length < g:
            return keep
        # The n-gram at the window's end first: it is the one the block sieve knows least about.
        last = ends - g + 1
        keep = self._gram_ok.take(self._pack([typed[last + j] for j in range(g)]))
        alive = np.flatnonzero(keep)
        starts = (ends[alive] - length + 1)[:, None] + np.arange(length - g)[None, :]
        keep[alive] = self._gram_ok.take(self._pack([typed[starts + j] for j in range(g)])).all(axis=1)
        return keep

    def _in_corpus(self, typed: np.ndarray, ends: np.ndarray, length: int) -> np.ndarray:
        """For each window ending at `ends`, whether it occurs in the corpus."""
        depth = min(length, self.depth)
        starts = ends - length + 1
        letters = typed[starts[:, None] + np.arange(depth)[None, :]].astype(np.uint64) + np.uint64(1)
        code = np.zeros(len(ends), dtype=np.uint64)
        for j in range(depth):
            code = code * np.uint64(self.base) + letters[:, j]
        scale = self.base ** (self.depth - depth)
        low = code * np.uint64(scale)
        at = np.searchsorted(self._codes, low)
        found = (at < len(self._codes)) & (
            self._codes[np.minimum(at, len(self._codes) - 1)] <= low + np.uint64(scale - 1)
        )
        if length > self.depth:
            for i in np.flatnonzero(found):
                found[i] = self.occurs(typed[starts[i] : ends[i] + 1])
        return found


Matcher = Union[PrefixMatcher, AnywhereMatcher]
