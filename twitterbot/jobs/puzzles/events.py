"""What a puzzle kind's search yields (`Progress` now and then, `Found` per solution, one
`Finished`), and the error a kind's file format raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Union

from ...errors import BotError, ExitStatus

__all__ = ["Event", "Finished", "Found", "Progress", "PuzzleFileError"]


class PuzzleFileError(BotError):
    """A puzzle file that cannot be read as its kind; the message names the file and line."""

    exit_status = ExitStatus.DATA_ERROR
    kind = "puzzle_file"


@dataclass(frozen=True)
class Progress:
    """Now and then during a search: nodes visited, solutions so far, and an estimate of the share
    of the search tree done (0..1, None when no estimate is possible). `state` is what a restarted
    search needs to resume (JSON-serialisable), or None if this kind cannot resume."""

    nodes: int
    seconds: float
    solutions: int
    done: Optional[float] = None
    state: Optional[Dict[str, Any]] = None

    @property
    def per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Found:
    """One solution, in the kind's own form (passed back to `render` and `solution_json`)."""

    solution: Any
    nodes: int
    seconds: float


@dataclass(frozen=True)
class Finished:
    """The end: how many solutions, whether the search was exhaustive, and kind-specific figures."""

    solutions: int
    complete: bool
    nodes: int
    seconds: float
    extra: Dict[str, Any] = field(default_factory=dict)


Event = Union[Progress, Found, Finished]
