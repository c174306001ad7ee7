"""A cache of measured lengths: each tweets-file line's length and URLs as a network counts them,
so a scheduled run need not import the slow length rule. Only a cache: its tables are made by the
first write, and losing them loses nothing."""

from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Set, Tuple

from .database import Database

__all__ = ["LengthCache"]

_CREATE_LINE_FILES = (
    "CREATE TABLE IF NOT EXISTS line_files (kind TEXT PRIMARY KEY, version TEXT NOT NULL, digest TEXT NOT NULL)"
)


class LengthCache(Database):
    """The line_lengths and line_files tables, by `kind` (a network's length rule) and its version."""

    def measured_lengths(
        self, kind: str, version: str, texts: Optional[Iterable[str]] = None
    ) -> Dict[str, Tuple[int, Tuple[str, ...]]]:
        """Each text's length and URLs as `remember_lengths` kept them for `kind` and `version`,
        by exact text: of every text kept, or of `texts` only. Only a cache (the tweets file's
        lines, so measuring needs no slow import): its table is made by the first write, and
        losing it loses nothing."""
        if not self._has_table("line_lengths"):
            return {}
        sql = "SELECT text, length, urls FROM line_lengths WHERE kind = ? AND version = ?"
        if texts is None:
            rows = self._read(sql, (kind, version))
        else:
            rows = [row for text in texts for row in self._read(sql + " AND text = ?", (kind, version, text))]
        return {text: (length, tuple(urls.split()) if urls else ()) for text, length, urls in rows}

    def measured_texts(self, kind: str, version: str, longest: int) -> Set[str]:
        """The texts with a length kept for `kind` and `version` of at most `longest`: checking that
        a file's lines are all known reads only their texts (a scheduled run looks up one length)."""
        if not self._has_table("line_lengths"):
            return set()
        sql = "SELECT text FROM line_lengths WHERE kind = ? AND version = ? AND length <= ?"
        return {text for (text,) in self._read(sql, (kind, version, longest))}

    def measured_file(self, kind: str, version: str) -> Optional[str]:
        """The digest `remember_measured_file` kept for `kind` and `version`: of a file whose every
        text has a length kept. None if there is none, or the lengths were replaced since."""
        if not self._has_table("line_files"):
            return None
        rows = self._read("SELECT digest FROM line_files WHERE kind = ? AND version = ?", (kind, version))
        return rows[0][0] if rows else None

    def remember_measured_file(self, kind: str, version: str, digest: str) -> None:
        """Keep `digest`, of a file whose every text has a length kept for `kind` and `version`: the
        next run that reads the same file need not check its texts one by one."""
        with self._write() as conn:
            conn.execute(_CREATE_LINE_FILES)
            conn.execute(
                "INSERT OR REPLACE INTO line_files (kind, version, digest) VALUES (?, ?, ?)", (kind, version, digest)
            )

    def _has_table(self, name: str) -> bool:
        return bool(self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def remember_lengths(self, kind: str, version: str, lengths: Mapping[str, Tuple[int, Tuple[str, ...]]]) -> None:
        """Keep `lengths` (text -> length and URLs) as the whole cache of `kind`, in place of what was there."""
        with self._write() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS line_lengths (kind TEXT NOT NULL, text TEXT NOT NULL,"
                " version TEXT NOT NULL, length INTEGER NOT NULL, urls TEXT NOT NULL, PRIMARY KEY (kind, text))"
                " WITHOUT ROWID"
            )
            conn.execute("DELETE FROM line_lengths WHERE kind = ?", (kind,))
            conn.execute(_CREATE_LINE_FILES)
            conn.execute("DELETE FROM line_files WHERE kind = ?", (kind,))  # the file it named may have lost lengths
            conn.executemany(
                "INSERT INTO line_lengths (kind, text, version, length, urls) VALUES (?, ?, ?, ?, ?)",
                [(kind, text, version, length, " ".join(urls)) for text, (length, urls) in lengths.items()],
            )
