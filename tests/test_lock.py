"""bot.lock between processes: a run that finds it held waits for it (RUN_LOCK_WAIT), so a scheduled
run that starts while a round of replies holds it posts late instead of losing its slot; past the
wait it gives up with 75, having done nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BotHome
from x_emulator import XEmulator

from twitterbot.errors import LockHeld
from twitterbot.lock import run_lock

# Another process taking a file's lock the way bot.py does, holding it `seconds`, then letting go.
_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hold(path: Path, seconds: float) -> subprocess.Popen:
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_scheduled_run_that_finds_the_lock_held_waits_and_posts(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(TWEET_ONE_IN="1")
    holder = _hold(home.path / "state" / "bot.lock", 2)  # a round of replies, say
    try:
        ran = home.run()
    finally:
        holder.wait(timeout=30)
    assert ran.returncode == 0, ran.stderr
    assert len(emulator.posts) == 1


def test_a_run_gives_up_with_lock_held_after_its_wait(tmp_path: Path) -> None:
    lock = tmp_path / "bot.lock"
    holder = _hold(lock, 30)
    try:
        with pytest.raises(LockHeld, match=rf"pid {holder.pid}\) and holds .*waited 0.5 s"), run_lock(lock, wait=0.5):
            pytest.fail("the lock was taken while another process held it")  # pragma: no cover
        with pytest.raises(LockHeld) as at_once, run_lock(lock):
            pytest.fail("the lock was taken while another process held it")  # pragma: no cover
        assert "waited" not in str(at_once.value)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    with run_lock(lock, wait=0.5):  # let go: taken at once
        pass


def test_a_waiting_run_polls_until_its_deadline(tmp_path: Path) -> None:
    lock = tmp_path / "bot.lock"
    holder = _hold(lock, 30)
    now = [0.0]
    slept = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    try:
        with pytest.raises(LockHeld), run_lock(lock, wait=60, sleep=sleep, clock=lambda: now[0]):
            pass  # pragma: no cover
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert sum(slept) == pytest.approx(60) and max(slept) <= 0.25
