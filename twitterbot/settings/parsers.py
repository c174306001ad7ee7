"""How each kind of setting is read: one `SettingType` per kind, whose `convert` raises a
`ConfigError` that names the setting, where its value came from, and the fix. A capability
declares the kinds only it needs (a Bluesky handle, a Mastodon visibility) beside its settings::

    DURATION.convert("MIN_POST_GAP", "1h", "the environment", None, setting)   # 3600.0
"""

from __future__ import annotations

import math
import re
import string
from pathlib import Path
from typing import Iterable, Optional, Tuple
from urllib.parse import urlsplit

from ..errors import ConfigError
from .secrets import looks_like_a_key
from .table import MAX_DURATION, MAX_RETRIES, Setting, SettingType

__all__ = [
    "LOG_LEVELS",
    "SECRET",
    "PATH",
    "OPTIONAL_PATH",
    "POSITIVE_INT",
    "DAYS",
    "COUNT",
    "SECONDS",
    "LEVEL",
    "URL",
    "TIMES",
    "TIMEZONE",
    "DURATION",
    "GRACE",
    "BOOL",
    "TEMPLATE",
    "OPTIONAL_URL",
    "KERNEL",
    "check_jitter_fits",
    "did_you_mean",
    "is_loopback",
    "parse_duration",
    "show",
    "time_to_seconds",
]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def did_you_mean(word: str, choices: Iterable[str]) -> Optional[str]:
    """ "did you mean X?" for the one of `choices` closest to a misspelt `word`, or None."""
    import difflib  # only for a mistake

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]}?" if close else None


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is reachable from this
    machine only: localhost, 127.0.0.0/8, ::1 and ::ffff:127.x. Any other name may resolve to any
    address, so it is not."""
    if host.lower().rstrip(".") == "localhost":
        return True
    import ipaddress  # here: every run reads the settings, few name a host

    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def show(text: str, limit: int = 40) -> str:
    """A value quoted for an error message: shortened, and hidden if it looks like a key
    (a key pasted into the wrong setting must not end up in a log or cron mail)."""
    if looks_like_a_key(text):
        return "(a value that looks like a key, not shown)"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


# Keys and tokens are printable ASCII; anything else is a paste gone wrong (and would break a header).
_SECRET_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F)) - set("\"'")


def _parse_secret(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip()
    if not set(value) <= _SECRET_CHARACTERS:
        # Never echo the value: it is a secret.
        raise ConfigError(
            f"{name} from {where} contains spaces, quotes or characters keys never have: "
            f"paste the value exactly as {setting.source or 'the service that issued it'} shows it"
        )
    return value


def _parse_optional_url(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    return _parse_url(name, text, where, base_dir, setting) if text.strip() else ""


def _parse_path(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> Path:
    value = text.strip()
    if "\0" in value:
        raise ConfigError(f"{name} from {where} contains a NUL byte (\\0): retype the path")
    try:
        path = Path(value).expanduser()
    except RuntimeError:  # ~ with no home folder to expand it to
        raise ConfigError(
            f"{name} from {where} starts with ~ but there is no home folder: write the full path"
        ) from None
    if path.is_absolute():
        return path
    if base_dir is None:
        raise ConfigError(
            f"{name}={show(value)} from {where} is a relative path, and the installed twitterbot command has no "
            "project folder to resolve it from: pass --env-file PATH (relative paths then resolve from its "
            f"folder), or set {name} to an absolute path"
        )
    return base_dir / path


def _parse_optional_path(
    name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting
) -> Optional[Path]:
    return _parse_path(name, text, where, base_dir, setting) if text.strip() else None


def _parse_int(name: str, text: str, where: str, minimum: int, maximum: Optional[int], example: str) -> int:
    value = int(text.strip()) if _ASCII_INTEGER.fullmatch(text.strip()) else None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        bounds = f"of {minimum} or more" if maximum is None else f"from {minimum} to {maximum}"
        raise ConfigError(f"{name}={show(text)} from {where} is not a whole number {bounds}: set it to e.g. {example}")
    return value


# The largest counts a setting takes: a die of a billion sides or a billion posts a day is already
# "never"; a hundred years of days keeps every date the history computes within datetime's years.
MAX_POSITIVE_INT = 1_000_000_000
MAX_DAYS = 36_600

_ASCII_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")  # more digits than 10**18 is never a count of anything


def _parse_positive_int(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> int:
    example = "4 (1 = post on every run)" if name == "TWEET_ONE_IN" else "4"
    return _parse_int(name, text, where, 1, MAX_POSITIVE_INT, example)


def _parse_days(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> int:
    return _parse_int(name, text, where, 1, MAX_DAYS, "400")


def _parse_count(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> int:
    return _parse_int(name, text, where, 0, MAX_RETRIES, "2")


def _parse_seconds(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        value = 0.0
    if not 0 < value <= 600:  # also refuses nan and inf
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a number of seconds between 0 and 600: set it to e.g. 20"
        )
    return value


def _parse_log_level(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip().upper()
    if value not in LOG_LEVELS:
        raise ConfigError(f"{name}={show(text)} from {where} is not a log level: use one of {', '.join(LOG_LEVELS)}")
    return value


def _parse_url(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip().rstrip("/")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:  # e.g. http://[::1 (an unclosed IPv6 bracket)
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or not value.isascii()
        or any(ch.isspace() or not ch.isprintable() for ch in value)
    ):
        example = setting.default or "https://example.com"
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a base URL like {example}: "
            "leave it unset unless you test against an emulator or proxy"
        )
    return value


_TIME_FIELD = re.compile(r"[0-9]{1,2}")  # ASCII digits only: '²'.isdigit() is True, int('²') fails


def _parse_times(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> Tuple[str, ...]:
    times = set()
    for part in text.replace(" ", "").split(","):
        fields = part.split(":")
        numbers = [int(field) for field in fields if _TIME_FIELD.fullmatch(field)]
        if (
            len(fields) not in (2, 3)
            or len(numbers) != len(fields)
            or not all(value < limit for value, limit in zip(numbers, (24, 60, 60)))
        ):
            raise ConfigError(
                f"{name}={show(text)} from {where}: {show(part)} is not a time of day: use 24-hour HH:MM times "
                "separated by commas, e.g. 00:00,06:00,12:00,18:00"
            )
        times.add(":".join(f"{value:02d}" for value in numbers))
    return tuple(sorted(times))


def time_to_seconds(time_of_day: str) -> int:
    """Seconds after midnight of an "HH:MM" or "HH:MM:SS" from TWEET_TIMES."""
    hours, minutes, *seconds = (int(part) for part in time_of_day.split(":"))
    return hours * 3600 + minutes * 60 + (seconds[0] if seconds else 0)


def _parse_timezone(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> Optional[str]:
    value = text.strip()
    if not value:
        return None
    import zoneinfo  # only when a time zone is set: its import is a noticeable part of a run

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, a name too long
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a time zone: use a name like Europe/London or "
            "America/New_York (timedatectl list-timezones shows them), or leave it empty for the system's"
        ) from None
    return value


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_PART = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,9})?)([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in a duration like 90s, 10m, 6h, 1d or 3h30m, at most a year; "0" is zero.
    ValueError if malformed."""
    value = text.strip().lower().replace(" ", "")
    if value == "0":
        return 0.0
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(number + unit for number, unit in parts) != value:
        raise ValueError(f"{show(text)} is not a duration: use a number with s, m, h or d, e.g. 10m, 6h or 3h30m")
    seconds = sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    if not math.isfinite(seconds) or seconds > MAX_DURATION:
        raise ValueError(f"{show(text)} is longer than a year: use at most 366d")
    return seconds


def _parse_duration(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise ConfigError(f"{name} from {where}: {exc}") from None


# The shortest LATE_BY: a systemd timer fires up to a minute late (AccuracySec=), and a run takes
# seconds to start; shorter, every one-off would be noted missed.
MIN_LATE_BY = 5 * 60


def _parse_grace(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> float:
    seconds = _parse_duration(name, text, where, base_dir, setting)
    if seconds < MIN_LATE_BY:
        raise ConfigError(
            f"{name}={show(text)} from {where} is shorter than 5m: a timer fires up to a minute late and a run "
            "takes seconds to start, so every one-off line would be missed; set it to at least 5m (e.g. 1h)"
        )
    return seconds


_BOOLEANS = {"yes": True, "true": True, "on": True, "1": True, "no": False, "false": False, "off": False, "0": False}


def _parse_bool(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> bool:
    try:
        return _BOOLEANS[text.strip().lower()]
    except KeyError:
        raise ConfigError(f"{name}={show(text)} from {where} is not yes or no: set it to yes or no") from None


def _parse_template(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    try:
        list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ConfigError(
            f"{name} from {where} is not a template ({exc}): put fields in braces like {{message}}, "
            "and write a literal brace twice: {{ or }}"
        ) from None
    return text


def _parse_kernel(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip().lower()
    if value not in ("auto", "c", "numpy"):
        raise ConfigError(f"{name}={show(text)} from {where} is not auto, c or numpy: set it to one of them")
    return value


def check_jitter_fits(jitter: float, times: Tuple[str, ...], where: str) -> None:
    """A delay longer than the gap between two times would let one run spill into the next slot."""
    seconds = sorted(time_to_seconds(t) for t in times)
    gaps = [later - earlier for earlier, later in zip(seconds, seconds[1:] + [seconds[0] + 24 * 3600])]
    smallest = min(gaps)
    if jitter >= smallest:
        raise ConfigError(
            f"TWEET_JITTER from {where} ({jitter / 60:g} min) must be shorter than the smallest gap between "
            f"TWEET_TIMES ({smallest / 60:g} min): shorten it"
        )


# The kinds of setting every part may use; a capability declares the kinds only it has beside
# its settings, and the registry reads POST_TO's (table.NETWORKS) itself.
SECRET = SettingType("secret", _parse_secret)
PATH = SettingType("path", _parse_path)
OPTIONAL_PATH = SettingType("optional_path", _parse_optional_path)
POSITIVE_INT = SettingType("positive_int", _parse_positive_int)
DAYS = SettingType("days", _parse_days)
COUNT = SettingType("count", _parse_count)
SECONDS = SettingType("seconds", _parse_seconds)
LEVEL = SettingType("log_level", _parse_log_level)
URL = SettingType("url", _parse_url)
TIMES = SettingType("times", _parse_times)
TIMEZONE = SettingType("timezone", _parse_timezone)
DURATION = SettingType("duration", _parse_duration)
GRACE = SettingType("grace", _parse_grace)
BOOL = SettingType("bool", _parse_bool)
TEMPLATE = SettingType("template", _parse_template)
OPTIONAL_URL = SettingType("optional_url", _parse_optional_url)
KERNEL = SettingType("kernel", _parse_kernel)
