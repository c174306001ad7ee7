"""Reporters for tests: a `Reporter` over an open store, posters by network name and a clock, as
the tests built it before the reporter took a `Delivery` (its settings in the words a test uses)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from conftest import REGISTRY

from twitterbot.networks.dryrun import DRY_RUN
from twitterbot.posting.delivery import Delivery
from twitterbot.progress.reporter import Cadence, JobLook, Reporter
from twitterbot.settings.secrets import Scrubber

LOOK = ("templates", "thread", "job_fields", "pictures", "picture_every", "keep_pictures_in")


def make_reporter(
    name: str,
    *,
    posters: Mapping[str, Any],
    store: Any,
    clock: Any,
    cadence: Cadence,
    networks: Optional[Sequence[str]] = None,
    secrets: Sequence[str] = (),
    budgets: Optional[Mapping[str, float]] = None,
    **options: Any,
) -> Reporter:
    """`posters` by network name ("dry-run": the dry run's); `options`: what the job's posts look
    like (`JobLook`'s fields), its `run_key` and `status`."""
    outlets = {DRY_RUN if each == DRY_RUN.name else REGISTRY.network(each): poster for each, poster in posters.items()}
    delivery = Delivery(store, lambda: outlets, clock, Scrubber(secrets), dict(budgets or {}))
    look = JobLook(**{key: options.pop(key) for key in LOOK if key in options})
    wanted = tuple(REGISTRY.network(each) for each in networks or ())
    return Reporter(name, delivery=delivery, cadence=cadence, look=look, networks=wanted, **options)
