"""One scheduled run: roll the 1-in-N die, respect the daily cap, pick a line, post it, record it.

`run_once` is what cron, the systemd timer and the daemon all call. It takes the lock, opens the
history, reads the tweets file and hands over to `decide_and_post`, which holds the logic::

    result = run_once(config, poster=XPoster(...), rng=random.Random(), clock=utc_now)
    result.action   # 'posted', 'would_post', 'skipped' or 'failed'
"""

from __future__ import annotations

import contextlib
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from .choose import hits, pick, roll
from .config import Config
from .errors import DuplicatePost, ExitStatus, PostError, StateError
from .history import HistoryStore, ensure_state_dir
from .lock import run_lock
from .posters import Poster, status_url
from .tweets import MAX_WEIGHTED_LENGTH, TweetFile, TweetLine, load_tweets, preview

__all__ = [
    "CapReached",
    "RunResult",
    "cap_reached",
    "decide_and_post",
    "log_result",
    "run_once",
    "utc_now",
    "MAX_DUPLICATE_SKIPS",
]

log = logging.getLogger(__name__)

# When X says a picked line is already posted, take it out of the round and pick another, this
# many times at most: each try is a paid request.
MAX_DUPLICATE_SKIPS = 3
CAP_WINDOW = timedelta(hours=24)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


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
    fewer than `limit` posts went out in the last 24 hours."""
    recent = store.posts_since(now - CAP_WINDOW)
    if recent < limit:
        return None
    oldest = store.oldest_post_since(now - CAP_WINDOW)
    return CapReached(recent, oldest + CAP_WINDOW if oldest else None)


@dataclass(frozen=True)
class RunResult:
    """What a run decided and did; `--json` prints it, the log line is made from it."""

    action: str  # posted | would_post | skipped | failed
    reason: str  # one sentence for the log
    one_in: int
    roll: Optional[int]  # None when --force skipped the roll
    line: Optional[TweetLine] = None
    tweet_id: Optional[str] = None
    error: Optional[PostError] = None

    @property
    def url(self) -> Optional[str]:
        return status_url(self.tweet_id)

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
            "tweet_id": self.tweet_id,
            "url": self.url,
            "one_in": self.one_in,
            "roll": self.roll,
            "error": self.error.kind if self.error else None,
            "exit_status": int(self.exit_status),
        }


def run_once(
    config: Config,
    *,
    poster: Optional[Poster],
    rng: random.Random,
    clock: Callable[[], datetime] = utc_now,
    dry_run: bool = False,
    force: bool = False,
) -> RunResult:
    """A whole scheduled run. A real run holds the lock so overlapping runs cannot both post;
    a dry run needs no lock and no poster, and changes nothing but its own history row."""
    tweets = load_tweets(config.tweets_file)
    for problem in tweets.problems:
        log.warning("%s line %d %s", tweets.path.name, problem.lineno, problem.message)
    ensure_state_dir(config.state_dir)
    lock = contextlib.nullcontext() if dry_run else run_lock(config.lock_file)
    with lock, HistoryStore(config.history_file) as store:
        return decide_and_post(
            tweets,
            store=store,
            poster=poster,
            rng=rng,
            clock=clock,
            one_in=config.one_in,
            max_posts_per_day=config.max_posts_per_day,
            dry_run=dry_run,
            force=force,
        )


def decide_and_post(
    tweets: TweetFile,
    *,
    store: HistoryStore,
    poster: Optional[Poster],
    rng: random.Random,
    clock: Callable[[], datetime],
    one_in: int,
    max_posts_per_day: int,
    dry_run: bool = False,
    force: bool = False,
) -> RunResult:
    """The decision and its side effects, given an open store (the caller holds the lock)."""
    now = clock()
    if not dry_run:
        for text in store.recover_interrupted(at=now):
            log.warning(
                "the previous run stopped while posting %s; counting it as posted, not sending it again", preview(text)
            )

    rolled = None if force else roll(one_in, rng)
    run_id = store.begin_run(at=now, one_in=one_in, roll=rolled, forced=force, dry_run=dry_run)

    def finish(action: str, reason: str, **fields: object) -> RunResult:
        result = RunResult(action, reason, one_in, rolled, **fields)  # type: ignore[arg-type]
        line = result.line
        store.finish_run(
            run_id, at=clock(), action=action, reason=reason, text=line.text if line else None, tweet_id=result.tweet_id
        )
        return result

    if rolled is not None and not hits(rolled):
        return finish("skipped", f"rolled {rolled} (posts on 0 of 1-in-{one_in})")
    why = "forced" if rolled is None else f"rolled 0 of 1-in-{one_in}"

    capped = cap_reached(store, now, max_posts_per_day)
    if capped:
        after = f"; the next can go after {capped.frees_at.astimezone():%Y-%m-%d %H:%M}" if capped.frees_at else ""
        return finish("skipped", f"{why}, but {capped.reason(max_posts_per_day)}{after}")

    used = store.used_texts()
    chosen = pick(tweets.lines, used=used, last_posted=store.last_posted_text(), rng=rng)
    assert chosen is not None  # load_tweets never returns an empty file
    if dry_run:
        round_note = "; every line has been posted, so this starts a new round" if chosen.new_round else ""
        return finish("would_post", f"{why}; dry run, nothing sent{round_note}", line=chosen.line)
    if poster is None:
        raise ValueError("a real run needs a poster")
    try:
        store.ensure_room_to_record()  # never post what could not then be recorded
    except StateError as exc:
        finish("failed", str(exc))
        raise
    if chosen.new_round:
        log.info("every line of %s has been posted: starting a new round", tweets.path.name)
        store.start_new_round()
        used = set()

    line = chosen.line
    for _ in range(MAX_DUPLICATE_SKIPS + 1):
        attempt = store.begin_attempt(line.text, run_id=run_id, at=clock())
        try:
            result = poster.post(line.text)
        except DuplicatePost as exc:
            store.finish_attempt(attempt, "duplicate", at=clock(), detail=str(exc), mark_used=True)
            log.warning("X already has line %d %s; marked it used and picking another", line.lineno, preview(line.text))
            used = used | {line.text}
            another = pick(tweets.lines, used=used, last_posted=None, rng=rng)
            if another is None or another.new_round:
                break  # every line is on X already; starting a new round would only repeat them
            line = another.line
            continue
        except PostError as exc:
            store.finish_attempt(attempt, "failed", at=clock(), detail=str(exc))
            return finish("failed", str(exc), line=line, error=exc)
        store.finish_attempt(
            attempt,
            "posted",
            at=clock(),
            tweet_id=result.tweet_id,
            detail=None if result.confirmed else "X's reply was lost; X's duplicate check showed it was posted",
            mark_used=True,
        )
        return finish("posted", why, line=line, tweet_id=result.tweet_id)

    error = PostError(
        "X already has every line this run tried (duplicates): add new lines to the tweets file",
        kind="duplicate",
        exit_status=ExitStatus.DATA_ERROR,
    )
    return finish("failed", str(error), line=line, error=error)


def log_result(result: RunResult) -> None:
    """The one human line per decision (cron mail and journald keep it)."""
    line = result.line
    if result.action == "posted" and line:
        where = result.url or "(X's reply was lost; the post is on X)"
        log.info("posted line %d %s %s (%s)", line.lineno, preview(line.text), where, result.reason)
    elif result.action == "would_post" and line:
        cost = ", contains a URL: X charges more for it" if line.has_url else ""
        log.info(
            "dry run: would post line %d (%d of %d as X counts%s); %s",
            line.lineno,
            line.weighted_length,
            MAX_WEIGHTED_LENGTH,
            cost,
            result.reason,
        )
    elif result.action == "skipped":
        log.info("skipped: %s", result.reason)
    else:
        log.error("failed: %s", result.reason)
