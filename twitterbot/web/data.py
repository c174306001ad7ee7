"""What the status page shows, read fresh from the history database and the settings at each request.

The history is opened read-only (an SQLite ``mode=ro`` URI, ``query_only``) for the few
milliseconds one snapshot takes, so a scheduled run that posts meanwhile waits at most that long
for its write lock and never fails for the page. A history that is missing, damaged, or not the
bot's gives a `Status` whose `history_problem` says so, never an exception::

    status = read_status(config, now=datetime.now(timezone.utc))
    status.cap.posts, status.cap.limit, status.bag.left
    [item.title for item in status.attention]      # what needs the owner's eye, most urgent first
    status.as_dict()                               # /status.json
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from ..posting.scheduled import CAP_WINDOW, CLOCK_SLACK
from ..settings import Config
from ..state import COUNTED_OUTCOMES
from ..state.schema import APPLICATION_ID
from .links import check_url, post_url
from .nextrun import NextRun, next_run

if TYPE_CHECKING:
    from .tweetsfile import TweetsFile

__all__ = [
    "Attention",
    "Bag",
    "Cap",
    "JobPicture",
    "JobView",
    "NetworkOutcome",
    "RunView",
    "Status",
    "read_status",
    "RECENT_RUNS",
]

RECENT_RUNS = 15  # runs listed on the page
ATTENTION_WINDOW = timedelta(days=7)  # uncertain posts stay on the page this long
FAILURE_WINDOW = timedelta(hours=24)  # failures stay on the page this long
_WANTED_TABLES = {"runs", "attempts", "bag", "jobs", "job_threads"}
_OLDEST_SCHEMA = 3  # networks and links in the attempts: older files are upgraded by the next run
# How a network's refusal of the keys is worded (networks/x.py, mastodon.py, bluesky.py): the
# history keeps the message, not the error's kind.
_KEYS_REFUSED = re.compile(r"rejected the (keys|token|app password)|401|unauthori[sz]ed|invalid.*(token|password)", re.I)


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
class Attention:
    """One thing the owner should look at: `kind` is history, keys, uncertain, failed, missed,
    tweets_file or job; `link` where to look, if there is a page for it."""

    kind: str
    title: str
    detail: str = ""
    link: Optional[str] = None
    at: Optional[datetime] = None


@dataclass(frozen=True)
class Cap:
    """MAX_POSTS_PER_DAY against the posts of the last 24 hours, and when the next post may go
    (None: the next run that rolls a hit may post)."""

    posts: int
    limit: int
    next_allowed: Optional[datetime]
    why: str


@dataclass(frozen=True)
class Bag:
    """The shuffle bag: lines of the tweets file not posted yet in this round."""

    left: Optional[int]  # None: the tweets file could not be read
    total: Optional[int]


@dataclass(frozen=True)
class JobView:
    """A progress job's latest run: its state, last progress and thread on each network.

    `picture` is the job's latest posted picture (an http(s) or same-site address) and
    `picture_alt` its alt text, both set by the page's `picture_for` (`JobPicture`)."""

    id: int
    name: str
    state: str  # running, stopped (unfinished, no process holds its lock), done, failed
    started_at: datetime
    finished_at: Optional[datetime]
    last_post_at: Optional[datetime]
    last_text: Optional[str]
    posts: int
    threads: Tuple[Tuple[str, Optional[str]], ...] = ()  # (network label, link to the first post)
    picture: Optional[str] = None
    picture_alt: Optional[str] = None


@dataclass(frozen=True)
class JobPicture:
    """What `picture_for` answers for a job: where its latest picture is, and its alt text."""

    url: str
    alt: str = ""


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
        attention.append(Attention("keys", "Keys not set", f"{', '.join(missing)} (POST_TO needs them): see `bot.py check`"))
    from .tweetsfile import TweetsFile  # tweetsfile.py reads Attention from here: imported late, no cycle

    texts, tweets_attention = (tweets or TweetsFile())(config)
    attention += tweets_attention
    schedule = (probe or next_run)(config, now=now)
    cap: Optional[Cap] = None
    runs: Tuple[RunView, ...] = ()
    jobs: Tuple[JobView, ...] = ()
    used: Optional[set] = None
    problem = None
    history = config.history_file
    if not history.exists():
        problem = f"no history yet: {history} does not exist (the first run creates it)"
    elif history.is_file() and history.stat().st_size == 0:
        problem = (
            f"{history} is empty (0 bytes), so it holds no history (a power cut or a full disk can do that):"
            " `bot.py check` says what to do"
        )
    else:
        from .jobs import job_views  # jobs.py reads JobView from here: imported late, no import cycle

        try:
            with closing(_open_read_only(history)) as conn:
                conn.execute("BEGIN")  # one consistent snapshot, over in milliseconds
                cap = _cap(conn, config, now)
                used = {row[0] for row in conn.execute("SELECT text FROM bag")}
                runs = _runs(conn, config)
                attention += _history_attention(conn, config, now)
                jobs = job_views(conn, config, picture_for)
                conn.execute("ROLLBACK")
        except _NotAHistory as exc:
            problem = str(exc)
        except sqlite3.Error as exc:
            problem = _sqlite_problem(history, exc)
    if problem and history.exists():
        attention.insert(0, Attention("history", "The history cannot be read", problem))
    attention += [
        Attention("job", f"Job {job.name!r} {job.state}", _JOB_TROUBLE[job.state], at=job.finished_at or job.last_post_at)
        for job in jobs
        if job.state in _JOB_TROUBLE
    ]
    bag = Bag(None, None)
    if texts is not None:
        bag = Bag(len(texts) - len((used or set()).intersection(texts)), len(texts))
    return Status(
        now=now,
        history_file=str(history),
        history_problem=problem,
        post_to=config["POST_TO"],
        one_in=config["TWEET_ONE_IN"],
        cap=cap,
        bag=bag,
        next_run=schedule,
        attention=_once(sorted(attention, key=_urgency)),
        runs=runs,
        jobs=jobs,
        tweets_file=str(config["TWEETS_FILE"]),
    )


_JOB_TROUBLE = {
    "failed": "its last run failed: its last post, and the log, say why",
    "stopped": "its last run did not finish and no process runs it now (stopped, killed, or the machine restarted):"
    " start it again and it carries on its thread",
}
_ORDER = ("history", "keys", "uncertain", "failed", "tweets_file", "missed", "job")


def _urgency(item: Attention) -> int:
    return _ORDER.index(item.kind) if item.kind in _ORDER else len(_ORDER)


def _once(items: List[Attention]) -> Tuple[Attention, ...]:
    """Each problem once, under its most urgent heading: the run that failed because X refused
    the keys is the keys' item, not a second one that says the same."""
    said = {item.detail for item in items if item.kind != "failed"}
    return tuple(item for item in items if item.kind != "failed" or item.detail not in said)


# -- the history, read-only ------------------------------------------------------------------------


class _NotAHistory(Exception):
    """The file opens but is not a whole twitterbot history of a schema this page reads."""


def _open_read_only(path: Path) -> sqlite3.Connection:
    """The history, read-only: SQLite may neither create nor change the file. A short busy
    timeout: a run commits in milliseconds, and the page can be reloaded."""
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=2, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = 1")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except BaseException:
        conn.close()
        raise
    if app_id != APPLICATION_ID:
        conn.close()
        raise _NotAHistory(f"{path} is not a twitterbot history database: point BOT_STATE_DIR at the bot's state folder")
    if version < _OLDEST_SCHEMA or not tables >= _WANTED_TABLES:
        conn.close()
        raise _NotAHistory(
            f"{path} is a history of an older format (schema {version}) or is incomplete: the next scheduled"
            " run upgrades it (or says what is wrong); run `bot.py check` to see"
        )
    return conn


def _sqlite_problem(path: Path, exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"{path} is busy (a run is writing it): reload the page in a moment"
    if "unable to open" in text or "readonly" in text.replace(" ", ""):
        return (
            f"{path} cannot be opened for reading ({text}): check that this user may read it and its folder;"
            " a run that stopped mid-write leaves a journal only a run can settle"
        )
    return (
        f"{path} is damaged or not a history database ({text}): `bot.py check` says what to do (move it aside"
        " to start a new history, or restore it from a backup)"
    )


def _stored(moment: datetime) -> str:
    """A time as the history writes it (UTC, fixed width, so that text order is time order)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parsed(text: Optional[str]) -> Optional[datetime]:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.rstrip("Z")).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


_COUNTED = ", ".join("?" for _ in COUNTED_OUTCOMES)


def _cap(conn: sqlite3.Connection, config: Config, now: datetime) -> Cap:
    """The daily cap and the gap, as a run reckons them (posting/scheduled.py): one post to several
    networks counts once; rows dated in the future (a clock that was ahead) are left out."""
    until = _stored(now + CLOCK_SLACK)
    posts, oldest = conn.execute(
        f"SELECT count(DISTINCT coalesce(post_group, id)), min(sent_at) FROM attempts"
        f" WHERE sent_at > ? AND sent_at <= ? AND outcome IN ({_COUNTED})",
        (_stored(now - CAP_WINDOW), until, *COUNTED_OUTCOMES),
    ).fetchone()
    (last,) = conn.execute(
        f"SELECT max(sent_at) FROM attempts WHERE sent_at <= ? AND outcome IN ({_COUNTED}) AND job_id IS NULL",
        (until, *COUNTED_OUTCOMES),
    ).fetchone()
    limit = config["MAX_POSTS_PER_DAY"]
    waits: List[Tuple[datetime, str]] = []
    oldest_at = _parsed(oldest)
    if posts >= limit and oldest_at:
        waits.append((oldest_at + CAP_WINDOW, f"the cap is reached (MAX_POSTS_PER_DAY={limit})"))
    last_at = _parsed(last)
    gap = timedelta(seconds=config["MIN_POST_GAP"])
    if last_at and gap > timedelta(0) and now - last_at < gap:
        waits.append((last_at + gap, "MIN_POST_GAP since the last scheduled post"))
    if not waits:
        return Cap(int(posts), limit, None, f"a run that rolls a hit (1 in {config['TWEET_ONE_IN']}) may post")
    until_at, why = max(waits)
    return Cap(int(posts), limit, until_at, why)


def _runs(conn: sqlite3.Connection, config: Config) -> Tuple[RunView, ...]:
    rows = conn.execute(
        "SELECT id, started_at, action, one_in, roll, dry_run, text, reason FROM runs ORDER BY id DESC LIMIT ?",
        (RECENT_RUNS,),
    ).fetchall()
    if not rows:
        return ()
    marks = ", ".join("?" for _ in rows)
    by_run: Dict[int, Dict[str, NetworkOutcome]] = {}
    for run_id, network, outcome, tweet_id, url, detail, text in conn.execute(
        f"SELECT run_id, network, outcome, tweet_id, url, detail, text FROM attempts WHERE run_id IN ({marks}) ORDER BY id",
        [row[0] for row in rows],
    ):
        run_text = next(row[6] for row in rows if row[0] == run_id)
        if text != run_text:
            continue  # a line tried before it (a duplicate), or a catch-up of an older post
        by_run.setdefault(run_id, {})[network] = _outcome(config, network, outcome, tweet_id, url, detail)
    return tuple(
        RunView(
            id=row[0],
            started_at=_parsed(row[1]) or datetime.min.replace(tzinfo=timezone.utc),
            action=row[2],
            one_in=row[3],
            roll=row[4],
            dry_run=bool(row[5]),
            text=row[6],
            reason=row[7],
            networks=tuple(by_run.get(row[0], {}).values()),
        )
        for row in rows
    )


def _outcome(
    config: Config, network: str, outcome: str, tweet_id: Optional[str], url: Optional[str], detail: Optional[str]
) -> NetworkOutcome:
    return NetworkOutcome(
        network=network,
        label=config.registry.label(network),
        outcome=outcome,
        url=post_url(network, tweet_id, url, config) if outcome == "posted" else None,
        check_url=check_url(network, config) if outcome in ("uncertain", "interrupted") else None,
        detail=detail,
    )


def _history_attention(conn: sqlite3.Connection, config: Config, now: datetime) -> List[Attention]:
    items: List[Attention] = []
    # Keys a network refused at its last try: nothing will post there until they are fixed.
    for network in config["POST_TO"]:
        row = conn.execute(
            "SELECT outcome, detail, sent_at FROM attempts WHERE network = ? AND outcome != 'pending'"
            " ORDER BY sent_at DESC, id DESC LIMIT 1",
            (network,),
        ).fetchone()
        if row and row[0] == "failed" and row[1] and _KEYS_REFUSED.search(row[1]):
            items.append(Attention("keys", f"{config.registry.label(network)} refused the keys", row[1], at=_parsed(row[2])))
    for network, text, detail, sent_at in conn.execute(
        "SELECT network, text, detail, sent_at FROM attempts WHERE outcome IN ('uncertain', 'interrupted')"
        " AND sent_at > ? ORDER BY id DESC LIMIT 10",
        (_stored(now - ATTENTION_WINDOW),),
    ):
        items.append(
            Attention(
                "uncertain",
                f"Maybe posted on {config.registry.label(network)}: {text}",
                f"{detail or 'no answer came'}; it counts as posted and is never sent again: look whether it is there",
                link=check_url(network, config),
                at=_parsed(sent_at),
            )
        )
    for started_at, reason in conn.execute(
        "SELECT started_at, reason FROM runs WHERE action = 'failed' AND started_at > ? ORDER BY id DESC LIMIT 5",
        (_stored(now - FAILURE_WINDOW),),
    ):
        items.append(Attention("failed", "A run failed", reason or "", at=_parsed(started_at)))
    for network, text, detail, sent_at, name in conn.execute(
        "SELECT a.network, a.text, a.detail, a.sent_at, j.name FROM attempts a JOIN jobs j ON a.job_id = j.id"
        " WHERE a.outcome = 'failed' AND a.sent_at > ? ORDER BY a.id DESC LIMIT 5",
        (_stored(now - FAILURE_WINDOW),),
    ):
        items.append(
            Attention("failed", f"Job {name!r}: a post to {config.registry.label(network)} failed", detail or text, at=_parsed(sent_at))
        )
    for network, text, detail, sent_at in conn.execute(
        "SELECT a.network, a.text, a.detail, a.sent_at FROM attempts a WHERE a.outcome = 'temporary' AND a.sent_at > ?"
        " AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.post_group = a.post_group AND b.network = a.network"
        " AND b.id > a.id) ORDER BY a.id DESC LIMIT 5",
        (_stored(now - FAILURE_WINDOW),),
    ):
        items.append(
            Attention(
                "missed",
                f"Not on {config.registry.label(network)} yet: {text}",
                f"{detail or ''} (the next runs send it there, for 24 hours)".strip(),
                at=_parsed(sent_at),
            )
        )
    return items


def _plain(value: object) -> object:
    """`value` with times as ISO 8601 strings and tuples as lists, for JSON."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value

