"""Progress mode: a long-running job tells a `Reporter` how it is doing; the reporter decides when
that is worth a post.

The job calls `update` as often as it likes. A post goes out when one is due: the latest news
once the job has run `first_after` (so a short job posts only its result), then one every
`every`, or sooner for a milestone (at most one per `milestone_every`), never repeating the last
post's news and always leaving room under MAX_POSTS_PER_DAY for the result.
`done` and `failed` post the result once. Posts of one run form a thread under its first post,
and the run's state lives in the history database, so a restarted job continues its thread::

    with open_reporter("hamlet", config=config) as report:   # session.py
        for step in job():
            report.update(f"{step.count:,} keystrokes, best {step.best!r}", milestone=step.is_record)
        report.done(f"typed {step.best!r}")

Posting problems are logged and never reach the job. `NullReporter` does nothing, for jobs run
without progress posts.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..delivery.deliver import Delivery
from ..delivery.send import Sent
from ..errors import ErrorKind, ExitStatus, PostError
from ..networks import Network
from ..networks.dryrun import DRY_RUN
from ..pictures.kept import keep
from ..posting.decision import cap_reached
from ..posting.read import Expansion
from ..state.outcomes import Outcome
from ..state.records import JobRecord
from ..wording import plural, preview
from .attempts import JobAttempts
from .reports import DEFAULT_TEMPLATES, PictureMaker, Report, Status, Templates, Update
from .statusline import NullStatusLine
from .text import check_template, clean, fit, format_elapsed, tidy

if TYPE_CHECKING:
    from ..pictures.draw import Picture

__all__ = ["BASE_FIELDS", "Cadence", "JobLook", "Reporter", "slug"]

log = logging.getLogger(__name__)

# Fields every template may use; a job adds its own (watch: exit_code, command, last_line).
BASE_FIELDS = ("name", "message", "elapsed", "posts")
# After a failed post, wait at least this long (or until X's rate limit resets) before the next try.
RETRY_AFTER_FAILURE = timedelta(minutes=15)
# Report actions after which the post may be on X: its news is never sent again.
_SENT = (Outcome.POSTED, Outcome.UNCERTAIN)


@dataclass(frozen=True)
class Cadence:
    """When a job's news becomes a post: the first once the job has run `first_after` seconds
    (PROGRESS_FIRST_AFTER), then one every `every` (PROGRESS_EVERY), or after `milestone_every` for
    a milestone (PROGRESS_MILESTONE_EVERY), within MAX_POSTS_PER_DAY (`max_posts_per_day`)."""

    every: float
    milestone_every: float
    first_after: float
    max_posts_per_day: int


@dataclass(frozen=True)
class JobLook:
    """What a job's posts look like: the templates, whether they form a thread (PROGRESS_THREAD),
    the fields the job adds to the templates, and pictures (PICTURES, at most one every
    `picture_every`, the last one kept in `keep_pictures_in` for the status page)."""

    templates: Templates = DEFAULT_TEMPLATES
    thread: bool = True
    job_fields: Tuple[str, ...] = ()
    pictures: bool = False
    picture_every: float = 86400.0
    keep_pictures_in: Optional[Path] = None


class Reporter:
    """Decides when a job's updates become posts, and hands them to its `Delivery`, which posts
    them to every network it has, each network with its own thread. Build it with `open_reporter`,
    or directly with a delivery (tests hand it an open store, their posters and a clock).
    `networks`: what a post's text must fit (POST_TO's; a dry run's stand for them)."""

    def __init__(
        self,
        name: str,
        *,
        delivery: Delivery,
        cadence: Cadence,
        look: Optional[JobLook] = None,
        networks: Sequence[Network] = (),
        run_key: Optional[str] = None,
        status: Optional[Status] = None,
        listeners: Sequence[Callable[[str], None]] = (),
    ) -> None:
        look = look or JobLook()
        known = (*BASE_FIELDS, *look.job_fields)
        for template in (look.templates.progress, look.templates.done, look.templates.failed):
            check_template(template, known)
        self.name = name
        self._delivery = delivery
        self._store = delivery.store
        self._clock = delivery.clock
        self._mask = delivery.mask  # the settings' secrets, masked in every text before it is recorded or shown
        self._every = timedelta(seconds=cadence.every)
        self._milestone_every = timedelta(seconds=cadence.milestone_every)
        self._first_after = timedelta(seconds=cadence.first_after)
        self._max_posts = cadence.max_posts_per_day
        self._templates = look.templates
        self._thread = look.thread
        self._dry_run = DRY_RUN in delivery.outlets()  # only the log's wording differs
        self._networks = tuple(networks) or tuple(each for each in delivery.outlets() if each is not DRY_RUN)
        if not self._networks:  # what every post's text is fitted to: a bug in the composition
            raise TypeError("a dry run's reporter needs the networks its posts stand for (POST_TO's)")
        self._status: Status = status or NullStatusLine()
        # Told the job's latest progress line each time it reports (replies' "status" rule).
        self._listeners = tuple(listeners)
        self._pending: Optional[Update] = None
        self._stopped = False
        self._not_before: Optional[datetime] = None  # after a failure or while the cap is reached
        # Pictures (PICTURES, --no-pictures): the run's first post may carry the job's opening
        # picture, a progress post one at most every PICTURES_EVERY, the result its own.
        self.wants_pictures = look.pictures
        self._picture_every = timedelta(seconds=look.picture_every)
        self._last_picture_at: Optional[datetime] = None
        self._opening: Optional[PictureMaker] = None
        # Where the last picture of each post sent is kept for the status page (None: not kept).
        self._keep_pictures_in = look.keep_pictures_in
        self.job: JobRecord = self._store.open_job(name, at=self._clock(), run_key=run_key)
        self.heard_at = self._clock()  # when the job last reported (PROGRESS_STALL's watch reads it)
        self.failure_status = 1  # the exit status a failure ends with (`failed`)
        if self.job.finished_at:
            log.info("%s: this run already finished (%s); it will not post again", name, self.job.outcome)
        elif self.job.posts:
            log.info(
                "%s: continuing the run started %s (%d posts so far)",
                name,
                f"{self.job.started_at.astimezone():%Y-%m-%d %H:%M}",
                self.job.posts,
            )

    # -- what the job calls --------------------------------------------------------------------

    def update(
        self, message: str, *, milestone: bool = False, picture: Optional[PictureMaker] = None, **fields: object
    ) -> Report:
        """The job's latest news. Posted now if a post is due, otherwise kept until one is (a
        pending milestone is not replaced by ordinary news). `picture` draws a picture for the
        post, which carries it if PICTURES_EVERY has passed since the last one."""
        self.heard_at = self._clock()
        pending = self._pending
        kept = pending.picture if pending and picture is None else picture
        update = Update(
            self._mask(clean(message)), self._masked(fields), milestone, kept if self.wants_pictures else None
        )
        if not (pending and pending.milestone and not milestone):
            self._pending = update
        return self.tick()

    def opening_picture(self, picture: PictureMaker) -> None:
        """A picture for the run's first post (the position a job starts from), if pictures are on."""
        if self.wants_pictures:
            self._opening = picture

    def tick(self) -> Report:
        """Post the pending update if it is due now. Jobs that go quiet call this now and then."""
        now = self._clock()
        pending = self._pending
        report = self._tick(now)
        self._status.show(self.describe(now))
        if self._listeners:
            latest = f"{self.name}: {pending.message}" if pending else self.job.last_text
            for listener in self._listeners:
                listener(latest or f"{self.name} is running; no progress yet")
        return report

    def done(self, message: str = "", *, picture: Optional[PictureMaker] = None, **fields: object) -> Report:
        """Post the result, once per run, and mark the run finished; `picture` draws the result's picture."""
        return self._finish("done", message, fields, picture if self.wants_pictures else None)

    def failed(self, error: object, *, exit_status: int = 1, **fields: object) -> Report:
        """Post that the job failed (with `error` as the message), once per run, and mark the run
        finished. `exit_status`: the status the failure ends with (watch: its command's), which
        the end ping carries (HEALTHCHECK_URL/<status>)."""
        self.failure_status = exit_status
        return self._finish("failed", str(error), fields)

    def stop(self) -> None:
        """The job was stopped, not finished: post nothing, so the next start continues this run."""
        if not self.finished and not self._stopped:
            self._stopped = True
            log.info("%s: stopped; starting it again continues this run and its thread", self.name)

    @property
    def finished(self) -> bool:
        return self.job.finished_at is not None

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, exc_type: object, exc: Optional[BaseException], tb: object) -> None:
        """Leaving the block finishes the run: `done` unless the job called it; `failed` on an
        exception; a Ctrl-C, SystemExit or a closed output (`| head`: the terminal's business, not
        the job's) only stops it, to be continued."""
        if self.finished or self._stopped:
            return
        if exc is None:
            self.done()
        elif isinstance(exc, (KeyboardInterrupt, SystemExit, BrokenPipeError)):
            self.stop()
        else:
            self.failed(f"{type(exc).__name__}: {exc}")

    # -- the decision --------------------------------------------------------------------------

    def describe(self, now: datetime) -> str:
        """One line for the terminal: what the next post would say, and when it is due."""
        if self.finished:
            return f"{self.name}: finished ({self.job.outcome}), {_posts(self.job.posts)}"
        pending = self._pending
        if pending is None:
            return f"{self.name}: {_posts(self.job.posts)}; waiting for news"
        due = self._due_at(pending)
        if self._not_before and self._not_before > due:
            due = self._not_before
        when = "now" if due <= now else "in " + format_elapsed((due - now).total_seconds())
        # Unfitted: this runs on every update, and the terminal cuts the line to its width anyway.
        try:
            preview_text = tidy(self._templates.progress.format_map(self._fields(pending, now, pending.message)))
        except (KeyError, IndexError, ValueError, AttributeError):
            preview_text = pending.message  # posting falls back to the default template; say the news
        return f"{self.name}: {_posts(self.job.posts)}; next {when}: {preview_text}"

    def _due_at(self, pending: Update) -> datetime:
        last = self.job.last_post_at
        if last is None:
            return self.job.started_at + self._first_after
        return last + (self._milestone_every if pending.milestone else self._every)

    def _tick(self, now: datetime) -> Report:
        if self.finished:
            return Report("finished", "the run has finished")
        pending = self._pending
        if pending is None:
            return Report("idle", "no news since the last post")
        if pending.news == self.job.last_news:
            self._pending = None
            return Report("unchanged", "same news as the last post")
        if self._not_before and now < self._not_before:
            return Report("waiting", f"not before {self._not_before.astimezone():%H:%M}")
        last = self.job.last_post_at
        if last is None and now < self.job.started_at + self._first_after:
            # Milestones wait too: a job that ends before then costs one post, its result.
            return Report(
                "waiting",
                f"no progress post before the job has run {format_elapsed(self._first_after.total_seconds())}"
                " (PROGRESS_FIRST_AFTER)",
            )
        if last is None:
            reason = f"first progress post, after {format_elapsed((now - self.job.started_at).total_seconds())}"
        elif now - last >= self._every:
            reason = f"interval: {format_elapsed((now - last).total_seconds())} since the last post"
        elif pending.milestone and now - last >= self._milestone_every:
            reason = "milestone"
        else:
            return Report(
                "waiting", f"next post due in {format_elapsed((self._due_at(pending) - now).total_seconds())}"
            )

        text = self._text_for(pending, now)
        if text is None:
            self._pending = None
            return Report(Outcome.FAILED, "the text cannot be made to fit in a post")
        if text == self.job.last_text:
            self._pending = None
            return Report("unchanged", "same text as the last post")
        # Progress may use the cap but one: the result must always find room.
        capped = self._cap_reached(now, reserve=1 if self._max_posts > 1 else 0)
        if capped:
            return capped
        periodic = pending.picture is not None and (
            self._last_picture_at is None or now - self._last_picture_at >= self._picture_every
        )
        pictures = self._pictures_for(pending.picture if periodic else None)
        report = self._post(text, reason=reason, news=pending.news, final=False, pictures=pictures)
        if report.action in _SENT:
            self._pending = None
            if periodic:
                self._last_picture_at = now
        return report

    def _pictures_for(self, picture: Optional[PictureMaker]) -> List[Picture]:
        """The pictures a post carries, drawn now: the opening picture on the run's first post,
        then the job's own."""
        makers = [self._opening] if self._opening is not None and self.job.posts == 0 else []
        drawn = [make() for make in [*makers, *([picture] if picture else [])]]
        return [each for each in drawn if each is not None]  # a maker returns None when it has nothing to show

    def _finish(
        self, outcome: str, message: str, fields: Mapping[str, object], picture: Optional[PictureMaker] = None
    ) -> Report:
        if self.finished or self.job.final_sent:
            log.info("%s: the result of this run was already posted; not posting it again", self.name)
            if not self.finished:
                self._store.finish_job(self.job.id, outcome, at=self._clock())
                self.job = self._store.job(self.job.id)
            return Report("finished", "already posted")
        now = self._clock()
        update = Update(self._mask(clean(message)), self._masked(fields), milestone=False)
        text = self._render(outcome, update, now)
        if text is None:
            report = Report(Outcome.FAILED, "the result cannot be made to fit in a post")
        else:
            report = self._cap_reached(now, reserve=0) or self._post(
                text, reason="final", news=update.news, final=True, pictures=self._pictures_for(picture)
            )
        if report.action not in _SENT:
            log.error("%s: the result was not posted (%s): %s", self.name, report.reason, text or update.message)
        self._store.finish_job(self.job.id, outcome, at=self._clock())
        self.job = self._store.job(self.job.id)
        self._pending = None
        self._status.show(self.describe(now))
        return report

    def _cap_reached(self, now: datetime, *, reserve: int) -> Optional[Report]:
        capped = cap_reached(self._store, now, self._max_posts - reserve)
        if capped is None:
            return None
        self._not_before = capped.frees_at or now + RETRY_AFTER_FAILURE
        kept = " (one is kept for the result)" if reserve else ""
        reason = (
            f"{capped.reason(self._max_posts)}{kept}; next try after {self._not_before.astimezone():%Y-%m-%d %H:%M}"
        )
        log.warning("%s: not posting: %s", self.name, reason)
        return Report("capped", reason)

    def _post(self, text: str, *, reason: str, news: str, final: bool, pictures: Sequence[Picture] = ()) -> Report:
        """Hand one post to the delivery, for every network; the job moves on once it reached (or
        may have reached) any of them. A network that fails is logged and skipped for this post:
        its thread goes on with the next one."""
        doing = "dry run, would post" if self._dry_run else "posting"
        log.info("%s: %s (%s): %s", self.name, doing, reason, preview(text, 100))
        images = tuple(picture.attachment for picture in pictures)
        videos = tuple(image for image in images if image.is_video)
        images = videos[-1:] or images  # a video goes alone on a post: the animation, not the start's still
        replies = self.job.threads if self._thread else {}  # each network's thread of this run
        post = Expansion(text=text).post(where=self.name, pictures=images, reply_to=replies, unfit="")
        attempts = JobAttempts(self.job.id, self.name, news, final)
        reports: List[Report] = []
        errors: List[PostError] = []
        stopped: List[str] = []
        for sent in self._delivery.deliver(post, attempts):
            if sent.outcome == Outcome.OVER_BUDGET:
                log.warning("%s: %s", self.name, sent.note)
                stopped.append(sent.note or "")
            elif sent.reached:
                reports.append(self._sent(sent, text, reason))
            else:
                error = sent.error or PostError(  # too long there: the job's text is fitted to POST_TO's networks
                    f"too long for {sent.network.label}", kind=ErrorKind.TOO_LONG, exit_status=ExitStatus.DATA_ERROR
                )
                errors.append(error)
                if sent.outcome != Outcome.DUPLICATE:
                    log.error("%s: posting to %s failed (%s); the job carries on", self.name, sent.network.label, error)
        self.job = self._store.job(self.job.id)
        done = [report for report in reports if report.action in _SENT]
        if done:
            self._not_before = None
            if pictures:
                self._keep(pictures[-1])
            return next((report for report in done if report.action == Outcome.POSTED), done[0])
        if errors and all(exc.kind == ErrorKind.DUPLICATE for exc in errors):
            self._pending = None  # every network has this very text already: trying again cannot help
            log.warning("%s: the networks already have this text; skipped it (%s)", self.name, preview(text))
            return Report("unchanged", str(errors[0]), text)
        if stopped and not errors:  # every network's budget stopped it: none is whole again before next month
            from ..delivery.budget import next_month

            self._not_before = next_month(self._clock())
            return Report(Outcome.OVER_BUDGET, stopped[0], text)
        first = next((exc for exc in errors if exc.kind != ErrorKind.DUPLICATE), None)
        if first is None:  # no network to post to: nothing can change that before the next start
            return Report(Outcome.FAILED, "no network to post to (POST_TO)", text)
        retry_at = first.retry_at or self._clock() + min(RETRY_AFTER_FAILURE, self._every)
        self._not_before = max(retry_at, self._clock() + timedelta(seconds=1))
        return Report(Outcome.FAILED, str(first), text)

    def _keep(self, picture: Picture) -> None:
        """Keep a sent post's picture as the job's latest, for the status page. Best effort: a
        picture that cannot be kept is logged, and the job and its posts go on."""
        if self._keep_pictures_in is None:
            return
        try:
            keep(self._keep_pictures_in, self.job.id, picture.png, picture.alt)
        except (OSError, ValueError) as exc:  # ValueError: an alt text that cannot be written as UTF-8
            log.warning(
                "%s: could not keep the latest picture for the status page in %s (%s); the post went out anyway",
                self.name,
                self._keep_pictures_in,
                exc,
            )

    def _sent(self, sent: Sent, text: str, reason: str) -> Report:
        """The report of a post that reached, or may have reached, one network."""
        result = sent.result
        assert result is not None
        if sent.outcome == Outcome.UNCERTAIN:
            # Counted as posted and never sent again (at most once); the thread goes on under its root.
            log.warning(
                "%s: %s may or may not have posted it (%s): it counts as posted and will not be sent again; see %s",
                self.name,
                sent.network.label,
                result.uncertain,
                result.check_url or "the account's profile",
            )
            return Report(Outcome.UNCERTAIN, result.uncertain or "", text, None)
        if not self._dry_run:  # a dry run's made-up id is no post: the dry-run poster said what it would send
            log.info(
                "%s: posted %s",
                self.name,
                result.url or sent.network.post_url(result.post_id) or result.post_id,
            )
        return Report(Outcome.POSTED, reason, text, result.post_id)

    # -- text ----------------------------------------------------------------------------------

    def _text_for(self, update: Update, now: datetime) -> Optional[str]:
        return self._render("progress", update, now)

    def _fields(self, update: Update, now: datetime, message: Optional[str] = None) -> Dict[str, object]:
        fields: Dict[str, object] = dict(update.fields)
        fields.update(
            name=self.name,
            elapsed=format_elapsed((now - self.job.started_at).total_seconds()),
            posts=self.job.posts,
        )
        if message is not None:
            fields["message"] = message
        return fields

    def _masked(self, fields: Mapping[str, object]) -> Dict[str, object]:
        """A job's fields with the secrets masked in every text (watch's command and last line)."""
        return {name: self._mask(value) if isinstance(value, str) else value for name, value in fields.items()}

    def _render(self, kind: str, update: Update, now: datetime) -> Optional[str]:
        """The post's text; the message and fields were masked, and so is the whole (a template
        may put a field next to another), before it is fitted, so no cut leaves part of a key."""
        text = self._fill(kind, update, now)
        return (
            text
            if text is None or not self._mask.contains(text)
            else fit("{message}", {}, self._mask(text), self._networks)
        )

    def _fill(self, kind: str, update: Update, now: datetime) -> Optional[str]:
        fields = self._fields(update, now)
        template = getattr(self._templates, kind)
        try:
            return fit(template, fields, update.message, self._networks)
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            # The template names a field this update lacks, or formats it wrongly: say so, use the default.
            log.warning(
                "%s: cannot fill the template %r (%s: %s); using the default",
                self.name,
                template,
                type(exc).__name__,
                exc,
            )
            return fit(getattr(Templates(), kind), fields, update.message, self._networks)


def _posts(count: int) -> str:
    return plural(count, "post")


def slug(name: str) -> str:
    """`name` as part of a file name in the state folder (job locks, checkpoints)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:60] or "job"
