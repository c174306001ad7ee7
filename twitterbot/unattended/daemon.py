"""The daemon: one foreground process that does a scheduled run at each of TWEET_TIMES.

It uses its own `schedule.Scheduler` (one daily job per time) and adds what a bot that runs for
a year needs:

- it sleeps until the next job, computing the wait with time-zone-aware times so that it is
  right across DST changes, but never more than `MAX_NAP` seconds at once, because the
  monotonic clock that sleeps use stops during a suspend and a wall-clock jump would go unseen;
  its naps are `Bell` waits (poll() with a timeout), which a clock sped up by libfaketime
  speeds up too, so a month can be simulated in an hour;
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

import contextlib
import logging
import os
import random
import signal
import socket
import threading
import time
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Callable, Mapping, Optional, Sequence

import schedule

from ..posting.scheduled import wait_jitter
from ..state.clock import utc_now
from ..wording import format_duration
from .bell import Bell

__all__ = ["Daemon", "MAX_NAP", "MISSED_GRACE", "sd_notify", "seconds_until", "use_zone", "zone_for"]

log = logging.getLogger(__name__)

MAX_NAP = 60.0
MISSED_GRACE = timedelta(minutes=10)


def zone_for(name: Optional[str], environ: Optional[Mapping[str, str]] = None) -> tzinfo:
    """The zone TWEET_TIMES are in: the named one, else the system's (TZ, then /etc/localtime), else UTC."""
    environ = os.environ if environ is None else environ
    if name:
        return zoneinfo.ZoneInfo(name)
    tz_variable = environ.get("TZ", "").lstrip(":")
    if tz_variable:
        try:
            return zoneinfo.ZoneInfo(tz_variable)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as local:
            return zoneinfo.ZoneInfo.from_file(local, key="localtime")
    except (OSError, ValueError):
        return timezone.utc


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
    reload: Optional[Callable[[], None]] = None  # SIGHUP: re-read the settings; may call `reschedule`
    stopped_by: Optional[str] = None  # the signal's name, once one asked the daemon to stop
    _reload_requested: bool = field(default=False, init=False)

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
        """Run jobs as they come due until `stop` is set (by a signal, or a test)."""
        self.notify("READY=1")
        announced = None
        while not self.stop.is_set():
            if self._reload_requested:
                self._reload_requested = False
                log.info("received SIGHUP: reloading the settings")
                self.notify("RELOADING=1")
                if self.reload is not None:
                    self.reload()
                self.notify("READY=1")
                announced = None
            self.scheduler.run_pending()
            next_run = self.scheduler.next_run
            if next_run is None or self.stop.is_set():
                break
            if next_run != announced:
                announced = next_run
                log.info("next run at %s", next_run.strftime("%Y-%m-%d %H:%M:%S"))
                self.notify(f"STATUS=next run at {next_run:%Y-%m-%d %H:%M:%S}")
            wait = seconds_until(next_run, self.clock(), self.zone)
            self.wake.wait(min(MAX_NAP, max(0.0, wait)))
            self.wake.clear()  # the flags say why it woke; a request after this sets it again
        if self.stopped_by:
            log.info("received %s: stopping", self.stopped_by)
        self.notify("STOPPING=1")

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
        (`signal.set_wakeup_fd`); the handlers write it too, should a library have replaced that
        pipe. So a signal may arrive twice: a second stop changes nothing, a second SIGHUP at most
        reads the settings again."""
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        stops = {signal.SIGTERM.value, signal.SIGINT.value}

        def relay() -> None:
            while True:
                numbers = os.read(read_end, 64)
                if not numbers:
                    return
                for number in numbers:
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
                os.write(write_end, bytes([signum]))

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def _fire(self, time_of_day: str, job: schedule.Job) -> None:
        """The job body. While it runs, `job.next_run` is still the time it was due."""
        late = self.clock().astimezone(timezone.utc) - _in_utc(job.next_run, self.zone)
        if late > MISSED_GRACE:
            log.warning(
                "missed the %s run by %s (the machine was asleep or its clock jumped): not catching up",
                time_of_day,
                format_duration(late),
            )
            return
        if self.jitter and wait_jitter(self.jitter, rng=self.rng, wait=self.stop.wait, what=f"{time_of_day} run"):
            return  # stopped while waiting
        self.run_slot(time_of_day)
