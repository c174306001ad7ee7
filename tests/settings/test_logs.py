"""The log's filter for a process that does run after run: a warning is not repeated every run."""

from __future__ import annotations

import logging

import pytest

from twitterbot.settings.logs import SaidLastRun, folding_repeats, warning_digest


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


def test_a_repeat_is_given_at_debug_once_to_every_handler_and_shown_with_verbose() -> None:
    """stderr and LOG_FILE both get a repeat as DEBUG (the first handler's filter decides for
    both); at LOG_LEVEL=DEBUG (-v) it is written, else not."""

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append((record.levelname, record.getMessage()))

    stderr, log_file = Keep(), Keep()
    root = logging.getLogger()
    level = root.level
    root.addHandler(stderr)
    root.addHandler(log_file)
    log = logging.getLogger("twitterbot.test")
    try:
        for root_level, shown in ((logging.DEBUG, [("DEBUG", "the same")]), (logging.INFO, [])):
            root.setLevel(root_level)
            stderr.lines.clear()
            log_file.lines.clear()
            with folding_repeats([warning_digest("the same")]) as repeats:
                log.warning("the same")
                log.debug("a debug line of a library")  # not a warning: untouched
            assert repeats.said == {warning_digest("the same")}
            expected = shown + ([("DEBUG", "a debug line of a library")] if root_level == logging.DEBUG else [])
            assert stderr.lines == expected and log_file.lines == expected
    finally:
        root.removeHandler(stderr)
        root.removeHandler(log_file)
        root.setLevel(level)


def test_a_digest_is_the_same_for_the_same_words_and_tells_nothing_of_them() -> None:
    line = "tweets.txt line 4 is too long: my private words"
    assert warning_digest(line) == warning_digest(line) != warning_digest(line + ".")
    assert len(warning_digest(line)) == 16 and "private" not in warning_digest(line)
