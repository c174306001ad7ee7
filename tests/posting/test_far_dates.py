"""Every date a tweets file, a setting or an option can hold is one the bot computes (issue 57):
years from FIRST_YEAR to LAST_YEAR, HISTORY_DAYS and the counts bounded; anything outside is the
user's to fix (65 a line, 78 a setting, 64 an option), never exit 1 (OverflowError)."""

from __future__ import annotations

import pytest
from conftest import BotHome

FAR = [
    ("America/Los_Angeles", "9999-12-31 23:59", "9999"),  # past datetime's last UTC time
    ("Asia/Tokyo", "0001-01-01 00:00", "1"),  # before its first
    ("UTC", "1899-12-31 23:59", "1899"),
]


@pytest.mark.parametrize(("zone", "when", "year"), FAR)
def test_a_one_off_in_a_year_out_of_bounds_is_a_data_error_naming_its_line(
    home: BotHome, zone: str, when: str, year: str
) -> None:
    home.write_env(TWEET_TIMEZONE=zone, TWEET_ONE_IN="1")
    home.write_tweets(f"plain line\n{{at: {when}}} The end of time\n")
    for args in ((), ("--dry-run",), ("cron",), ("systemd",)):
        result = home.run(*args)
        assert result.returncode == 65, (args, result.stderr)
        assert "line 2" in result.stderr and f"a year the bot does not compute ({year})" in result.stderr, result.stderr
        assert "from 1900 to 9998" in result.stderr
    check = home.run("check")
    assert check.returncode == 65 and f"a year the bot does not compute ({year})" in check.stdout + check.stderr


@pytest.mark.parametrize("option", ["on: 0001-01-01", "from: 1800-01-01", "until: 9999-12-31"])
def test_a_full_date_out_of_bounds_is_a_data_error(home: BotHome, option: str) -> None:
    home.write_env(TWEET_ONE_IN="1")
    home.write_tweets(f"plain line\n{{{option}}} A day\n")
    result = home.run("--dry-run")
    assert result.returncode == 65 and "line 2" in result.stderr and "write a year from 1900 to 9998" in result.stderr


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_the_first_and_last_days_the_bot_computes_work_in_any_zone(home: BotHome, zone: str) -> None:
    home.write_env(TWEET_TIMEZONE=zone, TWEET_ONE_IN="1", HISTORY_DAYS="36600")
    home.write_tweets(
        "plain line\n{at: 9998-12-31 23:59} The last minute\n{at: 1900-01-01 00:00} The first minute\n"
        "{on: 9998-12-31} The last day\n{from: 1900-01-01; until: 9998-12-31} Always\n"
    )
    for args in (("--dry-run",), ("--dry-run", "--at", "9998-12-31 23:59"), ("--dry-run", "--at", "1900-01-01 00:00")):
        result = home.run(*args)
        assert result.returncode == 0, (args, result.stderr)
    for args in (("check",), ("cron",), ("systemd",)):
        result = home.run(*args)
        assert result.returncode in (0, 2) and "Traceback" not in result.stderr, (args, result.stderr)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("HISTORY_DAYS", "1000000"),
        ("HISTORY_DAYS", "36601"),
        ("TWEET_ONE_IN", "1000000001"),
        ("MAX_POSTS_PER_DAY", "10" * 9),
    ],
)
def test_a_count_out_of_bounds_is_a_settings_error_naming_it(home: BotHome, setting: str, value: str) -> None:
    home.write_env(**{setting: value})
    home.write_tweets("plain line\n")
    result = home.run("--dry-run")
    assert result.returncode == 78 and f"{setting}='{value}'" in result.stderr and "from 1 to" in result.stderr


@pytest.mark.parametrize("when", ["0001-01-01 00:00", "9999-12-31 23:59", "0001-01-01"])
def test_an_at_option_out_of_bounds_is_a_usage_error(home: BotHome, when: str) -> None:
    home.write_env(TWEET_TIMEZONE="Asia/Tokyo")
    home.write_tweets("plain line\n")
    result = home.run("--dry-run", "--at", when)
    assert result.returncode == 64 and "--at" in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["0", "30s", "4m59s"])
def test_late_by_shorter_than_five_minutes_is_a_settings_error(home: BotHome, value: str) -> None:
    home.write_env(LATE_BY=value)
    home.write_tweets("plain line\n")
    result = home.run("--dry-run")
    assert result.returncode == 78 and "LATE_BY=" in result.stderr and "at least 5m" in result.stderr, result.stderr


def test_a_grammar_with_at_in_one_rule_fails_check_and_every_run_alike(home: BotHome) -> None:
    grammar = home.path / "tweets.json"
    grammar.write_text(
        '{\n "origin": ["#plain#", "#timed#"],\n "plain": ["A plain post", "Another plain post"],\n'
        ' "timed": ["{lang: en; at: 2027-01-01 00:00} Happy new year"]\n}\n'
    )
    home.write_env(TWEETS_FILE=str(grammar), TWEET_ONE_IN="1")
    check = home.run("check")
    said = check.stdout + check.stderr
    assert check.returncode == 65 and 'line 4 rule "timed" has at: a grammar draws a new post each run' in said, said
    for seed in range(6):  # half the draws meet the rule: every run stops, not half of them
        result = home.run("--dry-run", "--seed", str(seed))
        assert result.returncode == 65 and 'rule "timed" has at' in result.stderr, result.stderr
