"""Tracery grammars: a tweets file ending in ``.json`` is a grammar whose ``origin`` is expanded on
every run, read as Cheap Bots Done Quick reads it (Kate Compton's Tracery).

A rule is a list of texts (or one text); ``#name#`` is replaced by one of rule ``name``'s texts,
``#name.capitalize.s#`` with modifiers applied in order, ``[hero:#name#]`` sets the rule ``hero``
to an expansion of its text (kept for the rest of the expansion; in a tag, ``#[hero:#name#]story#``,
only while ``story`` expands), ``[#setup#]`` expands ``setup`` for its actions alone, and ``\\#``
is a literal ``#``. A picture is written as in a plain file, ``![a #animal#](#animal#.jpg)``: its
brackets are not an action. Draws come from the injected random source in the order the reference
implementation (the Python port, ``tracery3``) makes them, so a seed gives its outputs::

    grammar = read_grammar(Path("tweets.json"))   # TweetFileError (65) naming the line if unusable
    grammar.expand(random.Random(7))              # 'A purple owl sings.'
    grammar.problems()                            # what cannot run, and what Tracery runs through

Where Kate Compton's Tracery runs through a slip, so does this (a bot moved in has posted so for
months): a rule that is not there is written ``((name))``, an empty rule nothing, an unknown
modifier adds ``((.name))``, a ``#`` or ``[`` without its pair is left out. `problems` marks those
``tolerated`` (a warning saying what the post shows) and `draw` returns them with the text.

Nesting is bounded (`MAX_DEPTH` tags inside each other, `MAX_TAGS` in one expansion): a rule that
recurses without end raises `TooDeep`, and the caller draws again. So is the work: an expansion
that reads and makes more than `MAX_CHARACTERS` characters, takes more than `MAX_STEPS` steps or
holds more than `MAX_HELD` rules set by actions (a rule that doubles itself, ``[x:#x##x#]`` forty
times, would make 2^40 characters) is a `TweetFileError` naming its rule; the draws of a run share
one `Work` and stop (`OutOfWork`) when it is spent. Reading the file and `problems` take time in
proportion to the file.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple

from ..errors import TweetFileError
from ..files import read_setting_file

__all__ = [
    "Grammar",
    "Drawn",
    "GrammarProblem",
    "MAX_CHARACTERS",
    "MAX_DEPTH",
    "MAX_HELD",
    "MAX_STEPS",
    "MAX_TAGS",
    "MODIFIERS",
    "ORIGIN",
    "OutOfWork",
    "TooDeep",
    "Work",
    "parse_grammar",
    "read_grammar",
]

ORIGIN = "origin"
MAX_DEPTH = 60  # tags inside tags: far more than a bot's grammar needs, far less than Python's stack
MAX_TAGS = 5000  # tags in one expansion: stops a grammar that branches without end
# Characters one expansion may read and make, counting a text at every rule it passes through: a
# post is a few thousand characters and a long line's thread some 100,000 (half a million read and
# made, 4 rules deep), so a real grammar stays far below it; a rule that doubles itself reaches it
# in 22 doublings, in well under a second. Copying text is what they cost: C's time, and memory.
MAX_CHARACTERS = 4_000_000
# Steps one expansion may take: each tag, action, modifier and backslash, what Python does one by
# one (some microseconds each). A post of MAX_TAGS tags takes about 10,000.
MAX_STEPS = 50_000
MAX_HELD = 10_000  # rules set by actions and not yet undone, in one expansion (a real one sets a few)

_PLAIN, _TAG, _ACTION, _ERROR = 0, 1, 2, 3
_NESTED = f"[ nested more than {MAX_DEPTH} deep"
_BLOWN_UP = (
    "look for a rule that uses itself more than once (#x# twice in a text of x, or an action like "
    "[x:#x##x#], each doubles the text), a .replace that lengthens the text again and again, or a "
    "very long text used many times"
)


class TooDeep(Exception):
    """An expansion went past MAX_DEPTH or MAX_TAGS: the grammar recursed too far this time."""


class OutOfWork(Exception):
    """The `Work` shared by a run's draws is spent: draw no more (each draw stayed within its own bound)."""


@dataclass
class Work:
    """Characters read and made and steps taken by expansions, against the bounds a run's draws
    (or a check's samples) share: a grammar whose every draw is large cannot keep a run busy."""

    characters: int
    steps: int
    made: int = 0
    taken: int = 0


@dataclass(frozen=True)
class GrammarProblem:
    """Something wrong with a grammar, with the line of the rule it is in (0: the whole file).
    `tolerated`: Tracery runs through it (the message says what the post shows), a warning; else
    no expansion can use the grammar as it is, a data error."""

    lineno: int
    message: str
    tolerated: bool = False


@dataclass(frozen=True)
class Drawn:
    """One expansion's text, and the slips Tracery ran through to make it that show in it (each
    naming its rule and what the text shows for it), for a run to warn of."""

    text: str
    slips: Tuple[str, ...] = ()


# -- the modifiers, as the reference's English ones (safe on an empty text) ---------------------------


def _is_vowel(char: str) -> bool:
    return char.lower() in "aeiou"


def _capitalize(text: str, *params: str) -> str:
    return text[:1].upper() + text[1:]


def _capitalize_all(text: str, *params: str) -> str:
    """Each word's first letter in capitals, the rest as it was (Tracery's, not str.title's)."""
    out, cap_next = [], True
    for char in text:
        if not char.isalnum():
            cap_next = True
            out.append(char)
        else:
            out.append(char.upper() if cap_next else char)
            cap_next = False
    return "".join(out)


def _a(text: str, *params: str) -> str:
    if text[:1].lower() == "u" and text[2:3].lower() == "i":  # "a unicorn", "an umbrella"
        return "a " + text
    return ("an " if text and _is_vowel(text[0]) else "a ") + text


def _s(text: str, *params: str) -> str:
    if not text:
        return text
    if text[-1] in "shxSHX":
        return text + "es"
    if text[-1] in "yY":
        return text[:-1] + "ies" if len(text) < 2 or not _is_vowel(text[-2]) else text + "s"
    return text + "s"


def _first_s(text: str, *params: str) -> str:
    first, _, rest = text.partition(" ")
    return _s(first) + (" " + rest if rest or text.endswith(" ") else "")


def _ed(text: str, *params: str) -> str:
    if not text:
        return text
    if text[-1] in "eE":
        return text + "d"
    if text[-1] in "yY" and (len(text) < 2 or not _is_vowel(text[-2])):
        return text[:-1] + "ied"
    return text + "ed"


def _replace(text: str, *params: str) -> str:
    return text.replace(params[0], params[1]) if len(params) >= 2 else text


MODIFIERS: Mapping[str, Callable[..., str]] = {
    "replace": _replace,
    "capitalizeAll": _capitalize_all,
    "capitalize": _capitalize,
    "a": _a,
    "firstS": _first_s,
    "s": _s,
    "ed": _ed,
    "uppercase": lambda text, *params: text.upper(),
    "lowercase": lambda text, *params: text.lower(),
}


# -- reading a rule's text -----------------------------------------------------------------------------

_SYNTAX = re.compile(r"[\[\]#\\]")  # the characters a rule's text is cut at; the rest is read in C


def _scan(rule: str) -> Iterator[Tuple[int, str]]:
    """A rule's text cut into plain text, ``#tags#`` and ``[actions]`` as (kind, raw), lazily, with
    what is wrong with its brackets as (_ERROR, what), each once; a backslash keeps the next
    character (cut exactly as the reference cuts it). One addition: the brackets of a picture,
    ``![alt](path)``, are text, as in a plain tweets file. Only the syntax characters are looked at
    one by one, so a long text costs little more than its length."""
    depth, in_tag, start = 0, False, 0
    kept: List[str] = []  # the text before the last backslash (without the earlier ones), in pieces
    last_escape: Optional[int] = None  # where the last backslash was
    escaped = -1  # the index of the character a backslash keeps
    picture = False  # inside a picture's ![alt text]: its brackets are text, its #tags# expand
    said: Set[str] = set()

    def cut(end: int, kind: int) -> Iterator[Tuple[int, str]]:
        nonlocal last_escape
        if end - start < 1 and kind != _PLAIN:
            yield from error("an empty " + ("tag ##" if kind == _TAG else "action []"))
        raw = "".join(kept) + "\\" + rule[last_escape + 1 : end] if last_escape is not None else rule[start:end]
        kept.clear()
        last_escape = None
        if kind != _PLAIN or raw:
            yield kind, raw

    def error(what: str) -> Iterator[Tuple[int, str]]:
        if what not in said:
            said.add(what)
            yield _ERROR, what

    for found in _SYNTAX.finditer(rule):
        index = found.start()
        char = rule[index]
        if index == escaped:
            continue
        if char == "[" and depth == 0 and not in_tag and index and rule[index - 1] == "!" and not picture:
            picture = True
        elif char == "]" and depth == 0 and not in_tag and picture:
            picture = False
        elif char == "[":
            if depth == 0 and not in_tag:
                if start < index:
                    yield from cut(index, _PLAIN)
                start = index + 1
            depth += 1
            if depth > MAX_DEPTH:
                yield from error(_NESTED)
        elif char == "]":
            depth -= 1
            if depth == 0 and not in_tag:
                yield from cut(index, _ACTION)
                start = index + 1
        elif char == "#" and depth == 0:
            if in_tag:
                yield from cut(index, _TAG)
            elif start < index:
                yield from cut(index, _PLAIN)
            start = index + 1
            in_tag = not in_tag
        elif char == "\\":
            escaped = index + 1
            kept.append(rule[start:index])
            start, last_escape = index + 1, index
    if start < len(rule):
        yield from cut(len(rule), _PLAIN)
    elif last_escape is not None:  # a backslash at the very end keeps nothing: Tracery drops the text before it
        yield from error(_TRAILING_BACKSLASH)
    if in_tag:
        yield from error("a # without its closing #")
    if depth > 0:
        yield from error("a [ without its ]")
    if depth < 0:
        yield from error("a ] without its [")


def _sections(rule: str) -> Tuple[List[Tuple[int, str]], List[str]]:
    """A rule's text cut whole (see `_scan`), and what is wrong with its brackets."""
    sections: List[Tuple[int, str]] = []
    errors: List[str] = []
    for kind, raw in _scan(rule):
        if kind == _ERROR:
            errors.append(raw)
        else:
            sections.append((kind, raw))
    return sections, errors


_UNNAMED = "undefined"  # the rule JavaScript's Tracery looks up for a tag that names none (``##``)


@dataclass(frozen=True)
class _Tag:
    symbol: Optional[str]  # None: the tag names no rule (``##``, ``#[hero:Ada]#``)
    modifiers: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (name, params)
    actions: Tuple[str, ...]


def _tag(raw: str) -> _Tag:
    """A tag's parts: its actions, its rule's name and its modifiers with their parameters."""
    symbol, actions = None, []
    for kind, text in _sections(raw)[0]:
        if kind == _PLAIN and symbol is None:
            symbol = text
        elif kind == _PLAIN:
            raise ValueError(f"two rule names in the tag #{raw}#")
        else:
            actions.append(text)
    if symbol is None:
        return _Tag(None, (), tuple(actions))
    name, *mods = symbol.split(".")
    modifiers = []
    for mod in mods:
        params: Tuple[str, ...] = ()
        if mod.find("(") > 0:
            found = re.findall(r"\(([^)]+)\)", mod)
            if found:
                params, mod = tuple(found[0].split(",")), mod[: mod.find("(")]
        modifiers.append((mod, params))
    return _Tag(name, tuple(modifiers), tuple(actions))


def _action(action: str) -> Tuple[str, str, str]:
    """An action's target, what it does ("push" a text, "pop" the last pushed, "expand" the target
    for its own actions) and the text it pushes: ``[hero:#name#]``, ``[hero:POP]``, ``[#setup#]``."""
    target, *rest = action.split(":")
    if not rest:
        return target, "expand", ""
    return (target, "pop", "") if rest[0] == "POP" else (target, "push", rest[0])


def _unescape(text: str) -> str:
    return text.replace("\\\\", "\0").replace("\\", "").replace("\0", "\\")


# -- the grammar ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grammar:
    """A grammar's rules (each a tuple of texts), with the line each is written on."""

    rules: Mapping[str, Tuple[str, ...]]
    lines: Mapping[str, int] = field(default_factory=dict)
    path: Optional[Path] = None

    def expand(self, rng: random.Random, rule: str = "#" + ORIGIN + "#", *, work: Optional[Work] = None) -> str:
        """One expansion of `rule` (the origin), drawing from `rng`. Raises `TooDeep` when it
        recurses past the bound, `TweetFileError` when it passes `MAX_CHARACTERS`, `MAX_STEPS` or
        `MAX_HELD` (or meets a tag naming two rules), and `OutOfWork` when `work`, shared by several
        draws, is spent. A rule that is not there is written ``((name))``, as Tracery writes it."""
        return self.draw(rng, rule, work=work).text

    def draw(self, rng: random.Random, rule: str = "#" + ORIGIN + "#", *, work: Optional[Work] = None) -> Drawn:
        """One expansion of `rule`, as `expand`, with the slips Tracery ran through that show in
        it (a rule that is not there, an unknown modifier, a lone ``#``)."""
        expansion = _Expansion(self, rng, work or Work(MAX_CHARACTERS, MAX_STEPS))
        text = _unescape(expansion.rule(rule, 0))
        return Drawn(text, tuple(expansion.slips))

    def problems(self) -> List[GrammarProblem]:
        """What is wrong with the grammar, each with its rule's line. What no expansion can run
        through: no origin, a tag naming two rules, brackets nested past `MAX_DEPTH`. What Tracery
        runs through, `tolerated`, each saying what the post shows: a rule that is used but missing
        (and never set by an action), an empty rule, an unknown modifier, a # or [ without its
        pair, an empty tag. A text is read once for each level of brackets it nests (`MAX_DEPTH` at
        most), so the walk takes time in proportion to the file."""
        found: List[GrammarProblem] = []
        if ORIGIN not in self.rules:
            found.append(GrammarProblem(0, f'has no "{ORIGIN}" rule: add one, e.g. "{ORIGIN}": ["#greeting#, world"]'))
        used: Dict[str, str] = {}  # each rule used, and the first rule that uses it
        set_by_actions: Set[str] = set()
        for name, texts in self.rules.items():
            if not texts:
                found.append(self._at(name, f'rule "{name}" {_EMPTY}', tolerated=True))
            for text in texts:
                for problem, tolerated in _walk(text, used, set_by_actions, name):
                    found.append(self._at(name, f'rule "{name}" {problem}', tolerated=tolerated))
        for symbol, user in used.items():
            if symbol not in self.rules and symbol not in set_by_actions:
                found.append(self._at(user, f'rule "{user}" {_missing(symbol)}', tolerated=True))
        return sorted(found, key=lambda problem: problem.lineno)

    def _at(self, name: str, message: str, *, tolerated: bool = False) -> GrammarProblem:
        return GrammarProblem(self.lines.get(name, 0), message, tolerated)


_EMPTY = 'is empty: Tracery writes nothing for it; give it a text ("" if nothing is meant)'


def _missing(symbol: str) -> str:
    return f'uses #{symbol}#, which is not there: Tracery writes (({symbol})) in the post; add a rule "{symbol}"'


def _unknown(modifier: str) -> str:
    return (
        f"uses the modifier .{modifier}, which Tracery does not have: Tracery writes ((.{modifier})) after the "
        f"text; use one of {', '.join(MODIFIERS)}"
    )


_TRAILING_BACKSLASH = "a backslash at its end"
_SLIP_FIXES = {
    _TRAILING_BACKSLASH: "a backslash keeps the character after it, and there is none: Tracery drops the text from "
    "the last #tag# or bracket to it; remove it (write \\\\\\\\ in the file for a \\ the post shows)",
    "a # without its closing #": "write \\\\# in the file for a # the post shows",
    "a [ without its ]": "pair the brackets, or write \\\\[ in the file for a [ the post shows",
    "a ] without its [": "pair the brackets, or write \\\\] in the file for a ] the post shows",
    "an empty tag ##": f"Tracery writes (({_UNNAMED})) there: write \\\\#\\\\# in the file for ## the post shows",
    "an empty action []": "it does nothing: take it out",
}


def _as_shown(text: str) -> str:
    """`text` as Tracery reads it with a bracket out of pair: the lone # or [ left out, the rest
    as written, for a warning to say what the post shows."""
    written = {_PLAIN: "{}", _TAG: "#{}#", _ACTION: "[{}]"}
    return "".join(written[kind].format(raw) for kind, raw in _scan(text) if kind != _ERROR)


def _walk(text: str, used: Dict[str, str], set_by_actions: Set[str], rule: str) -> Iterator[Tuple[str, bool]]:
    """The problems in one text of `rule` (each with whether Tracery runs through it), noting the
    rules it uses and those its actions set. The parts of a text nested past `MAX_DEPTH` are not
    read (no expansion could reach them), so a text is read at most `MAX_DEPTH` times over and the
    walk never goes deeper than that."""
    nested = False  # past MAX_DEPTH: what follows is not read again inside
    for kind, raw in _scan(text):
        if kind == _ERROR:
            nested = nested or raw == _NESTED
            if raw == _NESTED:
                yield f"has {raw} in {_excerpt(text)}: no expansion can reach its end", False
            elif raw.startswith("an empty") or raw == _TRAILING_BACKSLASH:
                yield f"has {raw} in {_excerpt(text)}: {_SLIP_FIXES[raw]}", True
            else:
                shown = _excerpt(_as_shown(text))
                yield (
                    f"has {raw} in {_excerpt(text)}: Tracery leaves it out, the post shows {shown}; {_SLIP_FIXES[raw]}",
                    True,
                )
        if kind in (_PLAIN, _ERROR) or nested:
            continue
        actions = [raw] if kind == _ACTION else []
        if kind == _TAG:
            try:
                tag = _tag(raw)
            except ValueError as exc:
                yield (
                    f"has {exc}: Tracery stops with an error there; write \\\\# in the file for a # the post shows",
                    False,
                )
                continue
            actions = list(tag.actions)
            if tag.symbol:
                used.setdefault(tag.symbol, rule)
            elif tag.symbol is None and raw:
                yield f"has the tag #{raw}#, which names no rule: Tracery writes (({_UNNAMED})) there", True
            for mod, _params in tag.modifiers:
                if mod not in MODIFIERS:
                    yield _unknown(mod), True
        for action in actions:
            target, what, pushed = _action(action)
            if what == "expand":
                yield from _walk(target, used, set_by_actions, rule)
            elif what == "push":
                set_by_actions.add(target)
                for part in pushed.split(","):
                    yield from _walk(part, used, set_by_actions, rule)


def _excerpt(text: str, most: int = 80) -> str:
    """A text as JSON writes it, cut short: a problem names a long text without repeating it."""
    shown = json.dumps(text[:most], ensure_ascii=False)
    return shown if len(text) <= most else shown[:-1] + '..." (' + f"{len(text):,} characters)"


class _Expansion:
    """One expansion: the rules actions have set so far over the grammar's, the tags it has used,
    the characters it has read and made, and the rules it is inside (named if a bound is passed)."""

    def __init__(self, grammar: Grammar, rng: random.Random, work: Work) -> None:
        self.grammar = grammar
        self.rng = rng
        self.work = work
        self.set: Dict[str, List[Tuple[str, ...]]] = {}  # each rule's texts set by actions, last on top
        self.undone: Set[str] = set()  # grammar rules that a POP took away
        self.held = 0  # rules set by actions and not yet undone
        self.tags = 0
        self.made = 0  # characters read and made
        self.taken = 0  # steps
        self.within: List[str] = []
        self.slips: List[str] = []  # what Tracery ran through, each once, in the order met

    def rule(self, text: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise TooDeep(f"more than {MAX_DEPTH} rules or actions inside each other")
        self.spend(len(text) + 1, text.count("\\"))  # read once (and one more, so nothing is free)
        made = "".join(self.section(kind, raw, depth) for kind, raw in _scan(text) if self.readable(kind, raw))
        self.spend(len(made))
        return made

    def readable(self, kind: int, raw: str) -> bool:
        """Whether a piece of a text is to be expanded: a problem with its brackets is not, and
        brackets nested past `MAX_DEPTH` can never be (nor read again at every level below)."""
        if kind == _ERROR and raw == _NESTED:
            raise self.failed(f"meets {_NESTED}", "no expansion can reach its end: take some brackets out")
        if kind == _ERROR:
            self.slip(f"has {raw}: " + ("Tracery leaves it out" if raw.startswith("a ") else "it shows nothing"))
        return kind != _ERROR

    def section(self, kind: int, raw: str, depth: int) -> str:
        if kind == _PLAIN:
            return raw
        if kind == _ACTION:
            self.act(raw, depth)
            return ""
        self.tags += 1
        self.spend(0, 1)
        if depth >= MAX_DEPTH or self.tags > MAX_TAGS:
            raise TooDeep(f"more than {MAX_DEPTH} rules inside each other or {MAX_TAGS} in one post")
        try:
            tag = _tag(raw)
        except ValueError as exc:
            raise self.error(str(exc)) from None
        undo = [_action(action)[0] for action in tag.actions if _action(action)[1] == "push"]
        for action in tag.actions:
            self.act(action, depth)
        symbol = _UNNAMED if tag.symbol is None else tag.symbol
        chosen = self.choose(symbol)
        self.within.append(symbol)
        text = self.rule(chosen, depth + 1)
        for name, params in tag.modifiers:
            if name not in MODIFIERS:  # as Tracery: the text stays, and says so
                self.within.pop()
                self.slip(f"uses the modifier .{name}, which Tracery does not have: the post shows ((.{name}))")
                self.within.append(symbol)
                self.spend(len(name) + 5, 1)
                text += f"((.{name}))"
                continue
            self.spend(_longest(name, text, params), 1)  # before it is made: .replace can multiply a text
            text = MODIFIERS[name](text, *params)
        for name in undo:  # a tag's own actions hold only while it expands
            self.pop(name)
        self.within.pop()
        return text

    def choose(self, symbol: str) -> str:
        """One of the rule's texts; as Tracery, ``((name))`` for a rule that is not there (or was
        set by an action that has ended) and nothing for an empty one."""
        stack = self.set.get(symbol)
        texts = stack[-1] if stack else self.grammar.rules.get(symbol) if symbol not in self.undone else None
        if texts is None:
            self.slip(f"uses #{symbol}#, which is not there: the post shows (({symbol}))")
            return f"(({symbol}))"
        if not texts:  # often meant so (a rule for "no ending"): `problems` says it, a run need not
            return ""
        return self.rng.choice(texts)

    def slip(self, what: str) -> None:
        """Note what Tracery runs through in the rule being expanded (once), for the run to warn."""
        names = [name for name in self.within if name] or [ORIGIN]
        said = f'rule "{names[-1]}" {what}'
        if said not in self.slips:
            self.slips.append(said)

    def act(self, action: str, depth: int) -> None:
        self.spend(0, 1)
        target, kind, pushed = _action(action)
        if kind == "expand":
            self.rule(target, depth + 1)  # [#setup#]: expanded for the actions inside it
        elif kind == "pop":
            self.pop(target)
        else:
            self.within.append(target)
            texts = tuple(self.rule(part, depth + 1) for part in pushed.split(","))
            self.within.pop()
            self.held += 1
            if self.held > MAX_HELD:
                raise self.failed(f"holds more than {MAX_HELD:,} rules set by actions at once", _BLOWN_UP)
            self.set.setdefault(target, []).append(texts)

    def pop(self, name: str) -> None:
        stack = self.set.get(name)
        if stack:
            stack.pop()
            self.held -= 1
        elif name in self.grammar.rules:
            self.undone.add(name)  # as the reference, a POP with nothing set takes the grammar's rule away

    def spend(self, characters: int, steps: int = 0) -> None:
        """Count characters read or made and steps taken: past `MAX_CHARACTERS` or `MAX_STEPS`
        the grammar is at fault; past the shared `Work`, this run has drawn enough."""
        self.made += characters
        self.taken += steps
        self.work.made += characters
        self.work.taken += steps
        if self.made > MAX_CHARACTERS:
            said = f"read and made more than {MAX_CHARACTERS:,} characters, far more than any post"
            raise self.failed(said, _BLOWN_UP)
        if self.taken > MAX_STEPS:
            said = f"took more than {MAX_STEPS:,} steps (tags, actions, modifiers, backslashes), far more than any post"
            raise self.failed(said, _BLOWN_UP)
        if self.work.made > self.work.characters or self.work.taken > self.work.steps:
            raise OutOfWork(f"{self.work.made:,} characters and {self.work.taken:,} steps")

    def failed(self, what: str, fix: str) -> TweetFileError:
        """The data error for a grammar past a bound, naming the rule being expanded and the line
        of the grammar's rule it is in."""
        names = [name for name in self.within if name] or [ORIGIN]
        inside = next((name for name in reversed(names) if name in self.grammar.lines), ORIGIN)
        where = f"{self.grammar.path or 'the grammar'} line {self.grammar.lines.get(inside, 1)}"
        name = names[-1]
        whose = f'rule "{name}"' if name == inside else f'rule "{name}" (set by an action in rule "{inside}")'
        return TweetFileError(f"{where}: an expansion of {whose} {what}: {fix}")

    def error(self, what: str) -> TweetFileError:
        return self.failed(what, "run `bot.py check` to see every problem")


def _longest(modifier: str, text: str, params: Tuple[str, ...]) -> int:
    """The most characters `modifier` can make of `text`: .replace(a,b) adds len(b) - len(a) for
    each a; the others change a character into three at most (an upper-case ﬃ is FFI) and add an
    ending ("es", "ied", "an ")."""
    if modifier == "replace" and len(params) >= 2:
        return len(text) + text.count(params[0]) * max(0, len(params[1]) - len(params[0]))
    return 3 * len(text) + 3


# -- reading the file ----------------------------------------------------------------------------------


def read_grammar(path: Path) -> Grammar:
    """Read a grammar file. Raises `TweetFileError` (65) naming the line if it is not a JSON object
    of rules (each a text or a list of texts)."""
    data = read_setting_file(
        path, what="tweets file", setting="TWEETS_FILE", otherwise="set TWEETS_FILE", error=TweetFileError
    )
    return parse_grammar(data, path)


def _json_problem(text: str, exc: json.JSONDecodeError) -> Tuple[int, int, str]:
    """Where `text` stops being JSON, and why, the same on every Python: a comma before `}` or `]`
    (the commonest slip in a hand-written grammar) is named at the comma, as Python 3.13 does; older
    ones point after it and ask for a name or a value."""
    before = text[: exc.pos].rstrip()
    closing = text[exc.pos : exc.pos + 1]
    # After a comma, an object wants a name and an array a value: the bracket must close that one.
    what = {("}", "Expecting property name enclosed in double quotes"): "object", ("]", "Expecting value"): "array"}
    if before.endswith(",") and (closing, exc.msg) in what:
        comma = len(before) - 1
        line = text.count("\n", 0, comma) + 1
        return (
            line,
            comma - text.rfind("\n", 0, comma),
            f"Illegal trailing comma before end of {what[closing, exc.msg]}",
        )
    return exc.lineno, exc.colno, exc.msg


def parse_grammar(data: bytes, path: Path) -> Grammar:
    """A grammar from a file's bytes (`path` names it in messages), in time in proportion to them."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = data[: exc.start].count(b"\n") + 1
        raise TweetFileError(f"{path} line {lineno} is not UTF-8 text: save the file as UTF-8") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        lineno, colno, problem = _json_problem(text, exc)
        raise TweetFileError(
            f"{path} line {lineno} column {colno} is not valid JSON ({problem}): a Tracery grammar "
            'is one {...} of rules, e.g. {"origin": ["#greeting#, world"], "greeting": ["hello", "hi"]}'
        ) from None
    except RecursionError:  # Python's reader gives up on lists in lists some thousand deep
        raise TweetFileError(
            f"{path} line {_too_nested(text)} holds lists or objects inside each other far too deep for a "
            'grammar: a rule is a text or a list of texts, e.g. "origin": ["one", "two"]'
        ) from None
    if not isinstance(raw, dict):
        raise TweetFileError(
            f'{path} is not a Tracery grammar: it must be one {{...}} of rules, e.g. {{"origin": ["hello"]}}'
        )
    rules: Dict[str, Tuple[str, ...]] = {}
    lines = _key_lines(text)
    escapes = _SURROGATE_ESCAPE.search(text) is not None  # else no text can hold a surrogate
    for name, value in raw.items():
        texts = (value,) if isinstance(value, str) else tuple(value) if isinstance(value, list) else None
        if texts is None or not all(isinstance(each, str) for each in texts):
            raise TweetFileError(
                f'{path} line {lines.get(name, 1)}: rule {_shown(name)} must be a text or a list of texts, e.g. ["one", "two"]'
            )
        if escapes and any(_SURROGATE.search(each) for each in (name, *texts)):
            raise TweetFileError(
                f"{path} line {lines.get(name, 1)}: rule {_shown(name)} holds a lone surrogate (an escape "
                "such as \\ud800, half of a UTF-16 pair, which is no character): write the character "
                "itself, or both halves of its pair"
            )
        rules[name] = texts
    return Grammar(rules, lines, path)


_SURROGATE = re.compile(r"[\ud800-\udfff]")  # JSON's \uXXXX escapes can make them; UTF-8 cannot
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_JSON_MARK = re.compile(r'["\[\]{}]')
_COLON = re.compile(r"\s*:")


def _outline(text: str) -> Iterator[Tuple[int, int, Optional[str]]]:
    """Each bracket and each name of an object in a JSON text, in order and in one pass: (its
    position, the depth after it, the name or None). Strings are read whole by the json module's
    own reader, so a bracket or a quote in one is text; the outline stops where the JSON does."""
    depth, at = 0, 0
    while True:
        found = _JSON_MARK.search(text, at)
        if not found:
            return
        at = found.start()
        if text[at] == '"':
            try:
                value, end = scanstring(text, at + 1)
            except ValueError:  # a string that does not end: nothing after it can be told
                return
            if _COLON.match(text, end):
                yield at, depth, value
            at = end
        else:
            depth += 1 if text[at] in "[{" else -1
            yield at, depth, None
            at += 1


def _key_lines(text: str) -> Dict[str, int]:
    """The line each rule's name is written on (its first "name": at the top of the file), in one
    pass over the file: looking each name up from the start took minutes for 100,000 rules."""
    lines: Dict[str, int] = {}
    line, counted = 1, 0
    for position, depth, name in _outline(text):
        if name is not None and depth == 1:
            line += text.count("\n", counted, position)
            counted = position
            lines.setdefault(name, line)
    return lines


def _too_nested(text: str, most: int = 100) -> int:
    """The line where `text` first holds more than `most` lists or objects inside each other."""
    for position, depth, _name in _outline(text):
        if depth > most:
            return text.count("\n", 0, position) + 1
    return 1


def _shown(name: str) -> str:
    """A rule's name in a message: quoted, and printable even if it holds a lone surrogate."""
    return json.dumps(name, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")
