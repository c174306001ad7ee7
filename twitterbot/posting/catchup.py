"""Catching up: a real scheduled run first sends recent scheduled posts to the networks that
missed them for a temporary reason, and goes on with threads earlier runs left unfinished. Only a
real run imports this module (a dry run catches nothing up); the run's `Delivery` sends them, as
it sends every post."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from ..delivery.deliver import Delivery
from ..delivery.post import Post, stored_post
from ..delivery.send import Sent
from ..errors import BotError
from ..state.outcomes import Outcome
from ..state.records import CatchUp
from ..wording import preview
from .attempts import LineAttempts
from .options import NO_OPTIONS, LineOptions, OptionError, split_options
from .read import Expansion
from .tags import TagError, may_have_tags, read_tags

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment
    from .tagpictures import PictureRules

__all__ = ["catch_up"]

log = logging.getLogger(__name__)


def catch_up(
    delivery: Delivery,
    since: datetime,
    folder: Optional[Path],
    known: Sequence[str],
    pictures: Optional[PictureRules] = None,
) -> Tuple[Sent, ...]:
    """Send each scheduled post since `since` (CATCH_UP_WINDOW) to the networks that missed it for
    a temporary reason, once each, if they are still posted to, and go on with the threads left
    unfinished. They were counted against the cap when first posted. A progress job's post is not
    caught up: its thread has moved on. A network's monthly budget holds a catch-up as it holds
    the run's own post. Each is sent as the history stored it (its pictures, warning, language,
    visibility, sensitive flag, labels). A post recorded before the history kept posts is read
    from its recorded line again: `folder`, where its pictures are read from (the tweets file's
    folder); `known`, every network's name (a recorded line's only and skip may name any);
    `pictures`, a grammar's (its expansions' tags are read again, their pictures made again)."""
    outlets = {network.name: network for network in delivery.outlets()}
    done: List[Sent] = []
    for missed in delivery.store.catch_ups(since, tuple(outlets)):
        if missed.job_id is None:
            try:
                post = stored_post(missed.post) or _recorded(missed.text, folder, known, pictures)
            except BotError as exc:  # a picture that cannot be made now: a later run tries again
                log.warning("catching up: %s is not sent now: %s", preview(missed.text), exc)
                continue
            done.append(_catch_up_one(delivery, missed, post))
    if delivery.store.open_threads(since, tuple(outlets)):
        done += delivery.finish_threads(since, lambda key: _recorded(key, folder, known, pictures).images)
    return tuple(done)


def _catch_up_one(delivery: Delivery, missed: CatchUp, post: Post) -> Sent:
    """One missed post sent to the network that missed it, joining its first send's group."""
    post = replace(post, where="a caught-up post", networks=(missed.network,))
    (sent,) = delivery.deliver(post, LineAttempts(source="catch_up", post_group=missed.group))
    if sent.outcome == Outcome.OVER_BUDGET:
        log.warning("catching up on %s: %s: %s", sent.network.label, preview(missed.text), sent.note)
        return sent
    log.log(
        logging.INFO if sent.reached else logging.WARNING,
        "catching up on %s: %s from %s: %s",
        sent.network.label,
        preview(missed.text),
        f"{missed.first_sent_at.astimezone():%Y-%m-%d %H:%M}",
        sent.outcome if sent.error is None else f"{sent.outcome} ({sent.error})",
    )
    return sent


def _recorded(key: str, folder: Optional[Path], known: Sequence[str], pictures: Optional[PictureRules] = None) -> Post:
    """A recorded line of an attempt made before the history kept posts (it is recorded as written) as a post again: its options, its text, and
    its pictures read from the tweets file's folder; a grammar's expansion (`pictures` given) with
    its services' tags read again and their pictures made again."""
    options, text = _options_of(key, known)
    tagged = None
    if pictures is not None and may_have_tags(text):
        try:
            tagged = read_tags(text)
        except TagError:  # it was read when first posted; the grammar may have changed since
            tagged = None
        else:
            text = tagged.text
    images: Tuple[Attachment, ...] = ()
    if folder is not None and "![" in text:
        from .images import split_images

        text, lines = split_images(text, folder)
        images = tuple(image.attachment for image in lines)
    if tagged is not None:
        from .tagpictures import make_pictures

        assert pictures is not None
        images += make_pictures(tagged, pictures, where=f"a caught-up post {preview(key)}")
        merged = (options.language or tagged.language, options.warning or tagged.warning)
        options = replace(options, language=merged[0], warning=merged[1])
    return Expansion(options, text, tags=tagged).post(key=key, pictures=images)


def _options_of(key: str, known: Sequence[str]) -> Tuple[LineOptions, str]:
    """A recorded post's options and the rest of its line."""
    try:
        return split_options(key, tuple(known))
    except OptionError:  # it was read when first posted; a network since removed is no matter here
        return NO_OPTIONS, key
