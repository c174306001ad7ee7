"""The status page's jobs section: the latest run of each progress job from the history file, and
whether its process still holds the job's lock. Split from data.py, which reads the rest."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import replace
from datetime import datetime, timezone
from typing import Callable, Optional, Tuple

from ..settings import Config
from .data import JobPicture, JobView, _parsed
from .links import post_url


def job_views(conn: sqlite3.Connection, config: Config, picture_for: Callable[[JobView], Optional[JobPicture]]) -> Tuple[JobView, ...]:
    """The latest run of each job name, most recently active first."""
    rows = conn.execute(
        "SELECT id, name, started_at, finished_at, outcome, last_post_at, last_text, posts FROM jobs"
        " WHERE id IN (SELECT max(id) FROM jobs GROUP BY name)"
        " ORDER BY coalesce(last_post_at, started_at) DESC LIMIT 10"
    ).fetchall()
    views = []
    for job_id, name, started_at, finished_at, outcome, last_post_at, last_text, posts in rows:
        threads = []
        for network, root in conn.execute(
            "SELECT network, thread_root FROM job_threads WHERE job_id = ? ORDER BY network", (job_id,)
        ):
            stored = conn.execute(
                "SELECT url FROM attempts WHERE job_id = ? AND network = ? AND tweet_id = ? AND url IS NOT NULL LIMIT 1",
                (job_id, network, root),
            ).fetchone()
            threads.append(
                (config.registry.label(network), post_url(network, root, stored[0] if stored else None, config))
            )
        if finished_at:
            state = outcome or "done"
        else:
            running = _job_running(config, name)
            state = "running" if running else "stopped" if running is False else "unfinished"
        view = JobView(
            id=job_id,
            name=name,
            state=state,
            started_at=_parsed(started_at) or datetime.min.replace(tzinfo=timezone.utc),
            finished_at=_parsed(finished_at),
            last_post_at=_parsed(last_post_at),
            last_text=last_text,
            posts=int(posts),
            threads=tuple(threads),
        )
        picture = picture_for(view)
        views.append(view if picture is None else replace(view, picture=picture.url, picture_alt=picture.alt))
    return tuple(views)


def _job_running(config: Config, name: str) -> Optional[bool]:
    """Whether a process holds the job's lock (progress/reporter.py takes one per job name): read
    from /proc/locks, so the page never touches the lock itself. None when it cannot be known."""
    from ..progress.reporter import slug

    lock = config["BOT_STATE_DIR"] / f"job-{slug(name)}.lock"
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
