"""The bot's clock: aware UTC, the time every record in the history is written in.

It lives in the foundation so that the daemon, a progress session and `check` can tell the time
without importing a scheduled run. Code that needs the time takes a `clock` argument defaulting to
`utc_now`, so a test (or a faked clock) can hand it another.
"""

from __future__ import annotations

import os
import zoneinfo
from datetime import datetime, timezone, tzinfo
from typing import Callable, Mapping, Optional

__all__ = ["Clock", "utc_now", "zone_for"]

# What a part that needs the time is handed: a function returning an aware UTC datetime.
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Now, in UTC, aware (the history compares and stores only aware times)."""
    return datetime.now(timezone.utc)


def zone_for(name: Optional[str], environ: Optional[Mapping[str, str]] = None) -> tzinfo:
    """The bot's time zone (TWEET_TIMES and the tweets file's dates are in it): the named one
    (TWEET_TIMEZONE), else the system's (TZ, then /etc/localtime), else UTC."""
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
            return zoneinfo.ZoneInfo.from_file(local, key=_system_zone_name())
    except (OSError, ValueError):
        return timezone.utc


def _system_zone_name() -> str:
    """The system zone's own name (Europe/London), as a post's {date e} writes it: Debian's
    /etc/timezone, else where the /etc/localtime link points; "localtime" when neither says."""
    try:
        with open("/etc/timezone", encoding="utf-8") as named:
            name = named.read().strip()
        if name:
            return name
    except OSError:
        pass
    target = os.path.realpath("/etc/localtime")
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "localtime"
