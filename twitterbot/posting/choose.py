"""Deciding: the 1-in-N roll and the shuffle-bag pick. Pure functions over an injected random source.

The bag is the set of texts already posted this round (kept in the history store). Lines are
identified by their text, so adding, removing or reordering lines in the file just works. A pick
works on the file's plain texts (`TweetFile.texts`) and names the chosen one by its position::

    rng = random.Random(7)
    roll(4, rng)                                  # 0 means "post"
    chosen = pick(tweets.texts, used={"hello"}, last_posted="hello", rng=rng)
    tweets.line(chosen.index)                     # the chosen line, measured
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import AbstractSet, Optional, Sequence

__all__ = ["Pick", "roll", "pick", "hits"]


def roll(one_in: int, rng: random.Random) -> int:
    """Roll a fair die with `one_in` faces numbered 0 .. one_in-1; the run posts when `hits` says so."""
    return rng.randrange(one_in)


def hits(rolled: int) -> bool:
    """The one face out of N that posts. 0, so that 1-in-1 always posts."""
    return rolled == 0


@dataclass(frozen=True)
class Pick:
    index: int  # the chosen text's position in the texts picked from
    text: str
    new_round: bool  # every line had been posted, so the bag was emptied first
    left_in_round: int  # lines still unposted in this round, including the chosen one


def pick(
    texts: Sequence[str],
    *,
    used: AbstractSet[str],
    last_posted: Optional[str],
    rng: random.Random,
) -> Optional[Pick]:
    """Pick a text not yet posted this round; when none is left, start a new round.

    A new round never starts with the text posted last (when there is another choice), so the
    same line is not posted twice in a row across the round boundary. Returns None only if
    `texts` is empty.
    """
    if not texts:
        return None
    available = [index for index, text in enumerate(texts) if text not in used]
    new_round = not available
    if new_round:
        available = [index for index, text in enumerate(texts) if text != last_posted] or list(range(len(texts)))
    index = rng.choice(available)
    return Pick(index, texts[index], new_round, len(available))
