"""One daemon for the flock: each bot posts its own line at its own time, once, on its own account;
a bot with a broken .env or a hanging network leaves the others on time. bot.py runs as a process
here (signals, children, a deadline)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from .conftest import Flock, write_bot

BOT_PY = Path(__file__).resolve().parents[2] / "bot.py"


def times_from_now(*seconds: int) -> str:
    now = datetime.now(timezone.utc)
    return ",".join((now + timedelta(seconds=offset)).strftime("%H:%M:%S") for offset in seconds)


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An address that takes a connection and never answers: a network that hangs."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(16)
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"


def start_daemon(flock: Flock, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(BOT_PY), "--bots", str(flock.bots), "daemon", *args],
        cwd=flock.cwd,
        env=flock.environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def schedule(flock: Flock, folder: str, times: str, **more: str) -> None:
    env = flock.bots / folder / ".env"
    env.write_text(
        env.read_text() + f"TWEET_TIMES={times}\nTWEET_TIMEZONE=UTC\n" + "".join(f"{k}={v}\n" for k, v in more.items())
    )


def test_one_daemon_posts_each_bot_s_line_once_and_a_broken_or_hanging_bot_holds_none_back(
    flock: Flock, silent_server: str
) -> None:
    times = times_from_now(6)
    for number in (1, 2, 3):
        schedule(flock, f"bot{number}", times)
    write_bot(flock.bots / "broken", {"TWEET_ONE_IN": "often"}, "never posted\n")
    write_bot(
        flock.bots / "hangs",
        {
            **flock.accounts[0].env(),
            "X_API_BASE_URL": silent_server,
            "TWEET_ONE_IN": "1",
            "API_RETRIES": "0",
            "API_TIMEOUT": "120",
            "TWEET_TIMES": times,
            "TWEET_TIMEZONE": "UTC",
            "RUN_DEADLINE": "3s",
        },
        "line of the hanging bot\n",
    )
    process = start_daemon(flock)
    try:
        posted = wait_for(lambda: all(len(account.posts) == 1 for account in flock.accounts), 40)
        time.sleep(6)  # the hanging bot's deadline passes; no run posts twice
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert posted, stderr
    assert [account.texts for account in flock.accounts] == [["line of bot1"], ["line of bot2"], ["line of bot3"]]
    assert "broken: " in stderr and "TWEET_ONE_IN" in stderr and "does not run until its settings are fixed" in stderr
    assert "hangs: its run passed its deadline (RUN_DEADLINE=3s)" in stderr
    assert process.returncode == 0, stderr
    for number in (1, 2, 3):
        assert f"bot{number}: posted" in stderr
    for line in stderr.splitlines():  # every run's line names its bot
        if "posted line" in line:
            assert line.split(": ", 1)[1].split(": ")[0] in ("bot1", "bot2", "bot3"), line


def test_sighup_adds_a_bot_to_the_running_flock(flock: Flock) -> None:
    for number in (1, 2, 3):
        schedule(flock, f"bot{number}", "03:00")
    process = start_daemon(flock, "--dry-run")
    try:
        time.sleep(3)
        write_bot(
            flock.bots / "late",
            {"TWEET_ONE_IN": "1", "TWEET_TIMES": times_from_now(4), "TWEET_TIMEZONE": "UTC"},
            "a late line\n",
        )
        process.send_signal(signal.SIGHUP)
        time.sleep(8)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "received SIGHUP: 4 bots to run; added late" in stderr
    assert "late: dry run: would post line 1" in stderr and "a late line" in stdout
    assert all(account.texts == [] for account in flock.accounts)


def test_twenty_bots_under_a_sped_up_clock_each_post_their_own_line_once_on_their_own_account(
    tmp_path: Path, silent_server: str
) -> None:
    """Issue 58's flock: 18 bots with X keys of their own, one with a broken .env, one whose network
    hangs, in one daemon on a clock sped up 60 times; each bot at its own time posts its own line
    once, on its own account, and none is missed."""
    from faked_clock import require_libfaketime, sped_up
    from x_emulator import XEmulator

    from .conftest import keys_of

    library = require_libfaketime()
    accounts = [XEmulator(keys=keys_of(number), clock_skew_allowed=10**7).start() for number in range(18)]
    try:
        flock = Flock.__new__(Flock)
        flock.root, flock.bots, flock.accounts = tmp_path, tmp_path / "bots", accounts
        flock.cwd = tmp_path / "elsewhere"
        flock.cwd.mkdir()
        now = datetime.now(timezone.utc)
        for number, account in enumerate(accounts):
            at = (now + timedelta(seconds=120 + 20 * number)).strftime("%H:%M:%S")  # faked seconds: 1/60 real
            settings = {**account.env(), "TWEET_ONE_IN": "1", "API_RETRIES": "0", "API_TIMEOUT": "60"}
            write_bot(
                flock.bots / f"bot{number:02d}",
                {**settings, "TWEET_TIMES": at, "TWEET_TIMEZONE": "UTC"},
                f"line of bot{number:02d}\n",
            )
        write_bot(flock.bots / "broken", {"TWEET_ONE_IN": "often"}, "never\n")
        hangs = {**accounts[0].env(), "X_API_BASE_URL": silent_server, "TWEET_ONE_IN": "1", "API_RETRIES": "0"}
        hangs.update(API_TIMEOUT="600", RUN_DEADLINE="2m", TWEET_TIMEZONE="UTC")
        hangs["TWEET_TIMES"] = (now + timedelta(seconds=100)).strftime("%H:%M:%S")
        write_bot(flock.bots / "hangs", hangs, "line of the hanging bot\n")
        process = subprocess.Popen(
            [sys.executable, str(BOT_PY), "--bots", str(flock.bots), "daemon"],
            cwd=flock.cwd,
            env={**flock.environ(), **sped_up(60, library)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            posted = wait_for(lambda: all(len(account.posts) >= 1 for account in accounts), 120)
            time.sleep(2)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=120)
        finally:
            process.kill()
    finally:
        for account in accounts:
            account.stop()
    assert posted, stderr
    assert [account.texts for account in accounts] == [[f"line of bot{number:02d}"] for number in range(18)]
    assert "missed" not in stderr, stderr
    assert "broken: " in stderr and "hangs: its run passed its deadline (RUN_DEADLINE=2m)" in stderr
