"""`bot.py cron` and `bot.py systemd` for a flock of several bots: one line, one unit, for the
whole flock, both starting its one daemon (`bot.py --bots DIR daemon`), which runs every bot at
its own times, with its replies and one-off lines (docs/flock.md)::

    print(flock_crontab(python, bot_py, folder), end="")
    units = flock_units(python, bot_py, folder, writable=[...], user="pi", system=True)
"""

from __future__ import annotations

import argparse
import os
import pwd
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from ..errors import ConfigError, ExitStatus, UsageError
from ..files import write_atomically
from ..settings.keys import LOG_FILE
from ..settings.loading import PROJECT_DIR, Config
from ..unattended.install import cron_command, unit_paths, unit_text, unit_uri, unit_user
from .botconfig import bot_config
from .folder import Flock

__all__ = ["FLOCK_UNIT", "flock_crontab", "flock_units", "run_cron", "run_systemd"]

FLOCK_UNIT = "twitterbot-flock.service"


def flock_command(python: Path, bot_py: Path, folder: Path) -> str:
    """The flock's daemon as a shell reads it, each word quoted."""
    return " ".join(shlex.quote(str(word)) for word in (python, bot_py, "--bots", folder, "daemon"))


def flock_crontab(python: Path, bot_py: Path, folder: Path) -> str:
    """One crontab line: the flock's daemon started at boot, its log to syslog (the journal)."""
    command = cron_command(flock_command(python, bot_py, folder))
    return (
        "# twitterbot: one daemon for the whole flock of bots in this folder (docs/flock.md). It runs\n"
        "# each bot at its own TWEET_TIMES, with its replies and one-off lines. Add this line with\n"
        "# crontab -e; start it now without a reboot by running the command after @reboot yourself.\n"
        f"@reboot {command} 2>&1 | logger -t twitterbot-flock\n"
    )


def flock_units(
    python: Path, bot_py: Path, folder: Path, *, writable: Sequence[Path], user: Optional[str], system: bool
) -> Dict[str, str]:
    """The one unit of the flock's daemon: `writable` are the bots' state and log folders."""
    user_line = f"User={user}\n" if system and user else ""
    sandbox = (
        "NoNewPrivileges=yes\nProtectSystem=strict\nProtectHome=read-only\n"
        f"ReadWritePaths={unit_paths(sorted(set(writable)))}\nPrivateTmp=yes\nPrivateDevices=yes\n"
        "ProtectKernelTunables=yes\nProtectKernelModules=yes\nProtectControlGroups=yes\nUMask=0077\n"
        if system
        else "NoNewPrivileges=yes\nUMask=0077\n"
    )
    unit = f"""[Unit]
Description=twitterbot flock: one daemon for every bot in {unit_text(str(folder))}
Documentation={unit_uri(bot_py.parent / "docs/flock.md")}
Wants=network-online.target time-sync.target
After=network-online.target time-sync.target

[Service]
# Each bot's run is a process of its own, stopped at its RUN_DEADLINE; the daemon tells systemd
# when it is ready and stops on SIGTERM once the runs in flight end.
Type=notify
NotifyAccess=main
{user_line}WorkingDirectory={unit_text(str(bot_py.parent))}
ExecStart={unit_text(flock_command(python, bot_py, folder))}
# `systemctl reload`: read the flock again (bots added, removed, changed).
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=30s
TimeoutStopSec=11min
{sandbox}
[Install]
WantedBy={"multi-user.target" if system else "default.target"}
"""
    return {FLOCK_UNIT: unit}


def run_cron(args: argparse.Namespace, config: Config) -> int:
    """`bot.py cron` for a flock of several bots."""
    python, bot_py, folder = _where(args.flock)
    print(flock_crontab(python, bot_py, folder), end="")
    return int(ExitStatus.OK)


def run_systemd(args: argparse.Namespace, config: Config, *, environ: Mapping[str, str]) -> int:
    """`bot.py systemd` for a flock of several bots: print (or --write) its one unit."""
    if args.dask:
        raise UsageError("--dask: the cluster's units are one bot's: add --bot NAME")
    python, bot_py, folder = _where(args.flock)
    user = unit_user(args.run_as, system=args.system, current=pwd.getpwuid(os.getuid()).pw_name, environ=environ)
    writable = _writable(args.flock, config, environ)
    units = flock_units(python, bot_py, folder, writable=writable, user=user, system=args.system)
    if not args.write:
        for name, text in units.items():
            print(f"# ---- {name} ----\n{text}")
        return int(ExitStatus.OK)
    target = Path("/etc/systemd/system") if args.system else Path.home() / ".config/systemd/user"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in units.items():
            write_atomically(target / name, text)
    except OSError as exc:
        raise ConfigError(f"cannot write the unit to {target} ({exc.strerror}): print it and copy it by hand") from None
    ctl = "sudo systemctl" if args.system else "systemctl --user"
    print(f"wrote {FLOCK_UNIT} to {target}. Next:\n  {ctl} daemon-reload\n  {ctl} enable --now {FLOCK_UNIT}")
    print("  (and disable any one bot's twitterbot.timer or twitterbot-daemon.service: the flock's daemon runs it)")
    return int(ExitStatus.OK)


def _where(flock: Flock) -> tuple:
    if PROJECT_DIR is None or flock.folder is None:
        raise ConfigError("the flock's line and unit run bot.py from a checkout with a flock folder: run it there")
    return Path(sys.executable).absolute(), PROJECT_DIR / "bot.py", flock.folder


def _writable(flock: Flock, config: Config, environ: Mapping[str, str]) -> List[Path]:
    """Every bot's state folder and log folder (a bot whose settings cannot be read: its folder)."""
    found: List[Path] = []
    for bot in flock.bots:
        try:
            settings = bot_config(bot, config.registry, environ=environ, overrides={}, named=False)
        except ConfigError:
            found.append(bot.folder)
            continue
        settings.state.path.mkdir(parents=True, exist_ok=True)  # ReadWritePaths= needs it to exist
        found.append(settings.state.path)
        if settings[LOG_FILE] is not None:
            found.append(settings[LOG_FILE].parent)
    return found
