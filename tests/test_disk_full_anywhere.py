"""A full or read-only disk met outside the history (issue 57): the log file's, a temporary file's,
a job's. It is the machine's problem, said in one sentence with what to do: a log file that cannot
be written is given up for the run (the post goes on); any other write is exit 73, never a bug's
exit 1 with a traceback."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import BotHome
from x_emulator import XEmulator

import twitterbot.posting.commands as commands


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_log_file_on_a_full_disk_is_said_once_and_the_post_goes_on(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(LOG_FILE="/dev/full")
    result = home.run("--force")
    assert result.returncode == 0, result.stderr
    assert len(emulator.posts) == 1
    assert result.stderr.count("LOG_FILE /dev/full cannot be written (No space left on device)") == 1
    assert "Traceback" not in result.stderr and "Logging error" not in result.stderr


@pytest.mark.parametrize(
    ("code", "said"),
    [(errno.ENOSPC, "the disk is full; free some space"), (errno.EROFS, "read-only filesystem")],
)
def test_a_full_or_read_only_disk_anywhere_is_exit_73_not_a_bug(
    home: BotHome, monkeypatch: pytest.MonkeyPatch, code: int, said: str, tmp_path: Path
) -> None:
    where = str(tmp_path / "twitterbot-dry-run" / "1-card.x.png")

    def full(*_args: object, **_kwargs: object) -> int:
        raise OSError(code, os.strerror(code), where)

    monkeypatch.setattr(commands, "_run_scheduled", full)
    result = home.run("--dry-run")
    assert result.returncode == 73, result.stderr
    assert f"cannot write {where}: " in result.stderr and said in result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr.lower()
