"""The calendar under a faked system clock (libfaketime's `faketime`): bot.py run as cron runs it,
at the times a Pi without a real-time clock lives through. Slow (tests/slow_tests.txt): a process
per run."""

from __future__ import annotations

import pytest
from conftest import BotHome
from faked_clock import FAKETIME, run_at
from x_emulator import XEmulator

pytestmark = pytest.mark.skipif(FAKETIME is None, reason="faketime is not installed (apt-get install faketime)")


@pytest.fixture(autouse=True)
def any_clock(emulator: XEmulator) -> None:
    """The emulator's clock is the real one: it takes the faked clock's signatures (X would not;
    the bot's own clock is what is tested)."""
    emulator.clock_skew_allowed = 10**10


def test_a_late_boot_posts_the_midnight_line_once_and_a_clock_set_back_posts_nothing_again(
    home: BotHome, emulator: XEmulator
) -> None:
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1000000", MIN_POST_GAP="0")
    home.write_tweets("{at: 2027-01-01 00:00} Happy new year!\nplain line\n")
    booted = run_at(home, "2026-12-31 18:00:00")  # fake-hwclock's time from the last shutdown
    assert booted.returncode == 0 and emulator.texts == [], booted.stderr
    late = run_at(home, "2027-01-01 00:20:00")  # NTP set the clock: twenty minutes late
    assert late.returncode == 0 and emulator.texts == ["Happy new year!"], late.stderr
    for when in ("2026-12-31 23:59:30", "2027-01-01 00:05:00", "2027-01-01 00:40:00"):  # set back a day, and on
        again = run_at(home, when)
        assert again.returncode == 0, again.stderr
    assert emulator.texts == ["Happy new year!"]
    shown = run_at(home, "2027-01-01 08:00:00", "check")
    assert "{at: 2027-01-01 00:00} was posted at 2027-01-01 00:20" in shown.stdout, shown.stdout


def test_a_boot_later_than_late_by_notes_the_line_missed_and_check_says_why(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1000000")
    home.write_tweets("{at: 2027-01-01 00:00} Happy new year!\nplain line\n")
    late = run_at(home, "2027-01-01 03:10:00")
    assert late.returncode == 0 and emulator.texts == [] and "was missed and will not be posted" in late.stderr
    shown = run_at(home, "2027-01-01 08:00:00", "check")
    assert "was missed: no run came within LATE_BY=1h of its time: the first came 3h10m after it" in shown.stdout
