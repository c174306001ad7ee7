"""`bot.py check`: every piece of the setup looked at, one line each, and what to fix.

The checks are a list of functions, each yielding its findings in the order they print; a
capability adds its own through `Capability.checks` (a job's compiled kernel). The command exits
with the first problem's status, 0 when all is well::

    for finding in settings_read(config):
        print(finding.line)
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import __version__
from ..errors import BotError, ConfigError, ExitStatus, MissingDependency, PostError
from ..lock import RUN_LOCK_WAIT, run_lock
from ..networks import Poster, posters_for
from ..registry import registry_of
from ..settings.keys import HISTORY_DAYS
from ..settings.loading import Config, env_file_warnings
from ..settings.secrets import scrub
from ..settings.table import POST_TO
from ..state.clock import Clock, utc_now
from ..state.floor import ClockNotSet, clock_trouble
from ..state.folder import ensure_state_dir, probe_state_dir
from ..state.prune import HistorySize
from ..state.skips import Streak
from ..state.store import HistoryStore
from ..wording import format_duration, plural, preview
from . import TWEETS_FILE
from .calendar import Calendar, coming, in_zone, local, passed
from .sources import source_of
from .tweets import TweetFile, TweetLine

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CHECKS", "COMING_DAYS", "ONLINE_CHECKS", "Finding", "run_checks"]

COMING_DAYS = 30  # check lists the timed lines of this many days from today

_SHOWN = {"ok": "ok       ", "note": "note     ", "problem": "PROBLEM  "}


@dataclass(frozen=True)
class Finding:
    """One line of `check`: "ok", a "note" (worth knowing, never a problem) or a "problem", with
    the error whose exit status the command ends with (a ConfigError when none is given)."""

    status: str
    message: str
    error: Optional[BotError] = None

    @property
    def line(self) -> str:
        return _SHOWN[self.status] + self.message

    @property
    def problem(self) -> Optional[BotError]:
        return (self.error or ConfigError(self.message)) if self.status == "problem" else None


def ok(message: str) -> Finding:
    return Finding("ok", message)


def note(message: str) -> Finding:
    return Finding("note", message)


def problem(message: str, error: Optional[BotError] = None) -> Finding:
    return Finding("problem", message, error)


def settings_read(config: Config) -> Iterator[Finding]:
    """Where the settings came from, the old names still in use, and the env file's permissions."""
    yield ok(f"settings read from {config.env_file or 'the environment (no env file)'}")
    for old, new, where in config.deprecated:
        yield note(f"{old} (from {where}) is deprecated: rename it {new}; it is read as {new} for now")
    for warning in env_file_warnings(config):
        yield problem(warning)


def keys_set(config: Config) -> Iterator[Finding]:
    """Whether every network in POST_TO has the keys it needs."""
    missing = config.missing()
    where = ", ".join(network.label for network in config[POST_TO])
    said = f"not set: {', '.join(missing)}" if missing else "every key it needs is set"
    yield Finding("problem" if missing else "ok", f"posting to {where} (POST_TO): {said}")


def features(config: Config) -> Iterator[Finding]:
    """Each feature beyond X-only text posting, available or not, with the one command that adds
    it; a missing one is a problem (exit 69) only when the settings use it (a network in POST_TO)."""
    for capability in registry_of(config).capabilities:
        for feature in capability.features:
            missing = feature.missing()
            if not missing:
                yield ok(f"{feature.name}: available")
                continue
            said = f"{feature.name}: not available ({', '.join(missing)} not installed); to add it: {feature.install}"
            if capability.uses(config):
                yield problem(said, MissingDependency(said))
            else:
                yield note(said)


def tweets_file(config: Config) -> Iterator[Finding]:
    """The bot's posts' source (TWEETS_FILE): a tweets file's lines or a grammar's samples, what they
    cost, where they go, their pictures and tags, and their problems (sourcecheck.py)."""
    for status, message, error in source_of(config).findings():
        yield Finding(status, message, error)


def source_online(config: Config) -> Iterator[Finding]:
    """`check --online`: what the source fetches when it posts (a grammar's ``{img}`` pictures)."""
    for status, message, error in source_of(config).online_findings():
        yield Finding(status, message, error)


def calendar(config: Config, *, clock: Clock = utc_now) -> Iterator[Finding]:
    """The tweets file's timed lines: the zone they are read in, what comes in the next 30 days,
    one-off lines missed or posted, and dated lines whose dates have passed. A file that cannot
    be read is `tweets_file`'s to report (an impossible date is a problem there, exit 65)."""
    path = config[TWEETS_FILE]
    try:
        tweets = source_of(config).lines()
    except BotError:
        return
    if tweets is None or not tweets.times:  # a grammar's posts have no times: each run draws one
        return
    now, rules = clock(), Calendar.of(config)
    zone = getattr(rules.zone, "key", None) or str(rules.zone)
    where = f"TWEET_TIMEZONE={zone}" if config["TWEET_TIMEZONE"] else f"the system's zone, {zone} (TWEET_TIMEZONE)"
    yield ok(
        f"{path}: {plural(len(tweets.times), 'line')} with a time, in {where}; "
        f"a one-off line is missed when no run comes within LATE_BY={format_duration(rules.late_by)} of it"
    )
    yield from _same_timed_lines(path, tweets)
    lineno = dict(zip(tweets.texts, tweets.linenos))
    today = local(now, rules.zone).date()
    days: Dict[int, List[date]] = {}
    for each in coming(tweets, now, rules.zone, COMING_DAYS):
        if each.at is not None:
            yield ok(f"{path} line {each.lineno} {each.time.describe()} comes in {format_duration(each.at - now)}")
        else:
            days.setdefault(each.lineno, []).append(each.day)
    for number, dates in sorted(days.items()):
        shown = ", ".join(f"{day:%a %m-%d}" for day in dates[:6]) + (
            f" and {len(dates) - 6} more" if len(dates) > 6 else ""
        )
        time = tweets.times[tweets.texts[tweets.linenos.index(number)]]
        yield ok(
            f"{path} line {number} {time.describe()} comes on {plural(len(dates), 'day')} of the next {COMING_DAYS}: {shown}"
        )
    for text in passed(tweets.times, today):
        yield note(
            f"{path} line {lineno[text]} {tweets.times[text].describe()}: its dates have passed, it is not posted again"
        )
    yield from _one_offs(config, tweets, now, rules)


def _same_timed_lines(path: Path, tweets: TweetFile) -> Iterator[Finding]:
    """Timed lines that are one line written in different ways (`{on: 12-25}` and `{on:12-25}`):
    the bot knows a line by what is written, so each goes on its own, the same post several times."""
    found: Dict[Tuple[str, str], List[int]] = {}
    for index, key in enumerate(tweets.texts):
        time = tweets.times.get(key)
        if time is not None:
            found.setdefault((time.describe(), tweets.line(index).text), []).append(tweets.linenos[index])
    for (said, text), numbers in found.items():
        if len(numbers) > 1:
            lines = ", ".join(str(number) for number in numbers[:-1]) + f" and {numbers[-1]}"
            yield note(
                f"{path} lines {lines} are one line, {said} {preview(text)}, written in different ways: each "
                f"goes on its own, {len(numbers)} posts of it; keep one"
            )


def _one_offs(config: Config, tweets: TweetFile, now: datetime, rules: Calendar) -> Iterator[Finding]:
    """The one-off lines whose time has come: posted, missed (and why), or due at the next run."""
    path = config[TWEETS_FILE]
    gone = {
        text: time for text, time in tweets.times.items() if time.at is not None and in_zone(time.at, rules.zone) <= now
    }
    if not gone or not config.state.history.is_file():
        return
    try:
        with HistoryStore(config.state.history) as store:
            posted, missed = store.last_posts(list(gone)), {mark.text: mark for mark in store.missed()}
    except BotError:
        return  # state_folder says what is wrong with the history
    lineno = dict(zip(tweets.texts, tweets.linenos))
    for text, time in gone.items():
        what = f"{path} line {lineno[text]} {time.describe()}"
        if text in posted:
            yield ok(f"{what} was posted at {local(posted[text], rules.zone):%Y-%m-%d %H:%M}")
        elif text in missed:
            yield note(f"{what} was missed: {missed[text].reason}")
        elif now - in_zone(time.at, rules.zone) <= rules.late_by:  # type: ignore[arg-type]
            yield note(f"{what} is due: the next run posts it")
        else:
            yield note(f"{what}: its time has passed, the next run notes it missed")


def state_folder(config: Config, clock: Clock = utc_now) -> Iterator[Finding]:
    """What a real run does, changing nothing: create the folder, take the lock, open the history
    and take its write lock (then let go), and see that there is room to record."""
    state = config.state.path
    try:
        ensure_state_dir(state)
        probe_state_dir(state)
        with run_lock(config.state.lock, wait=RUN_LOCK_WAIT), HistoryStore(config.state.history) as store:
            store.check_writable()
            store.verify()
            store.ensure_room_to_record()
            size, streak, newest = store.size(), store.skips.read(), store.newest_record()
    except BotError as exc:
        yield problem(str(exc), exc)
    else:
        yield ok(f"state folder {state} is writable and its history is readable")
        yield ok(_history_size(size, streak, config[HISTORY_DAYS]))
        yield _clock(newest, clock())


def _clock(newest: Optional[datetime], now: datetime) -> Finding:
    """Both times a run compares before it decides anything (state/floor.py): the clock's, and the
    history's newest record; a problem when a run would refuse the clock (exit 75)."""
    trouble = clock_trouble(newest, now)
    if trouble is not None:
        return problem(
            f"the clock is not set yet: {trouble}; runs post nothing until it is right (docs/scheduling.md)",
            ClockNotSet(trouble),
        )
    record = f"the history's newest record is {newest:%Y-%m-%d %H:%M} UTC" if newest else "the history is empty"
    return ok(f"clock: {now:%Y-%m-%d %H:%M} UTC; {record}")


def _history_size(size: HistorySize, streak: Optional[Streak], days: int) -> str:
    """The history's size and age (the day's skipped runs not in the file yet too), and what
    HISTORY_DAYS keeps of it."""
    oldest = size.oldest or (streak.first if streak else None)
    since = f" since {oldest.astimezone():%Y-%m-%d}" if oldest else ""
    folded = f", and {plural(size.folded_days, 'earlier day')} as daily counts" if size.folded_days else ""
    return (
        f"history: {size.bytes / 1024 / 1024:.1f} MB, {plural(size.runs + (streak.runs if streak else 0), 'run')}"
        f"{since}{folded}"
        f" (HISTORY_DAYS={days} keeps runs row by row)"
    )


def budgets(config: Config) -> Iterator[Finding]:
    """This month's spend on each network in POST_TO that charges per post, against its budget."""
    priced = [network for network in config[POST_TO] if network.budget]
    if not priced or not config.state.history.exists():
        return
    from ..delivery.budget import month_spend
    from ..state.clock import utc_now

    try:
        with HistoryStore(config.state.history) as store:
            spends = [month_spend(store, network, utc_now(), config[network.budget]) for network in priced]
    except BotError:
        return  # state_folder says what is wrong with the history
    for network, spend in zip(priced, spends):
        line = spend.line(network.label)
        if spend.budget is not None and spend.spent >= spend.budget:
            yield note(f"{line}: the budget is spent, posts there wait for next month")
        else:
            yield ok(line)


def capabilities(config: Config) -> Iterator[Finding]:
    """What each part of the bot adds (a job's compiled kernel)."""
    for status, message, *error in registry_of(config).checks(config):
        yield Finding(status, message, error[0] if error else None)


def previews(config: Config) -> Iterator[Finding]:
    """`check --online`: what each network would attach to each line (Bluesky's link card), one
    note each. Never a problem: a post goes out without it."""
    from concurrent.futures import ThreadPoolExecutor

    try:
        tweets = source_of(config).lines()
    except BotError:
        return  # the tweets file's check has said why
    if tweets is None:
        return  # a grammar's posts are drawn at each run: there are no lines to preview
    lines: List[TweetLine] = tweets.lines
    for network in config[POST_TO]:
        with ThreadPoolExecutor(max_workers=4) as pool:  # each preview is bounded in time (FETCH_TIMEOUT)
            shown = list(
                pool.map(
                    lambda line, network=network: network.preview(
                        line.text, config, pictures=len(line.images), folder=None
                    ),
                    lines,
                )
            )
        for line, notes in zip(lines, shown):
            for said in notes:
                yield note(f"{config[TWEETS_FILE]} line {line.lineno}: {network.label} {said}")


def accounts(config: Config) -> Iterator[Finding]:
    """`check --online`: each network logs in with its keys and names the account."""
    if config.missing():
        yield problem("cannot check the accounts online until every key is set")
        return
    for network, poster in posters_for(config).items():
        label = network.label
        try:
            account = poster.account()
        except PostError as exc:
            yield problem(f"{label}: {scrub(str(exc), config.secrets())}", exc)
        else:
            yield ok(f"{label} accepts the keys: posting as {account}")
            yield from _bot_label(label, poster, config)


def _bot_label(label: str, poster: Poster, config: Config) -> Iterator[Finding]:
    """Whether the account says it is a bot; never a problem (a post goes out either way)."""
    try:
        marked = poster.bot_label()
    except PostError as exc:
        yield note(
            f"{label}: could not read whether the account is marked as a bot ({scrub(exc.summary, config.secrets())})"
        )
        return
    if marked is None:
        yield note(f'{label}: set the "Automated" label on the account\'s settings page (docs/left-alone.md)')
    elif marked:
        yield ok(f"{label}: the account is marked as a bot")
    else:
        yield note(f"{label}: the account is not marked as a bot: `bot.py account --mark-bot` marks it")


Check = Callable[[Config], Iterator[Finding]]
CHECKS: Sequence[Check] = (
    settings_read,
    keys_set,
    features,
    tweets_file,
    calendar,
    state_folder,
    budgets,
    capabilities,
)
ONLINE_CHECKS: Sequence[Check] = (previews, source_online, accounts)


def run_checks(config: Config, *, online: bool, out: Callable[[str], object] = print) -> int:
    """Run every check (and the online ones), printing each finding as it comes, its secrets masked
    as a run's log masks them (a line or a grammar's address may hold a key); the exit status of
    the first problem, or 0."""
    from ..settings.secrets import Scrubber

    out(f"twitterbot {__version__} (Python {platform.python_version()})")  # the first thing a bug report needs
    mask = Scrubber(config.secrets())
    problems: List[BotError] = []
    for check in (*CHECKS, *(ONLINE_CHECKS if online else ())):
        for finding in check(config):
            out(mask(finding.line))
            if finding.problem is not None:
                problems.append(finding.problem)
    if problems:
        them = "it" if len(problems) == 1 else "them"
        out(f"{plural(len(problems), 'problem')} found: fix {them} and run check again")
        return int(problems[0].exit_status)
    out("all good")
    return int(ExitStatus.OK)
