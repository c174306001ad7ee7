"""What the status page shows, read fresh from the history database and the settings at each request.

The history is read through `state.reader`: read-only, one snapshot of a few milliseconds, so a
scheduled run that posts meanwhile waits at most that long for its write lock and never fails for
the page. A history that is missing (the bot has not run yet), damaged, or not the bot's gives a
`Status` whose `history_problem` says so, and an `Attention` (so never "All well"), not an
exception::

    status = read_status(config, now=datetime.now(timezone.utc))
    status.cap.posts, status.cap.limit, status.bag.left
    [item.title for item in status.attention]      # what needs the owner's eye, most urgent first
    status.as_dict()                               # /status.json
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

from ..delivery.budget import month_spend
from ..posting import MAX_POSTS_PER_DAY, MIN_POST_GAP, TWEET_ONE_IN, TWEETS_FILE
from ..posting.links import label_of
from ..settings.loading import Config
from ..settings.table import POST_TO
from ..state.counting import CAP_WINDOW, CLOCK_SLACK
from ..state.reader import AttemptRow, HistoryReader, UnreadableHistory, read_history
from .attention import Attention, history_attention, urgent_first
from .jobs import JobPicture, JobView, job_attention, job_views
from .links import check_url, post_url
from .nextrun import NextRun, next_run
from .tweetsfile import TweetsFile

__all__ = [
    "Bag",
    "Budget",
    "Cap",
    "ComingLine",
    "NetworkOutcome",
    "RunView",
    "Status",
    "read_status",
    "RECENT_RUNS",
]

RECENT_RUNS = 15  # runs listed on the page
COMING_DAYS = 7  # the calendar the page shows: today and this week


@dataclass(frozen=True)
class NetworkOutcome:
    """What became of one post on one network: posted (with its link), uncertain (with where to
    look), failed or temporary (with why)."""

    network: str
    label: str
    outcome: str
    url: Optional[str] = None
    check_url: Optional[str] = None
    detail: Optional[str] = None
    settled: Optional[str] = None  # how a later run settled it, when it was uncertain


@dataclass(frozen=True)
class RunView:
    """One scheduled run, as the page lists it."""

    id: int
    started_at: datetime
    action: str  # running, posted, uncertain, would_post, skipped, failed, interrupted
    one_in: Optional[int]
    roll: Optional[int]  # None: --force skipped the roll
    dry_run: bool
    text: Optional[str]
    reason: Optional[str]
    networks: Tuple[NetworkOutcome, ...] = ()


@dataclass(frozen=True)
class Cap:
    """MAX_POSTS_PER_DAY against the posts of the last 24 hours, and when the next post may go
    (None: the next run that rolls a hit may post)."""

    posts: int
    limit: int
    next_allowed: Optional[datetime]
    why: str


@dataclass(frozen=True)
class Budget:
    """What posts to a network that charges for them (X) cost this calendar month (UTC, since
    `since`), against its monthly budget: `budget` None is no cap (`setting` not set)."""

    network: str
    label: str
    spent: float
    budget: Optional[float]
    setting: str
    since: datetime


@dataclass(frozen=True)
class Bag:
    """The shuffle bag: lines of the tweets file not posted yet in this round."""

    left: Optional[int]  # None: the tweets file could not be read, or is a grammar
    total: Optional[int]
    grammar: bool = False  # a Tracery grammar: each post is drawn anew, there is no round of lines


@dataclass(frozen=True)
class ComingLine:
    """A timed line of the tweets file on one of the coming days (the bot's zone): a dated line on
    its `day`, or a one-off at its time `at`."""

    day: str  # YYYY-MM-DD
    weekday: str
    lineno: int
    text: str
    options: str  # as written back: {on: 12-25}
    at: Optional[str] = None  # HH:MM, a one-off's time
    today: bool = False


@dataclass(frozen=True)
class ReplyView:
    """A mention on the page: who wrote it, on which network, what became of it, by which rule,
    the reply's link or why none."""

    network: str
    author: str
    text: str
    seen_at: Optional[datetime]
    status: str
    rule: Optional[str]
    url: Optional[str]
    reason: Optional[str]


@dataclass(frozen=True)
class Status:
    """Everything the page and /status.json show, at `now`."""

    now: datetime
    history_file: str
    history_problem: Optional[str]  # None: the history was read; else why not, worded for the owner
    post_to: Tuple[str, ...]
    one_in: int
    cap: Optional[Cap]
    bag: Bag
    next_run: NextRun
    attention: Tuple[Attention, ...] = ()
    runs: Tuple[RunView, ...] = ()
    jobs: Tuple[JobView, ...] = ()
    tweets_file: str = ""
    budgets: Tuple[Budget, ...] = ()
    coming: Tuple[ComingLine, ...] = ()  # the timed lines of today and the next six days
    replies: Tuple[ReplyView, ...] = ()  # the latest mentions read (REPLY_RULES), newest first

    @property
    def ok(self) -> bool:
        """Nothing needs the owner's eye."""
        return not self.attention

    def as_dict(self) -> dict:
        """The same facts as JSON-ready values: times as ISO 8601 in UTC."""
        return _plain({**asdict(self), "ok": self.ok})


def read_status(
    config: Config,
    *,
    now: datetime,
    picture_for: Callable[[JobView], Optional[JobPicture]] = lambda job: None,
    probe: Optional[Callable[..., NextRun]] = None,
    tweets: Optional[TweetsFile] = None,
) -> Status:
    """A fresh snapshot of the bot, at `now` (aware). `picture_for` gives a job's latest picture
    (the pictures work plugs in here); `probe` replaces `nextrun.next_run` (tests, and the app
    keeps its answer a minute); `tweets` keeps the measured tweets file between calls."""
    attention: List[Attention] = []
    missing = config.missing()
    if missing:
        attention.append(
            Attention("keys", "Keys not set", f"{', '.join(missing)} (POST_TO needs them): see `bot.py check`")
        )
    tweets = tweets or TweetsFile()
    texts, tweets_attention = tweets(config)
    attention += tweets_attention
    schedule = (probe or next_run)(config, now=now)
    history = _History()
    problem = _missing_or_empty(config)
    if problem is None:
        try:
            with read_history(config.state.history) as reader:
                history = _read(reader, config, now, picture_for)
        except UnreadableHistory as exc:
            problem = str(exc)
    if problem:
        title = "The history cannot be read" if config.state.history.exists() else "The bot has not run yet"
        attention.insert(0, Attention("history", title, problem))
    attention += [*history.attention, *job_attention(history.jobs)]
    from ..posting.sources import source_of

    bag = Bag(None, None, grammar=source_of(config).draws)
    if texts is not None:
        bag = Bag(len(texts) - len(history.used.intersection(texts)), len(texts))
    return Status(
        now=now,
        history_file=str(config.state.history),
        history_problem=problem,
        post_to=tuple(network.name for network in config[POST_TO]),
        one_in=config[TWEET_ONE_IN],
        cap=history.cap,
        bag=bag,
        next_run=schedule,
        attention=urgent_first(attention),
        runs=history.runs,
        jobs=history.jobs,
        tweets_file=str(config[TWEETS_FILE]),
        budgets=history.budgets,
        coming=_coming(tweets, config, now),
        replies=history.replies,
    )


def _coming(tweets: TweetsFile, config: Config, now: datetime) -> Tuple[ComingLine, ...]:
    """What the calendar holds for today and this week (posting/calendar.py)."""
    if tweets.parsed is None or not tweets.parsed.times:
        return ()
    from ..posting.calendar import Calendar, coming, local

    zone = Calendar.of(config).zone
    today = local(now, zone).date()
    return tuple(
        ComingLine(
            day=f"{each.day:%Y-%m-%d}",
            weekday=f"{each.day:%a}",
            lineno=each.lineno,
            text=each.text,
            options=each.time.describe(),
            at=f"{local(each.at, zone):%H:%M}" if each.at else None,
            today=each.day == today,
        )
        for each in coming(tweets.parsed, now, zone, COMING_DAYS)
    )


@dataclass(frozen=True)
class _History:
    """What the page takes from one snapshot of the history (nothing, when it cannot be read)."""

    cap: Optional[Cap] = None
    used: FrozenSet[str] = frozenset()
    runs: Tuple[RunView, ...] = ()
    attention: Tuple[Attention, ...] = ()
    jobs: Tuple[JobView, ...] = ()
    budgets: Tuple[Budget, ...] = ()
    replies: Tuple[ReplyView, ...] = ()


def _missing_or_empty(config: Config) -> Optional[str]:
    """Why there is no history to read yet, in the owner's words; None when there is a file to open."""
    history = config.state.history
    if not history.exists():
        return (
            f"no history yet: {history} does not exist, so the bot has not run with these settings (the first run"
            " creates it; `bot.py systemd` or `bot.py cron` schedules the runs)"
        )
    if history.is_file() and history.stat().st_size == 0:
        return (
            f"{history} is empty (0 bytes), so it holds no history (a power cut or a full disk can do that):"
            " `bot.py check` says what to do"
        )
    return None


def _read(
    history: HistoryReader, config: Config, now: datetime, picture_for: Callable[[JobView], Optional[JobPicture]]
) -> _History:
    return _History(
        cap=_cap(history, config, now),
        used=frozenset(history.used_texts()),
        runs=_runs(history, config),
        attention=tuple(history_attention(history, config, now)),
        jobs=job_views(history, config, picture_for),
        budgets=_budgets(history, config, now),
        replies=_replies(history, config),
    )


# How many of the latest mentions the page shows.
REPLIES_SHOWN = 10


def _replies(history: HistoryReader, config: Config) -> Tuple[ReplyView, ...]:
    """The latest mentions read, each with its network's label and the reply's link."""
    from ..posting.links import post_link

    return tuple(
        ReplyView(
            label_of(config, row.network),
            row.author,
            row.text,
            row.seen_at,
            row.status,
            row.rule,
            post_link(config, row.network, row.reply_id, row.url) if row.status == "answered" else None,
            row.reason,
        )
        for row in history.recent_replies(REPLIES_SHOWN)
    )


def _budgets(history: HistoryReader, config: Config, now: datetime) -> Tuple[Budget, ...]:
    """This month's spend of each network in POST_TO that charges per post, as a run reckons it
    (delivery/budget.py), against its budget."""
    views = []
    for network in config[POST_TO]:
        if network.budget:
            spend = month_spend(history, network, now, config[network.budget])
            views.append(Budget(network.name, network.label, spend.spent, spend.budget, spend.setting, spend.since))
    return tuple(views)


def _cap(history: HistoryReader, config: Config, now: datetime) -> Cap:
    """The daily cap and the gap, as a run reckons them (posting/scheduled.py): one post to several
    networks counts once; rows dated in the future (a clock that was ahead) are left out."""
    until = now + CLOCK_SLACK
    posts = history.posts_since(now - CAP_WINDOW, until)
    oldest_at = history.oldest_post_since(now - CAP_WINDOW, until)
    last_at = history.last_scheduled_post(until)
    limit = config[MAX_POSTS_PER_DAY]
    waits: List[Tuple[datetime, str]] = []
    if posts >= limit and oldest_at:
        waits.append((oldest_at + CAP_WINDOW, f"the cap is reached (MAX_POSTS_PER_DAY={limit})"))
    gap = timedelta(seconds=config[MIN_POST_GAP])
    if last_at and gap > timedelta(0) and now - last_at < gap:
        waits.append((last_at + gap, "MIN_POST_GAP since the last scheduled post"))
    if not waits:
        return Cap(posts, limit, None, f"a run that rolls a hit (1 in {config[TWEET_ONE_IN]}) may post")
    until_at, why = max(waits)
    return Cap(posts, limit, until_at, why)


def _runs(history: HistoryReader, config: Config) -> Tuple[RunView, ...]:
    from ..posting.sources import source_of

    shown = source_of(config).readable  # a grammar's post without its tags
    views = []
    for run in history.recent_runs(RECENT_RUNS):
        by_network: Dict[str, NetworkOutcome] = {}
        for attempt in run.attempts:
            if attempt.text != run.text:
                continue  # a line tried before it (a duplicate), or a catch-up of an older post
            by_network[attempt.network] = _outcome(config, attempt)
        views.append(
            RunView(
                id=run.id,
                started_at=run.started_at or datetime.min.replace(tzinfo=timezone.utc),
                action=run.action,
                one_in=run.one_in,
                roll=run.roll,
                dry_run=run.dry_run,
                text=shown(run.text) if run.text else run.text,
                reason=run.reason,
                networks=tuple(by_network.values()),
            )
        )
    return tuple(views)


def _outcome(config: Config, attempt: AttemptRow) -> NetworkOutcome:
    network, outcome = attempt.network, attempt.outcome
    return NetworkOutcome(
        network=network,
        label=label_of(config, network),
        outcome=outcome,
        url=post_url(network, attempt.post_id, attempt.url, config) if outcome == "posted" else None,
        check_url=check_url(network, config) if outcome in ("uncertain", "interrupted") else None,
        detail=attempt.detail,
        settled=attempt.settled,
    )


def _plain(value: object) -> object:
    """`value` with times as ISO 8601 strings and tuples as lists, for JSON."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
