"""The SQLite file under the history: opening it (creating a missing one whole, refusing one that
is not ours), writing in transactions, and turning every SQLite error into advice that keeps the
user's history safe. The store's concerns (runs.py, jobs.py, bag.py, lengths.py) build on
`Database`; none of them talks to sqlite3 but through `_write` and `_read`."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, List, NamedTuple, Optional, Union

from ..errors import HistoryError, StateError
from .folder import MIN_FREE_BYTES, free_bytes, state_error
from .schema import check_and_migrate, create_script, relayout, verify_pages

__all__ = ["Database", "iso", "parse_iso"]


class Database:
    """SQLite history. Pass a path, or ":memory:" in tests."""

    def __init__(self, path: Union[Path, str], *, statvfs: Callable[[str], os.statvfs_result] = os.statvfs) -> None:
        """Open the history at `path`, creating it only if no file is there: an existing file that
        is not a whole history (an empty one included) is refused, never taken for a new history."""
        self.path = path
        self._label = str(path)
        self._statvfs = statvfs  # injectable, so tests can fake a full disk
        self._file: Optional[Path] = None if str(path) == ":memory:" else Path(path)
        # Writes that go with the next transaction (`_queue`): each transaction costs an SD card a
        # dozen writes and two flushes, so a run that posts makes two.
        self._queued: List[_Queued] = []
        try:
            if self._file is None:
                self._conn = sqlite3.connect(":memory:")
                self._conn.executescript(create_script())
            else:
                self._create_if_missing(self._file)
                # mode=rw: never create a file here (a missing one is made whole in _create_if_missing).
                self._conn = sqlite3.connect(f"{self._file.absolute().as_uri()}?mode=rw", uri=True, timeout=10)
                # The journal is emptied, not deleted, after each transaction: no file made and
                # removed, and no flush of the folder, each time (an SD card's erase blocks).
                self._conn.execute("PRAGMA journal_mode = TRUNCATE")
            self._check()
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def close(self) -> None:
        """Write what is queued, then close."""
        try:
            if self._queued:
                with self._write():
                    pass
        finally:
            self._conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def check_writable(self) -> None:
        """Write as a real run does, then roll back: `check` finds a read-only file, or a folder
        where SQLite cannot write its journal, without changing the history."""
        try:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(f"PRAGMA user_version = {int(version)}")  # a real write, to the journal too
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            self._fail(exc)

    def ensure_room_to_record(self, min_free: int = MIN_FREE_BYTES) -> None:
        """Raise `StateError` unless the disk holding the history has `min_free` bytes: a run must
        not post what it could not then record."""
        if self._file is None:
            return
        folder = self._file.parent
        try:
            free = free_bytes(folder, self._statvfs)
        except OSError:
            return  # unknown: the writes themselves will say if the disk is full
        if free < min_free:
            raise StateError(
                f"not posting: the disk holding {folder} has {free // 1024} KiB free, and the bot needs"
                f" {min_free // 1024} KiB to record what it posts; free some space (`df -h {folder}`)"
                " and run again: the history is intact, keep it"
            )

    def _create_if_missing(self, path: Path) -> None:
        """Only a missing file starts a new history. The new file is built beside the real name
        and linked into place whole, so a run killed while creating it leaves no empty file."""
        try:
            info = path.stat()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise state_error(path, exc.errno, state_dir=path.parent, doing="read") from None
        else:
            if not stat.S_ISREG(info.st_mode):
                raise HistoryError(f"{path} is not a file: move it aside, or set BOT_STATE_DIR to another folder")
            if info.st_size == 0:
                raise HistoryError(
                    f"{path} is empty (0 bytes), so it holds no history; if it held one, that was lost"
                    " (a power cut or a full disk can do that): restore it from a backup, or delete it"
                    " to start a new history (the bot will then not know what it already posted)"
                )
            return
        try:
            handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.new-", dir=path.parent)
        except OSError as exc:
            raise state_error(path, exc.errno, state_dir=path.parent, doing="create") from None
        os.close(handle)
        temp = Path(temp_name)
        try:
            conn = sqlite3.connect(temp_name)
            try:
                conn.executescript(create_script())
            finally:
                conn.close()
            try:
                os.link(temp, path)  # never replaces: a file another run created first wins
            except FileExistsError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise state_error(path, exc.errno, state_dir=path.parent, doing="create") from None
                if not path.exists():  # a filesystem without hard links (FAT): rename is next best
                    os.replace(temp, path)
            _sync_folder(path.parent)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
        finally:
            for leftover in (temp, Path(f"{temp_name}-journal")):
                leftover.unlink(missing_ok=True)

    def _check(self) -> None:
        verify = self._verify_today()
        check_and_migrate(self._conn, self._label, verify=verify)
        if self._file is not None:
            relayout(self._conn)
            if verify:
                self._verified()

    # Reading every page to find damage (SQLite's quick_check) is most of what opening a year's
    # history costs (a few milliseconds a megabyte): it is done at the first open of each day (UTC),
    # which a file beside the history remembers, by `check` always, and on every open of a file
    # that has no such note.
    def _verify_today(self) -> bool:
        if self._file is None:
            return True
        try:
            return self._verified_file().read_text(encoding="ascii").strip() != _today()
        except (OSError, UnicodeDecodeError):
            return True

    def _verified(self) -> None:
        with contextlib.suppress(OSError):  # a folder that takes no new file: the next open reads again
            self._verified_file().write_text(_today() + "\n", encoding="ascii")

    def _verified_file(self) -> Path:
        assert self._file is not None
        return self._file.with_name(self._file.name + "-verified")

    def verify(self) -> None:
        """Read every page of the history for damage now (`check`), whatever day it last was."""
        try:
            verify_pages(self._conn)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def _write(self) -> _Transaction:
        return _Transaction(self)

    def _queue(
        self,
        write: Callable[[sqlite3.Connection], None],
        *,
        before_reads: bool,
        after: Optional[Callable[[], None]] = None,
    ) -> None:
        """Do `write` in the next transaction, first, and `after` once it is committed; with
        `before_reads`, before the next read too (what reads would miss: an attempt's outcome),
        else only with the next write (a run's own row, which no read of the run needs). Whatever
        is queued is written at `close` at the latest: a process killed before that leaves what an
        earlier write recorded (an attempt that may have been posted stays pending, and counts)."""
        self._queued.append(_Queued(write, before_reads, after))

    def _read(self, sql: str, params: tuple = ()) -> list:
        if any(queued.before_reads for queued in self._queued):
            with self._write():
                pass
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def _fail(self, exc: sqlite3.Error) -> None:
        """Turn an SQLite error into advice. Only a file SQLite finds corrupt is called damaged: a
        file that cannot be written, or a full disk, is fine and must be kept."""
        name = _error_name(exc)
        if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            raise HistoryError(f"{self._label} is busy (another program holds it): try again in a moment") from None
        if self._file is not None and name in ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR"):
            code = errno.ENOSPC if name == "SQLITE_FULL" else self._diagnose()
            if code is not None or name != "SQLITE_IOERR":
                raise state_error(self._file, code, state_dir=self._file.parent) from None
            raise StateError(
                f"could not read or write {self._label} ({exc}): the storage may be failing (see `dmesg`);"
                " keep the file, and copy it somewhere safe"
            ) from None
        raise HistoryError(
            f"{self._label} is damaged or not a history database ({exc}): move it aside to start a new "
            "history (the bot will then not know what it already posted), or restore it from a backup"
        ) from None

    def _diagnose(self) -> Optional[int]:
        """Why the history cannot be written, as an errno, found by looking at the file and its folder."""
        assert self._file is not None
        folder = self._file.parent
        try:
            if self._statvfs(str(folder)).f_flag & os.ST_RDONLY:
                return errno.EROFS
        except OSError:
            pass
        for target in (self._file, folder):
            if target.exists() and not os.access(target, os.W_OK):
                return errno.EACCES
        return None


def _error_name(exc: sqlite3.Error) -> str:
    """SQLite's primary error name (Python 3.11 gives it; older ones only have the message)."""
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return "_".join(name.split("_")[:2])
    text = str(exc).lower()
    for fragment, guessed in (
        ("locked", "SQLITE_BUSY"),
        ("full", "SQLITE_FULL"),
        ("readonly", "SQLITE_READONLY"),
        ("unable to open", "SQLITE_CANTOPEN"),
        ("disk i/o", "SQLITE_IOERR"),
    ):
        if fragment in text.replace(" ", "") or fragment in text:
            return guessed
    return "SQLITE_ERROR"


def _sync_folder(folder: Path) -> None:
    """Make a new file's name durable, so a power cut cannot leave the name without the file."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


class _Transaction:
    """`with store._write() as conn:` commits on success, rolls back on error, and turns SQLite errors into HistoryError."""

    def __init__(self, store: Database) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        conn = self._store._conn.__enter__()
        self._queued, self._store._queued = self._store._queued, []
        try:
            for queued in self._queued:
                queued.write(conn)
        except sqlite3.Error as exc:
            self._store._conn.__exit__(type(exc), exc, None)
            self._store._fail(exc)
        return conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self._store._conn.__exit__(exc_type, exc, tb)  # the commit, or the rollback
        except sqlite3.Error as ending:  # a full disk often shows only at the commit
            if exc is None or isinstance(exc, sqlite3.Error):
                self._store._fail(ending)
            # else: the error that stopped the transaction is the one to report (a full disk's room check)
        if isinstance(exc, sqlite3.Error):
            self._store._fail(exc)
        if exc_type is None:
            for queued in self._queued:
                if queued.after is not None:
                    queued.after()
        return False


class _Queued(NamedTuple):
    """A write that goes with the next transaction (`Database._queue`)."""

    write: Callable[[sqlite3.Connection], None]
    before_reads: bool
    after: Optional[Callable[[], None]]


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with a fixed width, so that text order is time order."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> datetime:
    """A time `iso` wrote. Not with strptime: its first call builds locale tables, 10 ms of CPU,
    a twentieth of a whole scheduled run."""
    if len(text) != 27 or text[-1] != "Z" or text[10] != "T":
        raise ValueError(f"{text!r} is not a time in the history's format (2026-01-31T12:00:00.000000Z)")
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)


def _today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")
