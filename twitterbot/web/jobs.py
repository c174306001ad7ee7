"""The status page's jobs section: the latest run of each progress job from the history, whether
its process still holds the job's lock, and its latest picture."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, List, Optional, Tuple

from ..posting.links import label_of
from ..progress.reporter import slug
from ..settings.loading import Config
from ..state.reader import HistoryReader
from .attention import Attention
from .links import post_url

__all__ = ["JobPicture", "JobView", "job_attention", "job_views"]

_SHOWN = 10  # jobs listed on the page
_TROUBLE = {
    "failed": "its last run failed: its last post, and the log, say why",
    "stopped": "its last run did not finish and no process runs it now (stopped, killed, or the machine restarted):"
    " start it again and it carries on its thread",
}


@dataclass(frozen=True)
class JobView:
    """A progress job's latest run: its state, last progress and thread on each network.

    `picture` is the job's latest posted picture (an http(s) or same-site address) and
    `picture_alt` its alt text, both set by the page's `picture_for` (`JobPicture`)."""

    id: int
    name: str
    state: str  # running, stopped (unfinished, no process holds its lock), done, failed
    started_at: datetime
    finished_at: Optional[datetime]
    last_post_at: Optional[datetime]
    last_text: Optional[str]
    posts: int
    threads: Tuple[Tuple[str, Optional[str]], ...] = ()  # (network label, link to the first post)
    picture: Optional[str] = None
    picture_alt: Optional[str] = None


@dataclass(frozen=True)
class JobPicture:
    """What `picture_for` answers for a job: where its latest picture is, and its alt text."""

    url: str
    alt: str = ""


def job_views(
    history: HistoryReader, config: Config, picture_for: Callable[[JobView], Optional[JobPicture]]
) -> Tuple[JobView, ...]:
    """The latest run of each job name, most recently active first."""
    views = []
    for job in history.latest_jobs(_SHOWN):
        if job.finished_at:
            state = job.outcome or "done"
        else:
            running = _job_running(config, job.name)
            state = "running" if running else "stopped" if running is False else "unfinished"
        view = JobView(
            id=job.id,
            name=job.name,
            state=state,
            started_at=job.started_at or datetime.min.replace(tzinfo=timezone.utc),
            finished_at=job.finished_at,
            last_post_at=job.last_post_at,
            last_text=job.last_text,
            posts=job.posts,
            threads=tuple(
                (label_of(config, thread.network), post_url(thread.network, thread.post_id, thread.url, config))
                for thread in job.threads
            ),
        )
        picture = picture_for(view)
        views.append(view if picture is None else replace(view, picture=picture.url, picture_alt=picture.alt))
    return tuple(views)


def job_attention(jobs: Tuple[JobView, ...]) -> List[Attention]:
    """The jobs whose last run failed, or stopped unfinished with no process to carry it on."""
    return [
        Attention("job", f"Job {job.name!r} {job.state}", _TROUBLE[job.state], at=job.finished_at or job.last_post_at)
        for job in jobs
        if job.state in _TROUBLE
    ]


def _job_running(config: Config, name: str) -> Optional[bool]:
    """Whether a process holds the job's lock (progress/reporter.py takes one per job name): read
    from /proc/locks, so the page never touches the lock itself. None when it cannot be known."""
    lock = config.state.job_lock(slug(name))
    try:
        info = lock.stat()
    except OSError:
        return False  # the lock file is removed when its holder lets go
    try:
        with open("/proc/locks", encoding="ascii") as table:
            held = table.read().split("\n")
    except OSError:
        return None
    wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    return any(wanted in line.split() for line in held)
