"""A run started by cron or a timer does not repeat, every run, a warning its last run gave word
for word: it says it at DEBUG (`-v` shows it), across processes, through a record of digests in
the state folder. A run in a terminal shows every warning."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

import pytest
from conftest import BOT_PY, BotHome

from twitterbot.settings.logs import warning_digest
from twitterbot.state.warned import WARNED_FILE

TOO_LONG = "x" * 300  # X counts 300 of 280
GOOD = "".join(f"Post number {number}\n" for number in range(1, 9))


def warned(stderr: str) -> list:
    """The lines logged at WARNING."""
    return [line for line in stderr.splitlines() if " WARNING: " in line]


def too_long(stderr: str) -> list:
    return [line for line in warned(stderr) if "line 9" in line]


@pytest.fixture
def bot(home: BotHome) -> BotHome:
    home.write_env(MIN_POST_GAP="0", MAX_POSTS_PER_DAY="100")
    home.write_tweets(GOOD + TOO_LONG + "\n")
    return home


def test_a_warning_the_last_run_gave_is_said_at_debug_and_again_once_it_came_back(bot: BotHome) -> None:
    first = bot.run()
    assert first.returncode == 0, first.stderr
    assert len(too_long(first.stderr)) == 1, first.stderr

    second = bot.run()
    assert second.returncode == 0, second.stderr
    assert too_long(second.stderr) == [], second.stderr
    assert " INFO: posted" in second.stderr  # the run's own line is always written

    verbose = bot.run("-v")  # -v shows it, at DEBUG
    assert too_long(verbose.stderr) == []
    assert [line for line in verbose.stderr.splitlines() if " DEBUG: " in line and "tweets.txt line 9" in line]

    bot.write_tweets(GOOD + "fixed\n")
    fixed = bot.run()
    assert warned(fixed.stderr) == [], fixed.stderr

    bot.write_tweets(GOOD + TOO_LONG + "\n")
    again = bot.run()
    assert len(too_long(again.stderr)) == 1, again.stderr  # news again: it went away for a run


def test_the_record_holds_digests_never_the_words_and_is_written_only_when_they_change(bot: BotHome) -> None:
    record = bot.path / "state" / WARNED_FILE
    first = bot.run()
    kept = json.loads(record.read_text())
    (warning,) = too_long(first.stderr)
    message = warning.split(" WARNING: ", 1)[1]
    assert kept == {"warned": [warning_digest(message)]}
    assert "tweets.txt" not in record.read_text() and "x" * 20 not in record.read_text()
    assert oct(record.stat().st_mode & 0o777) == "0o600"

    written = record.stat().st_mtime_ns
    os.utime(record, ns=(written - 10**9, written - 10**9))
    bot.run()  # the same warnings: nothing written
    assert record.stat().st_mtime_ns == written - 10**9

    bot.write_tweets(GOOD)
    bot.run()  # none now: no record, so the line is news when it comes back
    assert not record.exists()


def test_errors_are_always_written(bot: BotHome) -> None:
    bot.write_env(X_API_KEY="")  # a missing key: an error at every run
    for _ in range(2):
        result = bot.run()
        assert result.returncode == 78
        assert " ERROR: " in result.stderr and "X_API_KEY" in result.stderr


def test_a_dry_run_shows_every_warning_and_keeps_no_record(bot: BotHome) -> None:
    bot.run()
    for _ in range(2):
        result = bot.run("--dry-run", "--force")
        assert len(too_long(result.stderr)) == 1, result.stderr
    bot.run()  # the record of the real runs is untouched by the dry runs between them
    assert too_long(bot.run().stderr) == []


def test_a_damaged_record_is_taken_for_none(bot: BotHome) -> None:
    bot.run()
    (bot.path / "state" / WARNED_FILE).write_text("{not json")
    assert len(too_long(bot.run().stderr)) == 1


def test_a_run_in_a_terminal_shows_every_warning(bot: BotHome) -> None:
    """stderr a tty: a person reads it, and sees the warnings the last cron run gave too."""
    assert len(too_long(bot.run().stderr)) == 1  # as cron runs it: the record is kept
    for _ in range(2):
        stderr = _run_with_a_terminal(bot)
        assert len(too_long(stderr)) == 1, stderr
    assert too_long(bot.run().stderr) == []  # the terminal's runs left cron's record as it was


def _run_with_a_terminal(bot: BotHome) -> str:
    """bot.py as a process whose stderr is a terminal (a pseudo-terminal): what it wrote there."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, str(BOT_PY), "--env-file", str(bot.env_file)],
            cwd=bot.elsewhere,
            env=bot.environ(),
            stdout=subprocess.DEVNULL,
            stderr=follower,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            assert ready, "bot.py wrote nothing to its terminal for a minute"
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
