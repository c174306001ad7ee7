"""A dry run's plan: where the picked line would go, and how, with nothing recorded or sent.

It says what a real run would do with the same line: each network it fits or would go to as a
thread (and what that costs), those it is too long for, and a picture that cannot be prepared as
the data error a real run would meet::

    action, reason, fields = planned(line, "tweets.txt", ("forced", False), networks, numbers=False)
    action, [sent.outcome for sent in fields["networks"]]    # ('would_post', ['would_post', 'too_long'])
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from ..errors import PostError
from ..networks import Network
from ..state.outcomes import Outcome
from .options import sent_text
from .result import dry_outcome
from .send import Sent
from .tweets import TweetLine

__all__ = ["planned"]


def planned(
    line: TweetLine, file_name: str, decided: Tuple[str, bool], networks: Sequence[Network], numbers: bool
) -> Tuple[Outcome, str, Dict[str, object]]:
    """The run's action, reason and result fields for a dry run that picked `line` (`decided`:
    why it posts, and whether the pick starts a new round) to post to `networks` (POST_TO's), a
    thread's parts numbered or not (THREAD_NUMBERS)."""
    why, new_round = decided
    by_name = {network.name: network for network in networks}
    plan = _where(line, file_name, by_name)
    action, reason, error = dry_outcome(why, new_round, plan, _threads(line, by_name, numbers))
    return action, reason, {"line": line, "networks": plan, "error": error}


def _where(line: TweetLine, file_name: str, networks: Mapping[str, Network]) -> Tuple[Sent, ...]:
    """Each network `line` fits or threads to, and those it is too long for. Its pictures are
    prepared as a real run prepares them: one that cannot be fails there too."""
    going = [fit for fit in line.fits if fit.fits or line.threaded(fit)]
    problems: Dict[str, PostError] = {}
    if line.images:
        from ..pictures.prepare import PictureError, prepare_all  # a line without pictures never imports them
        from .delivery import Post

        post = Post(
            line.key,
            line.text,
            tuple(image.attachment for image in line.images),
            where=f"{file_name} line {line.lineno}",
        )
        for fit in going:
            try:
                prepare_all(post.images, networks[fit.network].image_limits())
            except PictureError as exc:
                problems[fit.network] = post.picture_error(exc)
    plan = []
    for fit in line.fits:
        network = networks[fit.network]
        if fit.network in problems:
            plan.append(Sent(network, Outcome.FAILED, fit, error=problems[fit.network]))
        else:
            plan.append(Sent(network, Outcome.WOULD_POST if fit in going else Outcome.TOO_LONG, fit))
    return tuple(plan)


def _threads(line: TweetLine, networks: Mapping[str, Network], numbers: bool) -> str:
    """For the reason: where `line` would go as a thread, and what that costs."""
    if not any(line.threaded(fit) for fit in line.fits):
        return ""
    from .threads import parts_for, thread_cost  # only a line that goes somewhere as a thread

    said: List[str] = []
    for fit in line.fits:
        if line.threaded(fit):
            network = networks[fit.network]
            parts = parts_for(sent_text(line.text, line.options, network), network, numbers)
            said.append(f"{network.label} would get it as {thread_cost(network, parts)}")
    return "".join(f"; {each}" for each in said)
