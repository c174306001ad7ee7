"""Which share of a level a position belongs to, when a count is spread over the cores of one
machine (`cores.py`) or the workers of a cluster (`spread.py`).

A share is a pure function of the position, so each share of every level has one owner for the
whole count: the children of any parent are sent to their share's owner, which adds them up in
its own table. The mix is MurmurHash3's 64-bit finaliser, not the Fibonacci hash of the kernel's
tables: inside one share, the positions must still spread over every slot of that share's
table. kernel.c's share_of gives the same numbers.
"""

from __future__ import annotations

from typing import List

import numpy as np

from .levels import Part

__all__ = ["cut", "owners"]

_MIX = np.uint64(0xFF51AFD7ED558CCD)


def owners(positions: np.ndarray, shares: int) -> np.ndarray:
    """The share (0 to `shares` - 1) of each position."""
    mixed = positions ^ (positions >> np.uint64(33))
    mixed = mixed * _MIX  # modulo 2^64
    mixed ^= mixed >> np.uint64(33)
    return ((mixed >> np.uint64(32)) * np.uint64(shares)) >> np.uint64(32)


def cut(part: Part, shares: int) -> List[Part]:
    """`part` cut into `shares` by `owners`, each in the order it had (kernel.cut, in numpy)."""
    share = owners(part[0], shares).astype(np.uint16 if shares < 1 << 16 else np.uint64)
    order = np.argsort(share, kind="stable")  # a radix sort for 16-bit numbers
    starts = np.searchsorted(share[order], np.arange(shares + 1))
    columns = [column[order] for column in part]
    return [tuple(column[starts[j] : starts[j + 1]] for column in columns) for j in range(shares)]  # type: ignore[misc]
