"""The log's filter for a process that does run after run: a warning is not repeated every run."""

from __future__ import annotations

import logging

import pytest

from twitterbot.settings.logs import SaidLastRun, folding_repeats


@pytest.fixture
def said() -> list:
    """What reaches a handler of the root logger (as the daemon's stderr and LOG_FILE do)."""

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    lines: list = []
    handler = Keep()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)  # the default LOG_LEVEL
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_a_warning_every_run_gives_is_said_once_and_again_when_it_comes_back(said: list) -> None:
    log = logging.getLogger("twitterbot.test")
    bad_line = "tweets.txt line 4 is too long: X counts 300 of 280: shorten it"
    with folding_repeats() as repeats:
        for run, warned in enumerate([True, True, True, False, True], start=1):
            repeats.next_run()
            if warned:
                log.warning(bad_line)
            log.warning("run %d: a warning of its own", run)
            log.info("skipped: rolled 2 (posts on 0 of 1-in-6)")  # a run's own line: always
            log.error("failed: X refused the keys")  # so is a failure
    assert said.count(bad_line) == 2  # the first run, and the run after one without it
    assert [line for line in said if "of its own" in line] == [
        f"run {run}: a warning of its own" for run in range(1, 6)
    ]
    assert said.count("skipped: rolled 2 (posts on 0 of 1-in-6)") == 5 and said.count("failed: X refused the keys") == 5


def test_after_the_daemon_the_handlers_repeat_again(said: list) -> None:
    """The filter is taken off every handler it was put on: `cli.main` runs again in one process."""
    with folding_repeats() as repeats:
        repeats.next_run()
    assert not any(
        isinstance(each, SaidLastRun) for handler in logging.getLogger().handlers for each in handler.filters
    )
    logging.getLogger("twitterbot.test").warning("the same")
    logging.getLogger("twitterbot.test").warning("the same")
    assert said.count("the same") == 2
