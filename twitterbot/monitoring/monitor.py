"""The monitor of one run or job when HEALTHCHECK_URL or NOTIFY_URL is set: heartbeat pings in
healthchecks.io's protocol and alerts in ntfy's, each sent from a thread of its own, so that a
monitor that never answers delays the run by at most `WAIT` seconds in all and never changes its
outcome or its exit status.

Pings: ``URL/start`` when it begins; ``URL`` when it ends well (a skip is a good end: the bot ran),
``URL/<exit status>`` when it fails, with the reason in the body. Alerts: a ``POST`` of the message
to the topic URL, with ``Title``, ``Priority`` and ``Tags`` headers; one per problem until a
success settles it (the history's alerts table)::

    monitor = LiveMonitor(config, "scheduled run")
    monitor.start()
    monitor.finish(75, "X did not answer", alerts=[Alert("run", "run failed", "X did not answer")])
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.request
from datetime import datetime, timezone
from typing import Callable, Iterable, List, Mapping, Optional, Sequence

from ..errors import BotError
from ..settings.loading import Config
from ..settings.secrets import scrub
from ..state.store import HistoryStore
from . import Alert, Monitor

__all__ = ["WAIT", "LiveMonitor", "deliver"]

log = logging.getLogger(__name__)

WAIT = 10.0  # seconds: the most a run waits for its monitors, whatever they do
MAX_BODY = 100_000  # bytes: what healthchecks.io keeps of a ping's body


def deliver(
    url: str, *, body: bytes = b"", headers: Optional[Mapping[str, str]] = None, timeout: float = WAIT
) -> Optional[str]:
    """Send one request (a POST if there is a body, else a GET); None if the server took it, else
    what went wrong, in words. Never raises: a monitor's trouble is not the run's."""
    request = urllib.request.Request(
        url, data=body or None, headers=dict(headers or {}), method="POST" if body else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - http(s) only, checked when read
            response.read(1024)
            return None
    except OSError as exc:  # URLError, HTTPError, timeouts and refused connections are all OSErrors
        return str(getattr(exc, "reason", None) or exc)


class LiveMonitor(Monitor):
    """Pings and alerts for one run or job (`what` names it in an alert's title)."""

    active = True

    def __init__(
        self,
        config: Config,
        what: str,
        *,
        send: Callable[..., Optional[str]] = deliver,
        wait: float = WAIT,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        self._ping_url: str = config["HEALTHCHECK_URL"]
        self._notify_url: str = config["NOTIFY_URL"]
        self._history = config.history_file
        self._secrets = config.secrets()
        self._what = what
        self._send = send
        self._wait = wait
        self._clock = clock
        self._sending: List[threading.Thread] = []

    def start(self) -> None:
        if self._ping_url:
            self._spawn(f"{self._ping_url}/start", b"", {})  # not waited for: the run goes on meanwhile

    def finish(self, status: int, reason: str, *, alerts: Sequence[Alert] = (), fixed: Iterable[str] = ()) -> None:
        if self._ping_url:
            url = self._ping_url if status == 0 else f"{self._ping_url}/{status}"
            self._spawn(url, self._clean(reason).encode("utf-8")[:MAX_BODY], {})
        self.settle(fixed)
        for alert in alerts:
            self._alert(alert)
        self._join()

    def alert(self, alert: Alert) -> None:
        self._alert(alert)
        self._join()

    def settle(self, problems: Iterable[str]) -> None:
        names = list(problems)
        if names and self._notify_url:
            self._with_history(lambda store: store.settle_alerts(names))

    # -- sending ---------------------------------------------------------------------------------

    def _alert(self, alert: Alert) -> None:
        if not self._notify_url:
            return
        message = self._clean(alert.message)
        first = self._with_history(lambda store: store.raise_alert(alert.problem, at=self._clock(), message=message))
        if first is False:
            log.debug("alert %s: sent before and not settled since, so not sent again", alert.problem)
            return
        headers = {
            "Title": _header(f"twitterbot: {self._what}: {alert.title}"),
            "Priority": alert.priority,
            "Tags": ",".join(alert.tags),
        }
        self._spawn(self._notify_url, message.encode("utf-8")[:MAX_BODY], headers)

    def _spawn(self, url: str, body: bytes, headers: Mapping[str, str]) -> None:
        def send() -> None:
            problem = self._send(url, body=body, headers=headers, timeout=self._wait)
            if problem:
                log.warning("a monitor did not take the news (%s): the run carries on", self._clean(problem))

        # A daemon thread: a monitor that never answers cannot keep the process from ending.
        thread = threading.Thread(target=send, name="twitterbot-monitor", daemon=True)
        thread.start()
        self._sending.append(thread)

    def _join(self) -> None:
        """Wait for what is being sent, `wait` seconds at most in all."""
        deadline = time.monotonic() + self._wait
        for thread in self._sending:
            thread.join(max(0.0, deadline - time.monotonic()))
        late = [thread for thread in self._sending if thread.is_alive()]
        if late:
            log.warning("a monitor did not answer within %.0f s: the run carries on without waiting", self._wait)
        self._sending = []

    def _with_history(self, use: Callable[[HistoryStore], object]) -> object:
        """Run `use` on the history; None if it cannot be opened (then an alert is sent anyway:
        better twice than never)."""
        if not self._history.parent.is_dir():
            return None
        try:
            with HistoryStore(self._history) as store:
                return use(store)
        except BotError as exc:
            log.debug("alerts: the history cannot say what was sent (%s)", exc)
            return None

    def _clean(self, text: str) -> str:
        return scrub(text, self._secrets)


def _header(text: str) -> str:
    """A header's value: HTTP headers are Latin-1, and one line."""
    return " ".join(text.split()).encode("latin-1", "replace").decode("latin-1")[:200]
