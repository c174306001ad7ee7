"""Catching up: a real scheduled run first sends recent scheduled posts to the networks that
missed them for a temporary reason. Only a real run imports this module (a dry run catches
nothing up)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence, Tuple

from ..errors import PostError
from ..networks import Poster
from ..state.outcomes import Outcome
from ..state.store import HistoryStore
from .send import Sent, recorder, send_attempt
from .tweets import preview

if TYPE_CHECKING:
    from ..registry import Registry
    from .images import LineImage

log = logging.getLogger("twitterbot.posting.scheduled")  # a scheduled run's logger: its lines are the run's

# A post that reached some networks but failed for a temporary reason on another (down, rate
# limited) is sent there by the next runs, until it is this old: later, it would be old news.
CATCH_UP_WINDOW = timedelta(hours=24)


def _pictures_of(key: str, folder: Optional[Path]) -> Tuple[str, Sequence[LineImage]]:
    """A recorded post's text and pictures: a line with pictures is recorded as written."""
    if folder is None or "![" not in key:
        return key, ()
    from .images import split_images

    return split_images(key, folder)


def catch_up(
    store: HistoryStore,
    posters: Callable[[], Mapping[str, Poster]],
    *,
    run_id: int,
    clock: Callable[[], datetime],
    pictures_folder: Optional[Path] = None,
    registry: Registry,
) -> Tuple[Sent, ...]:
    """Send each recent scheduled post to the networks that missed it for a temporary reason
    (CATCH_UP_WINDOW), once each, if they are still in POST_TO. They were counted against the cap
    when first posted. A progress job's post is not caught up: its thread has moved on."""
    done: List[Sent] = []
    missing = [each for each in store.catch_ups(clock() - CATCH_UP_WINDOW, registry.names()) if each.job_id is None]
    for missed in missing:
        if missed.network not in posters():
            continue
        poster = posters()[missed.network]
        text, images = _pictures_of(missed.text, pictures_folder)
        prepared: object = []
        if images:  # prepared before the attempt is recorded, as for the first post
            from .images import poster_limits, prepared_pictures

            limits = {missed.network: poster_limits(poster, missed.network, registry)}
            prepared = prepared_pictures(images, limits, where="a caught-up post")[missed.network]
        attempt = store.begin_attempt(
            missed.text, run_id=run_id, at=clock(), source="catch_up", network=missed.network, group=missed.group
        )
        if isinstance(prepared, PostError):
            recorder(store, attempt, clock)(Outcome.FAILED, None, str(prepared), prepared.kind)
            sent = Sent(missed.network, Outcome.FAILED, error=prepared)
        else:
            sent = send_attempt(store, poster, attempt, text, fit=None, clock=clock, images=prepared, registry=registry)  # type: ignore[arg-type]
        level = logging.INFO if sent.reached else logging.WARNING
        log.log(
            level,
            "catching up on %s: %s from %s: %s",
            registry.label(missed.network),
            preview(missed.text),
            f"{missed.first_sent_at.astimezone():%Y-%m-%d %H:%M}",
            sent.outcome if sent.error is None else f"{sent.outcome} ({sent.error})",
        )
        done.append(sent)
    return tuple(done)
