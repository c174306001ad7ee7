"""Being left alone for months: heartbeat pings in healthchecks.io's protocol (HEALTHCHECK_URL),
alerts in ntfy's (NOTIFY_URL), and the alert for a progress job gone quiet (PROGRESS_STALL).

This module is light: a run without these settings gets the do-nothing `Monitor` and imports
nothing more. With them, `monitor_for` builds the real one (`monitor.LiveMonitor`)::

    monitor = monitor_for(config, "scheduled run")
    monitor.start()
    ...
    monitor.finish(0, "posted line 3", fixed=("run",))
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple, Optional, Sequence, Tuple

from ..capability import Capability, CheckLine
from ..errors import ConfigError
from ..settings.parsers import DURATION
from ..settings.table import Setting, SettingType, by_name

if TYPE_CHECKING:
    from ..settings.loading import Config

__all__ = [
    "HEALTHCHECK_URL",
    "MONITORING",
    "NOTIFY_URL",
    "PROGRESS_STALL",
    "Alert",
    "Monitor",
    "monitor_for",
    "monitored",
]


class Alert(NamedTuple):
    """One problem worth the owner's eye. `problem` names it for the history ("run", "keys:<network>"):
    one alert is sent per problem until a success settles it. `priority` is ntfy's (1..5 or a word)."""

    problem: str
    title: str
    message: str
    priority: str = "high"
    tags: Tuple[str, ...] = ("warning",)


class Monitor:
    """What a run tells the monitors: here, nothing (neither HEALTHCHECK_URL nor NOTIFY_URL is set)."""

    active = False  # whether anything is told at all

    def start(self) -> None:
        """The run or job begins (a ping to URL/start)."""

    def finish(self, status: int, reason: str, *, alerts: Sequence[Alert] = (), fixed: Iterable[str] = ()) -> None:
        """It ended with exit `status` (`reason` in words): a ping, the `alerts` not sent yet, and
        the problems `fixed` settled so that they alert again when they come back."""

    def alert(self, alert: Alert) -> bool:
        """Send `alert` now, unless it was sent and not settled since; whether the owner has been
        told (False: the monitor did not take it, so try again later)."""
        return True

    def settle(self, problems: Iterable[str]) -> None:
        """The `problems` are over: the next time one happens, it alerts again. One whose alert the
        monitor never took is told now, once, as a problem that happened and is over."""


def monitored(config: Config) -> bool:
    """Whether anything is told of runs: HEALTHCHECK_URL or NOTIFY_URL is set."""
    return bool(config[HEALTHCHECK_URL] or config[NOTIFY_URL])


def monitor_for(config: Config, what: str) -> Monitor:
    """The monitor of one run or job (`what`, for the alert's title): the do-nothing one unless
    HEALTHCHECK_URL or NOTIFY_URL is set."""
    if not monitored(config):
        return Monitor()
    from .monitor import LiveMonitor  # only with a monitor to tell

    return LiveMonitor(config, what)


def _parse_endpoint(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """An http or https URL with a host (a path is the point: a check's id, a topic), read as the
    monitor's request will be made from it (`endpoint.parse`), so that a URL the settings take is
    one the bot can use; empty: off. The URL is a secret: never repeated in the error."""
    value = text.strip().rstrip("/")
    if not value:
        return ""
    from .endpoint import parse  # light: the standard library's URL and base64 helpers

    try:
        parse(value)
    except ValueError as exc:
        raise ConfigError(
            f"{name} from {where} cannot be used: {exc}. Write it like {setting.source} (with"
            " user:password@ before the host for a server that asks for a login), or leave it empty"
        ) from None
    return value


def _secret_parts(value: object) -> Tuple[str, ...]:
    from .endpoint import secret_parts

    return secret_parts(value)


ENDPOINT = SettingType("endpoint", _parse_endpoint, _secret_parts)


HEALTHCHECK_URL = Setting(
    "HEALTHCHECK_URL",
    "",
    ENDPOINT,
    "ping this URL (healthchecks.io's protocol) as each run and job starts and ends",
    True,
    "https://hc-ping.com/<your check's uuid>",
)
NOTIFY_URL = Setting(
    "NOTIFY_URL",
    "",
    ENDPOINT,
    "send alerts to this ntfy topic URL (a failure, an uncertain post, refused keys, a budget reached)",
    True,
    "https://ntfy.sh/<your topic>",
)
PROGRESS_STALL = Setting(
    "PROGRESS_STALL", "6h", DURATION, "alert when a progress job has reported nothing for this long (0 = never)"
)


class Monitoring(Capability):
    """Heartbeat pings and alerts, for a bot nobody watches."""

    name = "monitoring"
    title = "Monitoring and alerts"
    page = "left-alone.md"
    settings = by_name(HEALTHCHECK_URL, NOTIFY_URL, PROGRESS_STALL)

    def checks(self, config: Config) -> Iterable[CheckLine]:
        pings, alerts = config[HEALTHCHECK_URL], config[NOTIFY_URL]
        yield (
            "ok" if pings else "note",
            (
                f"heartbeat pings: each run and job pings HEALTHCHECK_URL{_login(pings)}"
                if pings
                else "heartbeat pings: off (set HEALTHCHECK_URL to hear when runs stop)"
            ),
        )
        yield (
            "ok" if alerts else "note",
            (
                f"alerts: sent to NOTIFY_URL{_login(alerts)}"
                if alerts
                else "alerts: off (set NOTIFY_URL to an ntfy topic to hear of failures)"
            ),
        )
        for name in ("HEALTHCHECK_URL", "NOTIFY_URL"):
            if _plain_login(config[name]):
                yield (
                    "note",
                    f"{name} sends its password unencrypted (http:// to another machine): use https:// if the server has it",
                )


def _login(url: str) -> str:
    """What `check` says of a URL's user-info: never the user name or the password."""
    from .endpoint import parse

    return " (with its login, as HTTP Basic auth)" if url and parse(url).authorization else ""


def _plain_login(url: str) -> bool:
    """Whether `url` would send a password in the clear over the network (http, not to this machine)."""
    if not url:
        return False
    from .endpoint import parse

    endpoint = parse(url)
    local = endpoint.host in ("localhost", "::1") or endpoint.host.startswith("127.")
    return bool(endpoint.authorization) and endpoint.scheme == "http" and not local


MONITORING = Monitoring()
