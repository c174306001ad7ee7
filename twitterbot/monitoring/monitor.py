"""The monitor of one run or job when HEALTHCHECK_URL or NOTIFY_URL is set: heartbeat pings in
healthchecks.io's protocol and alerts in ntfy's, each sent from a thread of its own, so that a
monitor that never answers delays the run by at most `WAIT` seconds in all and never changes its
outcome or its exit status.

Pings: ``URL/start`` when it begins; ``URL`` when it ends well (a skip is a good end: the bot ran),
``URL/<exit status>`` when it fails, with the reason in the body. Alerts: a ``POST`` of the message
to the topic URL, with ``Title``, ``Priority`` and ``Tags`` headers; one per problem until a
success settles it (the history's alerts table). An alert counts as sent only once the monitor
took it (a 2xx answer): one it did not take is sent again by the next run that meets the problem,
or, when a success settles the problem first, told late once as a problem that happened and is
over (so that the owner hears of every problem, if only afterwards).
Each request is one `request.Call` (bounded in time and size, never raising); a failed one is a
one-line WARNING naming the setting::

    monitor = LiveMonitor(config, "scheduled run")
    monitor.start()
    monitor.finish(75, "X did not answer", alerts=[Alert("run", "run failed", "X did not answer")])
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from typing import Callable, Iterable, List, Mapping, NamedTuple, Optional, Sequence

from ..errors import BotError
from ..networks.addresses import Screen, refusal
from ..settings.loading import Config
from ..settings.secrets import Scrubber
from ..state.alerts import OwedAlert
from ..state.store import HistoryStore
from . import HEALTHCHECK_URL, NOTIFY_URL, Alert, Monitor
from .endpoint import Endpoint, parse
from .request import Call

__all__ = ["WAIT", "LiveMonitor"]

log = logging.getLogger(__name__)

WAIT = 10.0  # seconds: the most a run waits for its monitors, whatever they do
MAX_BODY = 100_000  # bytes: what healthchecks.io keeps of a ping's body


class _Sending:
    """One request on its way to `setting`'s monitor, in a daemon thread (a monitor that never
    answers cannot keep the process from ending); `problem` is None once it was taken."""

    def __init__(self, setting: str, what: str, call: Call) -> None:
        self.setting = setting
        self.what = what  # "the start ping", "the alert \"run failed\""
        self.call = call
        self.done = False
        self.problem: Optional[str] = "not sent yet"
        self.thread = threading.Thread(target=self._run, name="twitterbot-monitor", daemon=True)
        self.thread.start()

    # The one broad catch of this module: a monitor's trouble is never the run's, and an exception
    # in this thread would be printed to stderr whole, past the log's scrubbing.
    def _run(self) -> None:
        try:
            self.problem = self.call.send()
        except Exception as exc:  # noqa: BLE001
            self.problem = f"unexpected {type(exc).__name__} (please report it)"
        self.done = True

    @property
    def taken(self) -> bool:
        return self.done and self.problem is None


class _Telling(NamedTuple):
    """An alert on its way (`sending` None: not sent, since it was sent before), and whether it
    is one owed for a problem that is over (`late`): that one is not a problem open again."""

    alert: Alert
    sending: Optional[_Sending]
    late: bool = False


class LiveMonitor(Monitor):
    """Pings and alerts for one run or job (`what` names it in an alert's title). `screen` says
    which addresses are on the public internet (a redirect from one may not lead elsewhere)."""

    active = True

    def __init__(
        self,
        config: Config,
        what: str,
        *,
        wait: float = WAIT,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        screen: Screen = refusal,
    ) -> None:
        # Read when the settings were checked: parse() cannot fail on them here.
        self._ping: Optional[Endpoint] = parse(config[HEALTHCHECK_URL]) if config[HEALTHCHECK_URL] else None
        self._notify: Optional[Endpoint] = parse(config[NOTIFY_URL]) if config[NOTIFY_URL] else None
        self._history = config.state.history
        self._clean = Scrubber(config.secrets())
        self._what = what
        self._wait = wait
        self._clock = clock
        self._screen = screen
        self._started: List[_Sending] = []  # the start ping, waited for when the run finishes

    def start(self) -> None:
        if self._ping:  # not waited for: the run goes on meanwhile
            self._started.append(self._spawn("HEALTHCHECK_URL", "the start ping", self._ping.with_suffix("/start")))

    def finish(self, status: int, reason: str, *, alerts: Sequence[Alert] = (), fixed: Iterable[str] = ()) -> None:
        sending, self._started = self._started, []
        if self._ping:
            endpoint = self._ping if status == 0 else self._ping.with_suffix(f"/{status}")
            body = self._clean(reason).encode("utf-8")[:MAX_BODY]
            sending.append(self._spawn("HEALTHCHECK_URL", "the end ping", endpoint, body))
        telling = [*self._settling(fixed), *(_Telling(alert, self._send_alert(alert)) for alert in alerts)]
        self._wait_for([*sending, *(each.sending for each in telling if each.sending)])
        self._record(telling)

    def alert(self, alert: Alert) -> bool:
        sending = self._send_alert(alert)
        if sending is None:
            return True
        self._wait_for([sending])
        self._record([_Telling(alert, sending)])
        return sending.taken

    def settle(self, problems: Iterable[str]) -> None:
        telling = self._settling(problems)
        if telling:
            self._wait_for([each.sending for each in telling if each.sending])
            self._record(telling)

    def _settling(self, problems: Iterable[str]) -> List[_Telling]:
        """Settle `problems` in the history, and send the alerts owed for them (ones the monitor
        did not take), each now as a problem that happened and is over."""
        names, notify = list(problems), self._notify
        if not names or notify is None:
            return []
        owed = self._with_history(lambda store: store.settle_alerts(names))
        late = [_late(each) for each in owed] if isinstance(owed, list) else []
        return [_Telling(alert, self._post_alert(alert, notify), late=True) for alert in late]

    # -- sending ---------------------------------------------------------------------------------

    def _send_alert(self, alert: Alert) -> Optional[_Sending]:
        """The alert on its way, or None: no NOTIFY_URL, or the monitor took it before and it is
        not settled since."""
        notify = self._notify
        if notify is None:
            return None
        if self._with_history(lambda store: store.alert_sent(alert.problem)):
            log.debug("alert %s: sent before and not settled since, so not sent again", alert.problem)
            return None
        return self._post_alert(alert, notify)

    def _post_alert(self, alert: Alert, notify: Endpoint) -> _Sending:
        """`alert` on its way to NOTIFY_URL."""
        headers = {
            "Title": _header(self._clean(f"twitterbot: {self._what}: {alert.title}")),  # a job's name is the user's
            "Priority": alert.priority,
            "Tags": ",".join(alert.tags),
        }
        body = self._clean(alert.message).encode("utf-8")[:MAX_BODY]
        return self._spawn("NOTIFY_URL", f"the alert {alert.title!r}", notify, body, headers)

    def _spawn(
        self,
        setting: str,
        what: str,
        endpoint: Endpoint,
        body: bytes = b"",
        headers: Optional[Mapping[str, str]] = None,
    ) -> _Sending:
        call = Call(endpoint, body=body, headers=headers, seconds=self._wait, screen=self._screen)
        return _Sending(setting, what, call)

    def _wait_for(self, sending: Sequence[_Sending]) -> None:
        """Wait for what is being sent, `wait` seconds at most in all; a request still going then
        is given up (its connection closed). Each one that failed is a WARNING naming its setting."""
        deadline = time.monotonic() + self._wait
        for each in sending:
            each.thread.join(max(0.0, deadline - time.monotonic()))
        for each in sending:
            if not each.done:  # its own time limit ends it a moment later
                each.problem = f"no answer within {self._wait:g} s"
            if each.problem is not None:
                then = "the next run sends it again" if each.setting == "NOTIFY_URL" else "the run carries on"
                log.warning(
                    "%s did not take %s (%s): %s", each.setting, self._clean(each.what), self._clean(each.problem), then
                )

    def _record(self, telling: Sequence[_Telling]) -> None:
        """Write down the alerts the monitor took as sent, and the ones it did not as owed: one
        owed is sent again by the next run that meets its problem, or told late once it is over.
        A late one the monitor took is owed no more; one it did not take stays owed."""
        sent = [each for each in telling if each.sending]
        if not sent:
            return

        def write(store: HistoryStore) -> None:
            for each in sent:
                alert, taken = each.alert, each.sending is not None and each.sending.taken
                message = self._clean(alert.message)
                if each.late and taken:
                    store.forget_owed(alert.problem)
                elif taken:
                    store.record_alert(alert.problem, at=self._clock(), message=message)
                elif not each.late:
                    store.owe_alert(alert.problem, at=self._clock(), title=self._clean(alert.title), message=message)

        self._with_history(write)

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


def _late(owed: OwedAlert) -> Alert:
    """The alert owed for a problem that is over, told now: what happened, when, and that it is
    over. Less pressing than the problem was: nothing is left to do."""
    message = (
        f"{owed.message}\n\nThis happened at {owed.at:%Y-%m-%d %H:%M} UTC, and its alert could not be sent then"
        " (NOTIFY_URL did not take it). It is over now."
    )
    return Alert(owed.problem, f"over now: {owed.title}", message, "default", ("white_check_mark",))


def _header(text: str) -> str:
    """A header's value: HTTP headers are Latin-1, and one line."""
    return " ".join(text.split()).encode("latin-1", "replace").decode("latin-1")[:200]
