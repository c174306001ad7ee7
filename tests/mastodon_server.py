"""Local Mastodon servers for tests: the `mastodon-mock` package (a real Mastodon-shaped API), and a
small loopback emulator for what the mock cannot do. Nothing here touches the internet.

`mastodon_mock` (fixture): mastodon-mock's FastAPI server, started once per test session on
127.0.0.1 and reset before each test. It keeps real state (accounts alice/bob/carol, statuses,
threads, Idempotency-Key replay), refuses a bad token with 401, refuses more than 500 characters
with 422 and injects faults on request (`MockInstance.fault`: any status with any body, a 429 with
X-RateLimit-* headers, latency, a garbled body). It cannot: count a link as 23 (it counts every
code point), refuse a reply to a status that does not exist, advertise another length limit, drop
a connection, or make a status and then lose the reply.

`mastodon_emulator` (fixture): `MastodonEmulator`, a stdlib HTTP server that checks what a real
server checks (the Bearer token, the form or JSON fields, the length as Mastodon counts it against
its own limit, the visibility, the status replied to, Idempotency-Key reuse per account for an
hour) and answers in Mastodon's shapes. Tests script the faults with `fail_next`. It takes
pictures too: ``POST /api/v2/media`` (multipart: the file and its ``description``), refused with
Mastodon's 422s when the type is not one it takes, the file is over its ``image_size_limit`` or
the description over 1,500 characters; ``media_ids`` on a status; its limits in
``/api/v2/instance``. `fail_next_upload` scripts the uploads' faults. A video (MP4, WebM, MOV,
within ``video_size_limit``) is processed asynchronously as Mastodon does: the upload answers 202
with no url, ``GET /api/v1/media/:id`` answers 206 `processing_polls` times then 200 with its url
(422 with Mastodon's processing error when `processing_fails`), and a status naming a video not yet
processed is refused with Mastodon's 422. It lists the account's
statuses (``GET /api/v1/accounts/:id/statuses``, newest first, at most 40), and `answer_next`
makes a read answer anything at all (a malformed list, an endless one). It serves the account's
notifications (``GET /api/v1/notifications``: ``types[]``/``exclude_types[]``, ``max_id``,
``since_id``, ``min_id`` (the page just after it), ``limit`` (40 by default, at most 80) and
Mastodon's ``Link`` header), and `mention` adds one: a status by another account (local, or
remote with a domain; its ``bot`` flag and ``note``), with its visibility and the status it
answers. The token's `scopes` are checked as Mastodon checks them (``read`` covers
``read:notifications``; a missing one is a 403).

Both give `env()`: the settings that point the bot at them.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any, Deque, Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

import pytest
from loopback import Answer, LoopbackServer, multipart_fields, picture_type

TOKEN = "emuMastodonToken0123456789AbCdEfGhIjK"  # made up: 43 characters like a real one
FIRST_ID = 113456789012345678  # Mastodon ids are snowflake-like; later statuses count up

# Scripted replies (status, body): what Mastodon sends in each case.
ERRORS: Dict[str, Tuple[int, Any]] = {
    "unauthorized": (401, {"error": "The access token is invalid"}),
    "revoked": (401, {"error": "The access token was revoked"}),
    "suspended": (403, {"error": "Your login is currently disabled"}),
    "scope": (403, {"error": "This action is outside the authorized scopes"}),
    "too_long": (422, {"error": "Validation failed: Text character limit of 500 exceeded"}),
    "rate_limit": (429, {"error": "Too many requests"}),
    "server_error": (503, "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"),
}
# Failures that are not a reply. drop: close the connection without reading on or posting;
# slow: answer (and post) only after `slow_seconds`; posted_then_drop: make the status, then close
# without a reply; posted_then_slow: make it, then reply after `slow_seconds`; posted_then_garble:
# make it, then answer 200 with a body that is not JSON; posted_then_bad_header: make it, then
# answer 200 with an X-RateLimit-Reset that is no time (as a proxy might); ok: answer as usual (to
# script a later request's failure).
BEHAVIOURS = {
    "drop",
    "slow",
    "posted_then_drop",
    "posted_then_slow",
    "posted_then_garble",
    "posted_then_bad_header",
    "ok",
}

_VISIBILITIES = {"public", "unlisted", "private", "direct"}
# Deliberately simpler than the code under test (twitterbot.networks.mastodon): a link is
# http(s):// and what follows up to a space; a remote mention is @user@domain.
_LINK = re.compile(r"https?://\S+")
_REMOTE_MENTION = re.compile(r"(?<![=/\w])@([a-z0-9_]+)@[\w.-]*\w", re.IGNORECASE)


def rendered(text: str, domain: str) -> str:
    """`text` as Mastodon's formatter writes a status's HTML (simplified): escaped, paragraphs on
    blank lines, a line break as ``<br />``, each ``@user`` an h-card link."""

    def mention(found: re.Match[str]) -> str:
        user, server = found.group(1), found.group(2) or domain
        return (
            f'<span class="h-card" translate="no"><a href="https://{server}/@{user}" class="u-url mention">'
            f"@<span>{user}</span></a></span>"
        )

    escaped = (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )
    linked = re.sub(r"(?<![\w/])@(\w+)(?:@([\w.-]*\w))?", mention, escaped)
    return "".join(f"<p>{part.replace(chr(10), '<br />')}</p>" for part in linked.split("\n\n"))


def mastodon_count(text: str) -> int:
    """What Mastodon counts (graphemes, a link as 23, @user@domain as @user), done independently."""
    from uniseg.graphemecluster import grapheme_clusters

    text = _REMOTE_MENTION.sub(r"@\1", _LINK.sub("x" * 23, text))
    return sum(1 for _ in grapheme_clusters(text))


ACCOUNT_ID = "109876543210987654"  # the account the token belongs to
FIRST_ACCOUNT_ID = 109876543210990001  # other accounts' ids count up from it
FIRST_NOTIFICATION_ID = 3000  # Mastodon's notification ids are a plain sequence
# Each endpoint's scope, as Mastodon's controllers declare it (doorkeeper_authorize!).
SCOPES = {
    ("GET", "/api/v1/accounts/verify_credentials"): "read:accounts",
    ("GET", "statuses"): "read:statuses",
    ("GET", "/api/v1/notifications"): "read:notifications",
    ("POST", "/api/v1/statuses"): "write:statuses",
    ("POST", "/api/v2/media"): "write:media",
    ("GET", "media"): "write:media",
}
# What Mastodon's MediaController says of an upload whose processing failed (GET /api/v1/media/:id).
PROCESSING_ERROR = "Error processing thumbnail for uploaded media"
# ... and PostStatusService of a status naming an upload still being processed.
NOT_PROCESSED = "Cannot attach files that have not finished processing. Try again in a moment!"


def video_type(data: bytes) -> Optional[str]:
    """The video type Mastodon's Paperclip would find in an upload (MP4/MOV, WebM), or None."""
    if data[4:8] == b"ftyp":
        return "video/quicktime" if data[8:12] == b"qt  " else "video/mp4"
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    return None


@dataclass
class Status:
    id: str
    text: str
    visibility: str
    in_reply_to_id: Optional[str]
    created_at: datetime
    media: List[Dict[str, Any]] = field(default_factory=list)
    spoiler_text: str = ""
    language: Optional[str] = None
    account_id: str = ACCOUNT_ID  # the account's own; another's for a mention (`MastodonEmulator.mention`)
    in_reply_to_account_id: Optional[str] = None
    content: Optional[str] = None  # its HTML, when a test gives it; else made from `text`
    sensitive: bool = False


@dataclass
class Account:
    """Another account that mentions the bot's: local to the server (``domain`` None) or remote."""

    id: str
    username: str
    domain: Optional[str] = None
    bot: bool = False
    note: str = ""  # the bio, HTML as Mastodon keeps it

    @property
    def acct(self) -> str:
        return f"{self.username}@{self.domain}" if self.domain else self.username


@dataclass
class Notification:
    id: str
    type: str
    account_id: str
    status_id: Optional[str]
    created_at: datetime


@dataclass
class Seen:
    """One request as the emulator received it."""

    method: str
    path: str
    status: int
    fields: Dict[str, Any]
    headers: Dict[str, str]


@dataclass
class MastodonEmulator:
    """Start with `start()` (or use as a context manager); point MASTODON_INSTANCE at `url`.

    `instance_api` says which instance endpoints answer: "v2" (Mastodon 4+, both), "v1" (an older
    server: v2 is 404), "legacy" (v1 with Pleroma's max_toot_chars), "none" (both fail)."""

    token: str = TOKEN
    scopes: Tuple[str, ...] = ("read", "write")  # the token's scopes: "read" covers every read:*
    username: str = "pibot"
    domain: str = "example.social"
    max_characters: int = 500
    instance_api: str = "v2"
    slow_seconds: float = 3.0
    idempotency_ttl: float = 3600.0
    statuses: List[Status] = field(default_factory=list)
    media: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # uploads by id: data, mime, description
    image_size_limit: int = 16 * 1024 * 1024  # Mastodon 4's default
    image_matrix_limit: int = 33_177_600
    supported_mime_types: Tuple[str, ...] = (
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/webp",
        "video/mp4",
        "video/webm",
        "video/quicktime",
    )
    video_size_limit: int = 99 * 1024 * 1024  # Mastodon 4's default
    video_matrix_limit: int = 8_294_400
    # A video is processed asynchronously (POST /api/v2/media answers 202, url null): GET
    # /api/v1/media/:id answers 206 this many times, then 200 with its url, or 422 when it fails.
    processing_polls: int = 2
    processing_fails: bool = False
    seen: List[Seen] = field(default_factory=list)
    others: List[Status] = field(default_factory=list)  # other accounts' statuses (`mention`)
    accounts: Dict[str, Account] = field(default_factory=dict)  # other accounts, by id
    notifications: List[Notification] = field(default_factory=list)
    _upload_script: Deque[str] = field(default_factory=deque)
    _keys: Dict[str, Tuple[str, float]] = field(default_factory=dict)
    _script: Deque[str] = field(default_factory=deque)
    _answers: Dict[str, Deque[Answer]] = field(default_factory=dict)  # scripted by `answer_next`
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> MastodonEmulator:
        emulator = self

        class Handler(_Handler):
            emu = emulator

        self._server = LoopbackServer(Handler).start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> MastodonEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return self._server.url

    def env(self) -> Dict[str, str]:
        return {"MASTODON_INSTANCE": self.url, "MASTODON_ACCESS_TOKEN": self.token}

    def fail_next(self, *kinds: str) -> None:
        """Answer the next POST /api/v1/statuses with these failures, in order."""
        for kind in kinds:
            if kind not in ERRORS and kind not in BEHAVIOURS:
                raise ValueError(f"unknown failure {kind}")
            self._script.append(kind)

    def fail_next_upload(self, *kinds: str) -> None:
        """Answer the next POST /api/v2/media with these failures, in order."""
        for kind in kinds:
            if kind not in ERRORS and kind not in BEHAVIOURS:
                raise ValueError(f"unknown failure {kind}")
            self._upload_script.append(kind)

    def answer_next(self, route: str, *answers: Answer) -> None:
        """Answer the next reads of `route` ("statuses": the account's statuses, "me":
        ``verify_credentials``, "notifications") with these, in order, once the token is checked."""
        if route not in ("statuses", "me", "notifications"):
            raise ValueError(f"unknown route {route}")
        self._answers.setdefault(route, deque()).extend(answers)

    def _scripted(self, route: str) -> Optional[Answer]:
        queue = self._answers.get(route)
        return queue.popleft() if queue else None

    @property
    def texts(self) -> List[str]:
        return [status.text for status in self.statuses]

    def status_url(self, status_id: str) -> str:
        return f"https://{self.domain}/@{self.username}/{status_id}"

    @property
    def reads(self) -> int:
        """The reads the server answered (every GET but the instance's own description)."""
        return sum(1 for seen in self.seen if seen.method == "GET" and "/instance" not in seen.path)

    def account(self, username: str, *, domain: Optional[str] = None, bot: bool = False, note: str = "") -> Account:
        """Another account (made once per username and domain): `domain` None is one of this server's."""
        with self._lock:
            for known in self.accounts.values():
                if (known.username, known.domain) == (username, domain):
                    return known
            made = Account(str(FIRST_ACCOUNT_ID + len(self.accounts)), username, domain, bot, note)
            self.accounts[made.id] = made
            return made

    def mention(
        self,
        text: str,
        *,
        by: str = "ada",
        domain: Optional[str] = None,
        visibility: str = "public",
        reply_to: Optional[str] = None,
        content: Optional[str] = None,
        ago: float = 0.0,
        bot: bool = False,
        note: str = "",
    ) -> Status:
        """A status by `by` (of `domain`, None: this server; the account made with `bot` and `note`
        the first time) that mentions the account, made `ago` seconds ago, answering status
        `reply_to` if given, its HTML `content` if given (else `text` rendered as Mastodon does);
        and the mention notification the server gives the account. `by` the account's own
        username: a status of its own (a real server sends no notification for it: this one does,
        so a test sees it left out). Add mentions oldest first: ids count up."""
        own = by == self.username and domain is None
        author = ACCOUNT_ID if own else self.account(by, domain=domain, bot=bot, note=note).id
        at = datetime.now(timezone.utc) - timedelta(seconds=ago)
        with self._lock:
            status = Status(self._next_id(), text, visibility, reply_to, at, account_id=author, content=content)
            answered = next((each for each in self.statuses + self.others if each.id == reply_to), None)
            status.in_reply_to_account_id = answered.account_id if answered else None
            (self.statuses if own else self.others).append(status)
            notification = Notification(
                str(FIRST_NOTIFICATION_ID + len(self.notifications)), "mention", author, status.id, at
            )
            self.notifications.append(notification)
        return status

    def _next_id(self) -> str:
        return str(FIRST_ID + len(self.statuses) + len(self.others))

    def _create(self, text: str, visibility: str, reply_to: Optional[str], key: Optional[str]) -> Status:
        with self._lock:
            status = Status(self._next_id(), text, visibility, reply_to, datetime.now(timezone.utc))
            answered = next((each for each in self.statuses + self.others if each.id == reply_to), None)
            status.in_reply_to_account_id = answered.account_id if answered else None
            self.statuses.append(status)
            if key:
                # PostStatusService: redis.setex("idempotency:status:<account>:<key>", 3600, id)
                self._keys[key] = (status.id, time.monotonic())
            return status

    def _replayed(self, key: Optional[str]) -> Optional[Status]:
        with self._lock:
            if not key or key not in self._keys:
                return None
            status_id, at = self._keys[key]
            if time.monotonic() - at > self.idempotency_ttl:
                del self._keys[key]
                return None
            return next(status for status in self.statuses if status.id == status_id)


class _Handler(BaseHTTPRequestHandler):
    emu: MastodonEmulator
    protocol_version = "HTTP/1.1"
    server_version = "Mastodon"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path.rstrip("/")
        self._request = (method, path, self._fields(raw))
        emu = self.emu
        if path == "/api/v2/instance" and method == "GET":
            if emu.instance_api != "v2":
                return self._error(404, "Record not found")
            return self._json(200, self._instance(2))
        if path == "/api/v1/instance" and method == "GET":
            if emu.instance_api == "none":
                return self._error(503, "Service Unavailable")
            return self._json(200, self._instance(1))
        if not self._authorized():
            return self._error(401, "The access token is invalid")
        route = "statuses" if re.fullmatch(r"/api/v1/accounts/[^/]+/statuses", path) else path
        route = "media" if re.fullmatch(r"/api/v1/media/[^/]+", path) else route
        needed = SCOPES.get((method, route))
        if needed and needed not in emu.scopes and needed.split(":")[0] not in emu.scopes:
            return self._json(403, {"error": "This action is outside the authorized scopes"})
        if path == "/api/v1/notifications" and method == "GET":
            answer = emu._scripted("notifications")
            return self._answer(answer) if answer else self._notifications()
        if path == "/api/v1/accounts/verify_credentials" and method == "GET":
            answer = emu._scripted("me")
            return self._answer(answer) if answer else self._json(200, self._account())
        if re.fullmatch(r"/api/v1/accounts/[^/]+/statuses", path) and method == "GET":
            answer = emu._scripted("statuses")
            return self._answer(answer) if answer else self._statuses(path.split("/")[4])
        if path == "/api/v1/statuses" and method == "POST":
            return self._post_status()
        if path == "/api/v2/media" and method == "POST":
            return self._post_media(raw)
        if route == "media" and method == "GET":
            return self._get_media(path.rsplit("/", 1)[1])
        return self._error(404, "Record not found")

    def _get_media(self, media_id: str) -> int:
        """GET /api/v1/media/:id as Mastodon's MediaController answers it: 422 when processing
        failed, 206 (url null) while it runs, 200 with the url once done."""
        emu = self.emu
        with emu._lock:
            media = emu.media.get(media_id)
            if media is None:
                return self._error(404, "Record not found")
            if media.get("failed"):
                return self._error(422, PROCESSING_ERROR)
            media["polls"] = media.get("polls", 0) + 1
            if media.get("polls_left", 0) > 0:
                media["polls_left"] -= 1
                return self._json(206, self._media(media_id, media, processed=False))
            media["processed"] = True
        return self._json(200, self._media(media_id, media, processed=True))

    def _media(self, media_id: str, media: Dict[str, Any], *, processed: bool) -> Dict[str, Any]:
        kind = "video" if media["mime"].startswith("video/") else "gifv" if media["mime"] == "image/gif" else "image"
        base = f"https://{self.emu.domain}/system/media_attachments/files/{media_id}"
        return {
            "id": media_id,
            "type": kind,
            "url": f"{base}/original/{'video.mp4' if kind == 'video' else 'picture'}" if processed else None,
            "preview_url": f"{base}/small/picture",
            "remote_url": None,
            "meta": {},
            "description": media["description"] or None,
            "blurhash": None,
        }

    def _post_media(self, raw: bytes) -> int:
        """One upload, checked as Mastodon's MediaAttachment validations check it."""
        emu = self.emu
        scripted = emu._upload_script.popleft() if emu._upload_script else None
        if scripted == "drop":
            return self._drop()
        if scripted in ERRORS:
            status, body = ERRORS[scripted]
            return self._json(status, body, rate_limited=scripted == "rate_limit")
        content_type = self.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            return self._error(422, "Validation failed: File can't be blank")
        fields = multipart_fields(content_type, raw)
        if "file" not in fields:
            return self._error(422, "Validation failed: File can't be blank")
        data = fields["file"][0]
        description = fields.get("description", (b"", None))[0].decode()
        mime = picture_type(data) or video_type(data)
        if mime not in emu.supported_mime_types:
            return self._error(422, "Validation failed: File content type is invalid, File file type is invalid")
        if mime.startswith("video/"):
            return self._post_video(data, mime, description, scripted)
        if len(data) > emu.image_size_limit:
            return self._error(
                422, f"Validation failed: File file size must be less than {emu.image_size_limit // (1024 * 1024)} MB"
            )
        if len(description) > 1500:
            return self._error(422, "Validation failed: Description is too long (maximum is 1500 characters)")
        with emu._lock:
            media_id = str(FIRST_ID + 500_000 + len(emu.media))
            emu.media[media_id] = {"data": data, "mime": mime, "description": description}
        if scripted == "posted_then_drop":
            return self._drop()
        return self._json(
            200,
            {
                "id": media_id,
                "type": "gifv" if mime == "image/gif" else "image",
                "url": f"https://{emu.domain}/system/media_attachments/files/{media_id}/original/picture",
                "preview_url": f"https://{emu.domain}/system/media_attachments/files/{media_id}/small/picture",
                "remote_url": None,
                "meta": {},
                "description": description or None,
                "blurhash": None,
            },
        )

    def _post_video(self, data: bytes, mime: str, description: str, scripted: Optional[str]) -> int:
        """A video upload: within video_size_limit, then 202 with no url (processed later)."""
        emu = self.emu
        if len(data) > emu.video_size_limit:
            return self._error(
                422, f"Validation failed: File file size must be less than {emu.video_size_limit // (1024 * 1024)} MB"
            )
        if len(description) > 1500:
            return self._error(422, "Validation failed: Description is too long (maximum is 1500 characters)")
        with emu._lock:
            media_id = str(FIRST_ID + 500_000 + len(emu.media))
            media = {"data": data, "mime": mime, "description": description}
            media.update(polls_left=emu.processing_polls, failed=emu.processing_fails, processed=False)
            emu.media[media_id] = media
        if scripted == "posted_then_drop":
            return self._drop()
        return self._json(202, self._media(media_id, media, processed=False))

    def _fields(self, raw: bytes) -> Dict[str, Any]:
        """The request's parameters: a form (Mastodon.py's default) or JSON, as Rails reads both."""
        content_type = self.headers.get("Content-Type") or ""
        if not raw:
            return {}
        if content_type.startswith("application/json"):
            return json.loads(raw)
        if content_type.startswith("application/x-www-form-urlencoded"):
            # Rails reads name[] as a list (media_ids[]), any other name's last value.
            return {
                name[:-2] if name.endswith("[]") else name: values if name.endswith("[]") else values[-1]
                for name, values in parse_qs(raw.decode(), keep_blank_values=True).items()
            }
        return {"_unreadable": content_type}

    def _authorized(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {self.emu.token}"

    def _post_status(self) -> int:
        emu = self.emu
        _, _, fields = self._request
        scripted = emu._script.popleft() if emu._script else None
        if scripted == "drop":
            return self._drop()
        if scripted == "slow":
            time.sleep(emu.slow_seconds)
        if scripted in ERRORS:
            status, body = ERRORS[scripted]
            return self._json(status, body, rate_limited=scripted == "rate_limit")

        key = self.headers.get("Idempotency-Key")
        replayed = emu._replayed(key)
        if replayed is not None:  # the first try's status, not a second one
            return self._json(200, self._status(replayed))

        text = fields.get("status") or ""
        if not isinstance(text, str) or not (text.strip() or fields.get("media_ids")):  # a picture may go alone
            return self._error(422, "Validation failed: Text can't be blank")
        spoiler = fields.get("spoiler_text") or ""
        if mastodon_count(text) + mastodon_count(spoiler) > emu.max_characters:  # Mastodon counts both
            return self._error(422, f"Validation failed: Text character limit of {emu.max_characters} exceeded")
        visibility = fields.get("visibility") or "public"
        if visibility not in _VISIBILITIES:
            return self._error(422, f"'{visibility}' is not a valid visibility")
        reply_to = fields.get("in_reply_to_id") or None
        if reply_to is not None and str(reply_to) not in {status.id for status in emu.statuses + emu.others}:
            return self._error(404, "The post you are trying to reply to does not appear to exist.")

        media_ids = fields.get("media_ids") or []
        if len(media_ids) > 4:
            return self._error(422, "Validation failed: Media attachments too many")
        unknown = [media_id for media_id in media_ids if str(media_id) not in emu.media]
        if unknown:
            return self._error(422, f"Validation failed: Media attachments {unknown} not found")
        if any(emu.media[str(media_id)].get("processed") is False for media_id in media_ids):
            return self._error(422, NOT_PROCESSED)
        status = emu._create(text, visibility, None if reply_to is None else str(reply_to), key)
        status.media = [emu.media[str(media_id)] for media_id in media_ids]
        status.spoiler_text, status.language = spoiler, fields.get("language") or None
        status.sensitive = str(fields.get("sensitive", "")).lower() in ("true", "1")
        if scripted == "posted_then_drop":
            return self._drop()
        if scripted == "posted_then_slow":
            time.sleep(emu.slow_seconds)
        if scripted == "posted_then_garble":
            return self._send(200, b"<html>Bad Gateway</html>", "application/json; charset=utf-8")
        if scripted == "posted_then_bad_header":
            data = json.dumps(self._status(status)).encode()
            return self._send(200, data, "application/json; charset=utf-8", {"X-RateLimit-Reset": "soon"})
        return self._json(200, self._status(status))

    def _statuses(self, account_id: str) -> int:
        """The account's statuses, newest first: at most ``limit`` (Mastodon's default 20, most 40)."""
        if account_id != self._account()["id"]:
            return self._error(404, "Record not found")
        try:
            limit = int(parse_qs(urlsplit(self.path).query).get("limit", ["20"])[0])
        except ValueError:
            limit = 20
        newest = list(reversed(self.emu.statuses))[: max(1, min(limit, 40))]
        return self._json(200, [self._status(status) for status in newest])

    def _notifications(self) -> int:
        """The account's notifications, newest first, paged as Mastodon pages them: ``max_id``
        (older than), ``since_id`` (newer than, the newest first), ``min_id`` (the page just newer
        than it), ``limit`` (40 by default, at most 80), ``types[]``/``exclude_types[]``; the
        ``Link`` header's next (``max_id``) and prev (``min_id``) pages keep the filters."""
        emu = self.emu
        query = parse_qs(urlsplit(self.path).query)

        def cursor(name: str) -> Optional[int]:
            value = query.get(name, [""])[0]
            return int(value) if value.isdigit() else None  # Mastodon ignores one it cannot read

        types = query.get("types[]", [])
        excluded = query.get("exclude_types[]", [])
        try:
            limit = max(1, min(int(query.get("limit", ["40"])[0]), 80))
        except ValueError:
            limit = 40
        chosen = [
            each
            for each in emu.notifications
            if (not types or each.type in types)
            and each.type not in excluded
            and (cursor("max_id") is None or int(each.id) < (cursor("max_id") or 0))
            and (cursor("since_id") is None or int(each.id) > (cursor("since_id") or 0))
            and (cursor("min_id") is None or int(each.id) > (cursor("min_id") or 0))
        ]
        # With min_id: the ones just after it (then newest first); else the newest.
        page = list(reversed(chosen[:limit])) if cursor("min_id") is not None else list(reversed(chosen))[:limit]
        links = []
        if page:
            kept = "".join(f"&types[]={each}" for each in types) + "".join(
                f"&exclude_types[]={each}" for each in excluded
            )
            base = f"https://{emu.domain}/api/v1/notifications?limit={limit}{kept}"
            if len(page) == limit:
                links.append(f'<{base}&max_id={page[-1].id}>; rel="next"')
            links.append(f'<{base}&min_id={page[0].id}>; rel="prev"')
        data = json.dumps([self._notification(each) for each in page]).encode()
        headers = dict(self._rate_headers(False), **({"Link": ", ".join(links)} if links else {}))
        return self._send(200, data, "application/json; charset=utf-8", headers)

    def _notification(self, notification: Notification) -> Dict[str, Any]:
        emu = self.emu
        status = next((each for each in emu.statuses + emu.others if each.id == notification.status_id), None)
        return {
            "id": notification.id,
            "type": notification.type,
            "created_at": notification.created_at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "group_key": f"ungrouped-{notification.id}",
            "account": self._account_of(notification.account_id),
            "status": self._status(status) if status else None,
        }

    def _answer(self, answer: Answer) -> int:
        """A scripted answer (`answer_next`), whatever it holds."""
        self._record(answer.status)
        answer.send(self)
        return answer.status

    # -- Mastodon's shapes -----------------------------------------------------------------------

    def _account(self) -> Dict[str, Any]:
        emu = self.emu
        return {
            "id": "109876543210987654",
            "username": emu.username,
            "acct": emu.username,  # local accounts have no domain in acct
            "display_name": "Pi Bot",
            "locked": False,
            "bot": True,
            "created_at": "2024-01-01T00:00:00.000Z",
            "note": "",
            "url": f"https://{emu.domain}/@{emu.username}",
            "uri": f"https://{emu.domain}/users/{emu.username}",
            "avatar": f"https://{emu.domain}/avatars/original/missing.png",
            "header": f"https://{emu.domain}/headers/original/missing.png",
            "followers_count": 0,
            "following_count": 0,
            "statuses_count": len(emu.statuses),
            "emojis": [],
            "fields": [],
        }

    def _account_of(self, account_id: str) -> Dict[str, Any]:
        """An account as Mastodon shows it: the bot's own, or another (remote: its acct has a domain)."""
        other = self.emu.accounts.get(account_id)
        if other is None:
            return self._account()
        server = other.domain or self.emu.domain
        return dict(
            self._account(),
            id=other.id,
            username=other.username,
            acct=other.acct,
            display_name=other.username.title(),
            bot=other.bot,
            note=other.note,
            url=f"https://{server}/@{other.username}",
            uri=f"https://{server}/users/{other.username}",
            statuses_count=sum(1 for each in self.emu.others if each.account_id == other.id),
        )

    def _status(self, status: Status) -> Dict[str, Any]:
        emu = self.emu
        author = self._account_of(status.account_id)
        return {
            "id": status.id,
            "created_at": status.created_at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "in_reply_to_id": status.in_reply_to_id,
            "in_reply_to_account_id": status.in_reply_to_account_id,
            "sensitive": status.sensitive,
            "spoiler_text": status.spoiler_text,
            "visibility": status.visibility,
            "language": status.language,
            "uri": f"{author['uri']}/statuses/{status.id}",
            "url": f"{author['url']}/{status.id}",
            "replies_count": 0,
            "reblogs_count": 0,
            "favourites_count": 0,
            "content": status.content if status.content is not None else rendered(status.text, emu.domain),
            "reblog": None,
            "account": author,
            "media_attachments": [],
            "mentions": [],
            "tags": [],
            "emojis": [],
            "card": None,
            "poll": None,
        }

    def _instance(self, version: int) -> Dict[str, Any]:
        emu = self.emu
        statuses = {"max_characters": emu.max_characters, "max_media_attachments": 4, "characters_reserved_per_url": 23}
        if version == 2:
            media = {
                "supported_mime_types": list(emu.supported_mime_types),
                "image_size_limit": emu.image_size_limit,
                "image_matrix_limit": emu.image_matrix_limit,
                "video_size_limit": emu.video_size_limit,
                "video_matrix_limit": emu.video_matrix_limit,
                "description_limit": 1500,
            }
            return {
                "domain": emu.domain,
                "title": "Example",
                "version": "4.4.0",
                "configuration": {"statuses": statuses, "media_attachments": media},
            }
        if emu.instance_api == "legacy":  # Pleroma and glitch-soc's v1: no configuration block
            return {
                "uri": emu.domain,
                "title": "Example",
                "version": "2.7.2 (compatible; Pleroma 2.6.0)",
                "max_toot_chars": emu.max_characters,
            }
        return {"uri": emu.domain, "title": "Example", "version": "3.5.3", "configuration": {"statuses": statuses}}

    # -- replies -----------------------------------------------------------------------------------

    def _rate_headers(self, rate_limited: bool) -> Dict[str, str]:
        """Mastodon's rate-limit headers; the reset is an ISO 8601 time (Rack::Attack's period end)."""
        reset = datetime.now(timezone.utc) + timedelta(minutes=10 if rate_limited else 5)
        return {
            "X-RateLimit-Limit": "300",
            "X-RateLimit-Remaining": "0" if rate_limited else "299",
            "X-RateLimit-Reset": reset.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }

    def _error(self, status: int, message: str) -> int:
        return self._json(status, {"error": message})

    def _json(self, status: int, body: Any, rate_limited: bool = False) -> int:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        content_type = "text/html" if isinstance(body, str) else "application/json; charset=utf-8"
        return self._send(status, data, content_type, self._rate_headers(rate_limited))

    def _send(self, status: int, data: bytes, content_type: str, headers: Optional[Dict[str, str]] = None) -> int:
        self._record(status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        return status

    def _record(self, status: int) -> None:
        method, path, fields = self._request
        self.emu.seen.append(Seen(method, path, status, fields, dict(self.headers.items())))

    def _drop(self) -> int:
        """Close the connection without a reply, as a cut network or a crashed proxy does."""
        self._record(0)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(2)
        return 0


# -- mastodon-mock ---------------------------------------------------------------------------------


@dataclass
class MockInstance:
    """The session's mastodon-mock server, reset for this test, logged in as `username`."""

    url: str
    token: str
    username: str

    def env(self) -> Dict[str, str]:
        return {"MASTODON_INSTANCE": self.url, "MASTODON_ACCESS_TOKEN": self.token}

    def fault(
        self, effect: Dict[str, Any], *, path: str = "/api/v1/statuses", method: str = "POST", count: int = 1
    ) -> None:
        """Make the mock answer the next `count` matching requests with `effect` (its fault API)."""
        import requests

        rule = {"match": {"methods": [method], "path": path}, "effect": effect, "count": count}
        requests.post(f"{self.url}/api/v1/_mock/faults", json=rule, timeout=5).raise_for_status()

    def statuses(self) -> List[Dict[str, Any]]:
        """The account's statuses, newest first, as the mock serves them."""
        import requests

        headers = {"Authorization": f"Bearer {self.token}"}
        me = requests.get(f"{self.url}/api/v1/accounts/verify_credentials", headers=headers, timeout=5).json()
        return requests.get(f"{self.url}/api/v1/accounts/{me['id']}/statuses", headers=headers, timeout=5).json()


@pytest.fixture(scope="session")
def mastodon_mock_started() -> Iterator[Any]:
    """mastodon-mock's server, once per session (it takes a few seconds to start)."""
    try:
        from mastodon_mock.testing.server import MockServer
    except ImportError:  # pragma: no cover - mastodon-mock needs Python 3.10+
        pytest.skip("mastodon-mock is not installed (it needs Python 3.10+): pip install -r requirements-dev.txt")
    with MockServer() as server:
        yield server


@pytest.fixture
def mastodon_mock(mastodon_mock_started: Any) -> MockInstance:
    """A fresh mastodon-mock instance (reset to its seed: alice, bob, carol), as alice."""
    import requests

    requests.delete(f"{mastodon_mock_started.base_url}/api/v1/_mock/faults", timeout=5).raise_for_status()
    requests.post(f"{mastodon_mock_started.base_url}/api/v1/_mock/reset", timeout=10).raise_for_status()
    return MockInstance(mastodon_mock_started.base_url, "alice_token", "alice")


@pytest.fixture
def mastodon_emulator() -> Iterator[MastodonEmulator]:
    with MastodonEmulator() as emu:
        yield emu
