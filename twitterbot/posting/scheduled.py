"""One scheduled run: roll the 1-in-N die, respect the daily cap and the gap, pick a line, post it, record it.

`run_once` is what cron, the systemd timer and the daemon all call. It takes the lock, opens the
history, reads the tweets file and hands over to `decide_and_post`, which holds the logic. One
roll and one pick per run; the picked line goes to every network in POST_TO that it fits, each
recorded before it is sent::

    result = run_once(config, posters=lambda: config.registry.posters_for(config), rng=random.Random(), clock=utc_now)
    result.action     # 'posted', 'uncertain', 'would_post', 'skipped' or 'failed'
    result.networks   # what became of the post on each network
"""

from __future__ import annotations

import contextlib
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import BotError, ErrorKind, ExitStatus, PostError, StateError
from ..lock import run_lock
from ..monitoring import monitored
from ..networks import Fit, Network, Poster
from ..settings.loading import Config
from ..settings.secrets import Scrubber
from ..state.clock import utc_now
from ..state.folder import ensure_state_dir
from ..state.outcomes import Outcome
from ..state.store import HistoryStore
from ..wording import format_duration
from .choose import Pick, hits, pick, roll
from .options import line_rules, sent_text
from .send import Sent, recorder, send_attempt
from .tweets import TweetFile, TweetLine, is_grammar, load_tweets, preview

if TYPE_CHECKING:
    from ..registry import Registry

__all__ = [
    "CapReached",
    "Go",
    "PostStyle",
    "PosterFactory",
    "RunResult",
    "Skip",
    "cap_reached",
    "decide",
    "decide_and_post",
    "gap_not_passed",
    "log_result",
    "monthly_budgets",
    "run_once",
    "run_watched",
    "wait_jitter",
    "CLOCK_SLACK",
    "LOOK_UP_WINDOW",
    "MAX_DUPLICATE_TRIES",
]

log = logging.getLogger(__name__)

# When X says a picked line is already posted, the line leaves the round and the run tries another
# untried line, sending at most this many lines in all: each try is a request X may bill. Lines
# left untried are the next runs' to try.
MAX_DUPLICATE_TRIES = 10
CAP_WINDOW = timedelta(hours=24)
# An uncertain post is looked up (LOOK_UP_UNCERTAIN) for this long after it was sent; older, it
# stays uncertain and counted as posted: a network's recent posts reach back only so far.
LOOK_UP_WINDOW = timedelta(days=7)
# History rows dated later than now plus this were written while the clock was ahead: they are left
# out of the cap and the gap (and the run warns), so fixing a clock never blocks posting for long.
CLOCK_SLACK = timedelta(minutes=5)


@dataclass(frozen=True)
class CapReached:
    """MAX_POSTS_PER_DAY is used up: `recent` posts (from every source) in the last 24 hours,
    and the oldest of them leaves the window at `frees_at`."""

    recent: int
    frees_at: Optional[datetime]

    def reason(self, limit: int) -> str:
        return f"the cap is reached: {self.recent} posts in the last 24 hours (MAX_POSTS_PER_DAY={limit})"


def cap_reached(store: HistoryStore, now: datetime, limit: int) -> Optional[CapReached]:
    """The one check of the daily cap, for scheduled runs and progress jobs alike: None while
    fewer than `limit` posts went out in the last 24 hours. Posts dated in the future (the clock
    was ahead when they were made) do not count: they would block posting until that date."""
    recent = store.posts_since(now - CAP_WINDOW, until=now + CLOCK_SLACK)
    if recent < limit:
        return None
    oldest = store.oldest_post_since(now - CAP_WINDOW, until=now + CLOCK_SLACK)
    return CapReached(recent, oldest + CAP_WINDOW if oldest else None)


def gap_not_passed(store: HistoryStore, now: datetime, min_gap: timedelta) -> Optional[datetime]:
    """When the next scheduled post may go, if the last one went out less than `min_gap` ago
    (MIN_POST_GAP); None if a post may go now. Progress jobs' posts do not count."""
    if min_gap <= timedelta(0):
        return None
    last = store.last_scheduled_post(until=now + CLOCK_SLACK)
    if last is None or now - last >= min_gap:
        return None
    return last + min_gap


def _warn_if_the_clock_went_back(store: HistoryStore, now: datetime) -> None:
    """Once, in the first run after it: the last run is dated after now, so the clock was ahead
    then or is behind now. This run's own row, dated now, ends the warning."""
    last = store.last_run_started()
    if last and last > now + CLOCK_SLACK:
        log.warning(
            "the clock seems to have jumped: the last run is dated %s, after now (%s); posts dated in the "
            "future are left out of MAX_POSTS_PER_DAY and MIN_POST_GAP. Check the clock (timedatectl)",
            last.astimezone().strftime("%Y-%m-%d %H:%M"),
            now.astimezone().strftime("%Y-%m-%d %H:%M"),
        )


@dataclass(frozen=True)
class RunResult:
    """What a run decided and did; `--json` prints it, the log line is made from it."""

    action: Outcome  # posted | uncertain | would_post | skipped | failed
    reason: str  # one sentence for the log
    one_in: Optional[int]  # None only when the run failed before reading the settings
    roll: Optional[int]  # None when --force skipped the roll
    line: Optional[TweetLine] = None
    post_id: Optional[str] = None  # the first network's post
    error: Optional[BotError] = None  # a PostError, or (--json of a failed command) any BotError
    check_url: Optional[str] = None  # uncertain: where to see whether the post was made
    networks: Tuple[Sent, ...] = ()  # the post on each network in POST_TO
    caught_up: Tuple[Sent, ...] = ()  # earlier posts this run sent to a network that had missed them
    settled: Tuple[str, ...] = ()  # uncertain posts this run looked up, and what it found

    @property
    def url(self) -> Optional[str]:
        first = next((sent.result for sent in self.networks if sent.result and sent.result.url), None)
        return first.url if first else None

    @property
    def exit_status(self) -> ExitStatus:
        return self.error.exit_status if self.error else ExitStatus.OK

    def as_dict(self) -> dict:
        line = self.line
        return {
            "action": self.action,
            "reason": self.reason,
            "text": line.text if line else None,
            "line": line.lineno if line else None,
            "weighted_length": line.weighted_length if line else None,
            "has_url": line.has_url if line else None,
            "post_id": self.post_id,
            "tweet_id": self.post_id,  # deprecated alias of post_id, for one release
            "url": self.url,
            "check_url": self.check_url,
            "one_in": self.one_in,
            "roll": self.roll,
            "error": self.error.kind if self.error else None,
            "exit_status": int(self.exit_status),
            "networks": [sent.as_dict() for sent in self.networks],
            "caught_up": [sent.as_dict() for sent in self.caught_up],
            "settled": list(self.settled),
        }


# A run's posters by network, made by a function that only a run with something to send calls
# (so a run the roll skips never imports tweepy); None: a dry run, which sends nothing.
PosterFactory = Callable[[], Mapping[str, Poster]]


def run_once(
    config: Config,
    *,
    posters: Optional[PosterFactory],
    rng: random.Random,
    clock: Callable[[], datetime] = utc_now,
    dry_run: bool = False,
    force: bool = False,
) -> RunResult:
    """A whole scheduled run. A real run holds the lock so overlapping runs cannot both post;
    a dry run needs no lock and no posters, and changes nothing but its own history row (and the
    cache of measured lengths)."""
    ensure_state_dir(config["BOT_STATE_DIR"])
    lock = contextlib.nullcontext() if dry_run else run_lock(config.lock_file)
    with lock, HistoryStore(config.history_file) as store:

        def read_tweets() -> TweetFile:
            rules = line_rules(config)
            if is_grammar(config["TWEETS_FILE"]):  # a new expansion of the grammar, as a file of one text
                from .generated import draw_post

                since = clock() - timedelta(seconds=config["GRAMMAR_MEMORY"])
                networks = config.registry.posting_to(config)
                posted = store.texts_posted_since(since)
                return draw_post(config["TWEETS_FILE"], networks, rng=rng, posted=posted, rules=rules)
            tweets = load_tweets(config["TWEETS_FILE"], config.registry.posting_to(config), cache=store, rules=rules)
            for problem in tweets.problems:
                log.warning("%s line %d %s", tweets.path.name, problem.lineno, problem.message)
            return tweets

        return decide_and_post(
            read_tweets,
            store=store,
            posters=posters,
            rng=rng,
            clock=clock,
            one_in=config["TWEET_ONE_IN"],
            max_posts_per_day=config["MAX_POSTS_PER_DAY"],
            min_post_gap=timedelta(seconds=config["MIN_POST_GAP"]),
            dry_run=dry_run,
            force=force,
            pictures_folder=config["TWEETS_FILE"].parent,  # a caught-up post's pictures are read from there
            registry=config.registry,
            budgets=monthly_budgets(config),
            look_up=config["LOOK_UP_UNCERTAIN"],
            secrets=config.secrets(),
            style=PostStyle(config["POST_LANGUAGE"], config["THREAD_NUMBERS"]),
        )


def monthly_budgets(config: Config) -> Dict[str, float]:
    """The monthly budget of each network that has one set (X_MONTHLY_BUDGET), by network: what a
    run's posts, its catch-ups and a job's posts are held to."""
    return {
        network.name: config[network.budget]
        for network in config.registry.networks
        if network.budget and config[network.budget] is not None
    }


def run_watched(config: Config, run: Callable[[], RunResult], *, dry_run: bool = False) -> RunResult:
    """`run()` told to the monitors (HEALTHCHECK_URL, NOTIFY_URL): a ping as it starts and ends, an
    alert for what needs the owner (`monitored.watched`). A dry run, or a bot with no monitor set,
    just runs, and imports nothing more."""
    if dry_run or not monitored(config):
        return run()
    from .monitored import watched

    return watched(config, run)


def decide_and_post(
    tweets: Union[TweetFile, Callable[[], TweetFile]],
    *,
    store: HistoryStore,
    posters: Optional[PosterFactory],
    rng: random.Random,
    clock: Callable[[], datetime],
    one_in: int,
    max_posts_per_day: int,
    min_post_gap: timedelta,
    dry_run: bool = False,
    force: bool = False,
    pictures_folder: Optional[Path] = None,
    registry: Registry,
    budgets: Optional[Mapping[str, float]] = None,
    look_up: bool = False,
    secrets: Sequence[str] = (),
    style: Optional[PostStyle] = None,
) -> RunResult:
    """The decision and its side effects, given an open store (the caller holds the lock).
    `tweets` may be a function that reads the file: only a run the roll does not skip calls it.
    `budgets`: the monthly budget of the networks that have one, by network. With `look_up`
    (LOOK_UP_UNCERTAIN), a real run first settles uncertain posts; `secrets` (config.secrets())
    are masked in the text sent, as in every output; `style`: the posts' language and the
    threads' numbering (POST_LANGUAGE, THREAD_NUMBERS)."""
    style = style or PostStyle()
    now = clock()
    _warn_if_the_clock_went_back(store, now)
    if not dry_run:
        _recover_interrupted(store, now)
    rolled = _roll(one_in, rng, force)
    if callable(tweets) and (rolled is None or hits(rolled)):
        tweets = tweets()  # before the run's row, so a file that cannot be used leaves no row
    run_id = store.begin_run(at=now, one_in=one_in, roll=rolled, forced=force, dry_run=dry_run)
    mask = Scrubber(secrets)
    posters_made = _once(posters)

    settled: Tuple[str, ...] = ()
    caught_up: Tuple[Sent, ...] = ()
    if not dry_run:  # before the decision: what earlier runs left open
        settled = _settle(store, posters_made, now, clock=clock, registry=registry) if look_up else ()
        caught_up = _catch_up(
            store, posters_made, run_id, clock, pictures_folder, registry, mask, budgets or {}, style.language
        )

    def finish(action: Outcome, reason: str, **fields: object) -> RunResult:
        result = RunResult(action, reason, one_in, rolled, caught_up=caught_up, settled=settled, **fields)  # type: ignore[arg-type]
        _record_run(store, run_id, clock(), result)
        return result

    decision = decide(store, now, rolled=rolled, one_in=one_in, cap=max_posts_per_day, gap=min_post_gap, force=force)
    if isinstance(decision, Skip):
        return finish(Outcome.SKIPPED, decision.reason)
    assert not callable(tweets)  # read above, since the roll hit
    used = store.used_texts()
    chosen = _pick(store, tweets, used, rng)
    line = tweets.line(chosen.index)
    if dry_run:
        planned = _planned(line, tweets.path.name, registry)
        action, reason, error = _dry_outcome(
            decision.why, chosen.new_round, planned, _threads_planned(line, registry, style)
        )
        return finish(action, reason, line=line, networks=planned, error=error)
    if not posters_made():
        raise ValueError("a real run needs posters")
    try:
        store.ensure_room_to_record()  # never post what could not then be recorded
    except StateError as exc:
        finish(Outcome.FAILED, str(exc))
        raise
    if chosen.new_round:
        used = _start_new_round(store, tweets)
    action, reason, fields = _post_a_line(
        store,
        posters_made(),
        tweets,
        line,
        used,
        why=decision.why,
        run_id=run_id,
        rng=rng,
        clock=clock,
        registry=registry,
        mask=mask,
        budgets=budgets or {},
        style=style,
    )
    return finish(action, reason, **fields)


def _once(posters: Optional[PosterFactory]) -> Callable[[], Dict[str, Poster]]:
    """The run's posters, made at the first call (a run that sends nothing never makes them)."""
    made: Dict[str, Poster] = {}

    def posters_made() -> Dict[str, Poster]:
        if not made and posters is not None:
            made.update(posters())
        return made

    return posters_made


def _record_run(store: HistoryStore, run_id: int, at: datetime, result: RunResult) -> None:
    """The run's row, finished: what it did, why, and the post it made."""
    store.finish_run(
        run_id,
        at=at,
        action=result.action,
        reason=result.reason,
        text=result.line.key if result.line else None,
        post_id=result.post_id,
        url=result.url,
        error_kind=result.error.kind if result.error else None,
    )


def _catch_up(
    store: HistoryStore,
    posters: Callable[[], Mapping[str, Poster]],
    run_id: int,
    clock: Callable[[], datetime],
    pictures_folder: Optional[Path],
    registry: Registry,
    mask: Scrubber,
    budgets: Mapping[str, float],
    language: Optional[str],
) -> Tuple[Sent, ...]:
    """A real run's catch-up of recent posts a network missed (imported only by a real run)."""
    from .catchup import catch_up

    return catch_up(
        store,
        posters,
        run_id=run_id,
        clock=clock,
        pictures_folder=pictures_folder,
        registry=registry,
        mask=mask,
        budgets=budgets,
        language=language,
    )


def _settle(
    store: HistoryStore, posters: PosterFactory, now: datetime, *, clock: Callable[[], datetime], registry: Registry
) -> Tuple[str, ...]:
    """Uncertain posts of the last LOOK_UP_WINDOW looked up on their networks (settle.py, imported
    only when there are some: a run with none asks nothing and imports nothing)."""
    unsettled = store.unsettled(now - LOOK_UP_WINDOW, registry.names())
    if not unsettled:
        return ()
    from .settle import settle_uncertain

    return tuple(settle_uncertain(store, unsettled, posters, clock=clock, registry=registry))


@dataclass(frozen=True)
class PostStyle:
    """How a run's posts are written beyond their text: their language (POST_LANGUAGE; a line's
    own lang overrides it) and whether a thread's parts are numbered (THREAD_NUMBERS)."""

    language: Optional[str] = None
    numbers: bool = False


def _threads_planned(line: TweetLine, registry: Registry, style: PostStyle) -> str:
    """For a dry run's reason: where `line` would go as a thread, and what that costs."""
    if not any(line.threaded(fit) for fit in line.fits):
        return ""
    from .threads import parts_for, thread_cost  # only a line that goes somewhere as a thread

    said = []
    for fit in line.fits:
        if line.threaded(fit):
            network = registry.network(fit.network)
            parts = parts_for(sent_text(line.text, line.options, network), network, style.numbers)
            said.append(f"{network.label} would get it as {thread_cost(network, parts)}")
    return "".join(f"; {each}" for each in said)


def _planned(line: TweetLine, file_name: str, registry: Registry) -> Tuple[Sent, ...]:
    """Where a dry run would send `line`: each network it fits or threads to, and those it is too long for. Its
    pictures are prepared as a real run prepares them: one that cannot be fails there too."""
    pictures: Mapping[str, object] = {}
    if line.images:
        from .images import prepared_pictures  # a line without pictures never imports them

        fitting = {
            fit.network: registry.network(fit.network).image_limits()
            for fit in line.fits
            if fit.fits or line.threaded(fit)
        }
        pictures = prepared_pictures(line.images, fitting, where=f"{file_name} line {line.lineno}")
    planned = []
    for fit in line.fits:
        error = pictures.get(fit.network)
        if isinstance(error, PostError):
            planned.append(Sent(fit.network, Outcome.FAILED, fit, error=error))
        else:
            going = fit.fits or line.threaded(fit)
            planned.append(Sent(fit.network, Outcome.WOULD_POST if going else Outcome.TOO_LONG, fit))
    return tuple(planned)


def _dry_outcome(
    why: str, new_round: bool, planned: Tuple[Sent, ...], threads: str = ""
) -> Tuple[Outcome, str, Optional[BotError]]:
    """A dry run's action, reason and error: a picture that cannot be prepared is the data error a
    real run would meet; `threads` says where the line would go as a thread."""
    round_note = "; every line has been posted, so this starts a new round" if new_round else ""
    why = f"{why}; dry run, nothing sent{round_note}{threads}"
    error = next((sent.error for sent in planned if sent.error is not None), None)
    if error is None:
        return Outcome.WOULD_POST, why, None
    action = Outcome.WOULD_POST if any(sent.outcome == Outcome.WOULD_POST for sent in planned) else Outcome.FAILED
    return action, f"{why}; {error}", error


def _start_new_round(store: HistoryStore, tweets: TweetFile) -> AbstractSet[str]:
    """Every line has been posted: they all come round again (the lines used so far: none)."""
    log.info("every line of %s has been posted: starting a new round", tweets.path.name)
    store.start_new_round()
    return set()


def _recover_interrupted(store: HistoryStore, now: datetime) -> None:
    """A post the previous run began but never finished counts as posted: it may be there."""
    for text in store.recover_interrupted(at=now):
        log.warning(
            "the previous run stopped while posting %s; counting it as posted, not sending it again", preview(text)
        )


def _roll(one_in: int, rng: random.Random, force: bool) -> Optional[int]:
    """The die, 0..one_in-1 (a 0 posts); None with --force, which rolls nothing."""
    if force:
        log.debug("the roll: none (--force)")
        return None
    rolled = roll(one_in, rng)
    log.debug("the roll: %d of 0..%d (1 run in %d posts, on a 0)", rolled, one_in - 1, one_in)
    return rolled


def _pick(store: HistoryStore, tweets: TweetFile, used: AbstractSet[str], rng: random.Random) -> Pick:
    """A line not yet posted this round (never the last one posted, if others are left)."""
    texts = tweets.texts  # each once; a TweetLine is made for the picked text only
    log.debug(
        "the bag: %d of the %d lines not posted yet in this round",
        len(texts) - len(used.intersection(texts)),
        len(texts),
    )
    chosen = pick(texts, used=used, last_posted=store.last_posted_text(), rng=rng)
    assert chosen is not None  # load_tweets never returns an empty file
    return chosen


@dataclass(frozen=True)
class Skip:
    """The run posts nothing, and why: the roll, the daily cap or the gap since the last post."""

    reason: str


@dataclass(frozen=True)
class Go:
    """The run posts a line, and why ("rolled 0 of 1-in-4", "forced, although ...")."""

    why: str


def decide(
    store: HistoryStore,
    now: datetime,
    *,
    rolled: Optional[int],
    one_in: int,
    cap: int,
    gap: timedelta,
    force: bool,
) -> Union[Skip, Go]:
    """Whether this run posts, before any line is picked: the roll (None: --force), then the cap
    of posts in 24 hours, then the gap since the last scheduled post (which --force may pass)."""
    if rolled is not None and not hits(rolled):
        return Skip(f"rolled {rolled} (posts on 0 of 1-in-{one_in})")
    why = "forced" if rolled is None else f"rolled 0 of 1-in-{one_in}"
    capped = cap_reached(store, now, cap)
    if capped:
        after = f"; the next can go after {capped.frees_at.astimezone():%Y-%m-%d %H:%M}" if capped.frees_at else ""
        return Skip(f"{why}, but {capped.reason(cap)}{after}")
    gap_ends = gap_not_passed(store, now, gap)
    if gap_ends:
        last = (gap_ends - gap).astimezone()
        too_soon = (
            f"the last scheduled post went out at {last:%H:%M}, less than MIN_POST_GAP={format_duration(gap)} ago"
        )
        if not force:
            return Skip(f"{why}, but {too_soon}; the next can go after {gap_ends.astimezone():%H:%M}")
        log.warning("--force: posting although %s", too_soon)
        return Go(f"forced, although {too_soon}")
    return Go(why)


def _post_a_line(
    store: HistoryStore,
    posters: Mapping[str, Poster],
    tweets: TweetFile,
    line: TweetLine,
    used: AbstractSet[str],
    *,
    why: str,
    run_id: int,
    rng: random.Random,
    clock: Callable[[], datetime],
    registry: Registry,
    mask: Scrubber,
    budgets: Mapping[str, float],
    style: PostStyle,
) -> Tuple[Outcome, str, Dict[str, object]]:
    """Post `line` everywhere; while every network already has it, mark it used and try another,
    within MAX_DUPLICATE_TRIES. The run's action, reason and result fields."""
    texts = tweets.texts
    tried: List[TweetLine] = []  # lines every network already had
    while True:
        sent = _post_everywhere(
            store,
            posters,
            line,
            tweets.path.name,
            run_id=run_id,
            clock=clock,
            registry=registry,
            mask=mask,
            budgets=budgets,
            style=style,
        )
        if any(each.reached for each in sent) or not all(
            each.outcome in (Outcome.DUPLICATE, Outcome.TOO_LONG) for each in sent
        ):
            action, reason = _outcome(why, line, sent)
            return action, reason, {"line": line, "networks": sent, **_first_post(sent)}
        tried.append(line)
        used = used | {line.key}
        another = pick(texts, used=used, last_posted=None, rng=rng)
        if another is None or another.new_round or len(tried) >= MAX_DUPLICATE_TRIES:
            # Every line is there already (a new round would only repeat them), or the budget is spent.
            left = 0 if another is None or another.new_round else sum(1 for text in texts if text not in used)
            error = _duplicates_error(tried, left)
            return Outcome.FAILED, str(error), {"line": line, "error": error, "networks": sent}
        log.warning(
            "%s already %s line %d %s; marked it used and trying another (%d of at most %d)",
            _names(registry, (each.network for each in sent if each.outcome == Outcome.DUPLICATE)),
            "has" if len(sent) == 1 else "have",
            line.lineno,
            preview(line.text),
            len(tried) + 1,
            MAX_DUPLICATE_TRIES,
        )
        line = tweets.line(another.index)


def _post_everywhere(
    store: HistoryStore,
    posters: Mapping[str, Poster],
    line: TweetLine,
    file_name: str,
    *,
    run_id: int,
    clock: Callable[[], datetime],
    registry: Registry,
    mask: Scrubber,
    budgets: Mapping[str, float],
    style: PostStyle,
) -> Tuple[Sent, ...]:
    """Send `line` to each network it is for and fits (or, too long, threads to) and whose budget
    it would not pass, one after another, each attempt recorded (with its price) before it is sent
    and its outcome after. The attempts share a group, so the post counts once in the cap. The
    attempt is recorded by the line's key (what the bag knows it by); the text sent is masked. Its
    pictures are read and prepared for every network first: after the first record, nothing about
    them is left to fail; a network its pictures cannot go to records a failed attempt."""
    sent: List[Sent] = []
    group: Optional[int] = None
    fitting = {network: line.fit(network) for network in posters}
    pictures = _pictures_for(line, posters, fitting, file_name, registry)
    for network, poster in posters.items():
        if not line.options.is_for(network):
            continue  # its only or skip leaves this network out
        fit = fitting[network]
        if fit is None or not (fit.fits or line.threaded(fit)):
            sent.append(Sent(network, Outcome.TOO_LONG, fit))
            continue
        where = registry.network(network)
        text = mask(sent_text(line.text, line.options, where))
        language = line.options.language or style.language
        spoiler = line.options.warning if where.content_warnings else None
        parts = () if fit.fits else _parts(text, where, style.numbers)
        stopped = _over_budget(store, registry, network, fit, budgets, clock(), posts=max(1, len(parts)))
        if stopped:
            log.warning("%s", stopped)
            sent.append(Sent(network, Outcome.OVER_BUDGET, fit, note=stopped))
            continue
        prepared = pictures.get(network, [])
        if fit.fits:
            attempt = store.begin_attempt(
                line.key, run_id=run_id, at=clock(), network=network, group=group, cost=where.price(fit), sent_text=text
            )
            if isinstance(prepared, PostError):  # nothing is sent: the failure is recorded as it is
                recorder(store, attempt, clock)(Outcome.FAILED, None, str(prepared), prepared.kind)
                sent.append(Sent(network, Outcome.FAILED, fit, error=prepared))
            else:
                sent.append(
                    send_attempt(
                        store,
                        poster,
                        attempt,
                        text,
                        fit=fit,
                        clock=clock,
                        images=prepared,
                        registry=registry,  # type: ignore[arg-type]
                        language=language,
                        spoiler=spoiler,
                    )
                )
        elif isinstance(prepared, PostError):  # a thread's pictures go with its part 1: none is sent
            sent.append(Sent(network, Outcome.FAILED, fit, error=prepared))
            continue
        else:
            thread, attempt = store.begin_thread(
                line.key,
                parts,
                run_id=run_id,
                at=clock(),
                network=network,
                group=group,
                language=language,
                spoiler=spoiler,
            )
            from .threads import post_thread, thread_cost  # only a line that goes somewhere as a thread

            log.info("%s: line %d goes there as %s", where.label, line.lineno, thread_cost(where, parts))
            sent.append(
                post_thread(
                    store,
                    poster,
                    thread,
                    run_id=run_id,
                    clock=clock,
                    registry=registry,
                    first_attempt=attempt,
                    fit=fit,
                    images=line.images,
                    language=language,
                    spoiler=spoiler,
                )[0]
            )
        group = group or attempt
    return tuple(sent)


def _over_budget(
    store: HistoryStore,
    registry: Registry,
    network: str,
    fit: Fit,
    budgets: Mapping[str, float],
    now: datetime,
    posts: int = 1,
) -> Optional[str]:
    """Why `fit`'s post (a thread: that many `posts`) may not go to `network` (it would pass the
    network's monthly budget), or None."""
    if network not in budgets:
        return None
    from .budget import budget_stops  # only with a budget set

    return budget_stops(store, registry.network(network), fit, budgets[network], now, posts)


def _pictures_for(
    line: TweetLine,
    posters: Mapping[str, Poster],
    fitting: Mapping[str, Optional[Fit]],
    file_name: str,
    registry: Registry,
) -> Mapping[str, object]:
    """`line`'s pictures prepared for each network it goes to (or the PostError why they cannot
    be), before any attempt is recorded."""
    if not line.images:
        return {}
    from .images import poster_limits, prepared_pictures  # a line without pictures never imports them

    limits = {
        network: poster_limits(poster, network, registry)
        for network, poster in posters.items()
        if _going(fitting[network], line)
    }
    return prepared_pictures(line.images, limits, where=f"{file_name} line {line.lineno}")


def _parts(text: str, network: Network, numbered: bool) -> Tuple[str, ...]:
    """A line too long for `network`, cut into its thread's parts (threads.py, imported only then)."""
    from .threads import parts_for

    return tuple(parts_for(text, network, numbered))


def _going(fit: Optional[Fit], line: TweetLine) -> bool:
    """Whether `line` goes to `fit`'s network: it fits, or goes there as a thread."""
    return fit is not None and (fit.fits or line.threaded(fit))


def _outcome(why: str, line: TweetLine, sent: Tuple[Sent, ...]) -> Tuple[Outcome, str]:
    """The run's action and reason from what became of the post on each network. A post that no
    network got because of their budgets is a skip: the bot did what it was told."""
    reached = [each for each in sent if each.reached]
    if (
        not reached
        and any(each.outcome == Outcome.OVER_BUDGET for each in sent)
        and all(each.outcome in (Outcome.OVER_BUDGET, Outcome.TOO_LONG) for each in sent)
    ):
        return Outcome.SKIPPED, f"{why}, but " + "; ".join(each.note or "" for each in sent if each.note)
    if len(sent) == 1 and sent[0].error is not None:
        return (Outcome.UNCERTAIN if sent[0].reached else Outcome.FAILED), str(sent[0].error)
    action = (
        Outcome.POSTED
        if any(each.outcome == Outcome.POSTED for each in sent)
        else Outcome.UNCERTAIN
        if reached
        else Outcome.FAILED
    )
    if len(sent) == 1:
        return action, why
    parts = []
    for each in sent:
        if each.outcome == Outcome.OVER_BUDGET:
            parts.append(f"{each.network}: {each.note}")
        elif each.outcome == Outcome.TOO_LONG and each.fit:
            parts.append(f"{each.network}: not sent, too long ({each.fit.length} of {each.fit.limit} {each.fit.unit})")
        elif each.outcome == Outcome.TEMPORARY and reached:
            parts.append(f"{each.network}: {each.error} (a later run sends it there)")
        elif each.error is not None:
            parts.append(f"{each.network}: {each.error}")
        else:
            parts.append(f"{each.network}: {each.outcome}")
    return action, f"{why}; " + "; ".join(parts)


def _first_post(sent: Tuple[Sent, ...]) -> dict:
    """The run's error (the first network's problem, if any) and its first post's id and check link."""
    error = next((each.error for each in sent if each.error is not None and each.outcome != Outcome.DUPLICATE), None)
    posted = next((each.result for each in sent if each.result is not None), None)
    return {
        "error": error,
        "post_id": posted.post_id if posted and posted.confirmed else None,
        "check_url": posted.check_url if posted and not posted.confirmed else None,
    }


def _names(registry: Registry, networks: Iterable[str]) -> str:
    return " and ".join(registry.label(name) for name in networks)


def _duplicates_error(tried: List[TweetLine], untried: int) -> PostError:
    numbers = ", ".join(str(line.lineno) for line in tried)
    lines = f"line {numbers}" if len(tried) == 1 else f"lines {numbers}"
    if untried:
        message = (
            f"X already has the {len(tried)} lines this run sent ({lines}, now marked used); a run stops after "
            f"{MAX_DUPLICATE_TRIES} such tries, as each is a request X may bill. {untried} untried lines are left "
            "for the next runs: remove lines that are already on X from the tweets file"
        )
    else:
        message = (
            f"X already has every line left in this round ({lines} tried by this run, now marked used): "
            "add new lines to the tweets file"
        )
    return PostError(message, kind=ErrorKind.DUPLICATE, exit_status=ExitStatus.DATA_ERROR)


def wait_jitter(jitter: float, *, rng: random.Random, wait: Callable[[float], object], what: str) -> object:
    """Wait a random 0..`jitter` seconds (TWEET_JITTER) before a scheduled run, drawn anew each time:
    the daemon does it, and so does a run started by cron (``--jitter``), as RandomizedDelaySec does
    for the systemd timer. Returns what `wait` returns (the daemon's stop event: whether to stop)."""
    delay = rng.uniform(0, jitter)
    log.info("%s: waiting a random %s first (TWEET_JITTER)", what, format_duration(timedelta(seconds=delay)))
    return wait(delay)


def _where(planned: Tuple[Sent, ...], registry: Registry) -> str:
    """Where a dry run would post the line, each network with its count (and what it costs there)."""
    parts = []
    for sent in planned:
        fit = sent.fit
        if fit is None:
            continue
        counted = registry.network(fit.network).describe(fit)
        if not fit.fits:
            parts.append(f"not to {registry.label(fit.network)}: too long ({fit.reason or counted})")
        elif fit.cost:
            parts.append(f"to {registry.label(fit.network)} ({counted}; it {fit.cost})")
        else:
            parts.append(f"to {registry.label(fit.network)} ({counted})")
    return ", ".join(parts) or "(to no network)"


def log_result(result: RunResult, registry: Registry) -> None:
    """The one human line per decision (cron mail and journald keep it)."""
    line = result.line
    if result.action == Outcome.POSTED and line:
        log.info("posted line %d %s %s (%s)", line.lineno, preview(line.text), result.url or "", result.reason)
    elif result.action == Outcome.UNCERTAIN and line:
        log.warning("uncertain: line %d %s: %s", line.lineno, preview(line.text), result.reason)
    elif result.action == Outcome.WOULD_POST and line:
        log.info("dry run: would post line %d %s; %s", line.lineno, _where(result.networks, registry), result.reason)
    elif result.action == Outcome.SKIPPED:
        log.info("skipped: %s", result.reason)
    else:
        log.error("failed: %s", result.reason)
