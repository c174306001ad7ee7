"""A network's monthly budget (X_MONTHLY_BUDGET for X): what its posts cost this calendar month,
summed from the history, and whether one more post would pass the budget. A network states its
price (`Network.price`) and the setting of its budget (`Network.budget`); a free network has
neither::

    spend = month_spend(store, network, now, config)
    spend.spent, spend.budget               # 4.95, 5.0
    over_budget(spend, 0.20, network)       # "not sent to X: ..." or None
    budget_stops(store, network, 0.20, 5.0, now)   # the two in one: what every sender asks

A scheduled post, a caught-up post, a thread (the sum of its parts' prices) and a job's post are
each held to it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple, Optional

from ..networks import Network
from ..state.counting import PostCounts

__all__ = [
    "Spend",
    "budget_stops",
    "month_spend",
    "month_start",
    "next_month",
    "over_budget",
]


class Spend(NamedTuple):
    """What posts to `network` cost since `since` (the month's start), against its `budget`
    (None: no cap)."""

    network: str
    spent: float
    budget: Optional[float]
    setting: str
    since: datetime

    def line(self, label: str) -> str:
        """The spend in words, for `check` and the status page."""
        cap = (
            f" of {self.setting}=${self.budget:.2f}"
            if self.budget is not None
            else f" ({self.setting} not set: no cap)"
        )
        return f"{label} posts this month (since {self.since:%Y-%m-%d} UTC): ${self.spent:.2f}{cap}"


def month_start(now: datetime) -> datetime:
    """The start of `now`'s calendar month, in UTC (the budget's month)."""
    utc = now.astimezone(timezone.utc)
    return utc.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month(now: datetime) -> datetime:
    """The start of the calendar month after `now`'s, in UTC: when a spent budget is whole again."""
    start = month_start(now)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def month_spend(history: PostCounts, network: Network, now: datetime, budget: Optional[float]) -> Spend:
    """What the posts that went (or may have gone) to `network` this month cost. A row kept before
    costs were recorded is priced by its text, as the network prices it today."""
    since = month_start(now)
    spent = 0.0
    for cost, text in history.costs_since(network.name, since):
        price = cost if cost is not None else network.price(network.measure(text))
        spent += price or 0.0
    return Spend(network.name, spent, budget, network.budget or "", since)


def over_budget(spend: Spend, price: Optional[float], network: Network) -> Optional[str]:
    """Why a post that costs `price` on `network` (a thread: its parts' prices summed) may not go
    there: it would pass the budget; None: it may."""
    if spend.budget is None or price is None or spend.spent + price <= spend.budget + 1e-9:
        return None
    return (
        f"not sent to {network.label}: this post (${price:.3f}) would pass {spend.setting}=${spend.budget:.2f}, "
        f"with ${spend.spent:.2f} spent this month (since {spend.since:%Y-%m-%d} UTC); the other networks get it, "
        f"and posts to {network.label} resume next month or with a higher {spend.setting}"
    )


def budget_stops(
    history: PostCounts, network: Network, price: Optional[float], budget: float, now: datetime
) -> Optional[str]:
    """Why a post that costs `price` on `network` may not go there, given its monthly `budget`
    and what this month's posts there cost; None: it may go."""
    return over_budget(month_spend(history, network, now, budget), price, network)
