"""One way to deliver a post: every sender hands a `Post` to the run's `Delivery`.

A scheduled run, its catch-up, a thread left unfinished and a progress job each decide *what* to
post and *when*; the Delivery alone decides *how*, the same way for all of them, network by
network: it fits the text to the network (or cuts it into a thread, where the sender allows),
checks the network's monthly budget, prepares the pictures, records the attempt, sends it, and
records the outcome. The attempts of one post share a group, so the post counts once in the cap.
This module is the only one outside `state/` that begins and finishes post attempts: at most once
is kept in one place::

    delivery = Delivery(store, lambda: posters_for(config), utc_now, Scrubber(config.secrets()), run_id=7)
    sent = delivery.deliver(Post("Hello", "Hello"), LineAttempts())
    [(each.network.label, each.outcome) for each in sent]     # [('X', 'posted'), ('Bluesky', 'posted')]

What differs between senders is how an attempt is recorded and what a sent post moves on
(`Attempts`): a scheduled line leaves the round (`LineAttempts`), a job's post moves the job's
thread (`JobAttempts`), a reply claims the mention it answers (`ReplyAttempts`), a thread's part
is its thread's (`PartAttempts`): one send loop, every part an attempt like any other. Each
attempt stores its post whole (`Post.to_stored`), and every later run reads that. A scheduled run
imports this module only when it sends something or plans a post (a run the roll skips never
does); a job always does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ErrorKind, PostError
from ..networks import Fit, Network, Poster, PostResult
from ..networks.lazy import LazyPosters
from ..state.outcomes import AttemptStart, Outcome
from .attempts import Attempts, PartAttempts
from .post import Post, stored_post
from .send import Record, Sent, send

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment, PreparedImage
    from ..settings.secrets import Scrubber
    from ..state.outcomes import RunRef
    from ..state.store import HistoryStore

__all__ = ["Delivery", "DeliveryRules", "Outlets"]

log = logging.getLogger(__name__)

# The networks a delivery may post to, each with its poster, in POST_TO's order. Made on first use
# (a run that sends nothing never imports a client library).
Outlets = Callable[[], Mapping[Network, Poster]]
# A network's copies of a post's pictures, or the data error that keeps them off it.
Prepared = Union[List[Union["Attachment", "PreparedImage"]], PostError]


@dataclass(frozen=True)
class DeliveryRules:
    """The settings every post of a delivery follows: each network's monthly budget (by network
    name, as the settings name them), the language of a post that names none (POST_LANGUAGE),
    whether a thread's parts end with " i/n" (THREAD_NUMBERS), and MAX_POSTS_PER_DAY (`cap`: a
    thread's parts are posts, and a thread goes only where the cap leaves room for all of them)."""

    budgets: Mapping[str, float] = field(default_factory=dict)
    language: Optional[str] = None
    numbers: bool = False
    cap: Optional[int] = None


class Delivery:
    """Delivers posts for one run or one job: its history, the networks it posts to with their
    posters (`outlets`, made at the first call and kept), its clock, the secrets masked in every
    text sent (`mask`), the `rules` its posts follow, the scheduled run that sends (None: a job's
    posts), and `stopping`, which says the process was asked to stop (a daemon's SIGTERM): a
    thread then stops between two parts, and a later run goes on with it. A plain class, as the
    attempts' are: every run that posts makes them, and a dataclass costs one to make."""

    __slots__ = ("_posters", "clock", "mask", "rules", "run_id", "stopping", "store")

    def __init__(
        self,
        store: HistoryStore,
        outlets: Outlets,
        clock: Callable[[], datetime],
        mask: Scrubber,
        rules: Optional[DeliveryRules] = None,
        *,
        run_id: Optional[RunRef] = None,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store, self.clock, self.mask = store, clock, mask
        self._posters = LazyPosters(outlets)
        self.rules = rules or DeliveryRules()
        self.run_id, self.stopping = run_id, stopping

    @property
    def numbers(self) -> bool:
        return self.rules.numbers

    def outlets(self) -> Mapping[Network, Poster]:
        """The networks posted to, each with its poster, in POST_TO's order: made once."""
        return self._posters()

    def deliver(self, post: Post, attempts: Attempts) -> Tuple[Sent, ...]:
        """`post` to each network it is for, one after another: fitted (too long: not sent, or
        with threads on, cut into a thread that fits the day's cap), held to the network's budget,
        its pictures prepared for every network before the first record (after it, nothing about
        them is left to fail), each attempt recorded before it is sent and its outcome after, with
        the post stored whole (in its language, or POST_LANGUAGE: a later run sends it as it was)."""
        post = post if post.language or not self.rules.language else replace(post, language=self.rules.language)
        going, pictures = self._fitted(post)
        # What MAX_POSTS_PER_DAY leaves for a thread's parts, counted before this post's first record.
        room = self._room() if any(post.threaded(fit) for fit in going.values()) else None
        sent: List[Sent] = []
        group = attempts.group()
        for network, fit in going.items():
            if not _goes(post, fit):
                sent.append(self._too_long(post, network, fit, attempts))
                continue
            parts = () if fit.fits else self._parts(post.text_for(network), network)
            crowded = self._too_many(parts, room)
            if crowded:
                log.warning("%s: %s is not sent there: %s", network.label, post.where, crowded)
                sent.append(Sent(network, Outcome.TOO_LONG, fit, note=crowded))
                continue
            price = self._price(network, fit, parts) if parts else attempts.price(network, fit)
            stopped = self._over_budget(network, price)
            if stopped:
                sent.append(Sent(network, Outcome.OVER_BUDGET, fit, note=stopped))
                continue
            prepared = pictures.get(network, [])
            if parts and isinstance(prepared, PostError):  # a thread's pictures go with its part 1: none is sent
                sent.append(Sent(network, Outcome.FAILED, fit, error=prepared))
                continue
            text = parts[0] if parts else self.mask(post.text_for(network))
            cost = network.price(network.measure(text)) if parts else price
            start = AttemptStart(
                network.name, self.clock(), self.run_id, attempts.source, group, cost=cost, sent_text=text
            )
            start.post = (post.part(1) if parts else post).to_stored(attempts.keeps_pictures)
            if parts:
                one, attempt = self._thread(post, network, parts, start)
            else:
                one, attempt = self._one(post, network, start, attempts, prepared)
            sent.append(replace(one, fit=fit))
            group = group or attempt
        return tuple(sent)

    def plan(self, post: Post) -> Tuple[Sent, ...]:
        """What `deliver` would do with `post`, for a dry run, recording and sending nothing: each
        network it fits or would get it as a thread (would_post), those it is too long for, and
        one its pictures cannot go to (failed, with the data error a real run would meet). A dry
        run asks no budget, as it asks no network."""
        going, pictures = self._fitted(post)
        room = self._room() if any(post.threaded(fit) for fit in going.values()) else None
        plan: List[Sent] = []
        for network, fit in going.items():
            problem = pictures.get(network)
            crowded = self._too_many(self._parts(post.text_for(network), network), room) if post.threaded(fit) else None
            if isinstance(problem, PostError):
                plan.append(Sent(network, Outcome.FAILED, fit, error=problem))
            elif crowded:
                plan.append(Sent(network, Outcome.TOO_LONG, fit, note=crowded))
            else:
                plan.append(Sent(network, Outcome.WOULD_POST if _goes(post, fit) else Outcome.TOO_LONG, fit))
        return tuple(plan)

    def _fitted(self, post: Post) -> Tuple[Dict[Network, Fit], Dict[Network, Prepared]]:
        """How each network `post` is for counts it, and its pictures prepared for each network it
        goes to, before anything is recorded."""
        going = {network: post.fit_for(network) for network in self.outlets() if post.goes_to(network)}
        return going, self._pictures(post, [network for network, fit in going.items() if _goes(post, fit)])

    def _one(
        self, post: Post, network: Network, start: AttemptStart, attempts: Attempts, prepared: Prepared
    ) -> Tuple[Sent, int]:
        """One post on one network: recorded (with the text as sent and its price, `start`), sent,
        its outcome recorded."""
        attempt = attempts.begin(self.store, post, start)
        record = attempts.ending(self.store, attempt, self.clock)
        if attempts.keeps_pictures and post.draws_bytes:
            record = _letting_go(record, self.store, attempt, post)
        if isinstance(prepared, PostError):  # nothing is sent: the failure is recorded as it is
            record(Outcome.FAILED, None, str(prepared), prepared.kind)
            return Sent(network, Outcome.FAILED, error=prepared), attempt
        options = post.told(network, prepared or ())
        poster, text = self.outlets()[network], start.sent_text or post.text
        request = lambda: attempts.post(self.store, network, poster, text, options)  # noqa: E731
        return send(request, network=network, record=record), attempt

    def _too_long(self, post: Post, network: Network, fit: Fit, attempts: Attempts) -> Sent:
        """A post too long for `network` is not sent there. A catch-up records that it was not
        (`Attempts.records_too_long`), so later runs do not offer it again."""
        if attempts.records_too_long:
            text = self.mask(post.text_for(network))
            start = AttemptStart(
                network.name, self.clock(), self.run_id, attempts.source, attempts.group(), sent_text=text
            )
            start.post = post.to_stored(attempts.keeps_pictures)
            attempt = attempts.begin(self.store, post, start)
            reason = fit.reason or f"{fit.length} of {fit.limit} {fit.unit}"
            attempts.ending(self.store, attempt, self.clock)(Outcome.TOO_LONG, None, f"too long: {reason}", None)
        return Sent(network, Outcome.TOO_LONG, fit)

    # -- threads -------------------------------------------------------------------------------

    def _parts(self, text: str, network: Network) -> Tuple[str, ...]:
        from .threads import parts_for  # only a line that goes somewhere as a thread

        return tuple(parts_for(self.mask(text), network, self.rules.numbers))

    def _room(self) -> Optional[int]:
        """How many more posts MAX_POSTS_PER_DAY allows now (None: no cap): what a thread's parts
        may use."""
        if self.rules.cap is None:
            return None
        from ..state.counting import CAP_WINDOW, CLOCK_SLACK

        now = self.clock()
        return self.rules.cap - self.store.posts_since(now - CAP_WINDOW, until=now + CLOCK_SLACK)

    def _too_many(self, parts: Tuple[str, ...], room: Optional[int]) -> Optional[str]:
        """Why a thread of `parts` may not go now (more parts than a thread may have, or than the
        cap allows or leaves); None: it may, or it is no thread."""
        if not parts:
            return None
        from .threads import too_many_parts

        return too_many_parts(len(parts), self.rules.cap, room)

    def _thread(self, post: Post, network: Network, parts: Tuple[str, ...], start: AttemptStart) -> Tuple[Sent, int]:
        """A line too long for `network`, as a thread: recorded whole with its first part's
        attempt, then its parts sent in order (`finish_threads` goes on where one stopped). The
        thread keeps its post whole (its visibility, sensitive flag, labels, language, warning,
        pictures), so a later run sends its parts as this one would."""
        from .threads import thread_cost

        thread, attempt = self.store.begin_thread(
            post.key, parts, start, language=post.language, spoiler=post.spoiler_for(network), post=post.to_stored()
        )
        log.info("%s: %s goes there as %s", network.label, post.where, thread_cost(network, parts))
        sent = self._send_thread(post, network, thread, attempt, source=start.source)
        return sent[0], attempt

    def finish_threads(self, since: datetime, pictures: Callable[[str], Sequence[Attachment]]) -> List[Sent]:
        """Go on with the threads earlier runs left unfinished (begun since `since`), on the
        networks still posted to; never a part that may be there already, never a part before the
        one it answers is known. A thread older than `since` is no longer finished: the history
        says so. Each goes on as its stored post says (its visibility, sensitive flag, labels,
        language, warning and pictures: they go with part 1 whenever part 1 is sent); a thread
        begun before the history kept its post has only its language and warning, and `pictures`
        reads its pictures from its recorded text."""
        outlets = {network.name: network for network in self.outlets()}
        self.store.abandon_threads(since, at=self.clock(), why="not finished within the catch-up window")
        done: List[Sent] = []
        for thread in self.store.open_threads(since, tuple(outlets)):
            network = outlets[thread.network]
            post = stored_post(thread.post)
            if post is None:  # begun before schema 12: its parts hold the text, its row the language and warning
                post = Post(thread.text, "", tuple(pictures(thread.text)), thread.language, thread.spoiler)
            log.info("finishing a thread on %s left by an earlier run", network.label)
            done += self._send_thread(post, network, thread.thread_id, None, source="catch_up")
        return done

    def _send_thread(
        self, post: Post, network: Network, thread_id: int, pending: Optional[int], *, source: str
    ) -> List[Sent]:
        """Send a thread's parts that are left, in order, each its own recorded attempt with its
        own text and price (`pending`: part 1's attempt, when this run recorded it with the
        thread), each as the thread's post says (in its own language, not POST_LANGUAGE as it is
        now), answering the part before it; stored with its attempt. Stops at a part
        that did not certainly post, at one that may be there and is not looked up yet, when the
        cap leaves no room, and when the process is asked to stop: a later run goes on."""
        from .threads import GiveUp, Wait, next_part, parts_as_sent

        sent: List[Sent] = []
        while True:
            step = next_part(parts_as_sent(self.store.thread_parts(thread_id), pending))
            if step is None or isinstance(step, GiveUp):
                stopped = f"{network.label}: part {step.part} {step.why}" if step else None
                self.store.finish_thread(thread_id, at=self.clock(), stopped=stopped)
                return sent
            if isinstance(step, Wait):
                log.info(
                    "%s: part %d of a thread may be there; the next part waits until a later run has looked it up",
                    network.label,
                    step.part,
                )
                return sent
            state, reply_to = step
            recorded = pending if state.part == 1 else None  # part 1, recorded with the thread by this run
            held = None if recorded is not None else self._holds_back(network, state.part)
            if held:
                log.warning("%s: %s", network.label, held)
                return sent
            pending = None
            # The part as it is sent: an attempt like any other, through `_one`, its post stored whole.
            told = post.part(state.part, {network.name: reply_to} if reply_to else {})
            price = network.price(network.measure(state.text))
            start = AttemptStart(
                network.name, self.clock(), self.run_id, source, cost=price, sent_text=state.text, post=told.to_stored()
            )
            attempts = PartAttempts(thread_id, state.part, source, recorded)
            outcome, _ = self._one(told, network, start, attempts, list(told.images))
            sent.append(outcome)
            if outcome.outcome != Outcome.POSTED:
                log.warning(
                    "%s: part %d of a thread %s: %s; a later run goes on with the next parts",
                    network.label,
                    state.part,
                    outcome.outcome,
                    outcome.error or "",
                )
                return sent

    def _holds_back(self, network: Network, part: int) -> Optional[str]:
        """Why part `part` of a thread is not sent now (the process is stopping, the cap leaves no
        room, the monthly budget would be passed); None: it goes."""
        if self.stopping():
            return f"asked to stop: part {part} of the thread and the rest are left for the next run"
        room = self._room()
        if room is not None and room <= 0:
            return f"MAX_POSTS_PER_DAY is reached: part {part} of the thread and the rest wait for room"
        return None

    # -- what every network's post needs first -------------------------------------------------

    def _price(self, network: Network, fit: Fit, parts: Sequence[str]) -> Optional[float]:
        """What the post costs on `network`: a thread, the sum of its parts' prices."""
        if parts:
            from .threads import thread_price

            return thread_price(network, parts)
        return network.price(fit)

    def _over_budget(self, network: Network, price: Optional[float]) -> Optional[str]:
        """Why a post that costs `price` may not go to `network`: it would pass the network's
        monthly budget; None: it may."""
        budgets = self.rules.budgets
        if network.name not in budgets:
            return None
        from .budget import budget_stops  # only with a budget set

        return budget_stops(self.store, network, price, budgets[network.name], self.clock())

    def _pictures(self, post: Post, networks: Sequence[Network]) -> Dict[Network, Prepared]:
        """`post`'s pictures prepared for each of `networks` (by its poster's own limits where it
        has them: a Mastodon server's), or the data error why they cannot go there; made before
        any attempt is recorded."""
        if not post.images:
            return {}
        from ..pictures.prepare import PictureError, prepare_all

        outlets = self.outlets()
        made: Dict[Network, Prepared] = {}
        for network in networks:
            if not network.takes_prepared_pictures:  # the dry run: it fits them to every network itself
                made[network] = list(post.images)
                continue
            own = getattr(outlets[network], "image_limits", None)
            limits = own() if callable(own) else network.image_limits()
            try:
                made[network] = prepare_all(post.images, limits)
            except PictureError as exc:
                made[network] = post.picture_error(exc)
        return made


def _goes(post: Post, fit: Fit) -> bool:
    """Whether `post` goes to `fit`'s network: it fits, or goes there as a thread."""
    return fit.fits or post.threaded(fit)


def _letting_go(record: Record, store: HistoryStore, attempt: int, post: Post) -> Record:
    """`record`, and once the post is on the network, its stored post kept without its drawn or
    fetched pictures' bytes (only a post still to be settled, caught up or resumed needs them)."""

    def recorded(
        outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
    ) -> None:
        record(outcome, result, detail, kind)
        if outcome == Outcome.POSTED:
            store.keep_post(attempt, post.to_stored(keep_pictures=False))

    return recorded
