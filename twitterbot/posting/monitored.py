"""A scheduled run told to the monitors (HEALTHCHECK_URL, NOTIFY_URL): a ping when it starts and
when it ends, and an alert for what needs the owner: a failed run, an uncertain post, keys a
network refused, an account out of credits, posts a budget stopped. A post that went through on a
network settles that network's problems, and a run that ends well settles the run's. Imported only
when a monitor is set, by `scheduled.run_watched`; the run's result (a `scheduled.RunResult`) is
read here by its fields, so that this module and that one do not import each other::

    result = watched(config, lambda: run_once(config, posters=..., rng=rng))
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, List, Tuple

from ..errors import BotError, ErrorKind
from ..monitoring import Alert, monitor_for
from ..settings.loading import Config
from ..state.outcomes import Outcome

__all__ = ["news", "watched"]

# The errors that say the keys are refused, and the one that says the money ran out.
_KEYS_REFUSED = (ErrorKind.UNAUTHORIZED, ErrorKind.READ_ONLY)
# The problems a post that went through on a network settles there.
_SETTLED_BY_A_POST = ("keys", "credits", "uncertain")


def watched(config: Config, run: Callable[[], Any], what: str = "scheduled run") -> Any:
    """`run()`, with a ping before and after and the alerts its result calls for. The monitors
    never change the result, nor an error raised (which is the run's failure)."""
    monitor = monitor_for(config, what)
    monitor.start()
    try:
        result = run()
    except BotError as exc:
        monitor.finish(int(exc.exit_status), str(exc), alerts=[Alert("run", "the run failed", str(exc))])
        raise
    except Exception as exc:  # a bug: the error boundary reports it; the monitors hear of a failure
        message = f"unexpected error ({type(exc).__name__}): see the log"
        monitor.finish(1, message, alerts=[Alert("run", "the run failed", message)])
        raise
    alerts, fixed = news(result)
    monitor.finish(int(result.exit_status), f"{result.action}: {result.reason}", alerts=alerts, fixed=fixed)
    return result


def news(result: Any) -> Tuple[List[Alert], List[str]]:
    """The alerts a run's result calls for, and the problems it settles."""
    alerts: List[Alert] = []
    fixed: List[str] = []
    for sent in (*result.networks, *result.caught_up):
        network, label, kind = sent.network.name, sent.network.label, sent.error.kind if sent.error else None
        if sent.outcome == Outcome.POSTED:
            fixed += [f"{problem}:{network}" for problem in _SETTLED_BY_A_POST]
        elif sent.outcome == Outcome.UNCERTAIN:
            alerts.append(Alert(f"uncertain:{network}", f"a post to {label} is uncertain", str(sent.error)))
        elif sent.outcome == Outcome.OVER_BUDGET:
            month = f"{datetime.now(timezone.utc):%Y-%m}"
            alerts.append(
                Alert(
                    f"budget:{network}:{month}",
                    f"the budget stops posts to {label}",
                    sent.note or "",
                    "default",
                    ("money_with_wings",),
                )
            )
        elif kind in _KEYS_REFUSED:
            alerts.append(Alert(f"keys:{network}", f"{label} refused the keys", str(sent.error), "urgent"))
        elif kind == ErrorKind.CREDITS:
            alerts.append(
                Alert(f"credits:{network}", f"{label}: the account is out of credits", str(sent.error), "urgent")
            )
    if int(result.exit_status) == 0:
        fixed.append("run")
    elif not alerts:
        alerts.append(Alert("run", "the run failed", result.reason))
    return alerts, fixed
