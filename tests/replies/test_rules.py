"""The reply rules file: JavaScript patterns compiled with `regex` (translated where JavaScript reads
them otherwise), the file's order, the services' real rule files, and the errors that name a rule."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.posting.grammar import Grammar
from twitterbot.replies.answer import NoReply, Reply, respond
from twitterbot.replies.rules import (
    MatchBudget,
    MatchBudgetSpent,
    ReplyRules,
    RuleError,
    load_rules,
    parse_rules,
    translate,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replies"


def rules_of(data: object, *, ignore_case: bool = False) -> ReplyRules:
    rules = parse_rules(json.dumps(data, ensure_ascii=False).encode(), Path("replies.json"), ignore_case=ignore_case)
    return rules.compile_all()


@pytest.mark.parametrize(
    ("key", "text", "matches"),
    [
        ("(?<=\\s|^)hi\\b", "@bot hi", True),  # a variable-width lookbehind, as BBDQ's help suggests
        ("(?<=\\s|^)hi\\b", "@bot chi", False),
        ("🐸", "look 🐸!", True),
        ("a\\/b", "a/b", True),
        ("[^]", "\n", True),  # any character, line breaks too
        ("[]", "anything", False),  # JavaScript's empty class matches nothing
        ("end$", "the end\n", False),  # JavaScript's $ is the end of the text only
        ("end$", "the end", True),
        ("\\cJ", "\n", True),
        ("\\q", "q", True),  # an escape JavaScript does not know is the letter
        ("\\d", "٣", False),  # JavaScript's \d is ASCII
        ("^\\w+$", "café", False),  # so is \w
        ("caf\\u00e9", "café", True),
        ("\\x41", "A", True),
        ("a{", "a{", True),  # a brace that is no quantifier is a brace
        ("[\\w-]+@", "ada-lovelace@", True),
        ("(?<name>hi) \\k<name>", "hi hi", True),
        ("[[]", "[", True),  # a bracket inside a class is a bracket
    ],
)
def test_javascript_patterns_match_as_javascript_matches_them(key: str, text: str, matches: bool) -> None:
    rule = rules_of({key: "yes"}).match(text)
    assert (rule is not None) == matches, translate(key)


def test_two_equal_keys_are_one_rule_in_the_first_place_with_the_last_response() -> None:
    data = b'{"a": "first", "b": "bee", "a": "last"}'
    rules = parse_rules(data, Path("replies.json"), ignore_case=False)
    assert [(rule.key, rule.response) for rule in rules.rules] == [("a", "last"), ("b", "bee")]


def test_a_round_compiles_only_the_rules_a_mention_reaches() -> None:
    rules = parse_rules(b'{"hello": "hi", "(broken": "never"}', Path("replies.json"), ignore_case=False)
    assert rules.match("hello").response == "hi"
    with pytest.raises(RuleError, match='"\\(broken"'):
        rules.match("bye")


def test_the_first_rule_in_the_file_s_order_wins_even_an_integer_like_key_and_check_is_told() -> None:
    rules = rules_of({"hello": "first", "42": "integer", ".": "any"})
    assert rules.match("hello 42").response == "first"
    assert rules.integer_first == ("42",)
    assert rules_of({"1": "a", "2": "b", "x": "c"}).integer_first == ()  # already first, in order


def test_matching_is_case_sensitive_unless_ignore_case_also_beyond_ascii() -> None:
    assert rules_of({"hello": "hi"}).match("HELLO") is None
    assert rules_of({"hello": "hi", "ÉTÉ": "summer"}, ignore_case=True).match("HELLO").response == "hi"
    assert rules_of({"ÉTÉ": "summer"}, ignore_case=True).match("cet été").response == "summer"


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b'{"fine": "ok", "(broken": "no"}', '"(broken"'),
        (b'{"a": 1}', '"a"'),
        (b'["a"]', "not a JSON object"),
        (b'{"a": "b",}', "line 1"),
        (b"\xff\xfe", "UTF-8"),
        (b'{"(?<=a+)b": "", "x{2,1}": ""}', '"x{2,1}"'),
    ],
)
def test_a_rules_file_that_cannot_be_used_is_named_with_the_rule_to_blame(data: bytes, named: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rules(data, Path("replies.json"), ignore_case=False).compile_all()
    assert named in str(caught.value) and "replies.json" in str(caught.value)
    assert caught.value.exit_status == 65


def test_a_missing_rules_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="does not exist: create it"):
        load_rules(tmp_path / "nope.json", ignore_case=False)


def test_a_rule_that_backtracks_without_end_is_passed_over() -> None:
    rules = rules_of({"(a+)+$": "never", ".": "fallback"})
    assert rules.match("a" * 40 + "!").response == "fallback"


@pytest.mark.parametrize(
    "key", ["((((a{100}){100}){100}){100})", "(((a*){100}){100}){100}", "(?:(?:x{2,}){1000}){1000}"]
)
def test_a_rule_too_big_to_compile_is_refused_at_once_and_named(key: str) -> None:
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(RuleError) as caught:
        rules_of({"fine": "ok", key: "never"})
    assert time.monotonic() - started < 1
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024  # KiB: not compiled
    assert json.dumps(key) in str(caught.value) and "too big" in str(caught.value)
    assert caught.value.exit_status == 65


def test_a_rule_that_backtracks_is_given_up_within_the_documented_half_second() -> None:
    import time

    from twitterbot.replies.rules import MATCH_TIMEOUT

    rules = rules_of({"(?:(?:a|a)+)+b": "never", "!": "fallback"})
    took = []
    for _ in range(3):  # the quickest of three: a busy machine's pauses are not the rule's
        started = time.monotonic()
        assert rules.match("a" * 5000 + "!").response == "fallback"
        took.append(time.monotonic() - started)
    assert min(took) <= MATCH_TIMEOUT, took  # asked 0.5 s, `regex` took 1.1-2.0 s


def test_counted_repeats_a_real_rule_uses_still_compile() -> None:
    rules = rules_of({".{0,280}": "any", "(?:\\w{100}){100}": "words", "(a{1000}){100}": "many a"})
    assert rules.match("hello").key == ".{0,280}"


def test_a_slow_rule_is_given_up_within_its_half_second_and_a_round_within_its_budget() -> None:
    import time

    slow = {f"(?:(?:a|a)+)+b{number}": "never" for number in range(20)}
    rules = rules_of({**slow, "!": "fallback"})
    budget = MatchBudget(2.0)
    started = time.monotonic()
    with pytest.raises(MatchBudgetSpent) as caught:
        for _ in range(2):
            rules.match("a" * 5000 + "!", budget)
    took = time.monotonic() - started
    assert took < 2.0 + 0.5 + 0.5, took  # the budget, the last rule's limit, and a slow machine's slack
    assert "(?:(?:a|a)+)+b" in str(caught.value) and "simplify" in str(caught.value)
    assert caught.value.exit_status == 65


def test_a_348_rule_blue_bots_file_loads_and_answers_case_insensitively() -> None:
    rules = load_rules(FIXTURES / "bbdq-348.json", ignore_case=True)
    assert len(rules) == 348
    assert rules.match("@bot WORD0y!").key.startswith("(?<=\\s|^)(word0|")
    assert rules.match("@bot hello Word335 there") is not None
    assert rules.match("🐸🐸").response == "🐸 to you too"
    for number in range(0, 336, 17):
        rule = rules.match(f"@mybot word{number}")
        assert rule is not None and rule.index == number + 1, number


def test_a_650_rule_toot_sweet_file_loads_and_answers_with_its_visibility_words() -> None:
    rules = load_rules(FIXTURES / "cbts-650.json", ignore_case=False)
    assert len(rules) == 650
    grammar = Grammar({"reply": ("Yes:",)})
    rng = random.Random(1)
    asked = {"@bot Word1/yes": "Word1", "@bot Word2!": "Word2", "@bot Word3": "Word3", "help": None}
    for text, word in asked.items():
        rule = rules.match(text)
        reply = respond(rule, grammar, rng=rng, networks=("mastodon",), folder=FIXTURES)
        assert isinstance(reply, Reply)
        if word:
            assert reply.text == f"Yes: {word}"
    assert (
        respond(rules.match("@bot Word1/yes"), grammar, rng=rng, networks=(), folder=FIXTURES).visibility == "unlisted"
    )
    assert respond(rules.match("nothing known"), grammar, rng=rng, networks=(), folder=FIXTURES).visibility == "private"
    assert rules.match("word1/yes").key == "."  # case-sensitive, as CBTS


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("", NoReply),
        ("0", NoReply),
        ("  {public}  ", NoReply),
        ("#greeting#, friend", "hello, friend"),
        ("{cw: spoilers} it ends well", "it ends well"),
        ("\\{braces}", "{braces}"),
    ],
)
def test_a_response_is_expanded_and_read_as_a_post(response: str, expected: object) -> None:
    rules = rules_of({"x": response})
    reply = respond(
        rules.match("x"), Grammar({"greeting": ("hello",)}), rng=random.Random(0), networks=(), folder=Path(".")
    )
    if expected is NoReply:
        assert isinstance(reply, NoReply)
    else:
        assert isinstance(reply, Reply) and reply.text == expected


def test_the_most_private_visibility_word_wins() -> None:
    rules = rules_of({"x": "hi {public} {direct} {unlisted}"})
    reply = respond(rules.match("x"), None, rng=random.Random(0), networks=(), folder=Path("."))
    assert isinstance(reply, Reply) and reply.text == "hi" and reply.visibility == "direct"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_key_either_compiles_or_is_named_never_a_traceback(key: str) -> None:
    try:
        rules = rules_of({key: "yes"})
    except RuleError as exc:
        assert json.dumps(key, ensure_ascii=False) in str(exc)
        return
    rules.match("some text @bot " + key)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.booleans(), st.booleans(), st.text(max_size=30))
def test_any_mention_is_judged_and_matched_without_a_traceback(text: str, bot: bool, answers: bool, bio: str) -> None:
    from datetime import datetime, timezone

    from twitterbot.networks.mentions import Author, Mention
    from twitterbot.replies.safety import Politeness, judge

    mention = Mention("x", "1", Author("2", "@ada", bot, bio), text, datetime.now(timezone.utc), "1", None, answers)
    judge(mention, Politeness(), now=datetime.now(timezone.utc), stopped=False, last_reply=None)
    _bbdq().match(text)


@functools.cache
def _bbdq() -> ReplyRules:
    """The 348 rules, compiled once for the property test's examples."""
    return load_rules(FIXTURES / "bbdq-348.json", ignore_case=True, compile_now=True)
