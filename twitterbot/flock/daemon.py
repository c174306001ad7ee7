"""One daemon for the whole flock, as supervisord runs programs: it decides in its own process,
cheaply, which bots are due (each bot's settings read once, and again on SIGHUP; no network
library imported) and rolls each due bot's die. A run the roll skips, with nothing else to do, is
counted in the bot's history right there (posting/quiet.py: the skip its own run would count);
any other run goes to a child process of its own, a plain `bot.py --bot NAME --jitter --roll N`
run, stopped at its deadline (RUN_DEADLINE past its jitter). So a tick in which every bot skips
starts no Python, a bot's slow network, long drawing or broken settings delays or stops no other
bot, and each run keeps its bot's own lock and history: at most one post per run, whatever is
killed when::

    daemon = FlockDaemon(lambda: Flock.find(...), read_settings, command)
    daemon.serve()   # until SIGTERM; SIGHUP re-reads the flock (bots added, removed, changed)

Every line it logs about a bot begins with the bot's name, as the runs' own lines do.
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..arguments import global_settings
from ..errors import BotError
from ..posting import LATE_BY, TWEET_ONE_IN
from ..posting.calendar import OneOffTimes
from ..posting.choose import roll
from ..posting.quiet import skip_in_place
from ..posting.result import RunResult, log_result
from ..settings.loading import PROJECT_DIR, Config
from ..state.clock import utc_now, zone_for
from ..unattended import TWEET_JITTER, TWEET_TIMES, TWEET_TIMEZONE
from ..unattended.bell import Bell
from ..unattended.daemon import MAX_NAP, MISSED_GRACE, sd_notify
from ..unattended.install import REPLIES_EVERY_MINUTES
from ..wording import format_duration, plural
from . import RUN_DEADLINE
from .botconfig import naming
from .folder import Bot, Flock
from .listing import next_time

__all__ = ["KILL_GRACE", "FlockDaemon", "Plan", "serve_flock"]

log = logging.getLogger(__name__)

KILL_GRACE = 10.0  # seconds a run stopped at its deadline has to finish before it is killed
_WATCH = 0.5  # seconds between looks at the runs in flight


@dataclass
class Plan:
    """A bot's schedule, as its settings say: its times in its zone, its jitter, its deadline; and
    the settings themselves (`config`), which a run the daemon counts as skipped is read by."""

    bot: Bot
    config: Config
    times: Tuple[str, ...]
    zone: tzinfo
    jitter: float
    deadline: float
    due: Optional[datetime] = None  # the next time it runs, in UTC
    line_times: Optional[Callable[[Optional[datetime]], Optional[datetime]]] = None  # its one-offs'
    line_due: Optional[datetime] = None  # its next one-off line's time
    reply_due: Optional[datetime] = None  # its next round of replies (REPLY_RULES set)
    read_from: Optional[Tuple[int, int]] = None  # its .env as it was read (`env_stamp`)

    @classmethod
    def of(cls, bot: Bot, config: Config, now: datetime) -> Plan:
        """The plan of `bot` from its settings: a one-off line of the last LATE_BY is run at once
        (a Pi that boots late), as the one bot's daemon does."""
        zone = zone_for(config[TWEET_TIMEZONE] or None)
        times = tuple(config[TWEET_TIMES])
        plan = cls(bot, config, times, zone, float(config[TWEET_JITTER]), float(config[RUN_DEADLINE]))
        plan.read_from = env_stamp(bot.env_file)
        plan.due = next_time(times, now=now, zone=zone)
        plan.line_times = OneOffTimes(lambda: config)
        plan.line_due = plan.line_times(now - timedelta(seconds=config[LATE_BY]))
        if config["REPLY_RULES"] is not None:
            plan.reply_due = _next_round(now)
        return plan

    def next_job(self, now: datetime) -> Optional[str]:
        """What is due at `now`: "run" (a time of TWEET_TIMES), "one-offs", "replies", or None."""
        for kind, due in (("run", self.due), ("one-offs", self.line_due), ("replies", self.reply_due)):
            if due is not None and due <= now:
                return kind
        return None

    def done(self, kind: str, now: datetime) -> datetime:
        """Move past the `kind` job due; when it was due."""
        if kind == "run":
            due, self.due = self.due, next_time(self.times, now=max(now, self.due), zone=self.zone)  # type: ignore[type-var]
        elif kind == "one-offs":
            due, self.line_due = self.line_due, self.line_times(now) if self.line_times else None
        else:
            due, self.reply_due = self.reply_due, _next_round(now)
        return due  # type: ignore[return-value]

    def earliest(self) -> Optional[datetime]:
        return min((due for due in (self.due, self.line_due, self.reply_due) if due is not None), default=None)


@dataclass
class Worker:
    """A bot's run in flight: its process, and when (monotonic) it is stopped, then killed."""

    process: subprocess.Popen
    stop_at: float
    stopping: bool = False


@dataclass
class FlockDaemon:
    """The loop: reads the flock (`find`), each bot's settings (`read`), rolls each due bot's die
    (`rng`) and starts the runs that do more than skip as `command(bot, kind, rolled)`; `clock` and
    `monotonic` are a test's to fake."""

    find: Callable[[], Flock]
    read: Callable[[Bot], Config]
    command: Callable[[Bot, str, Optional[int]], Sequence[str]]  # a job ("run", "one-offs", "replies"), the roll
    clock: Callable[[], datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    notify: Callable[[str], object] = sd_notify
    rng: random.Random = field(default_factory=random.Random)
    dry_run: bool = False  # every run a dry run (`daemon --dry-run`), each in its process: it records its row
    plans: Dict[str, Plan] = field(default_factory=dict)
    workers: Dict[str, Worker] = field(default_factory=dict)
    stop: Bell = field(default_factory=Bell)
    wake: Bell = field(default_factory=Bell)
    reload_requested: bool = False
    stopped_by: Optional[str] = None

    def load(self) -> str:
        """Read the flock and each bot's settings again: a bot whose settings cannot be read is
        said and left out until they can (a SIGHUP reads them again); what changed, in a clause."""
        now, plans, broken = self.clock(), {}, []
        flock = self.find()
        for problem in flock.problems:
            log.warning("%s", problem)
        for bot in flock.bots:
            try:
                plans[bot.name] = Plan.of(bot, self.read(bot), now)
            except BotError as exc:
                broken.append(bot.name)
                log.error("%s: %s: it does not run until its settings are fixed (then SIGHUP)", bot.name, _first(exc))
            except Exception:  # a bug met reading one bot's files stops no other bot
                broken.append(bot.name)
                log.exception("%s: its settings could not be read (a bug: please report it); it does not run", bot.name)
        added = sorted(set(plans) - set(self.plans))
        removed = sorted(set(self.plans) - set(plans) - set(broken))
        self.plans = plans
        said = [f"{plural(len(plans), 'bot')} to run"]
        said += [f"{len(broken)} skipped ({', '.join(broken)})"] if broken else []
        said += [f"added {', '.join(added)}"] if added and len(added) < len(plans) else []
        said += [f"removed {', '.join(removed)}"] if removed else []
        return "; ".join(said)

    def tick(self) -> None:
        """Look after the runs in flight, then start the jobs that are due, one at a time per bot:
        a job due while its bot's last one is still going waits for it, a scheduled run at most
        MISSED_GRACE (then it is said and skipped), a round of replies until the next round."""
        self._watch()
        now = self.clock()
        for name, plan in sorted(self.plans.items()):
            try:
                self._tend(name, plan, now)
            except Exception:  # one bot's bug (its one-off lines' file, say) holds no other back
                log.exception("%s: its jobs could not be looked at (a bug: please report it)", name)

    def _tend(self, name: str, plan: Plan, now: datetime) -> None:
        """Start `plan`'s job that is due at `now`, if any, unless the bot's last one still goes."""
        kind = plan.next_job(now)
        if kind is None:
            return
        if name in self.workers:
            late = now - plan.due if kind == "run" and plan.due else timedelta(0)
            if kind == "replies" or late > MISSED_GRACE:
                due = plan.done(kind, now)
                if kind == "run":
                    log.warning("%s: its last run is still going: the %s run is skipped", name, _hm(due, plan))
            return
        due = plan.done(kind, now)
        if kind != "replies" and now - due > MISSED_GRACE:
            log.warning(
                "%s: missed the %s run by %s (the machine was asleep or its clock jumped)",
                name,
                _hm(due, plan),
                format_duration(now - due),
            )
            return
        fresh = self._reread(plan) if kind == "run" else True
        rolled = roll(plan.config[TWEET_ONE_IN], self.rng) if kind == "run" else None
        if rolled is not None and fresh and not self.dry_run and self._skipped_here(plan, rolled):
            return
        self._start(plan, kind, rolled)

    def _reread(self, plan: Plan) -> bool:
        """The bot's settings read again when its .env changed since they were read: the die the
        daemon rolls is the one the run knows (TWEET_ONE_IN), and a skip counted here follows
        today's settings (its times change on SIGHUP). False when they no longer read: its run,
        started all the same, says why."""
        stamp = env_stamp(plan.bot.env_file)
        if stamp == plan.read_from:
            return True
        try:
            plan.config = self.read(plan.bot)
        except BotError as exc:
            log.debug("%s: its .env changed and cannot be read (%s): its run says why", plan.bot.name, _first(exc))
            return False
        except Exception:  # a bug met reading one bot's settings holds no run back
            log.exception("%s: its changed settings could not be read (a bug: please report it)", plan.bot.name)
            return False
        plan.read_from = stamp
        return True

    def _skipped_here(self, plan: Plan, rolled: int) -> bool:
        """Whether the run the roll skips was counted here, in the bot's history, as its own run
        would count it (posting/quiet.py); else it needs a run of its own (said at DEBUG)."""
        name = plan.bot.name
        try:
            done = skip_in_place(plan.config, rolled, clock=self.clock)
        except BotError as exc:  # its own run meets it too, and says it in full
            done = _first(exc)
        except Exception:  # a bug met here holds no run back: its own run goes on
            log.exception("%s: its skip could not be counted here (a bug: please report it); its run starts", name)
            return False
        if isinstance(done, RunResult):
            with naming(name):
                log_result(done)
            return True
        log.debug("%s: rolled %d; its run starts (%s)", name, rolled, done)
        return False

    def _start(self, plan: Plan, kind: str, rolled: Optional[int]) -> None:
        command = list(self.command(plan.bot, kind, rolled))
        log.debug("%s: starting its %s: %s", plan.bot.name, kind, " ".join(command))
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        except OSError as exc:
            log.error("%s: its %s cannot start (%s)", plan.bot.name, kind, exc.strerror or exc)
            return
        jitter = plan.jitter if kind == "run" else 0.0
        self.workers[plan.bot.name] = Worker(process, self.monotonic() + jitter + plan.deadline)

    def _watch(self) -> None:
        """Runs that ended are reaped (an exit other than 0 said); one past its deadline is asked to
        stop (SIGTERM), and KILL_GRACE later killed."""
        for name, worker in list(self.workers.items()):
            status = worker.process.poll()
            if status is not None:
                del self.workers[name]
                if status < 0:
                    log.error("%s: its run was ended by %s", name, signal.Signals(-status).name)
                elif status != 0:
                    log.info("%s: its run ended with exit status %d", name, status)
                continue
            if self.monotonic() < worker.stop_at:
                continue
            if not worker.stopping:
                deadline = self.plans[name].deadline if name in self.plans else 0
                log.error(
                    "%s: its run passed its deadline (RUN_DEADLINE=%s): stopping it",
                    name,
                    format_duration(timedelta(seconds=deadline)),
                )
                worker.process.terminate()
                worker.stopping, worker.stop_at = True, self.monotonic() + KILL_GRACE
            else:
                worker.process.kill()

    def serve(self) -> None:
        """Run the flock until `stop` is set; a SIGHUP (`reload_requested`) re-reads it between ticks."""
        log.info("flock daemon started: %s", self.load())
        self.notify("READY=1")
        while not self.stop.is_set():
            if self.reload_requested:
                self.reload_requested = False
                log.info("received SIGHUP: %s", self.load())
            try:
                self.tick()
            except Exception:  # the daemon's own boundary: a bug in one tick stops no bot for good
                log.exception("the flock daemon's tick failed; it carries on (please report this)")
            self.wake.wait(self._nap())
            self.wake.clear()
        if self.stopped_by:
            log.info("received %s: stopping", self.stopped_by)
        self.notify("STOPPING=1")
        self._finish()

    def _nap(self) -> float:
        """Seconds to the next bot's run, at most MAX_NAP, and _WATCH while runs are in flight."""
        dues = [due for due in (plan.earliest() for plan in self.plans.values()) if due is not None]
        wait = min(((due - self.clock()).total_seconds() for due in dues), default=MAX_NAP)
        return max(0.0, min(wait, MAX_NAP, _WATCH if self.workers else MAX_NAP))

    def _finish(self) -> None:
        """On the way out, the runs in flight are given their deadline to end, as systemd gives
        the daemon its own (a post in flight is finished, never cut short by the stop)."""
        for name, worker in self.workers.items():
            try:
                worker.process.wait(max(0.0, worker.stop_at - self.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("%s: its run passed its deadline as the daemon stopped: killing it", name)
                worker.process.kill()
                worker.process.wait()

    def on_signals(self) -> Callable[[], None]:
        """SIGTERM and SIGINT stop the daemon, SIGHUP re-reads the flock; the handlers only set
        flags and ring the bell (nothing that takes a lock). Returns what puts the old ones back."""

        def on_signal(signum: int, frame: object) -> None:
            if signum == signal.SIGHUP:
                self.reload_requested = True
            else:
                self.stopped_by = self.stopped_by or signal.Signals(signum).name
                self.stop.set()
            self.wake.set()

        kept: List[Tuple[int, object]] = []
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            kept.append((signum, signal.signal(signum, on_signal)))

        def put_back() -> None:
            for signum, handler in kept:
                signal.signal(signum, handler)  # type: ignore[arg-type]

        return put_back


def env_stamp(path: Path) -> Optional[Tuple[int, int]]:
    """When a file was last changed and its size, to see cheaply that it changed; None if it is gone."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _first(error: BotError) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _next_round(now: datetime) -> datetime:
    """The next round of replies: every REPLIES_EVERY_MINUTES, on the minute, as the timer does."""
    step = REPLIES_EVERY_MINUTES * 60
    seconds = math.floor(now.timestamp() / step + 1) * step
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _hm(due: datetime, plan: Plan) -> str:
    return f"{due.astimezone(plan.zone):%H:%M}"


def serve_flock(args: argparse.Namespace, config: Config, *, environ: Mapping[str, str]) -> int:
    """`bot.py daemon` in a flock of several bots: one daemon for them all, until SIGTERM."""
    from .botconfig import bot_config

    registry, overrides = config.registry, {**args.settings, **global_settings(args)}
    named = args.flock
    where = ["--bots", str(named.folder)] if named.folder else []
    flags = [*(["--dry-run"] if args.dry_run else []), *(["-v"] if args.verbose else ["-q"] if args.quiet else [])]

    def command(bot: Bot, kind: str, rolled: Optional[int]) -> List[str]:
        job = {"run": ["--jitter"], "one-offs": ["--one-offs"], "replies": ["replies"]}[kind]
        roll = ["--roll", str(rolled)] if rolled is not None else []
        return [*_bot_py(), *where, "--bot", bot.name, *job, *roll, *flags]

    def find() -> Flock:
        return Flock.find(named.folder, environ, project_dir=PROJECT_DIR)

    def read(bot: Bot) -> Config:
        return bot_config(bot, registry, environ=environ, overrides=overrides, named=False)

    daemon = FlockDaemon(find, read, command, dry_run=args.dry_run)
    put_back = daemon.on_signals()
    try:
        daemon.serve()
    finally:
        put_back()
    log.info("flock daemon stopped")
    return 0


def _bot_py() -> List[str]:
    """How a child runs bot.py: the checkout's, else the installed package's."""
    bot_py = Path(__file__).resolve().parents[2] / "bot.py"
    return [sys.executable, str(bot_py)] if bot_py.is_file() else [sys.executable, "-m", "twitterbot"]
