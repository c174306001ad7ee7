"""The shuffle bag: the texts already posted this round, so every line goes once before any line
comes round again."""

from __future__ import annotations

from typing import Callable, Set

from .database import Database

__all__ = ["Bag", "BagContents"]


class BagContents:
    """What the bag holds, over a class's `_read(sql, params) -> rows`: the store and the status
    page's reader ask it alike."""

    _read: Callable[..., list]

    def used_texts(self) -> Set[str]:
        """Texts already posted in the current round."""
        return {row[0] for row in self._read("SELECT text FROM bag")}


class Bag(BagContents, Database):
    """The bag table. `finish_attempt(..., mark_used=True)` fills it in the same transaction as the post."""

    def start_new_round(self) -> None:
        """Every line has been posted: empty the bag so all lines are available again."""
        with self._write() as conn:
            conn.execute("DELETE FROM bag")
