"""A flag one thread raises and another waits for, with a timed wait that a faked clock speeds up.

`threading.Event` would do, but since Python 3.11 its timed wait is a lock's (sem_clockwait on the
monotonic clock), which libfaketime does not intercept: under ``FAKETIME="+0 x720"`` the daemon's
one-minute nap lasted a real minute, twelve faked hours, and it missed nearly every run. A
`Bell` waits with poll() on a pipe, which libfaketime scales as it scales sleep(); on a real
clock it is as good a wait as any, and it opens no thread::

    bell = Bell()
    bell.wait(60.0)   # False after 60 s (faked or real); True at once once another thread rings
    bell.set()
"""

from __future__ import annotations

import contextlib
import os
import select
import weakref
from typing import Optional

__all__ = ["Bell"]


class Bell:
    """`threading.Event`'s `set`, `is_set`, `clear` and `wait`, over a pipe: setting it writes one
    byte, which wakes a waiter in poll() whichever thread set it. Its two descriptors are closed
    when the bell is dropped."""

    def __init__(self) -> None:
        self._flag = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        weakref.finalize(self, _close, self._read, self._write)

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True  # before the byte: a waiter woken by it sees the flag
        with contextlib.suppress(BlockingIOError):  # the pipe is full: a waiter wakes anyway
            os.write(self._write, b"\0")

    def clear(self) -> None:
        # The flag first: a `set` in between leaves the flag up (its byte may be drained, and
        # `wait` looks at the flag before it polls).
        self._flag = False
        self._drain()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Whether the bell was set, waiting up to `timeout` seconds (None: for good) for it. Like a
        condition's wait, it may return False early, once, when a `clear` raced a `set`: waiters loop."""
        if not self._flag:
            poller = select.poll()
            poller.register(self._read, select.POLLIN)
            if poller.poll(None if timeout is None else max(0.0, timeout) * 1000) and not self._flag:
                self._drain()  # a byte left over from a `clear` racing a `set`: not a ring
        return self._flag

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass


def _close(*descriptors: int) -> None:
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            os.close(descriptor)
