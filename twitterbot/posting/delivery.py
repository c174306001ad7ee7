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

import base64
import json
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ErrorKind, ExitStatus, PostError
from ..networks import Fit, Network, Poster, PostOptions, PostResult
from ..networks.lazy import LazyPosters
from ..state.outcomes import AttemptStart, Ending, Outcome
from . import MAX_POSTS_PER_DAY, POST_LANGUAGE, THREAD_NUMBERS
from .send import Record, Sent, send

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment, PreparedImage
    from ..settings.loading import Config
    from ..settings.secrets import Scrubber
    from ..state.outcomes import RunRef
    from ..state.store import HistoryStore

__all__ = [
    "Attempts",
    "Delivery",
    "DeliveryRules",
    "JobAttempts",
    "LineAttempts",
    "Outlets",
    "PartAttempts",
    "Post",
    "ReplyAttempts",
    "line_ending",
    "stored_post",
]

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

    @classmethod
    def of(cls, config: Config, *, language: bool = True) -> DeliveryRules:
        """The rules from the settings, the one way the scheduled run, the replies and the jobs
        make them. `language=False`: posts that name no language go in none, not POST_LANGUAGE's
        (a job's: its text is the job's templates', in whatever language they were written)."""
        from . import monthly_budgets

        return cls(
            monthly_budgets(config),
            config[POST_LANGUAGE] if language else None,
            config[THREAD_NUMBERS],
            cap=config[MAX_POSTS_PER_DAY],
        )


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
        from .decision import CAP_WINDOW, CLOCK_SLACK

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


@dataclass(frozen=True)
class Post:
    """One post, before any network has it: what the history knows it by (`key`: a tweets-file line
    as written, pictures and options and all; a job's text), its words, its pictures with their alt
    texts, its language and content warning, and for messages where it came from (`where`:
    "tweets.txt line 3"). `reply_to` is the post it answers on each network (network name -> that
    network's post id; a job's thread). `fits` are the networks' measures when the sender has them
    (a tweets file measures its lines once, with a cache); `networks` limits where it goes (a
    line's only/skip), and `threads` lets a network it is too long for get it as a thread
    (LONG_LINES=thread)."""

    key: str
    text: str
    images: Tuple[Attachment, ...] = ()
    language: Optional[str] = None
    warning: Optional[str] = None
    where: str = "a post"
    reply_to: Mapping[str, str] = field(default_factory=dict)
    fits: Tuple[Fit, ...] = ()
    networks: Optional[Tuple[str, ...]] = None  # None: every network of the delivery
    threads: bool = False
    # Mastodon's visibility for this post (public, unlisted, private, direct; the most private of
    # it and MASTODON_VISIBILITY wins), whether its pictures are sensitive (shown behind a
    # warning), and Bluesky's self-labels for it: each sent only to a network that takes it
    # (`Network.post_options`).
    visibility: Optional[str] = None
    sensitive: bool = False
    labels: Tuple[str, ...] = ()
    # What a picture that cannot go to a network means for the post, after its problem.
    unfit: str = "nothing was sent, and the line stays in the round until the picture is fixed"

    def goes_to(self, network: Network) -> bool:
        return self.networks is None or network.name in self.networks

    def told(self, network: Network, images: Sequence[Union[Attachment, PreparedImage]] = ()) -> PostOptions:
        """Everything `network` is told with the post's text, as its poster takes it: `images`
        (the post's pictures as prepared for it), the post it answers there, its language, its own
        content warning, and the visibility, sensitive flag and labels of a network that takes
        them. A function of the post alone: a later run tells the network the same."""
        takes = network.post_options
        return PostOptions(
            images=tuple(images),
            reply_to=self.reply_to.get(network.name),
            language=self.language,
            spoiler=self.spoiler_for(network),
            visibility=self.visibility if "visibility" in takes else None,
            sensitive=self.sensitive and "sensitive" in takes,
            labels=self.labels if "labels" in takes else (),
        )

    def part(self, number: int, reply_to: Optional[Mapping[str, str]] = None) -> Post:
        """The post as part `number` of its thread is sent: answering `reply_to` (the part before;
        part 1 answers nothing), the pictures only with part 1, and the labels (what pictures
        show) only with the part that has pictures."""
        first = number == 1
        return replace(
            self,
            reply_to=dict(reply_to or {}),
            images=self.images if first else (),
            labels=self.labels if first and self.images else (),
        )

    def to_stored(self, keep_pictures: bool = True) -> str:
        """The post as the history keeps it with its attempt (JSON, keys sorted): every field a
        network is told and its source's key, its pictures as what sends them again (a file's
        path, or a drawn or fetched picture's bytes), each with its alt text. Not its measures
        (`fits`: measured again when needed). Without `keep_pictures` (a post no later run sends
        again: a job's, a reply's) a drawn or fetched picture keeps its alt text but not its
        bytes, so a history on an SD card does not grow by every picture a job posts; it reads
        back as empty bytes."""
        return json.dumps(
            {
                "v": _STORED,
                "key": self.key,
                "text": self.text,
                "images": [_stored_picture(image, keep_pictures) for image in self.images],
                "language": self.language,
                "warning": self.warning,
                "where": self.where,
                "reply_to": dict(self.reply_to),
                "networks": list(self.networks) if self.networks is not None else None,
                "threads": self.threads,
                "visibility": self.visibility,
                "sensitive": self.sensitive,
                "labels": list(self.labels),
                "unfit": self.unfit,
            },
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_stored(cls, stored: str) -> Post:
        """The post `to_stored` kept; ValueError when `stored` is not one (a damaged row)."""
        from ..pictures.prepare import Attachment

        try:
            data = json.loads(stored)
            if data.get("v") != _STORED:
                raise ValueError(f"a stored post of version {data.get('v')!r}, not {_STORED}")
            images = tuple(
                Attachment(
                    Path(each["path"]) if "path" in each else base64.b64decode(each.get("data", "")),
                    each["alt"],
                    each["name"],
                    bool(each.get("alt_optional")),
                )
                for each in data["images"]
            )
            networks = data["networks"]
            return cls(
                key=data["key"],
                text=data["text"],
                images=images,
                language=data["language"],
                warning=data["warning"],
                where=data["where"],
                reply_to={str(name): str(post_id) for name, post_id in data["reply_to"].items()},
                networks=tuple(networks) if networks is not None else None,
                threads=bool(data["threads"]),
                visibility=data["visibility"],
                sensitive=bool(data["sensitive"]),
                labels=tuple(data["labels"]),
                unfit=data["unfit"],
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise ValueError(f"not a stored post ({type(exc).__name__}: {exc})") from None

    def text_for(self, network: Network) -> str:
        """What `network` is sent as the text: where it has no content warnings of its own, the
        warning is the post's first line."""
        if self.warning and not network.content_warnings:
            return f"CW: {self.warning}\n{self.text}"
        return self.text

    def spoiler_for(self, network: Network) -> Optional[str]:
        """The warning as the network's own field (Mastodon's spoiler_text), where it has one."""
        return self.warning if network.content_warnings else None

    def fit_for(self, network: Network) -> Fit:
        """How `network` counts the post: the sender's measure, else measured now."""
        known = next((fit for fit in self.fits if fit.network == network.name), None)
        return known or network.measure(self.text_for(network))

    def threaded(self, fit: Fit) -> bool:
        """Whether the post goes to `fit`'s network as a thread: threads allowed, and too long there."""
        return self.threads and fit.length > fit.limit

    def picture_error(self, problem: Exception) -> PostError:
        """A picture that cannot go to a network: the user's data, named by where the post came from."""
        return PostError(
            f"{self.where}: {problem}" + (f"; {self.unfit}" if self.unfit else ""),
            kind=ErrorKind.PICTURE,
            exit_status=ExitStatus.DATA_ERROR,
        )


class Attempts:
    """How one sender's attempts are recorded, before each send and after it, and what a post
    answers: a scheduled line's (`LineAttempts`) leave the round; a progress job's (`JobAttempts`)
    move its thread."""

    __slots__ = ()
    source: str = "scheduled"

    # Whether a post too long for a network is recorded as not sent there (a catch-up's: so that
    # later runs do not offer it again), or simply not sent (a line: the round passes it by).
    records_too_long: bool = False
    # Whether the stored post keeps its drawn or fetched pictures' bytes: a scheduled post's do (a
    # catch-up or a thread's part 1 sends them again); a job's and a reply's are never sent again.
    keeps_pictures: bool = True

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        """Record the pending attempt of `post` as `start` says (its network, when, the text as
        sent and its price there); returns the attempt."""
        raise NotImplementedError

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        """How the attempt's outcome is written down."""
        raise NotImplementedError

    def post(
        self, store: HistoryStore, network: Network, poster: Poster, text: str, options: PostOptions
    ) -> PostResult:
        """The network's request for one post (`options`: its pictures, language, warning and the
        post it answers, as the poster takes them)."""
        return poster.post(text, options)

    def group(self) -> Optional[int]:
        """The group the post's first attempt joins (a catch-up joins its post's); None: a new one."""
        return None

    def price(self, network: Network, fit: Fit) -> Optional[float]:
        """What the post costs on `network`, measured as `fit` (a reply may cost otherwise)."""
        return network.price(fit)


class LineAttempts(Attempts):
    """A scheduled run's attempts (`source` scheduled, or catch_up for a post a network missed,
    joining its first send's `post_group`): a line that reached, or may have reached, the network
    leaves the round, and so does one the network already has."""

    __slots__ = ("post_group", "records_too_long", "source")

    def __init__(self, source: str = "scheduled", post_group: Optional[int] = None) -> None:
        self.source, self.post_group = source, post_group
        self.records_too_long = source == "catch_up"

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        return store.begin_attempt_from(post.key, start)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        return line_ending(store, attempt, clock=clock)

    def group(self) -> Optional[int]:
        return self.post_group


class PartAttempts(Attempts):
    """A part of a thread, an attempt like any other: begun as its thread's part `part` (its text
    the part's, as cut when the thread was recorded), or, for part 1 sent by the run that recorded
    the thread, the attempt recorded with it (`recorded`); its outcome written as a line's."""

    __slots__ = ("part", "recorded", "source", "thread_id")

    def __init__(self, thread_id: int, part: int, source: str, recorded: Optional[int] = None) -> None:
        self.thread_id, self.part, self.source, self.recorded = thread_id, part, source, recorded

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        if self.recorded is not None:
            return self.recorded
        return store.begin_part(self.thread_id, self.part, start)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        return line_ending(store, attempt, clock=clock)


class JobAttempts(Attempts):
    """A progress job's attempts: one that reached, or may have reached, a network moves the job
    on with its `news`; a failed one is only a failed attempt (a job does not catch up). A `final`
    post is the job's result, never sent twice."""

    __slots__ = ("final", "job_id", "name", "news", "source")
    keeps_pictures = False

    def __init__(self, job_id: int, name: str, news: str, final: bool = False) -> None:
        self.job_id, self.name, self.news, self.final = job_id, name, news, final
        self.source = "final" if final else "progress"

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        text = start.sent_text or post.text
        return store.begin_job_attempt(
            self.job_id,
            text,
            at=start.at,
            final=self.final,
            network=start.network,
            group=start.group,
            cost=start.cost,
            post=start.post,
        )

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        def record(
            outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
        ) -> None:
            if result is None:  # a passing failure is a failure: the job's news moves on without it
                failed = Outcome.DUPLICATE if outcome == Outcome.DUPLICATE else Outcome.FAILED
                store.finish_attempt(attempt, Ending(failed, clock(), detail=detail, error_kind=kind))
                return
            ending = Ending(outcome, clock(), result.post_id, result.url, result.uncertain, kind)
            store.record_job_post(self.job_id, attempt, ending, self.news)

        return record

    def post(
        self, store: HistoryStore, network: Network, poster: Poster, text: str, options: PostOptions
    ) -> PostResult:
        """A reply in the job's thread on that network; where the network refuses to answer a post
        that is gone (deleted), the post starts a new thread there."""
        try:
            return poster.post(text, options)
        except PostError as exc:
            reply_to = options.reply_to
            if reply_to is None or exc.kind != ErrorKind.REJECTED:
                raise
            log.warning(
                "%s: %s refused the reply to %s (%s); posting it on its own", self.name, network.label, reply_to, exc
            )
            result = poster.post(text, replace(options, reply_to=None))
            store.reset_thread(self.job_id, network.name)  # this post becomes the new thread's first
            return result


class ReplyAttempts(Attempts):
    """A reply's attempt: recorded in the same transaction as its mention is claimed, before it is
    sent (`MentionTaken` when another run claimed it first: nothing is recorded or sent), priced as
    the network prices a reply; its outcome after. A reply that reached, or may have reached, the
    network leaves its mention answered; a passing failure leaves it for a later run; any other
    failure ends it."""

    __slots__ = ("mention_id", "rule")
    source = "reply"
    keeps_pictures = False

    def __init__(self, mention_id: str, rule: Optional[str]) -> None:
        self.mention_id, self.rule = mention_id, rule

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        text = start.sent_text or post.text
        return store.claim_reply(start.network, self.mention_id, text, start, rule=self.rule)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        def record(
            outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
        ) -> None:
            status = "answered" if outcome in _REACHED else "pending" if outcome == Outcome.TEMPORARY else "failed"
            store.finish_reply(attempt, _ending(outcome, result, detail, kind, clock()), status)

        return record

    def price(self, network: Network, fit: Fit) -> Optional[float]:
        return network.reply_price(fit)


def line_ending(store: HistoryStore, attempt: int, *, clock: Callable[[], datetime]) -> Record:
    """How a scheduled post's outcome is written: a post that reached, or may have reached, the
    network leaves the round (never sent again), and so does one the network already has. It is
    written with the run's next write (the next attempt, or the run's end), as one transaction."""

    def record(
        outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
    ) -> None:
        ending = _ending(outcome, result, detail, kind, clock(), mark_used=outcome in _REACHED)
        store.finish_attempt(attempt, ending, with_next_write=True)

    return record


# The outcomes after which a post is, or may be, on the network (or the network has it already).
_REACHED = (Outcome.POSTED, Outcome.UNCERTAIN, Outcome.DUPLICATE)


def _ending(
    outcome: Outcome,
    result: Optional[PostResult],
    detail: Optional[str],
    kind: Optional[ErrorKind],
    at: datetime,
    *,
    mark_used: bool = False,
) -> Ending:
    """How an attempt ended, as the history keeps it: a posted one's id and link, an uncertain
    one's look-up key, what went wrong."""
    posted = outcome == Outcome.POSTED and result is not None
    uncertain = outcome == Outcome.UNCERTAIN and result is not None
    return Ending(
        outcome,
        at,
        post_id=result.post_id if posted else None,
        url=result.url if posted else None,
        detail=detail,
        error_kind=kind,
        lookup_key=result.lookup_key if uncertain else None,
        mark_used=mark_used,
    )


# The version of a stored post's JSON (`Post.to_stored`): a reader meets only versions it knows.
_STORED = 1


def stored_post(stored: Optional[str]) -> Optional[Post]:
    """The post an attempt or a thread was stored with, or None when the row was written before
    the history kept posts (schema 12), or its post cannot be read (logged: the row is then read
    as an older one is)."""
    if stored is None:
        return None
    try:
        return Post.from_stored(stored)
    except ValueError as exc:
        log.warning("the history holds a post that cannot be read (%s): it is read from its text instead", exc)
        return None


def _stored_picture(image: Attachment, keep_bytes: bool) -> Dict[str, object]:
    """One picture as a stored post keeps it: the file it is read from, or its bytes (with
    `keep_bytes`; else its alt text and name only)."""
    kept: Dict[str, object] = {"alt": image.alt, "name": image.name, "alt_optional": image.alt_optional}
    if isinstance(image.source, bytes):
        if keep_bytes:
            kept["data"] = base64.b64encode(image.source).decode("ascii")
    else:
        kept["path"] = str(image.source)
    return kept


def _goes(post: Post, fit: Fit) -> bool:
    """Whether `post` goes to `fit`'s network: it fits, or goes there as a thread."""
    return fit.fits or post.threaded(fit)
