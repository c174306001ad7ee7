"""Threads: a line too long for a network (with LONG_LINES=thread) goes there as a post and its
replies, cut at sentence, then word, boundaries, each part within the network's own limit::

    parts = cut(text, lambda part: network.measure(part).fits, numbers=True)
    # ['First sentence. Second one. 1/2', 'Third sentence. 2/2']

Which part a thread sends next is decided from the history alone (`next_part`), so that a thread
goes out in order or not at all: each part answers the part before it, confirmed by the network.
A part that may have been posted (uncertain, interrupted) is never sent again, and the parts after
it wait until a later run has looked it up (found: they answer it; not found: it is sent again);
one that certainly failed for a passing reason is sent again by a later run; one the network
refused (as a duplicate or otherwise) ends the thread. A thread never has more parts than
`most_parts` allows. The `Delivery` (delivery.py) records and sends the parts, as it does every
post, each with its own text and price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, List, Optional, Sequence, Tuple, Union

from ..networks import Network
from ..state.outcomes import Outcome

__all__ = [
    "MAX_THREAD_PARTS",
    "GiveUp",
    "PartState",
    "Wait",
    "cut",
    "next_part",
    "parts_as_sent",
    "parts_for",
    "thread_cost",
    "thread_price",
    "too_many_parts",
]

# The most parts a thread may have on any network, whatever MAX_POSTS_PER_DAY allows: X's own
# composer stops at 25. A line that needs more is too long for that network.
MAX_THREAD_PARTS = 25

# Where a sentence ends: after . ! ? or … and the space that follows, after the full stops of
# Chinese and Japanese (。！？, written without a space), or at a line break.
_BETWEEN_SENTENCES = re.compile(r"((?<=[.!?…])[ \t]+|(?<=[。！？])[ \t]*|[ \t]*\n+[ \t]*)")


def cut(text: str, fits: Callable[[str], bool], numbers: bool = False, most: Optional[int] = None) -> List[str]:
    """`text` cut into parts that each `fits`, at sentence boundaries where it can, else at word
    boundaries, else (one word longer than the limit) between characters. With `numbers`, each
    part ends with " i/n", counted in its length. With `most`, cutting stops once there are more
    parts than that: a text that long is not sent as a thread, and cutting all of a 100 KB line
    would take a minute on X's count."""
    if not numbers:
        return _pack(_words_of(text), fits, most)
    assumed = 9  # the widest number the parts were fitted for: 9/9, then 99/99 ...
    while True:
        width = f" {assumed}/{assumed}"
        stop = assumed if most is None else min(assumed, most)
        parts = _pack(_words_of(text), lambda part, width=width: fits(part + width), stop)
        if len(parts) <= assumed or (most is not None and len(parts) > most):
            return [f"{part} {index}/{len(parts)}" for index, part in enumerate(parts, start=1)]
        assumed = assumed * 10 + 9


@dataclass(frozen=True)
class _Word:
    """A word of the text to cut: what joins it to the word before (" ", a line break, or nothing
    after 。) and whether a sentence begins with it (a part is best cut there)."""

    text: str
    join: str = " "
    starts_sentence: bool = False


def _words_of(text: str) -> List[_Word]:
    """The text's words, in order, each with its join and whether it begins a sentence."""
    pieces = _BETWEEN_SENTENCES.split(text.strip())
    joins = ["\n" if "\n" in sep else " " if sep else "" for sep in pieces[1::2]]  # 。 needs no space
    words: List[_Word] = []
    for index, sentence in enumerate(pieces[0::2]):
        for number, word in enumerate(sentence.split()):
            if number:
                words.append(_Word(word))
            else:  # a sentence's first word joins the sentence before as it was written
                words.append(_Word(word, joins[index - 1] if index else "", starts_sentence=bool(words)))
    return words


def _joined(words: Sequence[_Word]) -> str:
    return "".join(word.join + word.text if index else word.text for index, word in enumerate(words))


def _pack(words: List[_Word], fits: Callable[[str], bool], most: Optional[int]) -> List[str]:
    """As many words in each part as fit, cut where the last sentence that fits ends, else after
    the last word that fits, else (a word longer than a part) between characters. The words a part
    can hold are found by galloping then halving, so a part costs a dozen measures, not one per
    word (X's count takes about 2 ms a part)."""
    parts: List[str] = []
    start = 0
    while start < len(words) and (most is None or len(parts) <= most):
        if not fits(words[start].text):  # one word longer than a part: cut between characters
            pieces = _characters(words[start].text, fits)
            parts += pieces[:-1]
            words[start] = _Word(pieces[-1])  # the rest of the word begins the next part
            continue
        end = _most_words(words, start, fits)
        if end < len(words):  # not the last part: end it where a sentence does, if one does
            end = max((at for at in range(start + 1, end + 1) if words[at].starts_sentence), default=end)
        parts.append(_joined(words[start:end]))
        start = end
    return parts


def _most_words(words: Sequence[_Word], start: int, fits: Callable[[str], bool]) -> int:
    """The largest `end` such that words[start:end] fit in one part (words[start] alone does)."""
    good, step = start + 1, 1
    while good + step <= len(words) and fits(_joined(words[start : good + step])):
        good += step
        step *= 2
    bad = min(good + step, len(words) + 1)  # words[start:bad] does not fit, or runs past the end
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(_joined(words[start:middle])):
            good = middle
        else:
            bad = middle
    return good


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
    """The thread ends here: the network refused part `part` (as a duplicate, or for a reason
    sending again will not fix), or answered it without an id to reply to."""

    part: int
    why: str


@dataclass(frozen=True)
class Wait:
    """Nothing can be sent now: part `part` may be there (its outcome is not known), and the next
    part must answer it. A later run looks it up first (settle.py)."""

    part: int


# The outcomes after which a part may be on the network without the bot knowing its id.
_NOT_KNOWN = (Outcome.UNCERTAIN, Outcome.INTERRUPTED, Outcome.PENDING)


def next_part(parts: Sequence[PartState]) -> Union[None, GiveUp, Wait, Tuple[PartState, Optional[str]]]:
    """The part to send next and the post it replies to (the part before it, which the network
    confirmed; None: it starts the thread); None when nothing is left to send. A part that may be
    there already is never sent again, and nothing after it is sent until it is known: a thread
    goes out in order, each part answering the one before."""
    reply_to: Optional[str] = None
    for state in parts:
        if state.outcome in (None, Outcome.TEMPORARY):
            return state, reply_to
        if state.outcome in _NOT_KNOWN:
            return Wait(state.part)
        if state.outcome != Outcome.POSTED:  # failed, duplicate, too long: nothing to answer
            return GiveUp(state.part, str(state.outcome))
        if not state.post_id:
            return GiveUp(state.part, "posted, but no id to reply to")
        reply_to = state.post_id
    return None


def thread_price(network: Network, parts: Sequence[str]) -> Optional[float]:
    """What the parts cost together on `network`, each priced as the network prices it (X: more
    for a part with a link); None: posting there costs nothing."""
    prices = [network.price(network.measure(part)) for part in parts]
    return sum(price or 0.0 for price in prices) if any(price is not None for price in prices) else None


def thread_cost(network: Network, parts: Sequence[str]) -> str:
    """A thread in words for a dry run and `check`: its posts and, where posting costs, the sum."""
    price = thread_price(network, parts)
    said = f"a thread of {len(parts)} posts"
    return said + (f", about ${price:.3f} on {network.label}" if price is not None else "")


def too_many_parts(parts: int, cap: Optional[int], room: Optional[int] = None) -> Optional[str]:
    """Why a thread of `parts` posts may not go: more than any thread may have (MAX_THREAD_PARTS),
    more than MAX_POSTS_PER_DAY (`cap`) allows in 24 hours, or more than the `room` the cap
    leaves now (each part is a post). None: it may go."""
    if parts > MAX_THREAD_PARTS:  # cutting stopped there (`parts_for`)
        return f"a thread of more than {MAX_THREAD_PARTS} posts, the most a thread may have"
    if cap is not None and parts > cap:
        return f"a thread of {parts} posts, more than MAX_POSTS_PER_DAY={cap} allows in 24 hours"
    if room is not None and parts > room:
        left = "no more posts" if room <= 0 else f"room for {room} more"
        return f"a thread of {parts} posts, and MAX_POSTS_PER_DAY leaves {left} in the last 24 hours"
    return None


def parts_for(text: str, network: Network, numbers: bool) -> List[str]:
    """`text` cut for `network` by its own count (X weighted, Bluesky graphemes, Mastodon
    characters); more than MAX_THREAD_PARTS parts means a text too long for a thread, and cutting
    stops there."""
    return cut(text, lambda part: network.measure(part).fits, numbers, most=MAX_THREAD_PARTS)


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
