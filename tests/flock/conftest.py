"""A flock on disk: a folder per bot, each with its own .env (its own emulator's keys) and lines."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
from in_process import run_in_process
from x_emulator import KEYS, XEmulator


def keys_of(number: int) -> Dict[str, str]:
    """An account's keys of its own: bot 1's are not bot 2's."""
    return {
        "consumer_key": f"{KEYS['consumer_key']}{number}",
        "consumer_secret": f"{KEYS['consumer_secret']}{number}",
        "access_token": f"{1000 + number}-emuAccessToken{number}",
        "access_token_secret": f"{KEYS['access_token_secret']}{number}",
    }


def write_bot(folder: Path, settings: Dict[str, str], lines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    env = folder / ".env"
    env.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    env.chmod(0o600)
    (folder / "tweets.txt").write_text(lines, encoding="utf-8")
    return folder


class Flock:
    """A flock folder of bots named in order, each posting to an X emulator of its own."""

    def __init__(self, root: Path, accounts: List[XEmulator]) -> None:
        self.root = root
        self.bots = root / "bots"
        self.bots.mkdir(parents=True)
        self.accounts = accounts
        self.cwd = root / "elsewhere"
        self.cwd.mkdir()
        for number, account in enumerate(accounts, 1):
            write_bot(
                self.bots / f"bot{number}",
                {**account.env(), "TWEET_ONE_IN": "1", "API_RETRIES": "0", "API_TIMEOUT": "3"},
                f"line of bot{number}\n",
            )

    def environ(self) -> Dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.cwd), "LANG": "C.UTF-8"}

    def run(self, *args: str) -> subprocess.CompletedProcess:
        """bot.py run in-process with this flock (--bots), from an unrelated folder."""
        return run_in_process(["--bots", str(self.bots), *args], environ=self.environ(), cwd=self.cwd)


@pytest.fixture
def flock(tmp_path: Path) -> Iterator[Flock]:
    """Three bots, each with an X account (an emulator) and keys of its own."""
    accounts = [XEmulator(keys=keys_of(number)).start() for number in (1, 2, 3)]
    try:
        yield Flock(tmp_path, accounts)
    finally:
        for account in accounts:
            account.stop()
