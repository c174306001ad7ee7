"""Reply rules as Cheap Bots Done Quick, Cheap Bots Toot Sweet and Blue Bots Done Quick wrote them:
a JSON object whose keys are JavaScript regular expressions and whose values are responses.

The keys are read in the file's order and the first whose pattern is found anywhere in the
mention's whole text (leading @mentions included) answers it. JavaScript iterates integer-like keys
("42") before the others; CBDQ did so, BBDQ's PHP and this bot do not: the file's order is the
order its author sees (`check` notes a file whose integer-like keys CBDQ would have tried first).
Patterns are compiled with the `regex` package, which takes what JavaScript takes and Python's `re`
refuses (variable-width lookbehind such as ``(?<=\\s|^)``); the few bits of JavaScript syntax it
reads otherwise are translated first (`translate`). Matching is case-sensitive, as on CBDQ and
CBTS, unless REPLY_IGNORE_CASE=yes (BBDQ matched with ``/key/i``)::

    rules = load_rules(Path("replies.json"), ignore_case=False)
    rule = rules.match("@pibot hello there")     # the first rule that matches, or None
    rule.key, rule.response                      # '(?<=\\s|^)hello', '#greeting#'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import TweetFileError
from ..files import read_setting_file

__all__ = ["MATCH_TIMEOUT", "ReplyRules", "Rule", "RuleError", "load_rules", "parse_rules", "translate"]

# How long one rule may take to search one mention, in seconds: a pattern that backtracks
# without end (``(a+)+$`` against a long text) is given up as no match, with a warning.
MATCH_TIMEOUT = 0.5


class RuleError(TweetFileError):
    """The rules file cannot be used (exit 65): it names the file, and the key where one is to blame."""


@dataclass(frozen=True)
class Rule:
    """One rule: its key as written, its response, and its place in the file (1-based)."""

    key: str
    response: str
    index: int


class ReplyRules:
    """The rules of a file, in its order; `integer_first` lists the integer-like keys JavaScript
    (and so CBDQ) would have tried before the others. Each pattern is compiled when a mention
    first reaches it (a round with nothing new compiles none: a file of 650 rules takes a Pi a
    second); `compile_all` compiles them all now (`check`)."""

    def __init__(self, path: Path, rules: Sequence[Rule], *, ignore_case: bool, integer_first: Tuple[str, ...] = ()):
        self.path, self.rules, self.integer_first = path, tuple(rules), integer_first
        self.ignore_case = ignore_case
        self._patterns: Dict[int, Any] = {}  # compiled `regex` patterns, by the rule's index

    def match(self, text: str) -> Optional[Rule]:
        """The first rule whose pattern is found in `text`; None: no rule answers it. A rule that
        takes longer than `MATCH_TIMEOUT` is passed over, as not matching. Raises `RuleError` at
        the first rule reached that does not compile."""
        for rule in self.rules:
            try:
                if self._pattern(rule).search(text, timeout=MATCH_TIMEOUT) is not None:
                    return rule
            except TimeoutError:
                import logging

                logging.getLogger(__name__).warning(
                    "%s: the rule %s took longer than %.1f s on a mention and was passed over: simplify it",
                    self.path.name,
                    _shown(rule.key),
                    MATCH_TIMEOUT,
                )
        return None

    def compile_all(self) -> ReplyRules:
        """Compile every rule now; `RuleError` names the first that does not compile."""
        for rule in self.rules:
            self._pattern(rule)
        return self

    def _pattern(self, rule: Rule) -> Any:
        pattern = self._patterns.get(rule.index)
        if pattern is None:
            pattern = self._patterns[rule.index] = compile_key(rule.key, self.path, ignore_case=self.ignore_case)
        return pattern

    def __len__(self) -> int:
        return len(self.rules)


def compile_key(key: str, path: Path, *, ignore_case: bool) -> Any:
    """A rule's key compiled with `regex` (JavaScript's syntax translated first), or `RuleError`
    naming the rule, quoted as written, and the file."""
    import regex

    flags = regex.V0 | (regex.IGNORECASE | regex.FULLCASE if ignore_case else 0)
    try:
        return regex.compile(translate(key), flags)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise RuleError(
            f"{path}: the rule {_shown(key)} is not a regular expression ({exc}): fix it, or escape the"
            " character it names with a backslash (\\\\ in JSON)"
        ) from None


def load_rules(path: Path, *, ignore_case: bool, compile_now: bool = False) -> ReplyRules:
    """Read the rules file at `path` (with `compile_now`, compile every rule too: `check`). Raises
    `RuleError` naming the file (and the key to blame, quoted as written) with what to do."""
    data = read_setting_file(
        path,
        what="the reply rules (REPLY_RULES)",
        setting="REPLY_RULES",
        otherwise="leave REPLY_RULES empty",
        error=RuleError,
    )
    rules = parse_rules(data, path, ignore_case=ignore_case)
    return rules.compile_all() if compile_now else rules


def parse_rules(data: bytes, path: Path, *, ignore_case: bool) -> ReplyRules:
    """The rules in `data` (the bytes of `path`, named in messages), in the file's order; two equal
    keys are one rule, in the first one's place with the last one's response, as JavaScript has them."""
    try:
        pairs = json.loads(data.decode("utf-8-sig"), object_pairs_hook=_Pairs)
    except UnicodeDecodeError as exc:
        raise RuleError(f"{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise RuleError(f"{path} line {exc.lineno} column {exc.colno} is not JSON ({exc.msg}): fix it") from None
    except RecursionError:
        raise RuleError(f"{path} nests too deep to be a rules file: it should be one object of texts") from None
    if not isinstance(pairs, _Pairs):
        raise RuleError(f'{path} is not a JSON object of rules: write it as {{"hello": "hi there"}}')
    responses: Dict[str, str] = {}
    for key, response in pairs:
        if not isinstance(response, str):
            raise RuleError(
                f"{path}: the rule {_shown(key)} answers with {type(response).__name__}, not a text: write its"
                ' response as a string ("" for no reply)'
            )
        responses[key] = response  # a dict keeps the first place and the last value, as JavaScript
    rules = [Rule(key, response, index) for index, (key, response) in enumerate(responses.items(), start=1)]
    integer_first = tuple(rule.key for rule in rules if _integer_like(rule.key)) if not _integers_lead(rules) else ()
    return ReplyRules(path, rules, ignore_case=ignore_case, integer_first=integer_first)


def _shown(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


class _Pairs(list):
    """A JSON object read as its pairs, in the file's order."""

    def __init__(self, pairs: Sequence[Tuple[str, Any]]) -> None:
        super().__init__(pairs)


def _integer_like(key: str) -> bool:
    """Whether JavaScript orders `key` as an array index (before every other key)."""
    return key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


def _integers_lead(rules: Sequence[Rule]) -> bool:
    """Whether the integer-like keys already come first, in ascending order, as JavaScript has them."""
    integers = [rule.key for rule in rules if _integer_like(rule.key)]
    return [rule.key for rule in rules[: len(integers)]] == sorted(integers, key=int)


# -- JavaScript's syntax, where `regex` reads it otherwise ---------------------------------------------

# JavaScript's escapes followed by hex digits, and how many (else the escaped letter is itself).
_HEX_ESCAPES = dict(zip("xu", (2, 4)))
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_"}
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]", "b": "(?a:\\b)", "B": "(?a:\\B)"}


def _means_something(pattern: str, at: int) -> bool:
    """Whether the escaped letter at `at` is one of JavaScript's escapes (without the u flag)."""
    letter = pattern[at]
    hex_digits = _HEX_ESCAPES.get(letter)
    if hex_digits:
        return _hex(pattern[at + 1 : at + 1 + hex_digits], hex_digits)
    return letter in "dDwWsSbBnrtvfck"


def _hex(text: str, length: int) -> bool:
    return len(text) == length and all(char in "0123456789abcdefABCDEF" for char in text)


def translate(pattern: str) -> str:
    """A JavaScript pattern (compiled with no flags, as CBDQ did) in the `regex` package's syntax:
    ``$`` is the end of the text only (Python's also matches before a last line break), ``\\d``,
    ``\\w`` and ``\\b`` are ASCII as in JavaScript, ``[^]`` is any character and ``[]`` none,
    ``\\cX`` is a control character, ``\\/`` a slash, and ``\\u{...}`` (without JavaScript's u flag,
    which no rule had) the letter u repeated. Everything else is the same in both."""
    out: List[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            following = pattern[index + 1]
            if (
                following == "c"
                and index + 2 < len(pattern)
                and pattern[index + 2].isascii()
                and pattern[index + 2].isalpha()
            ):
                out.append(f"\\x{ord(pattern[index + 2].upper()) % 32:02x}")
                index += 3
                continue
            if following == "u" and pattern[index + 2 : index + 3] == "{":
                out.append("u{")
                index += 3
                continue
            if in_class and following in _CLASS_ESCAPES:
                out.append(_CLASS_ESCAPES[following])
            elif not in_class and following in _ESCAPES:
                out.append(_ESCAPES[following])
            elif following == "/":
                out.append("/")
            elif following == "k" and pattern[index + 2 : index + 3] == "<":
                out.append("\\g")  # a named group's backreference, \k<name>, is \g<name> in `regex`
            elif following.isascii() and following.isalpha() and not _means_something(pattern, index + 1):
                out.append(following)  # JavaScript reads an escape it does not know as the letter itself
            else:
                out.append(char + following)
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
            elif char == "[":
                out.append("\\[")  # a bracket inside a class is a plain one in JavaScript
                index += 1
                continue
            out.append(char)
            index += 1
            continue
        if char == "[":
            if pattern.startswith("[^]", index):
                out.append("[\\s\\S]")
                index += 3
                continue
            if pattern.startswith("[]", index):
                out.append("(?!)")
                index += 2
                continue
            in_class = True
            out.append(char)
            if pattern[index + 1 : index + 2] == "^":
                out.append("^")
                index += 1
            index += 1
            continue
        if char == "$":
            out.append("\\Z")
            index += 1
            continue
        out.append(char)
        index += 1
    return "".join(out)
