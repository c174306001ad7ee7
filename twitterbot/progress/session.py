"""A reporter wired to the bot's settings: the history database, the networks in POST_TO and
their keys, PROGRESS_*, and a lock per job name::

    with open_reporter("hamlet", config=config) as report:
        report.update("half done")
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Optional

from ..errors import BotError, ConfigError
from ..lock import run_lock
from ..monitoring import Alert, Monitor, monitor_for
from ..networks import Poster
from ..networks.dryrun import DryRunPoster
from ..pictures.kept import PICTURES_FOLDER
from ..posting.scheduled import monthly_budgets
from ..settings.loading import Config
from ..state.clock import utc_now
from ..state.folder import ensure_state_dir
from ..state.store import HistoryStore
from .reporter import Reporter, Status, slug
from .reports import Templates

__all__ = ["open_reporter"]


@contextlib.contextmanager
def open_reporter(
    name: str,
    *,
    config: Config,
    dry_run: bool = False,
    posters: Optional[Mapping[str, Poster]] = None,
    every: Optional[float] = None,
    milestone_every: Optional[float] = None,
    first_after: Optional[float] = None,
    thread: Optional[bool] = None,
    templates: Optional[Templates] = None,
    run_key: Optional[str] = None,
    job_fields: Iterable[str] = (),
    clock: Callable[[], datetime] = utc_now,
    status: Optional[Status] = None,
    pictures: bool = True,
) -> Iterator[Reporter]:
    """A reporter wired to the bot's settings (`twitterbot.cli.read_config` reads them): the history
    database, the X keys, PROGRESS_* for anything not given here (so the first progress post waits
    PROGRESS_FIRST_AFTER, 5 minutes by default). It holds a lock per job name,
    so one job is not reported twice at once. The last picture of each post sent is kept in the
    state folder for the status page. A dry run prints its posts and keeps no state.
    `pictures=False` (a job's --no-pictures) turns pictures off, as PICTURES=no does for all."""
    # The job's own defaults, then PROGRESS_*TEMPLATE (which command-line flags override).
    merged = (templates or Templates()).merged(
        config["PROGRESS_TEMPLATE"], config["PROGRESS_DONE_TEMPLATE"], config["PROGRESS_FAILED_TEMPLATE"]
    )
    if dry_run:
        lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        store = HistoryStore(":memory:")
        posters = {DryRunPoster.name: DryRunPoster(networks=config.registry.posting_to(config))}
        kept: Optional[Path] = None  # a dry run keeps no state, and its in-memory job ids name no real run
    else:
        ensure_state_dir(config["BOT_STATE_DIR"])
        lock = run_lock(
            config["BOT_STATE_DIR"] / f"job-{slug(name)}.lock",
            busy=f"another process is already reporting the job {name!r}",
            advice="stop it first, or give this job another name",
            remove=True,  # one lock file per job name would pile up in the state folder
        )
        store = HistoryStore(config.history_file)
        posters = posters or config.registry.posters_for(config)
        kept = config["BOT_STATE_DIR"] / PICTURES_FOLDER
    with lock, store:
        try:
            reporter = Reporter(
                name,
                posters=posters,
                store=store,
                every=config["PROGRESS_EVERY"] if every is None else every,
                milestone_every=config["PROGRESS_MILESTONE_EVERY"] if milestone_every is None else milestone_every,
                first_after=config["PROGRESS_FIRST_AFTER"] if first_after is None else first_after,
                max_posts_per_day=config["MAX_POSTS_PER_DAY"],
                templates=merged,
                thread=config["PROGRESS_THREAD"] if thread is None else thread,
                run_key=run_key,
                job_fields=job_fields,
                clock=clock,
                status=status,
                registry=config.registry,
                networks=config["POST_TO"],
                pictures=pictures and config["PICTURES"],
                picture_every=config["PICTURES_EVERY"],
                keep_pictures_in=kept,
                secrets=config.secrets(),
                budgets=monthly_budgets(config),
            )
        except ValueError as exc:
            raise ConfigError(f"{exc} (PROGRESS_TEMPLATE, PROGRESS_DONE_TEMPLATE, PROGRESS_FAILED_TEMPLATE)") from None
        monitor = Monitor() if dry_run else monitor_for(config, f"job {name}")
        with _watched(monitor, reporter, config), reporter:
            yield reporter


@contextlib.contextmanager
def _watched(monitor: Monitor, reporter: Reporter, config: Config) -> Iterator[None]:
    """A job told to the monitors: a ping as it starts and as it ends (a failure with its reason and
    its exit status: watch's is its command's), an alert when it fails or goes quiet for
    PROGRESS_STALL (with NOTIFY_URL set)."""
    monitor.start()
    problem = f"job:{reporter.name}"
    try:
        if config["NOTIFY_URL"] and config["PROGRESS_STALL"] and monitor.active:
            from ..monitoring.stall import stall_watch  # only with alerts to send

            with stall_watch(monitor, reporter.name, heard=lambda: reporter.heard_at, stall=config["PROGRESS_STALL"]):
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
