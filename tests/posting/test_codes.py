"""Blue Bots Done Quick's codes replaced in a grammar before it runs (posting/codes.py): the time in
the bot's own zone, PHP's date letters, the post's number and a rule's item."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.errors import TweetFileError
from twitterbot.posting.codes import Moment, php_date, uses_codes, with_codes
from twitterbot.posting.grammar import parse_grammar

OSLO = ZoneInfo("Europe/Oslo")
# Sunday 1 March 2026, 15:04:05 in Oslo (14:04:05 UTC)
SUNDAY = datetime(2026, 3, 1, 15, 4, 5, tzinfo=OSLO)


@pytest.mark.parametrize(
    ("form", "written"),
    [
        ("D, d M Y H:i:s O", "Sun, 01 Mar 2026 15:04:05 +0100"),
        ("l jS \\o\\f F y", "Sunday 1st of March 26"),
        ("g:i A / h a / G", "3:04 PM / 03 pm / 15"),
        ("N w z W t L", "7 0 59 09 31 0"),
        ("e T P U", "Europe/Oslo CET +01:00 1772373845"),
        ("n/j", "3/1"),
        ("jS", "1st"),
    ],
)
def test_php_date_letters(form: str, written: str) -> None:
    assert php_date(form, SUNDAY) == written


@pytest.mark.parametrize(
    ("day", "suffix"),
    [(2, "nd"), (3, "rd"), (11, "th"), (12, "th"), (13, "th"), (21, "st"), (22, "nd"), (23, "rd"), (24, "th")],
)
def test_english_ordinal_suffixes(day: int, suffix: str) -> None:
    assert php_date("S", datetime(2026, 1, day, tzinfo=timezone.utc)) == suffix


def grammar(rules: str):
    return parse_grammar(rules.encode(), Path("bot.json"))


def test_the_codes_are_the_bot_s_own_time_and_post_number() -> None:
    made = with_codes(
        grammar(
            '{"origin": ["{weekdayName} {hour}h, {monthName} ({month}), day {weekday}: post {n}, '
            '{n mod 3} {n % 5} on {date jS F}"]}'
        ),
        Moment(SUNDAY, count=lambda: 13),
    )
    assert made.rules["origin"] == ("Sunday 15h, March (03), day 0: post 13, 1 3 on 1st March",)


def test_an_item_is_a_rule_s_text_by_number_round_again_and_the_codes_may_make_the_number() -> None:
    made = with_codes(
        grammar(
            '{"origin": ["{item #days# {weekday}} {item #parity# {n}} {img https://a.test/{item #pics# 5}.png '
            '{item #alts# 5}}"], "days": ["sun", "mon"], "parity": ["even", "odd"], '
            '"pics": ["cat", "dog"], "alts": ["A cat", "A dog"]}'
        ),
        Moment(SUNDAY, count=lambda: 7),
    )
    assert made.rules["origin"] == ("sun odd {img https://a.test/dog.png A dog}",)
    assert made.expand(random.Random(0)) == "sun odd {img https://a.test/dog.png A dog}"


def test_the_number_is_counted_only_for_a_grammar_that_writes_n() -> None:
    asked = []
    plain = grammar('{"origin": ["no codes {hide}"]}')
    assert not uses_codes(plain)
    assert with_codes(plain, Moment(SUNDAY, count=lambda: asked.append(1) or 1)) is plain
    with_codes(grammar('{"origin": ["{hour}"]}'), Moment(SUNDAY, count=lambda: asked.append(1) or 1))
    assert asked == []


def test_an_item_of_a_missing_rule_is_a_data_error_naming_it() -> None:
    with pytest.raises(TweetFileError, match="no rule 'colours'"):
        with_codes(grammar('{"origin": ["{item #colours# 1}"]}'), Moment(SUNDAY))


@given(st.text(max_size=30), st.datetimes(timezones=st.just(OSLO)))
def test_any_format_is_written_and_a_backslash_keeps_its_letter(form: str, at: datetime) -> None:
    written = php_date(form, at)
    assert isinstance(written, str)
    assert php_date("\\" + "\\".join("Y-m-d"), at) == "Y-m-d"


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (
            '"origin": ["#greet{hour}#"], "greet09": ["hello"]',
            'uses #greet00#, which is not there: Tracery writes ((greet00)) in the post; add a rule "greet00" (at 00:00',
        ),
        ('"origin": ["#day{weekday}#"], "day0": ["Sunday"]', "(on a Monday: the codes make other texts then)"),
        ('"origin": ["#odd{n % 2}#"], "odd1": ["odd"]', "(at post number 2: the codes make other texts then)"),
    ],
)
def test_check_names_a_rule_the_codes_name_at_another_time(tmp_path: Path, rules: str, said: str) -> None:
    """`#greet{hour}#` with only the hour of the check written: check said all was well, and every
    run at another hour wrote ((greet00)), as Tracery does: a warning with the hour."""
    from twitterbot.posting.generated import sample_grammar

    path = tmp_path / "bot.json"
    path.write_text("{" + rules + "}", encoding="utf-8")
    now = Moment(SUNDAY.replace(hour=9), count=lambda: 1)
    report = sample_grammar(path, [], rng=random.Random(0), codes=now)
    assert any(said in warning for warning in report.warnings), report.warnings
    assert not any("which is not there" in problem for problem in report.problems)
