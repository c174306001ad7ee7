"""Crontab lines and systemd units, filled in with this checkout's absolute paths.

Cron and systemd start the bot with a bare PATH in another directory, so every path in these
files is absolute: the venv's python, bot.py, the lock and the log. ``python bot.py cron`` and
``python bot.py systemd`` print them; ``crontab.example`` and ``systemd/`` in the repository are
the same output for ``/home/pi/twitterbot`` and the user ``pi`` (a test keeps them in step)::

    paths = Paths.for_checkout(config, python=Path(sys.executable), user="pi")
    print(crontab(config, paths))
    units = systemd_units(config, paths, system=True)   # {"twitterbot.service": "...", ...}
"""

from __future__ import annotations

import logging
import shlex
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError, ExitStatus, UsageError
from ..posting import TWEETS_FILE
from ..settings.keys import LOG_FILE
from ..settings.loading import Config, load_config
from ..settings.parsers import time_to_seconds
from ..state.clock import utc_now, zone_for
from ..wording import format_duration
from . import TWEET_JITTER, TWEET_TIMES, TWEET_TIMEZONE

if TYPE_CHECKING:
    from ..registry import Registry

__all__ = [
    "LINES_TIMER",
    "MAX_ONE_OFF_RUNS",
    "REPLY_UNITS",
    "Paths",
    "UNIT_NAMES",
    "crontab",
    "systemd_units",
    "unit_user",
]

log = logging.getLogger(__name__)

SERVICE, TIMER, DAEMON = "twitterbot.service", "twitterbot.timer", "twitterbot-daemon.service"
WEB = "twitterbot-web.service"  # the status page (bot.py serve, docs/status-page.md)
UNIT_NAMES = (SERVICE, TIMER, DAEMON, WEB)
# With REPLY_RULES set: `bot.py replies` every few minutes (docs/replies.md).
REPLIES_SERVICE, REPLIES_TIMER = "twitterbot-replies.service", "twitterbot-replies.timer"
REPLY_UNITS = (REPLIES_SERVICE, REPLIES_TIMER)
# The one-off lines' run and timer, written when the tweets file has one-offs to come.
LINES_SERVICE, LINES_TIMER = "twitterbot-lines.service", "twitterbot-lines.timer"
# How often the replies' timer and cron line answer new mentions.
REPLIES_EVERY_MINUTES = 5

# At most this many one-off lines get a run of their own in the timer or the crontab, the next
# to come first (a warning says when to write them again): 5,000 lines are not 5,000 timers.
MAX_ONE_OFF_RUNS = 100

# Exit codes that another try cannot fix (usage, the tweets file, a missing package, keys, a
# setting): no restart loop. 73 (a full disk) and 75 (the network, a clock not set) may pass.
_NO_RESTART = " ".join(
    str(int(status))
    for status in (
        ExitStatus.USAGE,
        ExitStatus.DATA_ERROR,
        ExitStatus.UNAVAILABLE,
        ExitStatus.PERMISSION_DENIED,
        ExitStatus.CONFIG_ERROR,
    )
)


@dataclass(frozen=True)
class Paths:
    """Where things are, as cron and systemd must be told."""

    project_dir: Path
    python: Path  # the venv's python, not resolved: resolving would leave the venv
    env_file: Optional[Path]  # passed with --env-file when it is not the default .env
    state_dir: Path
    log_file: Optional[Path]
    user: str

    @classmethod
    def for_checkout(cls, config: Config, *, python: Path, user: str, project_dir: Path) -> Paths:
        default_env = project_dir / ".env"
        env_file = config.env_file if config.env_file and config.env_file != default_env else None
        return cls(project_dir, python, env_file, config.state.path, config[LOG_FILE], user)

    @property
    def bot_py(self) -> Path:
        return self.project_dir / "bot.py"

    def command(self, *args: str) -> str:
        """bot.py with `args` as a shell reads it: each word quoted (a path may hold a space)."""
        words = [str(self.python), str(self.bot_py)]
        if self.env_file:
            words += ["--env-file", str(self.env_file)]
        return " ".join(shlex.quote(word) for word in words + list(args))

    def unit_command(self, *args: str) -> str:
        """The command as an ExecStart= holds it: systemd reads the shell's quotes, and expands
        % (%h, %u) everywhere, so a % of a path is written %%."""
        return unit_text(self.command(*args))


def unit_text(text: str) -> str:
    """A value as a unit file holds it: systemd expands specifiers (%h, %u) in most settings, so
    a % of a path is written %%."""
    return text.replace("%", "%%")


def unit_paths(paths: Sequence[Path]) -> str:
    """Paths as a list setting (ReadWritePaths=) holds them: separated by spaces, so each one
    holding a space or a quote is in double quotes (backslash and quote escaped), % doubled."""
    words = []
    for path in paths:
        text = unit_text(str(path))
        if any(char in text for char in " \"'\t"):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        words.append(text)
    return " ".join(words)


def unit_uri(path: Path) -> str:
    """A file as Documentation= names it: a file:// URI (a space is %20), its % doubled."""
    return unit_text(path.as_uri())


def cron_command(command: str) -> str:
    """A command as a crontab line holds it: cron ends the command at an unescaped % (the rest is
    its standard input), so each % is written \\%, which cron gives the shell as %."""
    return command.replace("%", "\\%")


def crontab(config: Config, paths: Paths) -> str:
    """Crontab lines for TWEET_TIMES: one line per minute of the hour, with the hours listed."""
    hours_by_minute: Dict[int, List[int]] = defaultdict(list)
    for time_of_day in config[TWEET_TIMES]:
        seconds = time_to_seconds(time_of_day)
        if seconds % 60:
            raise ConfigError(
                f"cron starts jobs on the minute, but TWEET_TIMES has {time_of_day}: use HH:MM times, "
                "or the daemon or the systemd timer"
            )
        hours_by_minute[seconds // 60 % 60].append(seconds // 3600)

    lock = paths.state_dir / "cron.lock"
    log = paths.state_dir / "cron.log"
    command = cron_command(
        f"/usr/bin/flock -n {shlex.quote(str(lock))} {paths.command('-q', '--jitter')} >> {shlex.quote(str(log))} 2>&1"
    )
    zone_note = (
        f"# TWEET_TIMEZONE={config[TWEET_TIMEZONE]} is not used here: cron runs in the system's zone. cronie\n"
        f"# understands a CRON_TZ={config[TWEET_TIMEZONE]} line above the jobs; Debian's cron does not, so set the\n"
        "# system's zone (sudo timedatectl set-timezone ...) or use the systemd timer instead.\n"
        if config[TWEET_TIMEZONE]
        else "# Times are the system's local time (timedatectl shows the zone). cronie also reads a\n"
        "# CRON_TZ=Europe/London line above the jobs; Debian's cron does not.\n"
    )
    lines = [
        f"# twitterbot: a scheduled run at {', '.join(config[TWEET_TIMES])}. Install with `crontab -e` and paste",
        "# these lines (piping into `crontab -` would replace your whole crontab).",
        "#",
        "# Every path is absolute because cron starts jobs in $HOME with PATH=/usr/bin:/bin.",
        "# flock -n skips a run while the previous one still runs (the bot also locks itself).",
        "# -q keeps the log to warnings and errors; `python bot.py history` shows every decision.",
        "# --jitter waits a random 0..TWEET_JITTER (read at each run) first, as the timer and the daemon do.",
        f"# The lock and the log live in {paths.state_dir}, which `python bot.py check` creates.",
        "# In a crontab command % means a new line: write \\% if you add one (e.g. date +\\%F).",
        zone_note.rstrip("\n"),
    ]
    for minute, hours in sorted(hours_by_minute.items()):
        lines.append(f"{minute} {','.join(str(hour) for hour in sorted(hours))} * * * {command}")
    # Replies have a cron lock of their own: sharing the scheduled run's, a round that runs at a
    # post's minute would make cron skip the post; bot.lock (which the bot waits for) takes turns.
    replies_lock = paths.state_dir / "cron-replies.lock"
    replies = cron_command(
        f"/usr/bin/flock -n {shlex.quote(str(replies_lock))} {paths.command('-q', 'replies')} "
        f">> {shlex.quote(str(log))} 2>&1"
    )
    every = f"*/{REPLIES_EVERY_MINUTES} * * * *"
    if config["REPLY_RULES"] is not None:
        lines.append(
            f"# Replies (REPLY_RULES): new mentions answered every {REPLIES_EVERY_MINUTES} minutes (docs/replies.md)."
        )
        lines.append(f"{every} {replies}")
    else:
        lines.append(
            f"# With REPLY_RULES set, `bot.py cron` adds a line answering mentions every {REPLIES_EVERY_MINUTES} minutes:"
        )
        lines.append(f"# {every} {replies}")
    one_offs = calendar_lines(config)
    if one_offs:
        # Their own lock: a run of TWEET_TIMES waiting its jitter holds cron.lock, and would make
        # cron skip the one-off's run. No --jitter: the one-off goes at its time.
        lines_lock = paths.state_dir / "cron-lines.lock"
        one_off = cron_command(
            f"/usr/bin/flock -n {shlex.quote(str(lines_lock))} {paths.command('-q', '--one-offs')} "
            f">> {shlex.quote(str(log))} 2>&1"
        )
        lines += [f"# {said}" for _at, said in one_offs]
        lines.append("# A run at each line's time (in the system's zone; cron has no year, so it comes again")
        lines.append("# each year and then finds nothing to post), with no jitter, posting the one-off or nothing.")
        lines.append("# Print these lines again after changing them:")
        system = zone_for(None)
        for at, _said in one_offs:
            when = at.astimezone(system)
            lines.append(f"{when.minute} {when.hour} {when.day} {when.month} * {one_off}")
    return "\n".join(lines) + "\n"


def calendar_lines(config: Config, *, now: Optional[datetime] = None) -> List[Tuple[datetime, str]]:
    """The tweets file's one-off lines still to come ({at: ...}, aware), each with what to say of
    it: when the first of TWEET_TIMES' runs after it comes, and whether that is within LATE_BY.
    The timer and the cron lines then wake for each. A file with a bad line raises its error
    (exit 65, naming the line), never leaves every one-off out in silence; a file not written yet
    is a warning."""
    from ..posting.calendar import Calendar, in_zone
    from ..posting.sources import source_of

    if not config[TWEETS_FILE].exists():
        log.warning(
            "%s does not exist yet: no run of its own is added for a one-off line; write these again once it does",
            config[TWEETS_FILE],
        )
        return []
    tweets = source_of(config).lines()
    if tweets is None:  # a grammar's posts have no times: each run draws one
        return []
    calendar = Calendar.of(config)
    now = now or utc_now()
    found: List[Tuple[datetime, str]] = []
    for text, time in tweets.times.items():
        if time.at is None or in_zone(time.at, calendar.zone) <= now:
            continue
        at = in_zone(time.at, calendar.zone)
        lineno = tweets.linenos[tweets.texts.index(text)]
        late = _until_next_run(time.at, config[TWEET_TIMES])
        said = f"line {lineno} {time.describe()} " + (
            f"falls between the runs of TWEET_TIMES: the first after it comes {format_duration(late)} later"
            if late
            else "comes at a run of TWEET_TIMES"
        )
        if late > calendar.late_by:
            said += f", later than LATE_BY={format_duration(calendar.late_by)}: without the run below it is missed"
        found.append((at, said))
    found.sort()
    if len(found) > MAX_ONE_OFF_RUNS:
        last = found[MAX_ONE_OFF_RUNS - 1][0].astimezone(calendar.zone)
        log.warning(
            "%d one-off lines are still to come: the runs written here wake for the first %d only, to %s; "
            "write them again before then (the daemon needs no such runs)",
            len(found),
            MAX_ONE_OFF_RUNS,
            f"{last:%Y-%m-%d %H:%M}",
        )
    return found[:MAX_ONE_OFF_RUNS]


def _until_next_run(at: datetime, times: List[str]) -> timedelta:
    """From a naive time of day to the next of TWEET_TIMES (the same zone), at or after it."""
    seconds = at.hour * 3600 + at.minute * 60
    day = 24 * 3600
    return timedelta(seconds=min((time_to_seconds(each) - seconds) % day for each in times))


def systemd_units(config: Config, paths: Paths, *, system: bool) -> Dict[str, str]:
    """The oneshot service, its timer, the daemon service and the status page's service, for a
    system or a user install."""
    units = {
        SERVICE: _service_unit(paths, system=system),
        TIMER: _timer_unit(config),
        DAEMON: _daemon_unit(paths, system=system),
        WEB: _web_unit(paths, system=system),
    }
    one_offs = calendar_lines(config)
    if one_offs:
        units[LINES_SERVICE] = _lines_service(paths, system=system)
        units[LINES_TIMER] = _lines_timer(config, one_offs)
    if config["REPLY_RULES"] is not None:
        units[REPLIES_SERVICE] = _replies_unit(paths, system=system)
        units[REPLIES_TIMER] = _replies_timer()
    return units


def _replies_unit(paths: Paths, *, system: bool) -> str:
    """The oneshot service the replies' timer starts: one round of replies (REPLY_RULES)."""
    return f"""[Unit]
Description=twitterbot: answer new mentions by the reply rules (bot.py replies)
{_waits_for_network_and_clock(paths)}
[Service]
Type=oneshot
{_user_line(paths, system=system)}WorkingDirectory={unit_text(str(paths.project_dir))}
ExecStart={paths.unit_command("replies")}
TimeoutStartSec=10min
{_sandbox(paths, system=system)}"""


def _replies_timer() -> str:
    """Every few minutes: a round of replies (it skips while a scheduled run holds the lock)."""
    return f"""[Unit]
Description=twitterbot replies every {REPLIES_EVERY_MINUTES} minutes

[Timer]
OnCalendar=*:0/{REPLIES_EVERY_MINUTES}
Persistent=false

[Install]
WantedBy=timers.target
"""


def _service_unit(paths: Paths, *, system: bool) -> str:
    """The oneshot service the timer starts: one scheduled run."""
    return f"""[Unit]
Description=twitterbot: one scheduled run (post a line of tweets.txt on 1 run in N)
{_waits_for_network_and_clock(paths)}
[Service]
Type=oneshot
{_user_line(paths, system=system)}WorkingDirectory={unit_text(str(paths.project_dir))}
ExecStart={paths.unit_command()}
# A run takes seconds; a slow network can stretch it to API_TIMEOUT per try.
TimeoutStartSec=10min
{_sandbox(paths, system=system)}"""


def _lines_service(paths: Paths, *, system: bool) -> str:
    """The oneshot service the one-offs' timer starts: a run that posts a one-off line whose time
    has come, or nothing (--one-offs: no roll, no other line)."""
    return f"""[Unit]
Description=twitterbot: a one-off line's run (post it, or nothing)
{_waits_for_network_and_clock(paths)}
[Service]
Type=oneshot
{_user_line(paths, system=system)}WorkingDirectory={unit_text(str(paths.project_dir))}
ExecStart={paths.unit_command("--one-offs")}
TimeoutStartSec=10min
{_sandbox(paths, system=system)}"""


def _lines_timer(config: Config, one_offs: List[Tuple[datetime, str]]) -> str:
    """The one-offs' timer: one OnCalendar= line per one-off line still to come (the next
    MAX_ONE_OFF_RUNS), and no RandomizedDelaySec=: a one-off goes at its time."""
    zone = f" {config[TWEET_TIMEZONE]}" if config[TWEET_TIMEZONE] else ""
    bot_zone = zone_for(config[TWEET_TIMEZONE])
    said = "\n".join(f"# {said}" for _at, said in one_offs)
    calendars = "\n".join(f"OnCalendar={at.astimezone(bot_zone):%Y-%m-%d %H:%M:00}{zone}" for at, _said in one_offs)
    return f"""[Unit]
Description=twitterbot's one-off lines ({len(one_offs)} to come)

[Timer]
Unit={LINES_SERVICE}
{said}
# A run at each one-off line's time, with no random delay (write the units again after changing them):
{calendars}
Persistent=false

[Install]
WantedBy=timers.target
"""


def _timer_unit(config: Config) -> str:
    """The timer: one OnCalendar= line per TWEET_TIMES, in TWEET_TIMEZONE if one is set (the
    one-off lines have a timer of their own, without the random delay)."""
    zone = f" {config[TWEET_TIMEZONE]}" if config[TWEET_TIMEZONE] else ""
    calendars = "\n".join(f"OnCalendar=*-*-* {_with_seconds(t)}{zone}" for t in config[TWEET_TIMES])
    return f"""[Unit]
Description=twitterbot at {", ".join(config[TWEET_TIMES])}{zone}

[Timer]
{calendars}
# Persistent=false on purpose: with true, a Pi that was off at a run time would post a catch-up
# at every boot. A missed run is simply missed; the 1-in-N roll makes that invisible.
Persistent=false
{_random_delay(int(config[TWEET_JITTER]))}
[Install]
WantedBy=timers.target
"""


def _random_delay(jitter: int) -> str:
    """The timer's RandomizedDelaySec= for TWEET_JITTER seconds, or a comment showing how to get one."""
    if jitter:
        return (
            f"# Wait a random 0-{jitter} s after each time (TWEET_JITTER), drawn anew each time, as the\n"
            "# cron line and the daemon do.\n"
            f"RandomizedDelaySec={jitter}\n"
        )
    return (
        "# TWEET_JITTER=10m (then regenerate) would add RandomizedDelaySec=600: each run at a random\n"
        "# moment up to 10 minutes later, drawn anew each time, as the cron line and the daemon do.\n"
    )


def _daemon_unit(paths: Paths, *, system: bool) -> str:
    """The daemon's service, the timer's alternative: it keeps the schedule itself."""
    return f"""[Unit]
Description=twitterbot daemon: scheduled runs at TWEET_TIMES (instead of the timer; enable one, not both)
{_waits_for_network_and_clock(paths)}
[Service]
# The daemon tells systemd when it is ready (sd_notify) and stops within a second on SIGTERM,
# after finishing a post already in flight.
Type=notify
{_user_line(paths, system=system)}WorkingDirectory={unit_text(str(paths.project_dir))}
ExecStart={paths.unit_command("daemon")}
# `systemctl reload`: the daemon re-reads the env file and the tweets file between runs.
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=30s
# A bad setting or rejected keys will not fix themselves: do not restart in a loop.
RestartPreventExitStatus={_NO_RESTART}
TimeoutStopSec=90s
{_sandbox(paths, system=system)}
[Install]
WantedBy={_wanted_by(system)}
"""


def _web_unit(paths: Paths, *, system: bool) -> str:
    """The status page's service (bot.py serve)."""
    return f"""[Unit]
Description=twitterbot status page (bot.py serve): read-only, on 127.0.0.1:8080
Documentation={unit_uri(paths.project_dir / "docs/status-page.md")}
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
{_user_line(paths, system=system)}WorkingDirectory={unit_text(str(paths.project_dir))}
# To open it to the home network: set WEB_PASSWORD in the env file, then add --host 0.0.0.0.
ExecStart={paths.unit_command("serve")}
# SIGTERM stops it within a second, after the requests in hand.
Restart=on-failure
RestartSec=30s
RestartPreventExitStatus={_NO_RESTART}
TimeoutStopSec=15s
# The page rests at about 45 MiB (docs/status-page.md); far more would be a leak.
MemoryMax=150M
{_sandbox(paths, system=system)}
[Install]
WantedBy={_wanted_by(system)}
"""


def _waits_for_network_and_clock(paths: Paths) -> str:
    """The [Unit] lines of the units that post: the README, and waiting for the network and the clock."""
    return (
        f"Documentation={unit_uri(paths.project_dir / 'README.md')}\n"
        "# Post only once the network is up and the clock has been set: a Raspberry Pi has no\n"
        "# real-time clock. For time-sync.target to wait for NTP, enable the waiter once:\n"
        "#   sudo systemctl enable systemd-time-wait-sync.service\n"
        "Wants=network-online.target time-sync.target\n"
        "After=network-online.target time-sync.target\n"
    )


def _user_line(paths: Paths, *, system: bool) -> str:
    """User= for system units; user units run as their owner."""
    return f"User={paths.user}\n" if system else ""


def _sandbox(paths: Paths, *, system: bool) -> str:
    """The full sandbox for system units; user units get the little that works without user namespaces."""
    if system:
        return _hardening(paths)
    return (
        "# User services cannot use most sandboxing options without user namespaces; the system\n"
        "# install (python bot.py systemd --system) has the full set.\n"
        "NoNewPrivileges=yes\nUMask=0077\n"
    )


def _wanted_by(system: bool) -> str:
    """The target that starts a long-running unit at boot (or at the user's login)."""
    return "multi-user.target" if system else "default.target"


def unit_user(requested: Optional[str], *, system: bool, current: str, environ: Mapping[str, str]) -> Optional[str]:
    """The User= of system units (None for user units, which run as their owner): `requested`
    (--run-as), else the user who ran sudo, else `current`. Never root unless asked by name: a bot
    that posts from tweets.txt has no business running as root."""
    if not system:
        if requested:
            raise UsageError("--run-as sets User= of system units: add --system, or leave --run-as out")
        if current == "root" and environ.get("SUDO_USER", "root") != "root":
            raise UsageError(
                "user units made under sudo would be root's, in /root: run it without sudo for your own "
                "(systemctl --user) units, or add --system for units in /etc/systemd/system"
            )
        return None
    if requested:
        return requested
    user = current
    sudo_user = environ.get("SUDO_USER", "")
    if current == "root" and sudo_user and sudo_user != "root":
        user = sudo_user
        log.info("running under sudo: the units will run as %s, who ran sudo (--run-as USER chooses another)", user)
    if user == "root":
        raise UsageError(
            "the units would run as root: give --run-as USER (the user who owns this checkout, e.g. pi), "
            "or --run-as root if you really mean it"
        )
    return user


def _hardening(paths: Paths) -> str:
    writable = [paths.state_dir]
    if paths.log_file and not _is_within(paths.log_file.parent, paths.state_dir):
        writable.append(paths.log_file.parent)
    return (
        "# Sandboxing: the bot may write only its state folder (history, lock) and log folder.\n"
        "NoNewPrivileges=yes\n"
        "ProtectSystem=strict\n"
        "ProtectHome=read-only\n"
        f"ReadWritePaths={unit_paths(writable)}\n"
        "PrivateTmp=yes\n"
        "PrivateDevices=yes\n"
        "ProtectKernelTunables=yes\n"
        "ProtectKernelModules=yes\n"
        "ProtectKernelLogs=yes\n"
        "ProtectControlGroups=yes\n"
        "ProtectClock=yes\n"
        "ProtectHostname=yes\n"
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"
        "RestrictNamespaces=yes\n"
        "RestrictRealtime=yes\n"
        "RestrictSUIDSGID=yes\n"
        "LockPersonality=yes\n"
        "SystemCallArchitectures=native\n"
        "UMask=0077\n"
    )


def _with_seconds(time_of_day: str) -> str:
    return time_of_day if time_of_day.count(":") == 2 else time_of_day + ":00"


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


EXAMPLE_DIR = Path("/home/pi/twitterbot")


def examples(registry: Registry) -> Dict[str, str]:
    """The repository's crontab.example and systemd/ files: this module's output for a typical Pi
    (checkout in /home/pi/twitterbot, user pi, default settings). ``python docs/gen_reference.py``
    writes them, with the reference pages."""
    config = load_config(registry, project_dir=EXAMPLE_DIR, environ={})
    paths = Paths.for_checkout(config, python=EXAMPLE_DIR / ".venv/bin/python", user="pi", project_dir=EXAMPLE_DIR)
    files = {"crontab.example": crontab(config, paths)}
    files.update({f"systemd/{name}": text for name, text in systemd_units(config, paths, system=True).items()})
    # The replies' units, as `bot.py systemd` writes them with REPLY_RULES set.
    replying = load_config(registry, project_dir=EXAMPLE_DIR, environ={"REPLY_RULES": "replies.json"})
    replies = systemd_units(replying, paths, system=True)
    files.update({f"systemd/{name}": replies[name] for name in REPLY_UNITS})
    return files
