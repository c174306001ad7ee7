"""What a progress reporter works with, apart from the reporter itself: the post templates, the
`Report` it returns for each call, a pending update, the status-line protocol, and `NullReporter`
for a job run without progress posts. Kept apart from reporter.py (which re-exports these names) so
that module holds only the decisions about when and where to post."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Protocol

if TYPE_CHECKING:
    from ..pictures.draw import Picture

__all__ = ["DEFAULT_TEMPLATES", "NullReporter", "PictureMaker", "Report", "Status", "Templates", "Update"]


@dataclass(frozen=True)
class Templates:
    """The post texts, as `str.format` templates over `BASE_FIELDS` and the job's fields."""

    progress: str = "{name}: {message} ({elapsed})"
    done: str = "{name} finished in {elapsed}: {message}"
    failed: str = "{name} failed after {elapsed}: {message}"

    def merged(self, progress: str = "", done: str = "", failed: str = "") -> Templates:
        """These templates with the non-empty ones given replacing them (config, then flags)."""
        return Templates(progress or self.progress, done or self.done, failed or self.failed)


DEFAULT_TEMPLATES = Templates()


@dataclass(frozen=True)
class Report:
    """What the reporter did with an update: the job may ignore it; tests and the status line read it."""

    action: str  # posted | uncertain | waiting | unchanged | capped | over_budget | failed | idle | finished
    reason: str
    text: Optional[str] = None
    post_id: Optional[str] = None


# A job's picture, drawn only when a post will carry it (drawing imports Pillow and takes time).
PictureMaker = Callable[[], Optional["Picture"]]


@dataclass(frozen=True)
class Update:
    message: str
    fields: Mapping[str, object]
    milestone: bool
    picture: Optional[PictureMaker] = None

    @property
    def news(self) -> str:
        """What makes two updates the same news (elapsed time does not)."""
        return json.dumps([self.message, {k: str(v) for k, v in sorted(self.fields.items())}], ensure_ascii=False)


class Status(Protocol):
    """Where the reporter shows its live one-line state (see statusline.py)."""

    def show(self, text: str) -> None: ...


class NullReporter:
    """The reporter for a job run without progress posts: takes every call, does nothing."""

    finished = False
    wants_pictures = False  # no posts: nothing to draw for

    def opening_picture(self, picture: object) -> None:
        pass

    def update(self, message: str, *, milestone: bool = False, **fields: object) -> Report:
        return Report("idle", "progress posts are off")

    def tick(self) -> Report:
        return Report("idle", "progress posts are off")

    def done(self, message: str = "", **fields: object) -> Report:
        return Report("idle", "progress posts are off")

    def failed(self, error: object, *, exit_status: int = 1, **fields: object) -> Report:
        return Report("idle", "progress posts are off")

    def stop(self) -> None:
        pass

    def __enter__(self) -> NullReporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass
