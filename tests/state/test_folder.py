"""The state folder when it cannot be written: wrong owner or mode, read-only filesystem, full disk.

Each case must give one sentence naming the path, the problem and the fix, a sysexits code (73),
never advice to throw the history away, and `check` must find it before a real run does.

File permissions mean nothing to root, so when the tests run as root the bot runs as `nobody`
(through `setpriv`) in a folder that root made; as any other user, the folder is made read-only
with chmod. Read-only and full filesystems need a tmpfs mount, so only root can test them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest
from conftest import BOT_PY, SAMPLE_TWEETS, BotHome
from x_emulator import XEmulator

ROOT = os.geteuid() == 0


@pytest.fixture(scope="session")
def runner() -> Optional[pwd.struct_passwd]:
    """The user the bot runs as: `nobody` when the tests run as root, else the tests' own user."""
    if not ROOT:
        return None
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: root ignores file permissions, so this cannot be tested")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("running as root and there is no user 'nobody' to run the bot as")
    as_nobody = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    tried = subprocess.run(
        [*as_nobody, sys.executable, "-c", "import twitterbot.cli"],
        cwd=BOT_PY.parent,
        capture_output=True,
        text=True,
    )
    if tried.returncode != 0:
        pytest.skip(f"running as root, and 'nobody' cannot run this Python and checkout: {tried.stderr.strip()[-200:]}")
    return nobody


class OtherUserHome(BotHome):
    """A bot home in a folder any user can enter; bot.py runs as `user` (None: as ourselves)."""

    user: Optional[pwd.struct_passwd] = None

    def start(self, *args: str, env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
        cwd = self.path / "elsewhere"
        cwd.mkdir(exist_ok=True)
        bare = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8", **(env or {})}
        prefix = []
        if self.user is not None:
            prefix = ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--clear-groups"]
        return subprocess.Popen(
            [*prefix, sys.executable, str(BOT_PY), "--env-file", str(self.env_file), *args],
            cwd=cwd,
            env=bare,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str, env: Optional[Dict[str, str]] = None, timeout: float = 60) -> subprocess.CompletedProcess:
        """As another user, bot.py runs as a process of its own (it cannot run in ours)."""
        if self.user is None:
            return super().run(*args, env=env, timeout=timeout)
        return self.run_process(*args, env=env, timeout=timeout)

    def give_to_runner(self) -> None:
        """Everything so far belongs to the user the bot runs as (what an install by that user gives)."""
        if self.user is None:
            return
        for folder, dirs, files in os.walk(self.path):
            for name in [".", *dirs, *files]:
                os.chown(os.path.join(folder, name), self.user.pw_uid, self.user.pw_gid)

    def deny(self, path: Path) -> None:
        """Make `path` unwritable for the runner: root's (as `sudo` leaves it), or read-only for ourselves."""
        if self.user is not None:
            os.chown(path, 0, 0)
        path.chmod(0o755 if path.is_dir() else 0o644)
        if self.user is None:
            path.chmod(0o555 if path.is_dir() else 0o444)

    @property
    def runner_name(self) -> str:
        return self.user.pw_name if self.user else pwd.getpwuid(os.geteuid()).pw_name

    def fix_for(self, state: Path) -> str:
        return f"sudo chown -R {self.runner_name}: {state}" if self.user else f"chmod -R u+rwX {state}"


@pytest.fixture
def shared_home(emulator: XEmulator, runner: Optional[pwd.struct_passwd]) -> Iterator[OtherUserHome]:
    top = Path(tempfile.mkdtemp(prefix="twitterbot-state-"))
    top.chmod(0o755)
    home = OtherUserHome(top / "bot", emulator)
    home.user = runner
    home.path.mkdir()
    home.write_env(**emulator.env(), TWEET_ONE_IN="1", X_API_RETRIES="0", X_API_TIMEOUT="3")
    home.write_tweets(SAMPLE_TWEETS)
    home.give_to_runner()
    try:
        yield home
    finally:
        for folder, dirs, _ in os.walk(top):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        shutil.rmtree(top)


def assert_named_state_error(result: subprocess.CompletedProcess, path: Path, *, output: str = "") -> str:
    said = output or result.stderr
    assert result.returncode == 73, result.stdout + result.stderr
    assert str(path) in said, said
    assert "move it aside" not in said and "damaged" not in said and "unexpected error" not in said, said
    return said


# -- the state folder belongs to someone else ------------------------------------------------------


def test_an_unwritable_state_folder_is_named_with_its_fix_in_a_dry_run(shared_home: OtherUserHome) -> None:
    state = shared_home.path / "state"
    state.mkdir()
    shared_home.deny(state)
    result = shared_home.run("--dry-run", "--force")
    said = assert_named_state_error(result, state)
    assert shared_home.fix_for(state) in said
    assert not (state / "history.sqlite3").exists()


def test_an_unwritable_state_folder_stops_a_real_run_before_it_posts(
    shared_home: OtherUserHome, emulator: XEmulator
) -> None:
    state = shared_home.path / "state"
    state.mkdir()
    shared_home.deny(state)
    result = shared_home.run("--force", "--json")
    said = assert_named_state_error(result, state / "bot.lock")
    assert shared_home.fix_for(state) in said
    assert emulator.seen == []


def test_check_finds_an_unwritable_state_folder(shared_home: OtherUserHome) -> None:
    state = shared_home.path / "state"
    state.mkdir()
    shared_home.deny(state)
    result = shared_home.run("check")
    assert_named_state_error(result, state, output=result.stdout)
    assert "all good" not in result.stdout and shared_home.fix_for(state) in result.stdout


def test_check_finds_a_state_folder_that_only_the_journal_would_need(shared_home: OtherUserHome) -> None:
    """Lock and history writable, the folder not: the journal SQLite writes beside the history fails."""
    assert shared_home.run("--dry-run").returncode == 0
    state = shared_home.path / "state"
    (state / "bot.lock").touch()
    (state / "history.sqlite3-journal").unlink(missing_ok=True)  # emptied, not deleted, after each write
    shared_home.give_to_runner()
    shared_home.deny(state)
    check = shared_home.run("check")
    assert_named_state_error(check, state, output=check.stdout)
    result = shared_home.run("--dry-run", "--force")
    assert_named_state_error(result, state)


# -- a read-only history or lock file ---------------------------------------------------------------


def test_a_read_only_history_is_found_by_check_and_named_by_a_run(
    shared_home: OtherUserHome, emulator: XEmulator
) -> None:
    assert shared_home.run("--dry-run").returncode == 0
    history = shared_home.path / "state" / "history.sqlite3"
    shared_home.deny(history)
    check = shared_home.run("check")
    said = assert_named_state_error(check, history, output=check.stdout)
    assert "all good" not in check.stdout
    assert shared_home.fix_for(shared_home.path / "state") in said
    run = shared_home.run("--force")
    assert_named_state_error(run, history)
    assert emulator.seen == []
    assert stat.S_IMODE(history.stat().st_mode) in (0o444, 0o644)  # nothing changed it


def test_a_lock_file_that_cannot_be_opened_is_named(shared_home: OtherUserHome, emulator: XEmulator) -> None:
    assert shared_home.run("--dry-run").returncode == 0
    lock = shared_home.path / "state" / "bot.lock"
    lock.touch()
    shared_home.deny(lock)
    if shared_home.user is not None:
        lock.chmod(0o600)  # root's private file, as a run with sudo leaves it
    result = shared_home.run("--force")
    said = assert_named_state_error(result, lock)
    assert "open the lock file" in said and emulator.seen == []


# -- read-only and full filesystems (a tmpfs: root only) ------------------------------------------


@pytest.fixture
def mount_tmpfs() -> Iterator:
    """Mount a small tmpfs at a folder; skip when this process may not mount (not root, or a container)."""
    mounted: list = []

    def mount(folder: Path, size: str = "1m") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(
                f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'}): needs root with CAP_SYS_ADMIN"
            )
        mounted.append(folder)

    if not ROOT or not shutil.which("mount"):
        pytest.skip("a read-only or full filesystem needs a tmpfs mount, which needs root")
    yield mount
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_read_only_filesystem_is_named_by_check_and_by_a_run(home: BotHome, emulator: XEmulator, mount_tmpfs) -> None:
    state = home.path / "state"
    mount_tmpfs(state)
    assert home.run("--dry-run").returncode == 0  # a history to keep
    subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
    check = home.run("check")
    said = assert_named_state_error(check, state, output=check.stdout)
    assert "read-only filesystem" in said and "all good" not in check.stdout
    for args in (("--force",), ("--dry-run", "--force")):
        result = home.run(*args)
        assert "read-only filesystem" in assert_named_state_error(result, state)
    assert emulator.seen == []


def test_a_full_disk_is_named_and_nothing_is_posted(home: BotHome, emulator: XEmulator, mount_tmpfs) -> None:
    state = home.path / "state"
    mount_tmpfs(state, size="4m")
    assert home.run("--dry-run").returncode == 0
    filler = os.open(state / "filler", os.O_WRONLY | os.O_CREAT)  # fill the disk, as a runaway log would
    try:
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(filler)
    check = home.run("check")
    assert "is full" in assert_named_state_error(check, state, output=check.stdout)
    result = home.run("--force")
    assert "is full" in assert_named_state_error(result, state)
    assert emulator.seen == []
    (state / "filler").unlink()  # space again: the history was kept and works
    assert home.run("--force").returncode == 0 and len(emulator.posts) == 1


@pytest.mark.parametrize("left", [0, 4096, 16384, 65536, 262144, 900_000])
def test_a_nearly_full_disk_is_exit_73_never_1_the_commit_included(
    home: BotHome, emulator: XEmulator, mount_tmpfs, left: int
) -> None:
    """The room check fails below a megabyte free; the run's row written after it must not turn
    the full disk into an unexpected error (the commit's OperationalError)."""
    state = home.path / "state"
    mount_tmpfs(state, size="4m")
    home.write_env(TWEET_ONE_IN="1", MIN_POST_GAP="0")
    for args in (("--dry-run",), ("--force",), ("-v", "--dry-run")):
        assert home.run(*args).returncode == 0  # a history with rows, a skip file, a WAL
    filler = os.open(state / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(filler)
    size = os.path.getsize(state / "filler")
    os.truncate(state / "filler", max(0, size - left))  # leave `left` bytes free
    posted = len(emulator.posts)
    for args in (("--force",), ("--dry-run",), ("check",), ()):
        result = home.run(*args)
        assert result.returncode in (0, 73), (args, result.stdout + result.stderr)
        assert "unexpected error" not in result.stderr and "Traceback" not in result.stderr
    assert len(emulator.posts) == posted  # nothing posted that could not then be recorded
