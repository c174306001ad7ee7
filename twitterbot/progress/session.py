"""A reporter wired to the bot's settings: the history database, the networks in POST_TO and
their keys, PROGRESS_*, and a lock per job name::

    with open_reporter("hamlet", config=config, job=JobSettings(first_after=0)) as report:
        report.update("half done")
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, Mapping, Optional, Tuple

from ..delivery.deliver import Delivery
from ..errors import BotError, ConfigError
from ..lock import run_lock
from ..monitoring import NOTIFY_URL, PROGRESS_STALL, Alert, Monitor, monitor_for
from ..networks import Network, Poster, posters_for
from ..networks.dryrun import DRY_RUN, DryRunPoster
from ..posting import MAX_POSTS_PER_DAY, delivery_rules
from ..settings.loading import Config
from ..settings.secrets import Scrubber
from ..settings.table import POST_TO
from ..state.clock import Clock, utc_now
from ..state.floor import check_clock
from ..state.folder import ensure_state_dir
from ..state.store import HistoryStore
from . import (
    PICTURES,
    PICTURES_EVERY,
    PROGRESS_DONE_TEMPLATE,
    PROGRESS_EVERY,
    PROGRESS_FAILED_TEMPLATE,
    PROGRESS_FIRST_AFTER,
    PROGRESS_MILESTONE_EVERY,
    PROGRESS_TEMPLATE,
    PROGRESS_THREAD,
)
from .reporter import Cadence, JobLook, Reporter, Status, slug
from .reports import Templates

__all__ = ["JobSettings", "open_reporter"]


@dataclass(frozen=True)
class JobSettings:
    """What a job asks of its reporter beyond the settings; None: as the settings say. Its own
    templates (which PROGRESS_*TEMPLATE, then flags, override), the fields it adds to them, what
    names one run of it (`run_key`: a restart with the same key continues the run), and its own
    cadence where it has one (`every`, `milestone_every`, `first_after`, `thread`). `pictures`
    False (a job's --no-pictures) turns pictures off, as PICTURES=no does for all."""

    templates: Optional[Templates] = None
    job_fields: Tuple[str, ...] = ()
    run_key: Optional[str] = None
    pictures: bool = True
    every: Optional[float] = None
    milestone_every: Optional[float] = None
    first_after: Optional[float] = None
    thread: Optional[bool] = None

    def cadence(self, config: Config) -> Cadence:
        return Cadence(
            config[PROGRESS_EVERY] if self.every is None else self.every,
            config[PROGRESS_MILESTONE_EVERY] if self.milestone_every is None else self.milestone_every,
            config[PROGRESS_FIRST_AFTER] if self.first_after is None else self.first_after,
            config[MAX_POSTS_PER_DAY],
        )

    def look(self, config: Config, kept: Optional[Path]) -> JobLook:
        merged = (self.templates or Templates()).merged(
            config[PROGRESS_TEMPLATE], config[PROGRESS_DONE_TEMPLATE], config[PROGRESS_FAILED_TEMPLATE]
        )
        return JobLook(
            merged,
            config[PROGRESS_THREAD] if self.thread is None else self.thread,
            tuple(self.job_fields),
            self.pictures and config[PICTURES],
            config[PICTURES_EVERY],
            kept,
        )


@contextlib.contextmanager
def open_reporter(
    name: str,
    *,
    config: Config,
    job: Optional[JobSettings] = None,
    dry_run: bool = False,
    status: Optional[Status] = None,
    posters: Optional[Mapping[Network, Poster]] = None,
    clock: Clock = utc_now,
) -> Iterator[Reporter]:
    """A reporter wired to the bot's settings (`twitterbot.cli.read_config` reads them): the history
    database, the networks in POST_TO and their keys, PROGRESS_* for anything `job` leaves to them
    (so the first progress post waits PROGRESS_FIRST_AFTER, 5 minutes by default). It holds a lock
    per job name, so one job is not reported twice at once. The last picture of each post sent is
    kept in the state folder for the status page. A dry run prints its posts and keeps no state.
    A clock before the history's newest record (a Pi not yet set) starts no job: ClockNotSet (75).
    `posters` by network: a test's, instead of those the keys make."""
    job = job or JobSettings()
    networks = config[POST_TO]
    if dry_run:
        lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        store = HistoryStore(":memory:")
        outlets: Dict[Network, Poster] = {DRY_RUN: DryRunPoster(networks=networks)}
        kept: Optional[Path] = None  # a dry run keeps no state, and its in-memory job ids name no real run
    else:
        ensure_state_dir(config.state.path)
        lock = run_lock(
            config.state.job_lock(slug(name)),
            busy=f"another process is already reporting the job {name!r}",
            advice="stop it first, or give this job another name",
            remove=True,  # one lock file per job name would pile up in the state folder
        )
        store = HistoryStore(config.state.history)
        outlets = dict(posters or posters_for(config))
        kept = config.state.pictures
    listeners = () if dry_run else _while_job(config)
    with lock, store:
        if not dry_run:  # a job started before the Pi's clock is set posts nothing, dated 1970 (75)
            check_clock(store.newest_record(), clock())
        rules = delivery_rules(config, language=False)
        delivery = Delivery(store, lambda: outlets, clock, Scrubber(config.secrets()), rules)
        try:
            reporter = Reporter(
                name,
                delivery=delivery,
                cadence=job.cadence(config),
                look=job.look(config, kept),
                networks=networks,
                run_key=job.run_key,
                status=status,
                listeners=listeners,
            )
        except ValueError as exc:
            raise ConfigError(f"{exc} (PROGRESS_TEMPLATE, PROGRESS_DONE_TEMPLATE, PROGRESS_FAILED_TEMPLATE)") from None
        monitor = Monitor() if dry_run else monitor_for(config, f"job {name}")
        try:
            with _watched(monitor, reporter, config), reporter:
                yield reporter
        finally:
            _let_finish(listeners)


def _while_job(config: Config) -> Tuple[Callable[[str], None], ...]:
    """What the capabilities do each time the job reports (replies' "status" rule), when the
    settings were read with the registry (a library's `read_config` reads them so)."""
    from ..registry import Registry

    registry = config.registry
    return registry.while_job(config) if isinstance(registry, Registry) else ()


def _let_finish(listeners: Tuple[Callable[[str], None], ...]) -> None:
    """At the job's end, a little time for what its reports started beside it (a round of replies
    in its own thread, `join`) to finish: a bounded wait, never the whole of a slow server's."""
    for listener in listeners:
        join = getattr(listener, "join", None)
        if join is not None:
            join()


@contextlib.contextmanager
def _watched(monitor: Monitor, reporter: Reporter, config: Config) -> Iterator[None]:
    """A job told to the monitors: a ping as it starts and as it ends (a failure with its reason and
    its exit status: watch's is its command's), an alert when it fails or goes quiet for
    PROGRESS_STALL (with NOTIFY_URL set)."""
    monitor.start()
    problem = f"job:{reporter.name}"
    try:
        if config[NOTIFY_URL] and config[PROGRESS_STALL] and monitor.active:
            from ..monitoring.stall import stall_watch  # only with alerts to send

            with stall_watch(monitor, reporter.name, heard=lambda: reporter.heard_at, stall=config[PROGRESS_STALL]):
                yield
        else:
            yield
    except BotError as exc:
        monitor.finish(int(exc.exit_status), str(exc), alerts=[Alert(problem, "the job failed", str(exc))])
        raise
    except (KeyboardInterrupt, SystemExit, BrokenPipeError):
        monitor.finish(0, "stopped; starting it again continues this run")
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        monitor.finish(1, message, alerts=[Alert(problem, "the job failed", message)])
        raise
    if reporter.job.outcome == "failed":
        said = reporter.job.last_news or "it reported a failure"
        monitor.finish(reporter.failure_status, said, alerts=[Alert(problem, "the job failed", said)])
    else:
        monitor.finish(0, f"{reporter.name}: {reporter.job.outcome or 'stopped'}", fixed=[problem])
