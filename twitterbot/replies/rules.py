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
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import TweetFileError
from ..files import read_setting_file

__all__ = [
    "MATCH_TIMEOUT",
    "MAX_PATTERN_SIZE",
    "ROUND_MATCH_BUDGET",
    "MatchBudget",
    "MatchBudgetSpent",
    "ReplyRules",
    "Rule",
    "RuleError",
    "load_rules",
    "parse_rules",
    "pattern_size",
    "translate",
]

log = logging.getLogger(__name__)

# How long one rule may take to search one mention, in seconds: a pattern that backtracks
# without end (``(a+)+$`` against a long text) is given up as no match, with a warning. `regex`
# notices its timeout late (it unwinds what it built first: asked 0.5 s, it took 1.1-2.0 s), so
# it is asked for a third of it.
MATCH_TIMEOUT = 0.5
_ASKED_TIMEOUT = MATCH_TIMEOUT / 3

# How long a round may spend matching, all its mentions and rules together, in seconds: twenty
# rules that each take their whole MATCH_TIMEOUT cannot hold the run lock for minutes.
ROUND_MATCH_BUDGET = 5.0

# The largest pattern a rule may compile to, counted in the characters `regex` expands it to (a
# counted repeat ``{n}`` copies what it repeats n times): ``((((a{100}){100}){100}){100})`` is 10^8,
# and compiling it took every byte of memory. This much compiles in about 0.1 s and 100 MB.
MAX_PATTERN_SIZE = 100_000


class RuleError(TweetFileError):
    """The rules file cannot be used (exit 65): it names the file, and the key where one is to blame."""


class MatchBudgetSpent(RuleError):
    """The round's `ROUND_MATCH_BUDGET` ran out while a mention was matched (exit 65): it names the
    rules that took longest, to simplify; the mention waits, with the others the round did not reach."""

    def __init__(self, message: str, key: Optional[str]) -> None:
        super().__init__(message)
        self.key = key


class MatchBudget:
    """The matching time a round has left (`ROUND_MATCH_BUDGET`), on `clock`."""

    def __init__(self, seconds: float = ROUND_MATCH_BUDGET, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.clock = seconds, clock
        self.spent = 0.0
        self.slowest: Dict[str, float] = {}  # rule key -> seconds it took, for the message

    def left(self) -> float:
        return self.seconds - self.spent

    def charge(self, key: str, seconds: float) -> None:
        self.spent += seconds
        if seconds >= 0.05:
            self.slowest[key] = self.slowest.get(key, 0.0) + seconds


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

    def match(self, text: str, budget: Optional[MatchBudget] = None) -> Optional[Rule]:
        """The first rule whose pattern is found in `text`; None: no rule answers it. A rule that
        takes longer than `MATCH_TIMEOUT` is passed over, as not matching. Raises `RuleError` at
        the first rule reached that does not compile, `MatchBudgetSpent` when `budget` (the
        round's) runs out before a rule answers."""
        budget = budget or MatchBudget(float("inf"))
        for rule in self.rules:
            pattern = self._pattern(rule)
            left = budget.left()
            if left <= 0:
                raise MatchBudgetSpent(self._spent_message(budget), rule.key)
            started = budget.clock()
            try:
                found = pattern.search(text, timeout=min(_ASKED_TIMEOUT, left)) is not None
            except TimeoutError:
                found = False
                log.warning(
                    "%s: the rule %s took longer than %.1f s on a mention and was passed over: simplify it",
                    self.path.name,
                    _shown(rule.key),
                    MATCH_TIMEOUT,
                )
            finally:
                budget.charge(rule.key, budget.clock() - started)
            if found:
                return rule
        return None

    def _spent_message(self, budget: MatchBudget) -> str:
        slowest = sorted(budget.slowest, key=budget.slowest.__getitem__, reverse=True)[:3]
        named = ", ".join(_shown(key) for key in slowest) or "none alone"
        return (
            f"{self.path}: matching the mentions took the round's {budget.seconds:g} s (the slowest rules: {named}):"
            " simplify those rules; the mentions not matched wait for the next round"
        )

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
    translated = translate(key)
    size = pattern_size(translated)
    if size > MAX_PATTERN_SIZE:
        raise RuleError(
            f"{path}: the rule {_shown(key)} is too big to compile: its counted repeats ({{n}}) make it"
            f" {size:,} characters long, more than {MAX_PATTERN_SIZE:,}: use + or * for long runs, or"
            " fewer nested {n}"
        )
    try:
        return regex.compile(translated, flags)
    except MemoryError:
        raise RuleError(f"{path}: the rule {_shown(key)} takes too much memory to compile: simplify it") from None
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise RuleError(
            f"{path}: the rule {_shown(key)} is not a regular expression ({exc}): fix it, or escape the"
            " character it names with a backslash (\\\\ in JSON)"
        ) from None


# A counted repeat, as `regex` reads one after what it repeats: {n}, {n,} or {n,m} ({,m}: 0 to m).
_COUNTED = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")


def pattern_size(pattern: str) -> int:
    """How many characters `pattern` (in `regex`'s syntax) expands to when compiled, over-counted:
    every counted repeat multiplies what it repeats by its largest count. Reckoned without
    compiling, so that a pattern too big to compile is refused before it takes the memory."""
    stack: List[List[int]] = [[0, 0]]  # per open group: [its size so far, the size of its last item]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        level = stack[-1]
        if char == "\\":
            level[0], level[1] = level[0] + 1, 1
            index += 2
            continue
        if char == "[":
            end = index + 1 + (pattern[index + 1 : index + 2] == "^")
            end += pattern[end : end + 1] == "]"
            while end < len(pattern) and pattern[end] != "]":
                end += 1 + (pattern[end] == "\\")
            level[0], level[1] = level[0] + 1, 1
            index = end + 1
            continue
        if char == "(":
            stack.append([0, 0])
        elif char == ")" and len(stack) > 1:
            inner = stack.pop()[0]
            stack[-1][0] += inner
            stack[-1][1] = inner
        elif char == "{" and _COUNTED.match(pattern, index):
            counted = _COUNTED.match(pattern, index)
            assert counted is not None
            lowest, comma, highest = counted.groups()
            times = max(int(lowest or 0), int(highest or 0) if comma else 0)
            if lowest or highest:
                level[0] += level[1] * (times - 1)
                level[1] *= times
            index = counted.end()
            continue
        elif char not in "|*+?":
            level[0], level[1] = level[0] + 1, 1
        index += 1
    return sum(level[0] for level in stack)


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
