"""A reporter wired to the bot's settings: the history database, the networks in POST_TO and
their keys, PROGRESS_*, and a lock per job name::

    with open_reporter("hamlet", config=config) as report:
        report.update("half done")
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from ..errors import ConfigError
from ..lock import run_lock
from ..networks import Poster, posters_for
from ..networks.dryrun import DryRunPoster
from ..pictures.kept import PICTURES_FOLDER
from ..posting.scheduled import utc_now
from ..settings import PROJECT_DIR, Config, load_config
from ..state import HistoryStore, ensure_state_dir
from .reporter import Reporter, Status, Templates, slug

__all__ = ["open_reporter"]


@contextlib.contextmanager
def open_reporter(
    name: str,
    *,
    config: Optional[Config] = None,
    dry_run: bool = False,
    poster: Optional[Poster] = None,
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
    """A reporter wired to the bot's settings (read from .env when `config` is None): the history
    database, the X keys, PROGRESS_* for anything not given here (so the first progress post waits
    PROGRESS_FIRST_AFTER, 5 minutes by default). It holds a lock per job name,
    so one job is not reported twice at once. The last picture of each post sent is kept in the
    state folder for the status page. A dry run prints its posts and keeps no state.
    `pictures=False` (a job's --no-pictures) turns pictures off, as PICTURES=no does for all."""
    config = config or load_config(project_dir=PROJECT_DIR)
    # The job's own defaults, then PROGRESS_*TEMPLATE (which command-line flags override).
    merged = (templates or Templates()).merged(
        config.progress_template, config.progress_done_template, config.progress_failed_template
    )
    if dry_run:
        lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        store = HistoryStore(":memory:")
        poster = DryRunPoster(networks=config.post_to)
        kept: Optional[Path] = None  # a dry run keeps no state, and its in-memory job ids name no real run
    else:
        ensure_state_dir(config.state_dir)
        lock = run_lock(
            config.state_dir / f"job-{slug(name)}.lock",
            busy=f"another process is already reporting the job {name!r}",
            advice="stop it first, or give this job another name",
            remove=True,  # one lock file per job name would pile up in the state folder
        )
        store = HistoryStore(config.history_file)
        poster = poster or posters_for(config)
        kept = config.state_dir / PICTURES_FOLDER
    with lock, store:
        try:
            reporter = Reporter(
                name,
                poster=poster,
                store=store,
                every=config.progress_every if every is None else every,
                milestone_every=config.progress_milestone_every if milestone_every is None else milestone_every,
                first_after=config.progress_first_after if first_after is None else first_after,
                max_posts_per_day=config.max_posts_per_day,
                templates=merged,
                thread=config.progress_thread if thread is None else thread,
                run_key=run_key,
                job_fields=job_fields,
                clock=clock,
                status=status,
                networks=config.post_to,
                pictures=pictures and config.pictures,
                picture_every=config.pictures_every,
                keep_pictures_in=kept,
            )
        except ValueError as exc:
            raise ConfigError(f"{exc} (PROGRESS_TEMPLATE, PROGRESS_DONE_TEMPLATE, PROGRESS_FAILED_TEMPLATE)") from None
        with reporter:
            yield reporter
