"""When the next scheduled run is due, as far as this machine can tell.

The bot runs from one of three places, and the page looks for each in turn, for *this* checkout's
bot.py: the daemon (a process running ``bot.py daemon``), the systemd timer (``systemctl show
twitterbot.timer``, user or system), a crontab line (``crontab -l``). Failing all three it says
what TWEET_TIMES would give and that nothing seems to run it. Each look is a quick read; a tool
that is missing or slow (over two seconds) is skipped::

    due = next_run(config, now=datetime.now(timezone.utc))
    due.at, due.source, due.detail      # aware datetime or None, "daemon", "the timer is ..."
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Sequence

from ..settings.loading import PROJECT_DIR, Config
from ..unattended import TWEET_JITTER, TWEET_TIMES, TWEET_TIMEZONE
from ..wording import format_duration

__all__ = ["NextRun", "next_run", "next_time"]

Runner = Callable[[Sequence[str]], Optional[str]]


@dataclass(frozen=True)
class NextRun:
    """The next run: when (None: unknown), what runs it (daemon, systemd, cron, settings) and one
    sentence for the owner."""

    at: Optional[datetime]
    source: str
    detail: str


def _run(command: Sequence[str]) -> Optional[str]:
    """A command's output, or None if it is missing, fails or takes over two seconds."""
    try:
        done = subprocess.run(
            list(command), capture_output=True, text=True, timeout=2, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def next_run(
    config: Config,
    *,
    now: datetime,
    run: Runner = _run,
    proc: Path = Path("/proc"),
    bot_py: Optional[Path] = None,
) -> NextRun:
    """Where this checkout's scheduled runs come from, and when the next is due."""
    from ..state.clock import zone_for

    bot_py = bot_py or (PROJECT_DIR / "bot.py" if PROJECT_DIR else None)
    zone = zone_for(config[TWEET_TIMEZONE])
    jitter = (
        f" (plus up to {format_duration(timedelta(seconds=config[TWEET_JITTER]))} of TWEET_JITTER)"
        if config[TWEET_JITTER]
        else ""
    )
    times = ", ".join(config[TWEET_TIMES])
    if bot_py is not None:
        pid = _daemon_pid(proc, bot_py)
        if pid is not None:
            at = next_time(config[TWEET_TIMES], now=now, zone=zone)
            return NextRun(at, "daemon", f"the daemon (process {pid}) runs at {times}{jitter}")
        timer = _systemd_timer(run, bot_py)
        if timer is not None:
            return timer
        cron = _cron(run, bot_py, now)
        if cron is not None:
            return cron
    at = next_time(config[TWEET_TIMES], now=now, zone=zone)
    return NextRun(
        at,
        "settings",
        f"TWEET_TIMES say {times}{jitter}, but no daemon, systemd timer or crontab line for this checkout was found",
    )


def next_time(times: Iterable[str], *, now: datetime, zone: tzinfo) -> Optional[datetime]:
    """The first of `times` ("HH:MM" or "HH:MM:SS", in `zone`) after `now`."""
    local = now.astimezone(zone)
    candidates = []
    for days in (0, 1):
        day: date = local.date() + timedelta(days=days)
        for text in times:
            parts = [int(part) for part in text.split(":")]
            moment = datetime.combine(day, time(*parts), tzinfo=zone)
            if moment > local:
                candidates.append(moment)
    return min(candidates).astimezone(timezone.utc) if candidates else None


def _daemon_pid(proc: Path, bot_py: Path) -> Optional[int]:
    """The process running ``bot.py daemon`` of this checkout, if any (Linux's /proc)."""
    wanted = str(bot_py)
    try:
        entries = list(proc.iterdir())
    except OSError:
        return None
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [word.decode("utf-8", "replace") for word in words if word]
        if any(arg == wanted for arg in args) and "daemon" in args:
            return int(entry.name)
    return None


def _systemd_timer(run: Runner, bot_py: Path) -> Optional[NextRun]:
    for scope in ("--user", "--system"):
        service = run(["systemctl", scope, "show", "twitterbot.service", "--property=ExecStart"])
        if not service or str(bot_py) not in service:
            continue
        shown = run(
            [
                "systemctl",
                scope,
                "show",
                "twitterbot.timer",
                "--timestamp=unix",
                "--property=ActiveState,NextElapseUSecRealtime",
            ]
        )
        facts = dict(line.split("=", 1) for line in (shown or "").splitlines() if "=" in line)
        where = "systemctl --user" if scope == "--user" else "systemctl"
        if facts.get("ActiveState") != "active":
            continue
        at = None
        stamp = facts.get("NextElapseUSecRealtime", "")
        if stamp.startswith("@") and stamp[1:].isdigit():
            at = datetime.fromtimestamp(int(stamp[1:]), timezone.utc)
        return NextRun(at, "systemd", f"the systemd timer twitterbot.timer is active ({where} list-timers shows it)")
    return None


def _cron(run: Runner, bot_py: Path, now: datetime) -> Optional[NextRun]:
    table = run(["crontab", "-l"])
    if not table:
        return None
    lines = [line.strip() for line in table.splitlines() if str(bot_py) in line and not line.lstrip().startswith("#")]
    if not lines:
        return None
    from ..state.clock import zone_for

    times: List[datetime] = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[2:5] != ["*", "*", "*"]:
            continue  # a day-of-month or weekday schedule: shown as found, not computed
        minutes, hours = _cron_field(fields[0], 60), _cron_field(fields[1], 24)
        if minutes and hours:
            at = next_time([f"{hour}:{minute}" for hour in hours for minute in minutes], now=now, zone=zone_for(None))
            if at:
                times.append(at)
    return NextRun(min(times) if times else None, "cron", f"a crontab line runs this checkout: {lines[0]}")


def _cron_field(text: str, size: int) -> List[int]:
    """The values of a simple cron field (numbers, lists, ranges, steps, *); [] if it is not simple."""
    values = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, _, step_text = part.partition("/")
            if not step_text.isdigit() or int(step_text) == 0:
                return []
            step = int(step_text)
        if part == "*":
            start, end = 0, size - 1
        elif "-" in part:
            first, _, last = part.partition("-")
            if not (first.isdigit() and last.isdigit()):
                return []
            start, end = int(first), int(last)
        elif part.isdigit():
            start = end = int(part)
        else:
            return []
        if end >= size:
            return []
        values.update(range(start, end + 1, step))
    return sorted(values)
