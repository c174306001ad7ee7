"""The shuffle bag: the texts already posted this round, so every line goes once before any line
comes round again."""

from __future__ import annotations

from typing import Set

from .database import Database

__all__ = ["Bag"]


class Bag(Database):
    """The bag table. `finish_attempt(..., mark_used=True)` fills it in the same transaction as the post."""

    def used_texts(self) -> Set[str]:
        """Texts already posted in the current round."""
        return {row[0] for row in self._read("SELECT text FROM bag")}

    def start_new_round(self) -> None:
        """Every line has been posted: empty the bag so all lines are available again."""
        with self._write() as conn:
            conn.execute("DELETE FROM bag")
