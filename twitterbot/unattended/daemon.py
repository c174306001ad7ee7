"""The daemon: one foreground process that does a scheduled run at each of TWEET_TIMES.

It uses its own `schedule.Scheduler` (one daily job per time) and adds what a bot that runs for
a year needs:

- it sleeps until the next job, computing the wait with time-zone-aware times so that it is
  right across DST changes, but never more than `MAX_NAP` seconds at once, because the
  monotonic clock that sleeps use stops during a suspend and a wall-clock jump would go unseen;
  its naps are `Bell` waits (poll() with a timeout), which a clock sped up by libfaketime
  speeds up too, so a month can be simulated in an hour (benchmarks/daemon_month.py);
- a job that comes due more than `MISSED_GRACE` late (the machine was asleep, or NTP moved the
  clock of a Pi with no real-time clock) is logged and skipped, never fired in a burst;
- SIGTERM and SIGINT end it within a second (a post already in flight is finished first);
- SIGHUP re-reads the settings (the `reload` callback) between runs and carries on with the new
  times, as daemons conventionally do; a post in flight is never cut short by it;
- with ``NOTIFY_SOCKET`` set (systemd ``Type=notify``) it reports READY, STATUS and STOPPING.

::

    daemon = Daemon.build(config["TWEET_TIMES"], run_slot=print, zone=zone_for(None))
    daemon.serve()          # until daemon.stop is set
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import random
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import schedule

from ..posting.scheduled import wait_jitter
from ..state.clock import utc_now
from ..wording import format_duration
from .bell import Bell

__all__ = ["Daemon", "MAX_NAP", "MISSED_GRACE", "SignalTwins", "sd_notify", "seconds_until", "use_zone"]

log = logging.getLogger(__name__)

MAX_NAP = 60.0
MISSED_GRACE = timedelta(minutes=10)


def use_zone(name: Optional[str]) -> None:
    """Make this process's local time the configured zone: `schedule` works in naive local time."""
    if name:
        os.environ["TZ"] = name
        time.tzset()


def seconds_until(naive_local: datetime, now: datetime, zone: tzinfo) -> float:
    """Real seconds from `now` (aware) until the wall-clock time `naive_local` in `zone`.

    Subtracting naive times is off by an hour across a DST change; attaching the zone first is
    not. A time that occurs twice (clocks going back) means its first occurrence; a time skipped
    by clocks going forward is read with the old offset, so it comes an hour later.
    """
    # Python subtracts two times of the same zone as wall-clock times: go through UTC.
    return (_in_utc(naive_local, zone) - now.astimezone(timezone.utc)).total_seconds()


def _in_utc(naive_local: datetime, zone: tzinfo) -> datetime:
    return naive_local.replace(tzinfo=zone).astimezone(timezone.utc)


def sd_notify(message: str, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Send a state change to systemd (sd_notify protocol). Does nothing when not under Type=notify."""
    environ = os.environ if environ is None else environ
    address = environ.get("NOTIFY_SOCKET", "")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract socket namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall(message.encode())
    except OSError as exc:
        log.warning("could not notify systemd (%s): %s", address, exc.strerror)
        return False
    return True


@dataclass
class Daemon:
    """A scheduler with one daily job per time, and the loop that drives it."""

    scheduler: schedule.Scheduler
    run_slot: Callable[[str], None]
    zone: tzinfo
    clock: Callable[[], datetime] = utc_now
    rng: random.Random = field(default_factory=random.Random)
    jitter: float = 0.0
    notify: Callable[[str], object] = sd_notify
    stop: Bell = field(default_factory=Bell)  # set: stop serving (jitter waits on it)
    wake: Bell = field(default_factory=Bell)  # set: end the current nap now
    # SIGHUP: re-read the settings (it may call `reschedule`); what changed, in a few words, or None
    # when it failed and logged why.
    reload: Optional[Callable[[], Optional[str]]] = None
    # The tweets file's first one-off ({at: ...}) time after an instant (None: after the start):
    # the daemon wakes for it with a run of its own (posting/calendar.py's OneOffTimes).
    line_times: Optional[Callable[[Optional[datetime]], Optional[datetime]]] = None
    # The run for a one-off line's time (it posts a one-off or nothing); None: `run_slot`.
    run_line: Optional[Callable[[str], None]] = None
    woke_for: Optional[datetime] = None  # the one-off time it last ran for (at first: its start less LATE_BY)
    stopped_by: Optional[str] = None  # the signal's name, once one asked the daemon to stop
    _reload_requested: bool = field(default=False, init=False)
    _missed: List[Tuple[str, timedelta]] = field(default_factory=list, init=False)  # this round's, by run_due

    @classmethod
    def build(cls, times: Sequence[str], *, run_slot: Callable[[str], None], zone: tzinfo, **options) -> Daemon:
        daemon = cls(schedule.Scheduler(), run_slot, zone, **options)
        daemon.reschedule(times)
        return daemon

    def reschedule(
        self, times: Sequence[str], *, zone: Optional[tzinfo] = None, jitter: Optional[float] = None
    ) -> None:
        """One daily job per time of day, replacing any there were (a reload may change them)."""
        self.scheduler.clear()
        self.zone = self.zone if zone is None else zone
        self.jitter = self.jitter if jitter is None else jitter
        for time_of_day in times:
            job = self.scheduler.every().day.at(time_of_day)
            job.do(self._fire, time_of_day, job)

    def request_stop(self) -> None:
        self.stop.set()
        self.wake.set()

    def serve(self) -> None:
        """Run jobs as they come due until `stop` is set (by a signal, or a test).

        For the journal, a run leaves one line (its own) and a reload one line (what `reload`
        returns, and the next run if it moved): the next run is named at INFO at the start only,
        then at DEBUG (systemd's STATUS carries it)."""
        self.notify("READY=1")
        announced = None
        told = False  # the next run named at INFO once
        while not self.stop.is_set():
            if self._reload_requested:
                self._reload_requested = False
                self.notify("RELOADING=1")
                said = self.reload() if self.reload is not None else "nothing to reload"
                next_run = self.scheduler.next_run
                if said is not None:  # None: the reload failed, and said why
                    moved = f"; next run at {next_run:%Y-%m-%d %H:%M:%S}" if next_run and next_run != announced else ""
                    log.info("received SIGHUP: %s%s", said, moved)
                self.notify("READY=1")
                announced = None  # STATUS names it again, the log only if it moved
            self.run_due()
            next_run = self.scheduler.next_run
            if next_run is None or self.stop.is_set():
                break
            if next_run != announced:
                announced = next_run
                log.log(logging.DEBUG if told else logging.INFO, "next run at %s", f"{next_run:%Y-%m-%d %H:%M:%S}")
                told = True
                self.notify(f"STATUS=next run at {next_run:%Y-%m-%d %H:%M:%S}")
            line_wait = self._line_wait()
            if line_wait <= 0:
                continue  # a one-off line's run just ended: look at the schedule again before napping
            wait = min(seconds_until(next_run, self.clock(), self.zone), line_wait)
            self.wake.wait(min(MAX_NAP, max(0.0, wait)))
            self.wake.clear()  # the flags say why it woke; a request after this sets it again
        if self.stopped_by:
            log.info("received %s: stopping", self.stopped_by)
        self.notify("STOPPING=1")

    def run_due(self) -> None:
        """Run the jobs that are due; those that came due too long ago are skipped, and said in
        one line however many there were (a Pi that slept all night misses dozens)."""
        self._missed = []
        self.scheduler.run_pending()
        missed, self._missed = self._missed, []
        if missed:
            latest = format_duration(max(late for _, late in missed))
            which = (
                f"the {missed[0][0]} run by {latest}"
                if len(missed) == 1
                else f"{len(missed)} runs, {missed[0][0]} to {missed[-1][0]}, by up to {latest}"
            )
            log.warning("missed %s (the machine was asleep or its clock jumped): not catching up", which)

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT stop the daemon, SIGHUP reloads it.

        A handler runs in the main thread between two bytecodes, possibly while that thread holds
        a lock: the logging module's, say. Taking the same lock in the handler would hang the
        daemon for good. So a relay thread reads each signal's number from a pipe and rings the
        bells, as any other thread may; serve() logs what happened.

        The kernel hands a signal to any thread of the process. Taken by another thread, it
        would reach Python's handler only once the main thread next ran bytecode, after its nap
        (up to MAX_NAP: a stop "within a second" took a minute, seen on Python 3.13). So Python
        writes the number to the pipe itself, at once, in whichever thread took the signal
        (`signal.set_wakeup_fd`); the handlers write it too, marked, should a library have
        replaced that pipe. Each signal is acted on once (`SignalTwins`): one SIGHUP, one reload
        and one line in the log."""
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        stops = {signal.SIGTERM.value, signal.SIGINT.value}
        twins = SignalTwins()

        def relay() -> None:
            while True:
                written = os.read(read_end, 64)
                if not written:
                    return
                for number in map(twins.first_of, written):
                    if number is None:
                        continue  # the twin of a signal already acted on
                    if number in stops:
                        self.stopped_by = self.stopped_by or signal.Signals(number).name
                        self.request_stop()
                    elif number == signal.SIGHUP:
                        # A reload waits for a safe point: serve() sees the flag between runs,
                        # never in the middle of one.
                        self._reload_requested = True
                        self.wake.set()

        threading.Thread(target=relay, name="signal relay", daemon=True).start()

        def on_signal(signum: int, frame: object) -> None:
            with contextlib.suppress(BlockingIOError):  # a full pipe: the relay wakes anyway
                os.write(write_end, bytes([signum | SignalTwins.BY_HANDLER]))

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def _line_wait(self) -> float:
        """Seconds until the next one-off line's time; at or past it, one run first (then 0), for
        the latest time passed: a daemon that starts, or whose clock jumps, past many one-offs
        runs once, not once for each (that run posts the oldest one-off still due; the next
        runs of TWEET_TIMES the others, within LATE_BY)."""
        if self.line_times is None or self.stop.is_set():
            return math.inf
        at = self.line_times(self.woke_for)
        if at is None:
            return math.inf
        now = self.clock()
        wait = (at - now).total_seconds()
        if wait > 0:
            return wait
        passed = 1
        later = self.line_times(at)
        while later is not None and later <= now:
            at, later, passed = later, self.line_times(later), passed + 1
        self.woke_for = at
        if passed > 1:
            log.info("%d one-off times passed at once (a start or a clock jump): one run for them", passed)
        (self.run_line or self.run_slot)(f"{at.astimezone(self.zone):%Y-%m-%d %H:%M} one-off")
        return 0.0

    def _fire(self, time_of_day: str, job: schedule.Job) -> None:
        """The job body. While it runs, `job.next_run` is still the time it was due."""
        late = self.clock().astimezone(timezone.utc) - _in_utc(job.next_run, self.zone)
        if late > MISSED_GRACE:
            self._missed.append((time_of_day, late))  # run_due says so, once for all it skipped
            return
        if self.jitter and wait_jitter(
            self.jitter, rng=self.rng, wait=self.stop.wait, what=f"{time_of_day} run", level=logging.DEBUG
        ):
            return  # stopped while waiting
        self.run_slot(time_of_day)


class SignalTwins:
    """Each signal is written to the relay's pipe twice, by Python's C handler (the wakeup fd: its
    number) and by ours (its number with `BY_HANDLER` set), in either order: the C handler wakes
    the main thread before it writes. `first_of` gives the number of the first of the two and None
    for its twin; a signal written by one side alone (a library took the wakeup fd) still counts."""

    BY_HANDLER = 0x80  # signal numbers are below 64

    def __init__(self) -> None:
        # The bytes whose twin has not come yet, by writer (True: our handler).
        self._unpaired: Dict[bool, collections.Counter[int]] = {
            True: collections.Counter(),
            False: collections.Counter(),
        }

    def first_of(self, byte: int) -> Optional[int]:
        number, by_handler = byte & ~self.BY_HANDLER, bool(byte & self.BY_HANDLER)
        if self._unpaired[not by_handler][number]:
            self._unpaired[not by_handler][number] -= 1
            return None
        self._unpaired[by_handler][number] += 1
        return number
