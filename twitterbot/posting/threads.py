"""Threads: a line too long for a network (with LONG_LINES=thread) goes there as a post and its
replies, cut at sentence, then word, boundaries, each part within the network's own limit::

    parts = cut(text, lambda part: network.measure(part).fits, numbers=True)
    # ['First sentence. Second one. 1/2', 'Third sentence. 2/2']

Which part a thread sends next is decided from the history alone (`next_part`): a part that may
have been posted (uncertain, interrupted, already there) is never sent again; one that certainly
failed for a passing reason is sent by a later run; one the network refused ends the thread. The
`Delivery` (delivery.py) records and sends the parts, as it does every post.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, List, Optional, Sequence, Tuple, Union

from ..networks import Network
from ..state.outcomes import Outcome

__all__ = ["GiveUp", "PartState", "cut", "next_part", "parts_as_sent", "parts_for", "thread_cost"]

# Where a sentence ends: after . ! ? or … and the space that follows, or at a line break.
_BETWEEN_SENTENCES = re.compile(r"((?<=[.!?…])[ \t]+|[ \t]*\n+[ \t]*)")


def cut(text: str, fits: Callable[[str], bool], numbers: bool = False) -> List[str]:
    """`text` cut into parts that each `fits`, at sentence boundaries where it can, else at word
    boundaries, else (one word longer than the limit) between characters. With `numbers`, each
    part ends with " i/n", counted in its length."""
    if not numbers:
        return _greedy(text, fits)
    assumed = 9  # the widest number the parts were fitted for: 9/9, then 99/99 ...
    while True:
        width = f" {assumed}/{assumed}"
        parts = _greedy(text, lambda part, width=width: fits(part + width))
        if len(parts) <= assumed:
            return [f"{part} {index}/{len(parts)}" for index, part in enumerate(parts, start=1)]
        assumed = assumed * 10 + 9


def _greedy(text: str, fits: Callable[[str], bool]) -> List[str]:
    """As many whole sentences in each part as fit, in order."""
    pieces = _BETWEEN_SENTENCES.split(text.strip())
    sentences = pieces[0::2]
    joins = ["\n" if "\n" in sep else " " for sep in pieces[1::2]]
    parts: List[str] = []
    current = ""
    for index, sentence in enumerate(sentences):
        if not sentence:
            continue
        join = joins[index - 1] if index and current else ""
        if current and fits(current + join + sentence):
            current += join + sentence
            continue
        if current:
            parts.append(current)
        current = ""
        if fits(sentence):
            current = sentence
            continue
        words, current = _words(sentence, fits)
        parts += words
    if current:
        parts.append(current)
    return parts


def _words(sentence: str, fits: Callable[[str], bool]) -> Tuple[List[str], str]:
    """A sentence too long for one part, cut between words: the full parts, and the last part's
    start (more may join it)."""
    parts: List[str] = []
    current = ""
    for word in sentence.split():
        if current and fits(current + " " + word):
            current += " " + word
            continue
        if current:
            parts.append(current)
        if fits(word):
            current = word
            continue
        pieces = _characters(word, fits)
        parts += pieces[:-1]
        current = pieces[-1]
    return parts, current


def _characters(word: str, fits: Callable[[str], bool]) -> List[str]:
    """A word longer than a part, cut between characters (a link this long cannot be kept whole):
    each piece the longest start of what is left that fits, found by halving (a count grows with
    the text), so a word of many thousand characters is cut in a few dozen measures a piece
    instead of one measure per character."""
    pieces: List[str] = []
    while word:
        size = _longest_fitting(word, fits)
        pieces.append(word[:size])
        word = word[size:]
    return pieces


def _longest_fitting(word: str, fits: Callable[[str], bool]) -> int:
    """The length of the longest start of `word` that fits (1 if none does: a part is never empty)."""
    if fits(word):
        return len(word)
    low, high = 1, len(word) - 1  # word[:low] is taken even if it does not fit; word[:high + 1] does not
    while low < high:
        middle = (low + high + 1) // 2
        if fits(word[:middle]):
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True)
class PartState:
    """One part of a thread as the history has it: its number, its text, the outcome of its last
    attempt (None: never sent) and its post's id when the network answered."""

    part: int
    text: str
    outcome: Optional[str] = None
    post_id: Optional[str] = None


@dataclass(frozen=True)
class GiveUp:
    """The thread ends here: the network refused part `part` for a reason sending again will not fix."""

    part: int


def next_part(parts: Sequence[PartState]) -> Union[None, GiveUp, Tuple[PartState, Optional[str]]]:
    """The part to send next and the post it replies to (the last part the network confirmed;
    None: it starts the thread); None when nothing is left to send. A part that is, or may be,
    there already is passed over, never sent again."""
    reply_to: Optional[str] = None
    for state in parts:
        if state.outcome in (None, Outcome.TEMPORARY):
            return state, reply_to
        if state.outcome == Outcome.POSTED:
            reply_to = state.post_id or reply_to
        elif state.outcome == Outcome.FAILED:
            return GiveUp(state.part)
    return None


def thread_cost(network: Network, parts: Sequence[str]) -> str:
    """A thread in words for a dry run and `check`: its posts and, where posting costs, the sum."""
    prices = [network.price(network.measure(part)) for part in parts]
    said = f"a thread of {len(parts)} posts"
    if any(price is not None for price in prices):
        said += f", about ${sum(price or 0.0 for price in prices):.3f} on {network.label}"
    return said


def parts_for(text: str, network: Network, numbers: bool) -> List[str]:
    """`text` cut for `network` by its own count (X weighted, Bluesky graphemes, Mastodon characters)."""
    return cut(text, lambda part: network.measure(part).fits, numbers)


def parts_as_sent(
    parts: Sequence[Tuple[int, str, Optional[str], Optional[str]]], pending: Optional[int]
) -> List[PartState]:
    """The thread's parts as the history has them, but with `pending` (part 1's attempt, recorded
    with the thread by this run and not sent yet) as a part still to send: the history alone would
    take a pending attempt for one a stopped run may have sent, and pass over it."""
    states = [PartState(*part) for part in parts]
    if pending is not None and states and states[0].outcome == Outcome.PENDING:
        states[0] = replace(states[0], outcome=None)
    return states
