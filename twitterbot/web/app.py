"""The status page as a Flask application: one blueprint, two views, read-only.

`create_app` is the application factory: it takes the settings (and, for tests, a clock and a
reader) and returns a WSGI app that waitress serves (`server.serve`). Every request reads the
history afresh; nothing is cached but where the runs come from (`nextrun`, re-checked every
`PROBE_EVERY`)::

    app = create_app(config)                      # WEB_PASSWORD set: every request needs it
    app.test_client().get("/status.json").json["cap"]

Each job's latest posted picture, which the reporter keeps in the state folder
(`pictures/kept.py`), is served read-only at `/jobs/<id>/picture.png`.

Safety, in one place: GET and HEAD only (anything else is 405), HTTP Basic auth compared in
constant time when a password is set (an address that keeps giving a wrong one is answered 429
for a while, `guard.FailedTries`), only this machine's names in `Host` when the page is on
loopback without a password (`guard.local_host`: no DNS rebinding), every value shown passes a scrubber that masks each secret
in every encoding (raw, URL, JSON, base64), Jinja escapes whatever a user wrote, and the headers
forbid scripts, framing and MIME sniffing.
"""

from __future__ import annotations

import base64
import hmac
import logging
import math
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from flask import Blueprint, Flask, Response, abort, current_app, render_template, request, url_for

from ..pictures.kept import kept_alt, kept_png
from ..posting.links import label_of
from ..settings.loading import Config
from ..settings.secrets import MASK, Scrubber
from ..unattended import TWEET_TIMEZONE
from ..wording import plural
from .data import Status, read_status
from .guard import FailedTries, local_host
from .jobs import JobPicture, JobView
from .links import safe_href
from .nextrun import NextRun, next_run
from .tweetsfile import TweetsFile

__all__ = ["create_app", "PROBE_EVERY", "REFRESH_SECONDS", "SECURITY_HEADERS"]

log = logging.getLogger(__name__)

REFRESH_SECONDS = 60  # the page reloads itself this often (a meta refresh: no script)
PROBE_EVERY = timedelta(seconds=60)  # how often the daemon/timer/crontab look is made again
REALM = "twitterbot"

SECURITY_HEADERS = {
    # No script at all, inline or not; styles and pictures from this server only; no forms, no framing.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # a link to a post must not tell the network where the page lives
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

status_page = Blueprint("status", __name__, template_folder="templates", static_folder="static")


def create_app(
    config: Config,
    *,
    password: Optional[str] = None,
    local_only: bool = False,
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    reader: Callable[..., Status] = read_status,
    probe: Callable[..., NextRun] = next_run,
    picture_for: Optional[Callable[[JobView], Optional[JobPicture]]] = None,
    seconds: Callable[[], float] = time.monotonic,
) -> Flask:
    """The status page's WSGI application for `config`. `password` (WEB_PASSWORD) makes every
    request need HTTP Basic auth with it (any user name); `local_only` answers only requests whose
    `Host` is a loopback name (the page listens on loopback without a password); `picture_for`
    gives a job's latest picture's address and alt text (by default the one the reporter kept in
    the state folder); `clock`, `reader`, `probe` and `seconds` (the wrong passwords' clock) are
    injected by tests."""
    from ..state.clock import zone_for

    app = Flask(__name__, static_folder=None)  # the blueprint serves the one stylesheet
    secrets = [*config.secrets(), *([password] if password else [])]
    scrubber = Scrubber(_every_form(secrets))
    app.extensions["twitterbot"] = _Page(
        config=config,
        password=password,
        local_only=local_only,
        tries=FailedTries(clock=seconds),
        clock=clock,
        reader=reader,
        probe=_Remembered(probe, PROBE_EVERY),
        tweets=TweetsFile(),
        picture_for=picture_for or _kept_picture_for(config.state.pictures),
        pictures=config.state.pictures,
        scrub=scrubber,
    )
    app.jinja_env.autoescape = True  # every template, whatever its name
    app.jinja_env.finalize = lambda value: scrubber(value) if isinstance(value, str) else value
    zone = zone_for(config[TWEET_TIMEZONE])
    app.jinja_env.filters["when"] = lambda moment: _when(moment, clock(), zone)
    app.jinja_env.filters["ago"] = lambda moment: _ago(moment, clock())
    app.jinja_env.filters["href"] = safe_href
    app.jinja_env.filters["network"] = lambda name: label_of(config, name)
    app.jinja_env.filters["capitalize_first"] = lambda text: text[:1].upper() + text[1:]
    app.jinja_env.globals["plural"] = plural
    app.before_request(_guard)
    app.after_request(_headers)
    app.register_error_handler(500, _failed)
    app.register_blueprint(status_page)
    return app


class _Page:
    """What the views need, kept on the app (`app.extensions["twitterbot"]`), not in globals."""

    def __init__(self, **parts: object) -> None:
        self.__dict__.update(parts)

    def status(self) -> Status:
        now = self.clock()  # type: ignore[attr-defined]
        return self.reader(  # type: ignore[attr-defined]
            self.config,  # type: ignore[attr-defined]
            now=now,
            probe=self.probe,  # type: ignore[attr-defined]
            tweets=self.tweets,  # type: ignore[attr-defined]
            picture_for=self.picture_for,  # type: ignore[attr-defined]
        )


class _Remembered:
    """`probe`'s answer, kept for `every` and while its time is still ahead: looking for the daemon,
    the timer and the crontab spawns processes, and they change only when the owner installs one."""

    def __init__(self, probe: Callable[..., NextRun], every: timedelta) -> None:
        self._probe, self._every = probe, every
        self._kept: Optional[Tuple[datetime, NextRun]] = None
        self._lock = threading.Lock()

    def __call__(self, config: Config, *, now: datetime) -> NextRun:
        with self._lock:
            if self._kept:
                at, answer = self._kept
                fresh = timedelta(0) <= now - at < self._every
                if fresh and (answer.at is None or answer.at > now):
                    return answer
            answer = self._probe(config, now=now)
            self._kept = (now, answer)
            return answer


def _page() -> _Page:
    return current_app.extensions["twitterbot"]


@status_page.route("/", methods=["GET"], provide_automatic_options=False)
def index() -> Response:
    status = _page().status()
    html = render_template("status.html", status=status, refresh=REFRESH_SECONDS)
    return Response(html, mimetype="text/html")


@status_page.route("/status.json", methods=["GET"], provide_automatic_options=False)
def status_json() -> Response:
    page = _page()
    masked = _masked(page.status().as_dict(), page.scrub)
    return current_app.json.response(masked)


@status_page.route("/jobs/<int:job_id>/picture.png", methods=["GET"], provide_automatic_options=False)
def job_picture(job_id: int) -> Response:
    """A job's latest posted picture, as the reporter kept it; 404 when none is kept."""
    png = kept_png(_page().pictures, job_id)  # type: ignore[attr-defined]
    if png is None:
        abort(404)
    return Response(png, mimetype="image/png")


def _kept_picture_for(folder: Path) -> Callable[[JobView], Optional[JobPicture]]:
    """The default `picture_for`: the job's kept picture, served by `job_picture`, with its alt text."""

    def picture_for(job: JobView) -> Optional[JobPicture]:
        alt = kept_alt(folder, job.id)
        return None if alt is None else JobPicture(url_for("status.job_picture", job_id=job.id), alt)

    return picture_for


def _guard() -> Optional[Response]:
    """Before every request: the `Host` (on loopback without a password), the password (when
    set), then the method. Nothing here changes state but the count of wrong passwords."""
    page = _page()
    if page.local_only and not local_host(request.environ.get("HTTP_HOST", "")):  # type: ignore[attr-defined]
        return Response(
            "This page answers only to localhost, 127.0.0.1 and [::1]: open it by one of those names"
            " (set WEB_PASSWORD to serve it under another).\n",
            status=403,
            mimetype="text/plain",
        )
    if page.password is not None:
        refused = _password_refused(page.password, page.tries)  # type: ignore[attr-defined]
        if refused is not None:
            return refused
    if request.method not in ("GET", "HEAD"):
        abort(405)
    return None


def _password_refused(password: str, tries: FailedTries) -> Optional[Response]:
    """None when the request has the password; else a 401 that asks for it, or a 429 while its
    address waits after too many wrong ones (its password is not even looked at then)."""
    address = request.remote_addr or ""
    wait = tries.wait(address)
    if wait > 0:
        return Response(
            "Too many wrong passwords from this address: try again later.\n",
            status=429,
            mimetype="text/plain",
            headers={"Retry-After": str(math.ceil(wait))},
        )
    given = _given_password()
    if given is not None and hmac.compare_digest(given.encode("utf-8"), password.encode("utf-8")):
        tries.succeeded(address)
        return None
    if given is not None:
        tries.failed(address)
    return Response(
        "This page needs the password (WEB_PASSWORD).\n",
        status=401,
        mimetype="text/plain",
        headers={"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'},
    )


def _given_password() -> Optional[str]:
    """The password of the request's HTTP Basic auth (any user name); None when it sends none,
    "" for one it mangled (a wrong password all the same)."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return ""
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ""
    _, colon, given = decoded.partition(":")
    return given if colon else ""


def _headers(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    if response.status_code == 405:
        response.headers["Allow"] = "GET, HEAD"
    return response


def _failed(error: Exception) -> Response:
    """A bug while making the page: a short page that says where to look, never a traceback."""
    return Response(
        "The status page failed to read the bot's state; the server's log (journalctl) has the details.\n",
        status=500,
        mimetype="text/plain",
    )


def _every_form(secrets: Iterable[str]) -> List[str]:
    """Each secret and its base64 forms (standard and URL-safe, with and without padding); the
    scrubber adds the URL and JSON forms."""
    forms = []
    for secret in secrets:
        if not secret:
            continue
        forms.append(secret)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(secret.encode("utf-8", "surrogatepass")).decode("ascii")
            forms += [encoded, encoded.rstrip("=")]
    return forms


def _masked(value: object, scrub: Scrubber) -> object:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(key)): _masked(item, scrub) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, scrub) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and scrub.contains(str(value)):
        return MASK
    return value


def _when(moment: Optional[datetime], now: datetime, zone: object) -> str:
    """A time as the owner reads it: the time of day in TWEET_TIMEZONE, with the day unless today."""
    if moment is None:
        return ""
    local, today = moment.astimezone(zone), now.astimezone(zone)  # type: ignore[arg-type]
    if local.date() == today.date():
        return f"{local:%H:%M}"
    if abs((local.date() - today.date()).days) < 7:
        return f"{local:%a %H:%M}"
    return f"{local:%d %b %Y %H:%M}"


def _ago(moment: Optional[datetime], now: datetime) -> str:
    """ "5 min ago", "in 2 h": how far `moment` is from now, roughly."""
    if moment is None:
        return ""
    seconds = (moment - now).total_seconds()
    span = abs(seconds)
    units: Dict[str, float] = {"d": 86400, "h": 3600, "min": 60}
    text = "now"
    for unit, size in units.items():
        if span >= size:
            text = f"{int(span // size)} {unit}"
            break
    else:
        return "just now" if seconds <= 0 else "in under a minute"
    return f"in {text}" if seconds > 0 else f"{text} ago"
