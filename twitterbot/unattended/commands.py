"""Running unattended: the daemon, and the crontab lines and systemd units for this checkout.

python bot.py daemon [--dry-run]                   stay running, post at TWEET_TIMES
python bot.py cron | systemd [--system] [--write]  crontab lines / systemd units for this checkout
"""

from __future__ import annotations

import argparse
import logging
import os
import pwd
import random
import sys
from datetime import timedelta
from pathlib import Path
from typing import List, Optional

from ..arguments import Commands, Parser, add_command, global_settings
from ..errors import BotError, ConfigError, ExitStatus
from ..files import write_atomically
from ..networks import posters_for
from ..posting import LATE_BY
from ..posting.calendar import OneOffTimes
from ..posting.result import log_result
from ..posting.scheduled import Occasion, run_once, run_watched
from ..posting.sources import source_of
from ..registry import registry_of
from ..settings.keys import LOG_FILE, LOG_LEVEL
from ..settings.loading import PROJECT_DIR, Config, env_file_warnings, load_config
from ..settings.logs import folding_repeats
from ..settings.secrets import scrub, scrub_also
from ..state.clock import utc_now, zone_for
from ..state.folder import ensure_state_dir
from . import TWEET_JITTER, TWEET_TIMES, TWEET_TIMEZONE
from .daemon import Daemon, use_zone
from .install import LINES_TIMER, Paths, crontab, systemd_units, unit_user

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(parser: Parser, commands: Commands) -> None:
    _add_daemon(commands)
    _add_cron(commands)
    _add_systemd(commands)


def _daemon(args: argparse.Namespace, config: Config) -> int:
    """Stay in the foreground and do a scheduled run at each of TWEET_TIMES, until SIGTERM;
    SIGHUP re-reads the env file and the tweets file and carries on."""
    for warning in env_file_warnings(config):
        log.warning(warning)
    current = {"config": config, "posters": None if args.dry_run else posters_for(config)}
    rng = random.Random(args.seed)

    def run_slot(time_of_day: str, one_offs: bool = False) -> None:
        # The daemon's own error boundary: one bad run is logged and the daemon carries on.
        settings = current["config"]
        repeats.next_run()
        try:
            posters = None if args.dry_run else (lambda: current["posters"])  # those of the settings in use
            registry_of(settings).before_run(settings, dry_run=args.dry_run)  # replies, before the roll
            when = Occasion(one_offs=one_offs)  # a one-off line's wake posts a one-off or nothing
            run = lambda: run_once(  # noqa: E731
                settings, posters=posters, rng=rng, dry_run=args.dry_run, stopping=daemon.stop.is_set, when=when
            )
            log_result(run_watched(settings, run, dry_run=args.dry_run))
        except BotError as exc:
            log.error("%s run: %s", time_of_day, scrub(str(exc), settings.secrets()))
        except Exception:
            log.exception("%s run failed unexpectedly; the daemon carries on (please report this)", time_of_day)

    def reload() -> Optional[str]:
        """SIGHUP: read the settings again; a bad file leaves the settings in use unchanged (None,
        said as an error). What it found, in one clause, for the daemon's one line of the reload."""
        old = current["config"]
        try:
            new = load_config(
                old.registry,
                project_dir=PROJECT_DIR,
                env_file=old.env_file,
                environ=os.environ,
                overrides={**args.settings, **global_settings(args)},
            )
            posters = None if args.dry_run else posters_for(new)
        except BotError as exc:
            log.error("reload: %s; carrying on with the settings in use", scrub(str(exc), old.secrets()))
            return None
        for warning in env_file_warnings(new):
            log.warning(warning)
        said = [
            f"reloaded {new.env_file or 'the environment'} ({'; '.join(_changed_settings(old, new)) or 'no setting changed'})"
        ]
        said.extend(_tweets_file_read(new))
        logging.getLogger().setLevel(new[LOG_LEVEL])
        if (new[TWEET_TIMES], new[TWEET_TIMEZONE], new[TWEET_JITTER]) != (
            old[TWEET_TIMES],
            old[TWEET_TIMEZONE],
            old[TWEET_JITTER],
        ):
            use_zone(new[TWEET_TIMEZONE])
            daemon.reschedule(new[TWEET_TIMES], zone=zone_for(new[TWEET_TIMEZONE]), jitter=new[TWEET_JITTER])
        scrub_also(new.secrets())
        current.update(config=new, posters=posters)
        return "; ".join(said)

    use_zone(config[TWEET_TIMEZONE])  # before building the jobs: schedule works in local time
    zone = zone_for(config[TWEET_TIMEZONE])
    daemon = Daemon.build(
        config[TWEET_TIMES], run_slot=run_slot, zone=zone, rng=rng, jitter=config[TWEET_JITTER], reload=reload
    )
    # The daemon wakes for the tweets file's one-off lines too; a line of the last LATE_BY is
    # posted at once, if no run did (a Pi that boots late).
    daemon.line_times = OneOffTimes(lambda: current["config"])
    daemon.run_line = lambda label: run_slot(label, one_offs=True)
    daemon.woke_for = utc_now() - timedelta(seconds=config[LATE_BY])
    daemon.install_signal_handlers()
    log.info(
        "daemon started: runs at %s (%s)%s",
        ", ".join(config[TWEET_TIMES]),
        config[TWEET_TIMEZONE] or "system time zone",
        "; dry run, nothing will be posted" if args.dry_run else "",
    )
    with folding_repeats() as repeats:  # a warning every run gives is said once (run_slot)
        daemon.serve()
    log.info("daemon stopped")
    return int(ExitStatus.OK)


def _tweets_file_read(new: Config) -> List[str]:
    """What a reload found in the tweets file, for its one line (nothing when it cannot be read:
    an error, and the next run reads it again)."""
    said: List[str] = []
    try:
        said.append(source_of(new).describe())
    except BotError as exc:
        log.error("reload: %s (the next run reads it again)", exc)
    return said


def _changed_settings(old: Config, new: Config) -> List[str]:
    """What a reload changed, as "SETTING old -> new"; the keys are only named, never shown."""
    changes = ["the keys changed"] if old.secrets() != new.secrets() else []
    for name, setting in new.registry.settings.items():
        before, after = old[name], new[name]
        if before != after and not setting.secret:
            shown = (
                (lambda value: ",".join(getattr(each, "name", str(each)) for each in value))
                if isinstance(after, tuple)
                else str
            )
            changes.append(f"{name} {shown(before)} -> {shown(after)}")
    if old[LOG_FILE] != new[LOG_FILE]:
        changes.append("(LOG_FILE takes effect at the next start)")
    return changes


def _cron(args: argparse.Namespace, config: Config) -> int:
    """Print crontab lines for this checkout."""
    ensure_state_dir(config.state.path)  # the lock and the log of the cron line live there
    print(crontab(config, _paths(config, user=_current_user())), end="")
    return int(ExitStatus.OK)


def _systemd(args: argparse.Namespace, config: Config) -> int:
    """Print (or write) systemd units for this checkout."""
    user = unit_user(args.run_as, system=args.system, current=_current_user(), environ=os.environ)
    _make_state_dir_for(config.state.path, user)  # ReadWritePaths= needs it to exist
    units = systemd_units(config, _paths(config, user=user or _current_user()), system=args.system)
    if args.dask:
        from .dask_units import dask_units

        units.update(dask_units(config, _paths(config, user=user or _current_user()), system=args.system))
    if not args.write:
        for name, text in units.items():
            print(f"# ---- {name} ----\n{text}")
        return int(ExitStatus.OK)
    folder = Path("/etc/systemd/system") if args.system else Path.home() / ".config/systemd/user"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in units.items():
            write_atomically(folder / name, text)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the units to {folder} ({exc.strerror})"
            + (": run it with sudo, or print them and copy them by hand" if args.system else "")
        ) from None
    ctl = "sudo systemctl" if args.system else "systemctl --user"
    print(f"wrote {', '.join(units)} to {folder}. Next:")
    print(f"  {ctl} daemon-reload")
    print(f"  {ctl} enable --now twitterbot.timer        # or twitterbot-daemon.service, not both")
    print(f"  {ctl} enable --now twitterbot-web.service  # optional: the status page on 127.0.0.1:8080")
    if LINES_TIMER in units:
        print(f"  {ctl} enable --now {LINES_TIMER}  # the one-off lines' runs (with the timer, not the daemon)")
    if config["REPLY_RULES"] is not None:
        print(f"  {ctl} enable --now twitterbot-replies.timer  # answer mentions every few minutes (REPLY_RULES)")
    if not args.system:
        print(f"  sudo loginctl enable-linger {_current_user()}   # keep user timers running after you log out")
    print(
        f"  {ctl} start twitterbot.service             # one run now, to test; then: journalctl "
        + ("-u" if args.system else "--user -u")
        + " twitterbot"
    )
    return int(ExitStatus.OK)


def _make_state_dir_for(state_dir: Path, user: Optional[str]) -> None:
    """Create the state folder the units will write to. Made by root (under sudo) for units that
    run as another user, it is given to that user: a root-owned folder would stop every run (73)."""
    existed = state_dir.exists()
    ensure_state_dir(state_dir)
    if existed or not user or os.geteuid() != 0 or user == "root":
        return
    try:
        owner = pwd.getpwnam(user)
    except KeyError:
        log.warning("there is no user %s on this machine: the state folder %s stays root's", user, state_dir)
        return
    os.chown(state_dir, owner.pw_uid, owner.pw_gid)
    log.info("made the state folder %s and gave it to %s, who the units run as", state_dir, user)


def _paths(config: Config, *, user: str) -> Paths:
    if PROJECT_DIR is None:
        raise ConfigError(
            "cron and systemd lines run bot.py from a checkout, and this installed twitterbot command has none: "
            "git clone the project (README 'Install') and run  .venv/bin/python bot.py cron  there"
        )
    python = Path(sys.executable).absolute()  # the venv's python when run as .venv/bin/python
    if sys.prefix == sys.base_prefix:
        log.warning("this python (%s) is not a virtualenv's: run this command with .venv/bin/python", python)
    return Paths.for_checkout(config, python=python, user=user, project_dir=PROJECT_DIR)


def _current_user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def _add_daemon(commands: Commands) -> None:
    daemon = add_command(
        commands,
        "daemon",
        _daemon,
        takes=("dry_run",),
        dry_run_help="decide at each time, post nothing",
        help="stay running and post at TWEET_TIMES",
    )
    daemon.add_shared("--seed", type=int, metavar="N", help="seed the rolls and picks")


def _add_cron(commands: Commands) -> None:
    add_command(commands, "cron", _cron, help="print crontab lines for this checkout")


def _add_systemd(commands: Commands) -> None:
    units = add_command(commands, "systemd", _systemd, help="print or write systemd units for this checkout")
    units.add_argument(
        "--system", action="store_true", help="units for /etc/systemd/system (default: systemctl --user)"
    )
    units.add_argument(
        "--run-as",
        metavar="USER",
        help="with --system: User= of the units (default: you, or under sudo the user who ran sudo; never root "
        "unless given)",
    )
    units.add_argument("--write", action="store_true", help="write them to the unit folder instead of printing")
    units.add_argument(
        "--dask", action="store_true", help="also the Dask scheduler's and workers' units (docs/cluster.md)"
    )
