"""The record of a scheduled run's warnings: digests only, written whole, only when they change,
and anything unreadable taken for no record."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from twitterbot.state.warned import WARNED_FILE, WarnedLastRun


def test_what_is_kept_is_read_back_and_an_unchanged_set_is_not_written(tmp_path: Path) -> None:
    record = WarnedLastRun(tmp_path / WARNED_FILE)
    assert record.read() == frozenset()
    record.keep(set(), last=frozenset())  # nothing said, nothing kept before: no file
    assert not record.path.exists()
    record.keep({"b" * 16, "a" * 16}, last=frozenset())
    assert record.read() == {"a" * 16, "b" * 16}
    assert json.loads(record.path.read_text()) == {"warned": ["a" * 16, "b" * 16]}
    os.utime(record.path, ns=(0, 0))
    record.keep({"a" * 16, "b" * 16}, last=record.read())
    assert record.path.stat().st_mtime_ns == 0
    record.keep(set(), last=record.read())  # a run without warnings: no record, no data written
    assert not record.path.exists() and record.read() == frozenset()


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"warned": "abc"}', '{"warned": [1, null, "' + "z" * 100 + '"]}', "\xff\xfe"]
)
def test_a_record_that_cannot_be_read_is_taken_for_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / WARNED_FILE
    path.write_bytes(text.encode("latin-1"))
    assert WarnedLastRun(path).read() == frozenset()


def test_a_fifo_in_its_place_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / WARNED_FILE
    os.mkfifo(path)
    assert WarnedLastRun(path).read() == frozenset()  # and the run does not hang


def test_a_folder_that_cannot_be_written_loses_only_the_record(tmp_path: Path) -> None:
    record = WarnedLastRun(tmp_path / "gone" / WARNED_FILE)
    record.keep({"a" * 16}, last=frozenset())  # no error: the run says what is wrong with its folder
    assert record.read() == frozenset()


def test_the_record_stays_small(tmp_path: Path) -> None:
    record = WarnedLastRun(tmp_path / WARNED_FILE)
    record.keep({f"{number:016x}" for number in range(10_000)}, last=frozenset())
    assert len(record.read()) == 200 and record.path.stat().st_size < 4096
