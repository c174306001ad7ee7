"""One scheduled run: roll the 1-in-N die, respect the daily cap and the gap, pick a line, post it, record it.

`run_once` is what cron, the systemd timer and the daemon all call. It takes the lock, opens the
history, reads the tweets file and hands over to `decide_and_post`, which holds the run's own
rules: which line, and whether now. How the picked line reaches each network in POST_TO (fitted,
held to the budgets, recorded before it is sent) is the `Delivery`'s (delivery.py), as for every
other post::

    result = run_once(config, posters=lambda: posters_for(config), rng=random.Random())  # networks.posters_for
    result.action     # 'posted', 'uncertain', 'would_post', 'skipped' or 'failed'
    result.networks   # what became of the post on each network
"""

from __future__ import annotations

import contextlib
import logging
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Dict, Generic, List, Mapping, Optional, Tuple, TypeVar, Union

from ..delivery.send import Sent
from ..errors import StateError
from ..lock import RUN_LOCK_WAIT, run_lock
from ..monitoring import monitored
from ..networks import Network, Poster
from ..networks.lazy import LazyPosters
from ..settings.keys import HISTORY_DAYS
from ..settings.loading import Config
from ..settings.table import POST_TO
from ..state.clock import Clock, utc_now
from ..state.floor import check_clock
from ..state.folder import ensure_state_dir
from ..state.outcomes import Outcome
from ..state.store import HistoryStore
from ..wording import format_duration, preview
from . import (
    GRAMMAR_MEMORY,
    LOOK_UP_UNCERTAIN,
    LOOK_UP_WINDOW,
    MAX_POSTS_PER_DAY,
    MIN_POST_GAP,
    TWEET_ONE_IN,
    TWEETS_FILE,
    delivery_rules,
)
from .calendar import Calendar, Due, dated_due, missed_reason, one_offs_due
from .choose import Pick, hits, pick
from .decision import Go, Skip, cap_reached, decide, roll_die, warn_if_the_clock_went_back
from .result import MAX_DUPLICATE_TRIES, RunResult, duplicates_error, first_post, outcome_of
from .sources import PostSource, source_of
from .tweets import TweetFile, TweetLine
from .when import LineTime

if TYPE_CHECKING:
    from ..delivery.deliver import Delivery, DeliveryRules
    from ..state.outcomes import RunRef
    from .tagpictures import PictureRules

__all__ = [
    "CATCH_UP_WINDOW",
    "Occasion",
    "MAX_DUPLICATE_TRIES",
    "PosterFactory",
    "Run",
    "RunRules",
    "decide_and_post",
    "run_once",
    "run_watched",
    "wait_jitter",
    "work_besides_the_roll",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

# A post that reached some networks but failed for a temporary reason on another (down, rate
# limited) is sent there by the next runs, until it is this old: later, it would be old news.
CATCH_UP_WINDOW = timedelta(hours=24)

# A run's posters by network, made by a function that only a run with something to send calls
# (so a run the roll skips never imports tweepy); None: a dry run, which sends nothing.
PosterFactory = Callable[[], Mapping[Network, Poster]]


@dataclass(frozen=True)
class Occasion:
    """What a run was started for: `at`, a dry run's pretended time (--at); `trusted`, a clock the
    history's newest record makes unbelievable believed all the same (--trust-clock,
    state/floor.py: records dated after it are dated now);
    `one_offs`, a wake for a one-off line's time (--one-offs: the one-off or nothing, no roll);
    `rolled`, the die's face already rolled by whoever started the run (--roll: the flock's daemon
    rolls in its own process, and starts a run only when it has something to do)."""

    at: Optional[datetime] = None
    trusted: bool = False
    one_offs: bool = False
    rolled: Optional[int] = None


def run_once(
    config: Config,
    *,
    posters: Optional[PosterFactory],
    rng: random.Random,
    clock: Clock = utc_now,
    dry_run: bool = False,
    force: bool = False,
    stopping: Callable[[], bool] = lambda: False,
    when: Optional[Occasion] = None,
) -> RunResult:
    """A whole scheduled run. A real run holds the lock so overlapping runs cannot both post;
    a dry run needs no lock and no posters, and changes nothing but its own history row (and the
    cache of measured lengths). `stopping`: the daemon's stop (a thread stops between parts).
    `when.at`: a dry run as if it were that time (--at), which records nothing, not even its row;
    `when.one_offs`: a wake for a one-off line, which posts a one-off whose time has come or nothing.
    First the clock is checked against the history (state/floor.py): a clock not set yet raises
    ClockNotSet (75) before anything is decided; `when.trusted` (--trust-clock) believes it."""
    when = when or Occasion()
    at = when.at
    if at is not None:
        if not dry_run:
            raise ValueError("only a dry run may pretend another time")
        clock = lambda: at  # noqa: E731
    ensure_state_dir(config.state.path)
    lock = contextlib.nullcontext() if dry_run else run_lock(config.state.lock, wait=RUN_LOCK_WAIT)
    source = source_of(config)
    rules = RunRules.of(config, source)
    with lock, HistoryStore(config.state.history) as store:

        def read_tweets() -> TweetFile:
            return source.for_run(store, rng=rng, now=clock().astimezone(rules.calendar.zone))

        newest = store.newest_record()
        if at is None:
            check_clock(newest, clock(), trusted=when.trusted)
            if when.trusted and not dry_run and newest is not None and newest > clock():
                changed = store.redate_after(clock())
                log.warning("--trust-clock: %d records a clock that was ahead dated later are dated now", changed)
                newest = clock()
        how = Run(store, posters, rng, clock, dry_run=dry_run, force=force, stopping=stopping, record=at is None)
        how.newest, how.one_offs, how.rolled = newest, when.one_offs, when.rolled
        return decide_and_post(read_tweets, how, rules, scan=source.times)


@dataclass(frozen=True)
class RunRules:
    """What a scheduled run is held to, from the settings: the die (TWEET_ONE_IN), the cap
    (MAX_POSTS_PER_DAY), the gap (MIN_POST_GAP), the networks it posts to (POST_TO's, in order),
    where a caught-up post's pictures are read from (the tweets file's folder), whether uncertain
    posts are looked up (LOOK_UP_UNCERTAIN), the secrets masked in what is sent, every network's
    name the history may hold, how long the history keeps runs row by row (HISTORY_DAYS) and a
    grammar's posts (GRAMMAR_MEMORY), the calendar the tweets file's timed lines are read by
    (TWEET_TIMEZONE, LATE_BY), and what the run's Delivery follows (`delivery`: the budgets,
    POST_LANGUAGE, THREAD_NUMBERS, `delivery_rules`), made only by a run that sends or plans."""

    one_in: int
    max_posts_per_day: int
    min_post_gap: timedelta
    networks: Tuple[Network, ...]
    pictures_folder: Optional[Path] = None
    look_up: bool = False
    secrets: Tuple[str, ...] = ()
    known: Tuple[str, ...] = ()
    history_days: int = 400
    grammar_memory: timedelta = timedelta(days=365)
    calendar: Calendar = Calendar()
    pictures: Optional[PictureRules] = None  # how a grammar's tags make their pictures (tagpictures.py)
    delivery: Callable[[], DeliveryRules] = field(default=lambda: _delivery_rules(None), compare=False)

    @classmethod
    def of(cls, config: Config, source: PostSource) -> RunRules:
        """The rules the settings give a run whose posts come from `source` (`source_of(config)`)."""
        return cls(
            one_in=config[TWEET_ONE_IN],
            max_posts_per_day=config[MAX_POSTS_PER_DAY],
            min_post_gap=timedelta(seconds=config[MIN_POST_GAP]),
            networks=config[POST_TO],
            pictures_folder=config[TWEETS_FILE].parent,
            look_up=config[LOOK_UP_UNCERTAIN],
            secrets=config.secrets(),
            known=config.registry.names(),
            history_days=config[HISTORY_DAYS],
            grammar_memory=timedelta(seconds=config[GRAMMAR_MEMORY]),
            calendar=Calendar.of(config),
            pictures=source.picture_rules(),  # only a grammar's tags make pictures: a plain file imports nothing more
            delivery=lambda: _delivery_rules(config),
        )


class Run:
    """One run's means: its open history (the caller holds the lock), its posters (None: a dry
    run), its die and its clock, whether it is a dry run or forced (--force: no roll, and the gap
    may be passed), and `stopping`: whether the process was asked to stop (the daemon's SIGTERM;
    a thread then stops between two parts). A plain class: every run makes one, and a dataclass costs one to make."""

    __slots__ = (
        "_posters",
        "clock",
        "dry_run",
        "force",
        "newest",
        "one_offs",
        "posters",
        "record",
        "rng",
        "rolled",
        "stopping",
        "store",
    )

    def __init__(
        self,
        store: HistoryStore,
        posters: Optional[PosterFactory],
        rng: random.Random,
        clock: Clock = utc_now,
        *,
        dry_run: bool = False,
        force: bool = False,
        stopping: Callable[[], bool] = lambda: False,
        record: bool = True,
    ) -> None:
        self.store, self.posters, self.rng, self.clock = store, posters, rng, clock
        self.dry_run, self.force, self.stopping = dry_run, force, stopping
        self.record = record  # False: a dry run at another time (--at), which writes no row
        self.newest: Optional[datetime] = None  # the history's newest record before the run: pruning's now at most
        self.one_offs = False  # a wake for a one-off line: it posts a one-off whose time has come, or nothing
        self.rolled: Optional[int] = None  # the die's face rolled before the run (--roll), else the run rolls
        self._posters: Optional[LazyPosters] = None

    def outlets(self, networks: Tuple[Network, ...]) -> Mapping[Network, Poster]:
        """The run's posters by network, in POST_TO's order, made at the first call (a run that
        sends nothing never makes them)."""
        if self._posters is None:
            self._posters = LazyPosters(lambda: _posting_to(self.posters, networks))
        return self._posters()


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
    run: Run,
    rules: RunRules,
    *,
    scan: Optional[Callable[[], Mapping[str, LineTime]]] = None,
) -> RunResult:
    """The decision and its side effects. `tweets` may be a function that reads the file: only a
    run the roll does not skip calls it, or one whose `scan` of the file's timed lines finds a
    one-off line due. A real run first settles uncertain posts (with LOOK_UP_UNCERTAIN) and
    catches up what earlier runs left open. A one-off line whose time has come is posted without
    a roll (the cap holds, the gap does not); else a run the roll lets post sends a dated line
    owed today, or the round's next line (calendar.py)."""
    store, now = run.store, run.clock()
    warn_if_the_clock_went_back(store, now)
    if not run.dry_run:
        _recover_interrupted(store, now)
    rolled = None if run.one_offs else roll_die(rules.one_in, run.rng, run.force, given=run.rolled)
    hit = not run.one_offs and (rolled is None or hits(rolled))
    if callable(tweets) and (hit or (scan is not None and one_offs_due(scan(), store, now, rules.calendar))):
        tweets = tweets()  # before the run's row, so a file that cannot be used leaves no row
    read = None if callable(tweets) else tweets
    due = one_offs_due(read.times, store, now, rules.calendar) if read is not None else []
    late = [each for each in due if not each.in_time(rules.calendar.late_by)]
    # Before this run's row: whether a real run came in the first one's time (why they were missed).
    ran_in_time = bool(late) and store.ran_between(late[0].at, late[0].at + rules.calendar.late_by)
    closing = _Closing(run, rules, now, rolled)
    if not run.dry_run:  # before the decision: what earlier runs left open
        closing.settled = _settle(run, rules, now)
        closing.caught_up = _catch_up(run, closing.delivery, rules, now)
    if late:
        assert read is not None
        _note_missed(run, read, late, missed_reason(late[0], rules.calendar, ran_in_time))
    chosen = _choose(run, rules, read, [each for each in due if each.in_time(rules.calendar.late_by)], rolled, now)
    if isinstance(chosen, Skip):
        return closing.finish(Outcome.SKIPPED, chosen.reason)
    assert read is not None  # read above: the roll hit, or a one-off line is due
    return _post_chosen(run, rules, read, chosen, closing)


@dataclass(frozen=True)
class _Chosen:
    """The line a run posts: its index in the file's texts, whether picking it starts a new
    round, and why the run posts (the roll, a dated line, a one-off line's time)."""

    index: int
    new_round: bool
    why: str


def _choose(
    run: Run, rules: RunRules, tweets: Optional[TweetFile], ready: List[Due], rolled: Optional[int], now: datetime
) -> Union[Skip, _Chosen]:
    """What the run posts, decided over the history without changing it: a one-off line whose time
    has come (held to the cap only), else, past the roll, the cap and the gap, a dated line owed
    today or the round's next line; or why it posts nothing."""
    store = run.store
    if ready:
        assert tweets is not None
        one_off = _one_off(store, tweets, ready[0], rules)
        if isinstance(one_off, Skip):
            return one_off
        return _Chosen(tweets.texts.index(ready[0].text), False, one_off.why)
    if run.one_offs:  # woke for a one-off line: never a plain post in its stead
        return Skip("woke for a one-off line, but none is due: posted, noted missed, or no longer in the file")
    cap, gap = rules.max_posts_per_day, rules.min_post_gap
    decision = decide(store, now, rolled=rolled, one_in=rules.one_in, cap=cap, gap=gap, force=run.force)
    if isinstance(decision, Skip):
        return decision
    assert tweets is not None  # read, since the roll hit
    dated = dated_due(tweets.times, store, now, rules.calendar.zone) if tweets.times else None
    if dated is not None:
        index = tweets.texts.index(dated)
        return _Chosen(
            index, False, f"{decision.why}; line {tweets.linenos[index]} is for today {tweets.times[dated].describe()}"
        )
    picked = _pick(store, tweets, store.used_texts(), run.rng)
    if picked is None:
        return Skip(
            f"{decision.why}, but no line is due: every line of {tweets.path.name} has a time, "
            "and none holds now (bot.py check lists what is coming)"
        )
    return _Chosen(picked.index, picked.new_round, decision.why)


def _post_chosen(run: Run, rules: RunRules, tweets: TweetFile, chosen: _Chosen, closing: _Closing) -> RunResult:
    """The chosen line with its tags' pictures made (before the run's row: a picture that fails
    leaves none), planned by a dry run, posted by a real one, and the run recorded."""
    line = tweets.line(chosen.index)
    if line.tags is not None and line.tags.pictures:
        line = _with_pictures(line, rules, tweets.path.name)
    if run.dry_run:
        from .plan import planned

        action, reason, fields = planned(line, tweets.path.name, chosen.why, chosen.new_round, closing.delivery())
        return closing.finish(action, reason, **fields)
    if not run.outlets(rules.networks):  # made before the round or the history changes
        raise ValueError("a real run needs posters for POST_TO's networks")
    store = run.store
    try:
        store.ensure_room_to_record()  # never post what could not then be recorded
    except StateError as exc:
        with contextlib.suppress(StateError):  # the row may not fit either: the room check is what to say
            closing.finish(Outcome.FAILED, str(exc))
        raise
    used = _start_new_round(store, tweets) if chosen.new_round else store.used_texts()
    action, reason, fields = _post_a_line(closing.delivery(), tweets, line, used, why=chosen.why, rng=run.rng)
    return closing.finish(action, reason, **fields)


class _Closing:
    """How a run ends: its row, written when the run first has something to record (a real run
    that posts nothing and finds nothing to settle or catch up writes no row: a skipped run,
    skips.py), its delivery (made only by a run that sends), what it settled and caught up, and
    `finish`, which records the run's result."""

    __slots__ = ("caught_up", "delivery", "now", "rolled", "row", "rules", "run", "settled")

    def __init__(self, run: Run, rules: RunRules, now: datetime, rolled: Optional[int]) -> None:
        self.run, self.rules, self.now, self.rolled = run, rules, now, rolled
        store = run.store
        self.row: _Lazy[Optional[RunRef]] = _Lazy(  # a real run holds the lock: its row goes with its first write
            lambda: store.begin_run(
                at=now, one_in=rules.one_in, roll=rolled, forced=run.force, dry_run=run.dry_run, held=not run.dry_run
            )
            if run.record
            else None
        )
        self.delivery: _Lazy[Delivery] = _Lazy(lambda: _delivery(run, rules, self.row()))
        self.settled: Tuple[str, ...] = ()
        self.caught_up: Tuple[Sent, ...] = ()

    def finish(self, action: Outcome, reason: str, **fields: object) -> RunResult:
        """The run's result, recorded: a quiet skip as a count of the day's skipped runs, else as
        the run's row; a real run's history then pruned."""
        run, rules, store, now = self.run, self.rules, self.run.store, self.now
        quiet = action == Outcome.SKIPPED and not (run.dry_run or self.settled or self.caught_up or self.row.made)
        if quiet:
            fields["streak"] = store.record_skip(now, one_in=rules.one_in, roll=self.rolled, reason=reason).runs
        result = RunResult(
            action,
            reason,
            rules.one_in,
            self.rolled,
            caught_up=self.caught_up,
            settled=self.settled,
            **fields,  # type: ignore[arg-type]
        )
        if not quiet and run.record:
            _record_run(store, self.row(), run.clock(), result)
        if not (quiet or run.dry_run):
            # After the run's record: nothing of the run waits for it. Never from a clock ahead of
            # the history's newest record: a clock believed but wrong folds nothing early.
            _prune(store, rules, min(now, run.newest) if run.newest is not None else now)
        return result


def _with_pictures(line: TweetLine, rules: RunRules, file_name: str) -> TweetLine:
    """The line with the pictures its tags ask for, drawn and fetched (tagpictures.py); raises the
    data error (65) or the failed fetch (75) that keeps the post from going."""
    from dataclasses import replace

    from .tagpictures import PictureRules, make_pictures

    assert line.tags is not None
    where = f"{file_name} expansion {preview(line.key)}"
    return replace(line, drawn=make_pictures(line.tags, rules.pictures or PictureRules(), where=where))


def _one_off(store: HistoryStore, tweets: TweetFile, due: Due, rules: RunRules) -> Union[Skip, Go]:
    """Whether a one-off line whose time has come goes now: without a roll and past MIN_POST_GAP,
    but held to MAX_POSTS_PER_DAY (the next runs try again, until LATE_BY has passed)."""
    lineno = tweets.linenos[tweets.texts.index(due.text)]
    said = f"line {lineno} {tweets.times[due.text].describe()} is due"
    if due.late >= timedelta(minutes=1):
        said += f" ({format_duration(due.late)} ago)"
    capped = cap_reached(store, due.at + due.late, rules.max_posts_per_day)
    if capped:
        return Skip(
            f"{said}, but {capped.reason(rules.max_posts_per_day)}; the next runs try again until "
            f"LATE_BY={format_duration(rules.calendar.late_by)} after its time"
        )
    return Go(said)


def _note_missed(run: Run, tweets: TweetFile, late: List[Due], reason: str) -> None:
    """One-off lines whose time passed more than LATE_BY before this run: noted once in the
    history (a dry run only says so), and never posted."""
    for each in late:
        lineno = tweets.linenos[tweets.texts.index(each.text)]
        what = f"line {lineno} {tweets.times[each.text].describe()}"
        if run.dry_run:
            log.warning("%s would be noted as missed: %s", what, reason)
            continue
        run.store.record_missed(each.text, due=each.at, at=run.clock(), reason=reason)
        log.warning("%s was missed and will not be posted: %s", what, reason)


def _posting_to(posters: Optional[PosterFactory], networks: Tuple[Network, ...]) -> Dict[Network, Poster]:
    """`networks`' posters, in their order: the run's (`posters`), or the dry run's stand-in."""
    made = posters() if posters is not None else _dry_run(networks)
    return {network: made[network] for network in networks if network in made}


def _delivery_rules(config: Optional[Config]) -> DeliveryRules:
    """What a run's Delivery follows, from the settings (`delivery_rules`; none: the defaults,
    a test's run). Imports delivery.py: only a run that sends or plans a post calls it."""
    from ..delivery.deliver import DeliveryRules

    return delivery_rules(config) if config is not None else DeliveryRules()


def _dry_run(networks: Tuple[Network, ...]) -> Dict[Network, Poster]:
    """A dry run's posters: the dry run's own, standing in for every network (nothing is sent)."""
    from ..networks.dryrun import DryRunPoster

    poster = DryRunPoster(networks=networks)
    return {network: poster for network in networks}


def _delivery(run: Run, rules: RunRules, run_id: Optional[RunRef]) -> Delivery:
    """How the run's posts go out (delivery.py, imported only by a run that may send, or plans to)."""
    from ..delivery.deliver import Delivery
    from ..settings.secrets import Scrubber

    return Delivery(
        run.store,
        lambda: run.outlets(rules.networks),
        run.clock,
        Scrubber(rules.secrets),
        rules.delivery(),
        run_id=run_id,
        stopping=run.stopping,
    )


def _post_a_line(
    delivery: Delivery,
    tweets: TweetFile,
    line: TweetLine,
    used: AbstractSet[str],
    *,
    why: str,
    rng: random.Random,
) -> Tuple[Outcome, str, Dict[str, object]]:
    """Post the picked `line` everywhere; while every network already has it, mark it used and
    try another, within MAX_DUPLICATE_TRIES. The run's action, reason and result fields."""
    from .attempts import LineAttempts

    texts = tweets.plain  # the round's: another pick never takes a timed line
    tried: List[TweetLine] = []  # lines every network already had
    while True:
        sent = delivery.deliver(line.post(tweets.path.name), LineAttempts())
        for each in sent:
            if each.outcome == Outcome.OVER_BUDGET:
                log.warning("%s", each.note)
        if (
            not sent
            or any(each.reached for each in sent)
            or not all(each.outcome in (Outcome.DUPLICATE, Outcome.TOO_LONG) for each in sent)
            or any(each.outcome == Outcome.TOO_LONG and each.note for each in sent)  # a thread the cap holds back
        ):
            action, reason = outcome_of(why, line, sent)
            return action, reason, {"line": line, "networks": sent, **first_post(sent)}
        tried.append(line)
        used = used | {line.key}
        another = pick(texts, used=used, last_posted=None, rng=rng)
        if another is None or another.new_round or len(tried) >= MAX_DUPLICATE_TRIES:
            # Every line is there already (a new round would only repeat them), or the budget is spent.
            left = 0 if another is None or another.new_round else sum(1 for text in texts if text not in used)
            error = duplicates_error(tried, left)
            return Outcome.FAILED, str(error), {"line": line, "error": error, "networks": sent}
        log.warning(
            "%s already %s line %d %s; marked it used and trying another (%d of at most %d)",
            " and ".join(each.network.label for each in sent if each.outcome == Outcome.DUPLICATE),
            "has" if len(sent) == 1 else "have",
            line.lineno,
            preview(line.text),
            len(tried) + 1,
            MAX_DUPLICATE_TRIES,
        )
        line = tweets.line(tweets.texts.index(another.text))


def _record_run(store: HistoryStore, run_id: RunRef, at: datetime, result: RunResult) -> None:
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


def _catch_up(run: Run, delivery: Callable[[], Delivery], rules: RunRules, now: datetime) -> Tuple[Sent, ...]:
    """Recent posts a network missed, and threads left unfinished, sent now (catchup.py, imported
    only when there are some: a run with none makes no poster and imports nothing more)."""
    if not _owed_catch_up(run.store, rules, now):
        return ()
    from .catchup import catch_up

    return catch_up(delivery(), now - CATCH_UP_WINDOW, rules.pictures_folder, rules.known, rules.pictures)


def _owed_catch_up(store: HistoryStore, rules: RunRules, now: datetime) -> bool:
    """Whether a recent post still lacks a network, or a thread is unfinished (CATCH_UP_WINDOW)."""
    since, names = now - CATCH_UP_WINDOW, tuple(network.name for network in rules.networks)
    return bool(store.catch_ups(since, names) or store.open_threads(since, names))


def _owed_look_up(store: HistoryStore, rules: RunRules, now: datetime) -> list:
    """The uncertain posts of the last LOOK_UP_WINDOW a run looks up (LOOK_UP_UNCERTAIN), oldest first."""
    return store.unsettled(now - LOOK_UP_WINDOW, rules.known) if rules.look_up else []


def work_besides_the_roll(
    store: HistoryStore, rules: RunRules, now: datetime, times: Callable[[], Mapping[str, LineTime]]
) -> Optional[str]:
    """What a real run at `now` does whatever its roll says, in a few words: what a killed run left,
    an uncertain post to look up, a post to catch up, a one-off line due (`times`: the file's timed
    lines). None: a run the roll skips only records its skip. Reads only: the same questions
    `decide_and_post`'s steps ask before each writes (the flock's daemon asks them, quiet.py)."""
    if store.left_running():
        return "the last run stopped before it finished"
    if _owed_look_up(store, rules, now):
        return "an uncertain post is to be looked up"
    if _owed_catch_up(store, rules, now):
        return "a post is to be caught up"
    if one_offs_due(times(), store, now, rules.calendar):
        return "a one-off line is due"
    return None


class _Lazy(Generic[T]):
    """Made at its first call and kept: the run's row (only a run with something to record writes
    one) and its delivery (only a run that sends, or plans a post, makes one)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: Optional[T] = None

    @property
    def made(self) -> bool:
        return self._made is not None

    def __call__(self) -> T:
        if self._made is None:
            self._made = self._make()
        return self._made


def _settle(run: Run, rules: RunRules, now: datetime) -> Tuple[str, ...]:
    """Uncertain posts of the last LOOK_UP_WINDOW looked up on their networks (settle.py, imported
    only when there are some: a run with none asks nothing and imports nothing)."""
    unsettled = _owed_look_up(run.store, rules, now)
    if not unsettled:
        return ()
    from ..delivery.settle import settle_uncertain

    return tuple(settle_uncertain(run.store, unsettled, run.outlets(rules.networks), clock=run.clock))


def _prune(store: HistoryStore, rules: RunRules, now: datetime) -> None:
    """Runs older than HISTORY_DAYS folded into daily counts (prune.py), a day's worth at a time:
    the check is one read on the runs' index, and finds something at most once a day."""
    before = now - timedelta(days=rules.history_days)
    if store.due_for_pruning(before - timedelta(days=1)):
        removed = store.prune(before=before, texts_since=now - rules.grammar_memory, at=now)
        log.debug("the history folded %d rows older than %d days into daily counts", removed, rules.history_days)


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


def _pick(store: HistoryStore, tweets: TweetFile, used: AbstractSet[str], rng: random.Random) -> Optional[Pick]:
    """A line of the round not yet posted in it (never the last one posted, if others are left),
    its index that of `tweets.texts`; None when every line has a time (calendar.py)."""
    texts = tweets.plain  # each once; a TweetLine is made for the picked text only
    log.debug(
        "the bag: %d of the %d lines not posted yet in this round",
        len(texts) - len(used.intersection(texts)),
        len(texts),
    )
    chosen = pick(texts, used=used, last_posted=store.last_posted_text(), rng=rng)
    if chosen is None or texts is tweets.texts:
        return chosen
    return Pick(tweets.texts.index(chosen.text), chosen.text, chosen.new_round, chosen.left_in_round)


def wait_jitter(
    jitter: float, *, rng: random.Random, wait: Callable[[float], object], what: str, level: int = logging.INFO
) -> object:
    """Wait a random 0..`jitter` seconds (TWEET_JITTER) before a scheduled run, drawn anew each time:
    the daemon does it, and so does a run started by cron (``--jitter``), as RandomizedDelaySec does
    for the systemd timer. Returns what `wait` returns (the daemon's stop event: whether to stop).
    The wait is said at `level`: the daemon says it at DEBUG, so that its log keeps one line a run."""
    delay = rng.uniform(0, jitter)
    log.log(level, "%s: waiting a random %s first (TWEET_JITTER)", what, format_duration(timedelta(seconds=delay)))
    return wait(delay)
