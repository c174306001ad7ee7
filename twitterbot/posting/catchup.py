"""Catching up: a real scheduled run first sends recent scheduled posts to the networks that
missed them for a temporary reason. Only a real run imports this module (a dry run catches
nothing up)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence, Tuple

from ..errors import PostError
from ..networks import Fit, Poster
from ..state.outcomes import Outcome
from ..state.records import CatchUp
from ..state.store import HistoryStore
from .options import NO_OPTIONS, LineOptions, OptionError, sent_text, split_options
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


def _options_of(key: str, registry: Registry) -> Tuple[LineOptions, str]:
    """A recorded post's options and the rest of its line (it is recorded as written)."""
    try:
        return split_options(key, registry.names())
    except OptionError:  # it was read when first posted; a network since removed is no matter here
        return NO_OPTIONS, key


def catch_up(
    store: HistoryStore,
    posters: Callable[[], Mapping[str, Poster]],
    *,
    run_id: int,
    clock: Callable[[], datetime],
    pictures_folder: Optional[Path] = None,
    registry: Registry,
    mask: Callable[[str], str] = str,
    budgets: Optional[Mapping[str, float]] = None,
    language: Optional[str] = None,
) -> Tuple[Sent, ...]:
    """Send each recent scheduled post to the networks that missed it for a temporary reason
    (CATCH_UP_WINDOW), once each, if they are still in POST_TO. They were counted against the cap
    when first posted. A progress job's post is not caught up: its thread has moved on. A network's
    monthly budget (`budgets`, by network) holds a catch-up as it holds the run's own post."""
    done: List[Sent] = []
    missing = [each for each in store.catch_ups(clock() - CATCH_UP_WINDOW, registry.names()) if each.job_id is None]
    for missed in missing:
        if missed.network not in posters():
            continue
        done.append(
            _catch_up_one(
                store,
                posters()[missed.network],
                missed,
                run_id,
                clock,
                pictures_folder,
                registry,
                mask,
                budgets or {},
                language,
            )
        )
    if store.open_threads(clock() - CATCH_UP_WINDOW, registry.names()):
        from .threads import finish_threads  # only a run with a thread to finish

        done += finish_threads(
            store,
            posters,
            run_id=run_id,
            clock=clock,
            registry=registry,
            since=clock() - CATCH_UP_WINDOW,
            pictures=lambda key: _pictures_of(_options_of(key, registry)[1], pictures_folder)[1],
        )
    return tuple(done)


def _catch_up_one(
    store: HistoryStore,
    poster: Poster,
    missed: CatchUp,
    run_id: int,
    clock: Callable[[], datetime],
    pictures_folder: Optional[Path],
    registry: Registry,
    mask: Callable[[str], str],
    budgets: Mapping[str, float],
    language: Optional[str],
) -> Sent:
    """One missed post sent to the network that missed it: within its budget, its pictures
    prepared before the attempt is recorded, its options and language as the first send had."""
    options, rest = _options_of(missed.text, registry)
    text, images = _pictures_of(rest, pictures_folder)
    network = registry.network(missed.network)
    text = sent_text(text, options, network)
    fit = network.measure(text)
    stopped = _budget_stops(store, missed.network, fit, budgets, clock, registry)
    if stopped:
        log.warning("catching up on %s: %s: %s", network.label, preview(missed.text), stopped)
        return Sent(missed.network, Outcome.OVER_BUDGET, fit, note=stopped)
    prepared: object = []
    if images:  # prepared before the attempt is recorded, as for the first post
        from .images import poster_limits, prepared_pictures

        limits = {missed.network: poster_limits(poster, missed.network, registry)}
        prepared = prepared_pictures(images, limits, where="a caught-up post")[missed.network]
    attempt = store.begin_attempt(
        missed.text,
        run_id=run_id,
        at=clock(),
        source="catch_up",
        network=missed.network,
        group=missed.group,
        cost=network.price(fit),
        sent_text=text,
    )
    if isinstance(prepared, PostError):
        recorder(store, attempt, clock)(Outcome.FAILED, None, str(prepared), prepared.kind)
        sent = Sent(missed.network, Outcome.FAILED, error=prepared)
    else:
        sent = send_attempt(
            store,
            poster,
            attempt,
            mask(text),
            fit=None,
            clock=clock,
            images=prepared,  # type: ignore[arg-type]
            registry=registry,
            language=options.language or language,
            spoiler=options.warning if network.content_warnings else None,
        )
    level = logging.INFO if sent.reached else logging.WARNING
    log.log(
        level,
        "catching up on %s: %s from %s: %s",
        registry.label(missed.network),
        preview(missed.text),
        f"{missed.first_sent_at.astimezone():%Y-%m-%d %H:%M}",
        sent.outcome if sent.error is None else f"{sent.outcome} ({sent.error})",
    )
    return sent


def _budget_stops(
    store: HistoryStore,
    network: str,
    fit: Fit,
    budgets: Mapping[str, float],
    clock: Callable[[], datetime],
    registry: Registry,
) -> Optional[str]:
    """Why a catch-up may not go to `network` (it would pass the monthly budget), or None."""
    if network not in budgets:
        return None
    from .budget import budget_stops  # only with a budget set

    return budget_stops(store, registry.network(network), fit, budgets[network], clock())
