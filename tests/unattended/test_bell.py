"""The daemon's bell: an Event whose timed wait is a poll(), which a faked clock speeds up."""

from __future__ import annotations

import gc
import os
import threading
import time

from twitterbot.unattended.bell import Bell


def test_a_ring_from_another_thread_ends_a_wait_for_good() -> None:
    bell = Bell()
    threading.Timer(0.1, bell.set).start()
    assert bell.wait(None) and bell.is_set()
    assert bell.wait(0)  # it stays set until cleared


def test_a_wait_with_nothing_rung_ends_at_its_timeout_unset() -> None:
    bell = Bell()
    started = time.monotonic()
    assert not bell.wait(0.05) and time.monotonic() - started >= 0.04


def test_clear_lowers_it_and_the_next_wait_waits_again() -> None:
    bell = Bell()
    bell.set()
    bell.set()  # two bytes in the pipe: clear drains both
    bell.clear()
    assert not bell.is_set() and not bell.wait(0.01)
    bell.set()
    assert bell.wait(5)


def test_a_dropped_bell_closes_its_pipe() -> None:
    """The daemon makes two and keeps them; a program (or a test) that makes many leaks nothing."""
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        Bell().set()
    gc.collect()
    # 50 bells leaking their pipes would leave 100 more; the margin is for what other threads of a
    # test worker (a test server shutting down) open or close meanwhile.
    assert len(os.listdir("/proc/self/fd")) < before + 10
