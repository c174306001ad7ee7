"""Reporters for tests: a `Reporter` over an open store, posters by network name and a clock, in
the words a test uses (its cadence as four numbers, or a `Cadence`), as a job's command would
wire one through `open_reporter` (progress/session.py)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from conftest import REGISTRY

from twitterbot.delivery.deliver import Delivery, DeliveryRules
from twitterbot.networks.dryrun import DRY_RUN
from twitterbot.progress.reporter import Cadence, JobLook, Reporter
from twitterbot.settings.secrets import Scrubber
from twitterbot.state.clock import utc_now

LOOK = ("templates", "thread", "job_fields", "pictures", "picture_every", "keep_pictures_in")
CADENCE = ("every", "milestone_every", "first_after", "max_posts_per_day")


def make_reporter(
    name: str,
    *,
    posters: Mapping[Any, Any],
    store: Any,
    clock: Any = utc_now,
    networks: Optional[Sequence[str]] = None,
    secrets: Sequence[str] = (),
    budgets: Optional[Mapping[str, float]] = None,
    **options: Any,
) -> Reporter:
    """`posters` by network or by its name ("dry-run": the dry run's); `options`: the cadence (a
    `cadence`, or `every`, `milestone_every`, `first_after`, `max_posts_per_day`), what the posts
    look like (`JobLook`'s fields), the `run_key` and `status`."""
    options.pop("registry", None)  # the tests' registry is the built-in one
    outlets = {_network(each): poster for each, poster in posters.items()}
    delivery = Delivery(store, lambda: outlets, clock, Scrubber(secrets), DeliveryRules(budgets=dict(budgets or {})))
    cadence = options.pop("cadence", None) or Cadence(*(options.pop(key) for key in CADENCE))
    look = JobLook(**{key: options.pop(key) for key in LOOK if key in options})
    # What the posts are fitted to: the test's networks, else its posters', else (a dry run) X.
    named = networks or [each.name for each in outlets if each is not DRY_RUN] or [REGISTRY.default().name]
    wanted = tuple(REGISTRY.network(each) for each in named)
    return Reporter(name, delivery=delivery, cadence=cadence, look=look, networks=wanted, **options)


def _network(key: Any) -> Any:
    if not isinstance(key, str):
        return key
    return DRY_RUN if key == DRY_RUN.name else REGISTRY.network(key)
