"""Settling uncertain posts: a real scheduled run first asks each network whether a post whose
outcome was not known (no answer came, or the run stopped while sending) is there. Found, the
history records it as posted, with its id and link; not found, as not posted, and its line goes
back into the round. A network that cannot tell leaves it uncertain for the next run. Each is
looked up as the history stored it (the post it answers, its visibility, warning, language and
pictures), never as its text reads: a look-up that sends it again sends that. Only a run that has
such a post imports this module::

    settled = settle_uncertain(store, unsettled, outlets, clock=clock)
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence

from ..errors import PostError
from ..networks import Network, Poster, PostOptions
from ..wording import preview
from .post import stored_post

if TYPE_CHECKING:
    from ..state.records import Unsettled
    from ..state.store import HistoryStore

__all__ = ["NOT_FOUND_AFTER", "settle_uncertain"]

# A post a network does not have is settled as not posted only once its attempt is this old: a
# request still in flight when its run died (a power cut, a kill) can land after the next run has
# looked, and a line sent again then would be a double post. Younger, it stays uncertain.
NOT_FOUND_AFTER = timedelta(minutes=15)

log = logging.getLogger(__name__)


def settle_uncertain(
    store: HistoryStore,
    unsettled: Sequence[Unsettled],
    outlets: Mapping[Network, Poster],
    *,
    clock: Callable[[], datetime],
) -> List[str]:
    """Look each of `unsettled` up on its network (if still posted to) and record what was found.
    Returns, in words, what was settled ("Bluesky: uncertain → posted (found by record key)")."""
    said: List[str] = []
    posting_to = {network.name: (network, poster) for network, poster in outlets.items()}
    for attempt in unsettled:
        if attempt.network not in posting_to:
            continue
        network, poster = posting_to[attempt.network]
        label = network.label
        try:
            answer = poster.look_up(attempt.sent_text, attempt.sent_at, attempt.lookup_key, _told(attempt, network))
        except PostError as exc:
            log.info(
                "could not look up the uncertain post %s on %s (%s): the next run asks again",
                preview(attempt.text),
                label,
                exc.summary,
            )
            continue
        if answer.found is None:
            log.info(
                "%s cannot tell yet whether %s was posted (%s): the next run asks again",
                label,
                preview(attempt.text),
                answer.how,
            )
            continue
        if not answer.found and clock() - attempt.sent_at < NOT_FOUND_AFTER:
            log.info(
                "%s does not have %s yet, but it was sent less than %d minutes ago and may still land: a later run asks again",
                label,
                preview(attempt.text),
                NOT_FOUND_AFTER.seconds // 60,
            )
            continue
        result = answer.result
        settled = f"{attempt.outcome} → {'posted' if answer.found else 'not posted'} ({answer.how})"
        back = store.settle(
            attempt.id,
            found=answer.found,
            how=answer.how,
            at=clock(),
            post_id=result.post_id if result else None,
            url=result.url if result else None,
            run_note=f"{label}: {settled}",
        )
        again = "; its line goes back into the round" if back else ""
        log.warning(
            "%s: %s from %s: %s%s",
            label,
            preview(attempt.text),
            f"{attempt.sent_at.astimezone():%Y-%m-%d %H:%M}",
            settled,
            again,
        )
        said.append(f"{label}: {settled}")
    return said


def _told(attempt: Unsettled, network: Network) -> Optional[PostOptions]:
    """What the attempt was sent with, as its stored post says (None: recorded before the history
    kept posts; a look-up then compares the text only and sends nothing again). Its pictures are
    the post's own, not prepared again: a look-up only needs to know the post had some."""
    post = stored_post(attempt.post)
    return post.told(network, post.images) if post else None
