"""A local stand-in for the X API v2 (api.twitter.com), for tests. Nothing here touches the internet.

It is a real HTTP server on 127.0.0.1 that checks what X checks and answers as X answers:

- the OAuth 1.0a HMAC-SHA1 signature (rebuilt with oauthlib over the original https URL, since
  the bot's adapter only redirects the request here), known keys, timestamp window, fresh nonce;
- ``POST /2/tweets``: JSON body with ``text`` (and optional ``reply``), X's weighted length,
  duplicate text, the 15-minute and 24-hour post limits with X's rate-limit headers. Since
  February 2026 X lets a self-serve app reply only where the post's author mentioned the account:
  a reply to another account's post that does not mention it is refused (403, X's words). A reply
  to the account's own post (a thread) is allowed: X has not said whether the rule covers one;
- ``GET /2/users/me``;
- ``GET /2/users/:id/mentions``: the posts that mention the account (its ``@username`` in their
  text), newest first, for the authenticated account only (another id: 403), with X's query checks
  (``max_results`` 5..100, ``since_id``, ``start_time``, ``pagination_token`` from
  ``meta.next_token``, ``tweet.fields``, ``expansions=author_id`` with ``user.fields`` putting the
  authors in ``includes.users``), ``meta`` (``newest_id``, ``oldest_id``, ``result_count``,
  ``next_token``) and no ``data`` when there are none. Tests add mentions with `mention` (from
  other accounts, made with `user`, or from the account itself); ``mention_reads`` counts the
  billed reads;
- ``GET /2/users/:id/tweets``: the account's posts, newest first (``max_results`` 5..100,
  ``start_time``, ``tweet.fields`` among X's own, paging by ``meta.next_token``). As X does, a
  post's text comes back with every link shortened to a t.co link (found as X finds them,
  twitter-text: bare domains too) and ``&``, ``<``, ``>`` escaped, a picture's own t.co link at its
  end; asked for ``entities``, each t.co link is described (``url``, ``expanded_url``,
  ``display_url``, ``start``/``end``; a picture's with its ``media_key``);
- the v2 media endpoints: ``POST /2/media/upload`` (multipart/form-data, the file in ``media``
  and ``media_category``; X's 5 MB image limit and its image types, checked from the bytes),
  ``POST /2/media/metadata`` (alt text, at most 1,000 characters) and ``media.media_ids`` on
  ``POST /2/tweets`` (ids this server gave out, at most four, a video or GIF alone, each processed);
  and the chunked upload of a video (or GIF): ``POST /2/media/upload/initialize`` (JSON: type,
  ``total_bytes``, ``media_category``), ``/2/media/upload/{id}/append`` (multipart ``media`` of at
  most 5 MB and ``segment_index``, in order from 0), ``/2/media/upload/{id}/finalize`` (the
  segments must add up to ``total_bytes`` and be the type announced), then ``GET
  /2/media/upload?command=STATUS&media_id=`` with ``processing_info`` (``pending``,
  ``in_progress`` with ``check_after_secs``, then ``succeeded``, or ``failed`` with X's error when
  `processing_fails`). The OAuth 1.0a check is the same for every endpoint: a multipart body is not
  part of the signature, as for JSON; a query is.

Replies use the shapes X documents for API v2, and a successful post copies its status, headers
and body layout from the recorded cassette in ``tests/fixtures/x-api/`` (see its SOURCE.md). Tests
script failures with `fail_next`: each X error reply, slow replies, dropped connections, and
"posted but the reply never came" (the case that must not lead to a double post); and, with
`answer_next`, any answer at all to a read (a malformed timeline, an endless one). With
``duplicate_check=False`` it accepts the same text twice, as X's policy does not promise to
refuse it, so a test sees every double post a retry would make.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from types import SimpleNamespace
from typing import Deque, Dict, List, Optional, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from loopback import Answer, LoopbackServer, multipart_fields, picture_type
from oauthlib.oauth1.rfc5849 import signature, utils

from twitterbot.networks import twittertext

# twitter-text's emoji module imports pkg_resources, which a venv of Python 3.12 or later lacks:
# load it as the bot does (a stand-in for that one import), then import from it as usual.
twittertext.load()
from twitter_text import parse_tweet  # noqa: E402
from twitter_text.extract_urls import extract_urls_with_indices  # noqa: E402

ORIGIN = "https://api.twitter.com"
USER_ID = "12345"  # the account's id, as its access token starts
FIRST_ID = 1456012973835788293  # the id in the recorded cassette; later posts count up from it

KEYS = {
    "consumer_key": "emuConsumerKey1234",
    "consumer_secret": "emuConsumerSecret5678",
    "access_token": "12345-emuAccessToken",
    "access_token_secret": "emuAccessTokenSecret9012",
}

# X's error replies (status, body, extra headers), as X's API v2 documentation gives them.
ERRORS: Dict[str, Tuple[int, dict]] = {
    "unauthorized": (401, {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}),
    "duplicate": (
        403,
        {
            "detail": "You are not allowed to create a Tweet with duplicate content.",
            "type": "about:blank",
            "title": "Forbidden",
            "status": 403,
        },
    ),
    "read_only": (
        403,
        {
            "title": "Forbidden",
            "status": 403,
            "detail": "Your client app is not configured with the appropriate oauth1 app permissions for this endpoint.",
            "type": "https://api.x.com/2/problems/oauth1-permissions",
        },
    ),
    "not_in_project": (
        403,
        {
            "client_id": "12345678",
            "detail": "When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens "
            "from a Twitter developer App that is attached to a Project.",
            "registration_url": "https://developer.twitter.com/en/docs/projects/overview",
            "title": "Client Forbidden",
            "required_enrollment": "Appropriate Level of API Access",
            "reason": "client-not-enrolled",
            "type": "https://api.twitter.com/2/problems/client-forbidden",
        },
    ),
    "credits": (
        402,
        {
            "detail": "credits depleted",
            "status": 402,
            "title": "Payment Required",
            "type": "https://api.x.com/2/problems/credits-depleted",
        },
    ),
    "too_long": (
        400,
        {
            "errors": [
                {
                    "parameters": {"text": []},
                    "message": "Your Tweet text is too long. For more information on "
                    "how Twitter determines text length see https://github.com/twitter/twitter-text.",
                }
            ],
            "title": "Invalid Request",
            "detail": "One or more parameters to your request was invalid.",
            "type": "https://api.twitter.com/2/problems/invalid-request",
        },
    ),
    "rate_limit": (
        429,
        {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429},
    ),
    "usage_cap": (
        429,
        {
            "title": "UsageCapExceeded",
            "detail": "Usage cap exceeded: Monthly product cap",
            "type": "https://api.x.com/2/problems/usage-capped",
            "status": 429,
        },
    ),
    # Since 23 February 2026: a reply where the post's author did not mention (or quote) the account.
    "reply_not_allowed": (
        403,
        {
            "detail": "Reply to this conversation is not allowed because you have not been mentioned or otherwise "
            "engaged by the author of the post you are replying to.",
            "type": "about:blank",
            "title": "Forbidden",
            "status": 403,
        },
    ),
    "not_own_mentions": (
        403,
        {
            "detail": "You are not permitted to perform this action.",
            "type": "about:blank",
            "title": "Forbidden",
            "status": 403,
        },
    ),
    "server_error": (
        503,
        {"title": "Service Unavailable", "detail": "Service Unavailable", "type": "about:blank", "status": 503},
    ),
}

# Failures that are not a reply: see Handler._scripted.
# drop: close the connection without reading further or posting; slow: answer (and post) only after
# `slow_seconds`; posted_then_drop: post, then close without a reply; posted_then_slow: post, then
# reply after `slow_seconds` (past the client's timeout); posted_then_hang: post, then hold the
# connection until `release` is set; ok: answer as usual (to script a later request's failure).
BEHAVIOURS = {"drop", "slow", "posted_then_drop", "posted_then_slow", "posted_then_hang", "ok"}


@dataclass
class Post:
    id: str
    text: str  # as it was sent
    reply_to: Optional[str]
    at: float
    media: List[Media] = field(default_factory=list)
    shown: str = ""  # as X gives it back: links shortened to t.co
    urls: List[Dict[str, object]] = field(default_factory=list)  # its entities.urls
    author_id: str = USER_ID  # the account's own posts; a mention from another account (`XEmulator.mention`)
    reply_to_user: Optional[str] = None  # the author of the post it answers
    conversation_id: str = ""


@dataclass
class User:
    """An account on the emulated X: the bot's, or one that mentions it (`XEmulator.user`)."""

    id: str
    username: str
    name: str
    description: str = ""


# X's `expansions` and `user.fields` (API v2 reference); any other is refused with a 400.
EXPANSIONS = {
    "article.cover_media", "article.media_entities", "attachments.media_keys",
    "attachments.media_source_tweet", "attachments.poll_ids", "author_id", "edit_history_tweet_ids",
    "entities.mentions.username", "geo.place_id", "in_reply_to_user_id", "entities.note.mentions.username",
    "referenced_tweets.id", "referenced_tweets.id.attachments.media_keys", "referenced_tweets.id.author_id",
}  # fmt: skip
USER_FIELDS = {
    "affiliation", "confirmed_email", "connection_status", "created_at", "description", "entities", "id",
    "is_identity_verified", "location", "most_recent_tweet_id", "name", "parody", "pinned_tweet_id",
    "profile_banner_url", "profile_image_url", "protected", "public_metrics", "receives_your_dm",
    "subscription", "subscription_type", "url", "username", "verified", "verified_followers_count",
    "verified_type", "withheld",
}  # fmt: skip
FIRST_USER_ID = 900000001  # the other accounts' ids count up from it
# The query parameters of GET /2/users/:id/mentions (any other is refused with a 400).
MENTION_PARAMETERS = {
    "end_time", "expansions", "max_results", "media.fields", "pagination_token", "place.fields", "poll.fields",
    "since_id", "start_time", "tweet.fields", "until_id", "user.fields",
}  # fmt: skip


# The fields `tweet.fields` may name (X's API v2 reference); any other is refused with a 400.
TWEET_FIELDS = {
    "article", "attachments", "author_id", "card_uri", "community_id", "context_annotations",
    "conversation_id", "created_at", "display_text_range", "edit_controls", "edit_history_tweet_ids",
    "entities", "geo", "id", "in_reply_to_user_id", "lang", "media_metadata", "non_public_metrics",
    "note_tweet", "organic_metrics", "possibly_sensitive", "promoted_metrics", "public_metrics",
    "referenced_tweets", "reply_settings", "scopes", "source", "text", "withheld",
}  # fmt: skip
ROUTES = {"timeline", "me", "post", "mentions"}  # what `answer_next` may script ("post": made, then this answer)


def shorten(post_id: str, text: str, media: List[Media], username: str) -> Tuple[str, List[Dict[str, object]]]:
    """`text` as X shows it, every link (as twitter-text finds it) a t.co link, a picture's link at
    the end, and the entities that describe them. Written here, not taken from the bot."""
    pieces, urls, position = [], [], 0

    def link(number: int) -> str:
        token = base64.b32encode(hashlib.sha1(f"{post_id}/{number}".encode()).digest()).decode()
        return "https://t.co/" + token[:10].lower()

    shown_length = 0
    for number, found in enumerate(extract_urls_with_indices(text)):
        start, end = found["indices"]
        typed = found["url"]
        pieces.append(text[position:start])
        shown_length += start - position
        short = link(number)
        expanded = typed if "://" in typed else "http://" + typed
        display = expanded.split("://", 1)[1]
        urls.append(
            {
                "start": shown_length,
                "end": shown_length + len(short),
                "url": short,
                "expanded_url": expanded,
                "display_url": display if len(display) <= 26 else display[:26] + "\u2026",
            }
        )
        pieces.append(short)
        shown_length += len(short)
        position = end
    pieces.append(text[position:])
    shown = "".join(pieces)
    if media:
        short = link(len(urls))
        start = len(shown) + 1
        shown += " " + short
        urls.append(
            {
                "start": start,
                "end": start + len(short),
                "url": short,
                "expanded_url": f"https://x.com/{username}/status/{post_id}/photo/1",
                "display_url": "pic.x.com/" + short.rsplit("/", 1)[1],
                "media_key": f"3_{media[0].id}",
            }
        )
    return shown, urls


@dataclass
class Media:
    """An uploaded picture: its bytes, the type X read from them, and the alt text set on it."""

    id: str
    data: bytes
    media_type: str
    category: str
    alt: Optional[str] = None
    # A chunked upload (a video): the bytes announced, the segments received by index, and where
    # it stands: "uploading" (INIT), "processing" (FINALIZE), "succeeded" or "failed".
    total: int = 0
    segments: Dict[int, bytes] = field(default_factory=dict)
    state: str = "succeeded"
    checks: int = 0  # STATUS questions answered
    checks_left: int = 0


CHUNKED_TYPES = {"video/mp4": "tweet_video", "video/quicktime": "tweet_video", "image/gif": "tweet_gif"}
MAX_VIDEO_BYTES = 512 * 1024 * 1024  # X: a video up to 512 MB
MAX_SEGMENT_BYTES = 5 * 1024 * 1024  # one APPEND's media, at most
MAX_SEGMENTS = 1000  # segment_index 0..999


MAX_IMAGE_BYTES = 5 * 1024 * 1024  # X: images up to 5 MB
MAX_ALT = 1000
MAX_MEDIA = 4
FIRST_MEDIA_ID = 1880028106020515840


@dataclass
class Seen:
    """One request as the emulator received it."""

    method: str
    path: str
    status: int
    body: Optional[dict]


@dataclass
class XEmulator:
    """Start with `start()` (or use as a context manager); point X_API_BASE_URL at `url`."""

    keys: Dict[str, str] = field(default_factory=lambda: dict(KEYS))
    username: str = "pi_bot"
    posts_per_window: int = 100  # POST /2/tweets: 100 per 15 min per user
    posts_per_day: int = 10_000
    slow_seconds: float = 3.0
    clock_skew_allowed: int = 300
    duplicate_check: bool = True  # False: accept a text X already has (a second, double post)
    posts: List[Post] = field(default_factory=list)
    media: Dict[str, Media] = field(default_factory=dict)  # uploads, by media id
    max_image_bytes: int = MAX_IMAGE_BYTES
    max_video_bytes: int = MAX_VIDEO_BYTES
    # A video's processing after FINALIZE: STATUS answers "in_progress" this many times (asking
    # again after `check_after_secs`), then "succeeded", or "failed" when `processing_fails`.
    processing_checks: int = 2
    check_after_secs: int = 1
    processing_fails: bool = False
    deleted: Set[str] = field(default_factory=set)  # ids the account deleted (see `delete`)
    seen: List[Seen] = field(default_factory=list)
    timeline_reads: int = 0  # GET /2/users/:id/tweets answered
    mention_reads: int = 0  # GET /2/users/:id/mentions answered (each billed by X)
    others: List[Post] = field(default_factory=list)  # other accounts' posts (`mention`)
    users: Dict[str, User] = field(default_factory=dict)  # other accounts, by id (`user`)
    _answers: Dict[str, Deque[Answer]] = field(default_factory=dict)  # scripted by `answer_next`
    _script: Deque[str] = field(default_factory=deque)
    _nonces: Set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)  # ends a "posted_then_hang" or a "slow"
    received: threading.Event = field(default_factory=threading.Event)  # set on each POST /2/tweets

    def start(self) -> XEmulator:
        emulator = self

        class Handler(_Handler):
            emu = emulator

        self._server = LoopbackServer(Handler).start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.stop()

    def __enter__(self) -> XEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return self._server.url

    def fail_next(self, *kinds: str) -> None:
        """Answer the next requests with these failures, in order (names from ERRORS or BEHAVIOURS)."""
        for kind in kinds:
            if kind not in ERRORS and kind not in BEHAVIOURS:
                raise ValueError(f"unknown failure {kind}")
            self._script.append(kind)

    def answer_next(self, route: str, *answers: Answer) -> None:
        """Answer the next reads of `route` ("timeline": ``GET /2/users/:id/tweets``, "me":
        ``GET /2/users/me``, "mentions": ``GET /2/users/:id/mentions``) with these, in order, once their signature is checked; "post": the next
        ``POST /2/tweets`` makes the post, then answers this instead of X's own answer."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route}")
        self._answers.setdefault(route, deque()).extend(answers)

    def env(self) -> Dict[str, str]:
        """Settings that point the bot at this emulator with the right keys."""
        return {
            "X_API_BASE_URL": self.url,
            "TWITTER_API_KEY": self.keys["consumer_key"],
            "TWITTER_API_SECRET": self.keys["consumer_secret"],
            "TWITTER_ACCESS_TOKEN": self.keys["access_token"],
            "TWITTER_ACCESS_TOKEN_SECRET": self.keys["access_token_secret"],
        }

    def delete(self, post_id: str) -> None:
        """The account owner deleted this post (on x.com): replies to it are refused from now on."""
        self.deleted.add(post_id)

    @property
    def texts(self) -> List[str]:
        return [post.text for post in self.posts]

    @property
    def reads(self) -> int:
        """The reads X would bill: every GET it answered (the account, its posts, its mentions)."""
        return sum(1 for seen in self.seen if seen.method == "GET" and 200 <= seen.status < 300)

    def user(self, username: str, description: str = "", name: str = "") -> User:
        """Another account on X (made once per username): its id counts up from FIRST_USER_ID."""
        with self._lock:
            for known in self.users.values():
                if known.username == username:
                    return known
            made = User(str(FIRST_USER_ID + len(self.users)), username, name or username.title(), description)
            self.users[made.id] = made
            return made

    def mention(self, text: str, *, by: str = "ada", reply_to: Optional[str] = None, ago: float = 0.0) -> Post:
        """A post by `by` (another account's username, or the account's own) whose `text` mentions
        the account (write its ``@pi_bot``, as X's clients do in a reply), made `ago` seconds ago,
        answering `reply_to` (a post's id) if given. Add mentions oldest first: ids count up."""
        author = USER_ID if by == self.username else self.user(by).id
        return self._create(text, reply_to, author_id=author, at=time.time() - ago)

    def _create(
        self,
        text: str,
        reply_to: Optional[str],
        media: Optional[List[Media]] = None,
        *,
        author_id: str = USER_ID,
        at: Optional[float] = None,
    ) -> Post:
        with self._lock:
            post_id = str(FIRST_ID + len(self.posts) + len(self.others))
            post = Post(post_id, text, reply_to, time.time() if at is None else at, list(media or []))
            post.author_id = author_id
            answered = self._find(reply_to) if reply_to else None
            post.reply_to_user = answered.author_id if answered else None
            post.conversation_id = answered.conversation_id if answered else post_id
            post.shown, post.urls = shorten(post.id, text, post.media, self.username)
            (self.posts if author_id == USER_ID else self.others).append(post)
            return post

    def _find(self, post_id: str) -> Optional[Post]:
        return next((post for post in self.posts + self.others if post.id == post_id), None)

    def mentions_it(self, post: Post) -> bool:
        """Whether `post`'s text names the account (``@username``, in any case, not inside a word)."""
        return re.search(rf"(?<![\w@])@{re.escape(self.username)}(?!\w)", post.text, re.IGNORECASE) is not None

    def _scripted(self, route: str) -> Optional[Answer]:
        queue = self._answers.get(route)
        return queue.popleft() if queue else None

    def _upload(self, data: bytes, media_type: str, category: str) -> Media:
        with self._lock:
            media = Media(str(FIRST_MEDIA_ID + len(self.media)), data, media_type, category)
            self.media[media.id] = media
            return media

    def _posts_since(self, seconds: float) -> List[Post]:
        now = time.time()
        return [post for post in self.posts if now - post.at < seconds]


def _rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def recorded_create_reply() -> Tuple[int, Dict[str, str], dict]:
    """Status, headers and decoded body of the real POST /2/tweets reply in the recorded cassette."""
    import gzip
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parent / "fixtures/x-api/test_client_create_and_delete_tweet.yaml"
    cassette = yaml.safe_load(path.read_text())
    response = cassette["interactions"][0]["response"]
    body = json.loads(gzip.decompress(response["body"]["string"]))
    headers = {name.lower(): values[0] for name, values in response["headers"].items()}
    return response["status"]["code"], headers, body


class _Handler(BaseHTTPRequestHandler):
    emu: XEmulator
    protocol_version = "HTTP/1.1"
    server_version = "tsa_b"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # -- the request pipeline ------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        body = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        if method == "POST" and path == "/2/tweets":
            self.emu.received.set()

        self._request = (method, path, body)
        self._route(method, path, raw, body)

    def _record(self, status: int) -> None:
        """Log the request before replying, so a test that has its reply also sees it here."""
        method, path, body = self._request
        self.emu.seen.append(Seen(method, path, status, body))

    def _route(self, method: str, path: str, raw: bytes, body: Optional[dict]) -> int:
        emu = self.emu
        scripted = emu._script.popleft() if emu._script else None
        if scripted == "drop":
            return self._drop()
        if scripted == "slow":
            emu.release.wait(emu.slow_seconds)  # `release` ends the wait early
            scripted = None
        if scripted in ERRORS and scripted not in ("duplicate", "too_long"):
            return self._error(scripted)

        problem = self._check_oauth(method, raw)
        if problem:
            return self._error("unauthorized")

        if method == "GET" and path == "/2/users/me":
            answer = emu._scripted("me")
            if answer:
                return self._answer(answer)
            return self._json(200, {"data": {"id": USER_ID, "name": "Pi Bot", "username": emu.username}})
        if method == "GET" and path.startswith("/2/users/") and path.endswith("/tweets"):
            answer = emu._scripted("timeline")
            if answer:
                emu.timeline_reads += 1
                return self._answer(answer)
            return self._timeline(path.split("/")[3])
        if method == "GET" and path.startswith("/2/users/") and path.endswith("/mentions"):
            if path.split("/")[3] != emu.keys["access_token"].split("-", 1)[0]:
                return self._error("not_own_mentions")  # X: only the authenticated account's own
            answer = emu._scripted("mentions")
            if answer:
                emu.mention_reads += 1
                return self._answer(answer)
            return self._mentions()
        if method == "POST" and path == "/2/media/upload/initialize":
            return self._media_initialize(body)
        chunked = re.fullmatch(r"/2/media/upload/(\d+)/(append|finalize)", path)
        if method == "POST" and chunked:
            step = self._media_append if chunked.group(2) == "append" else self._media_finalize
            return step(chunked.group(1), raw, scripted)
        if method == "GET" and path == "/2/media/upload":
            return self._media_status()
        if method == "POST" and path == "/2/media/upload":
            return self._media_upload(raw, scripted)
        if method == "POST" and path == "/2/media/metadata":
            return self._media_metadata(body)
        if method != "POST" or path != "/2/tweets":
            return self._json(
                404,
                {
                    "title": "Not Found Error",
                    "detail": f"Sorry, that page does not exist: {path}",
                    "type": "https://api.twitter.com/2/problems/resource-not-found",
                },
            )

        if "application/json" not in (self.headers.get("Content-Type") or ""):
            return self._invalid("Content-Type must be application/json")
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            return self._invalid("The `text` field is required and must be a string")
        unknown = set(body) - {"text", "reply", "media", "quote_tweet_id", "poll", "reply_settings"}
        if unknown:
            return self._invalid(
                f"The query parameters [{', '.join(sorted(unknown))}] is not one of the allowed fields"
            )
        attached: List[Media] = []
        if "media" in body:
            ids = (body["media"] or {}).get("media_ids")
            if not isinstance(ids, list) or not ids or len(ids) > MAX_MEDIA or not all(isinstance(i, str) for i in ids):
                return self._invalid(f"media.media_ids must be a list of 1 to {MAX_MEDIA} media id strings")
            if any(media_id not in emu.media for media_id in ids):
                return self._invalid("Your media IDs are invalid.")
            attached = [emu.media[media_id] for media_id in ids]
            if any(media.state != "succeeded" for media in attached):  # not processed (yet), or failed
                return self._invalid("Your media IDs are invalid.")
            if len(attached) > 1 and any(media.category in ("tweet_video", "tweet_gif") for media in attached):
                return self._invalid("Your media IDs are invalid: one video or GIF goes alone")
        reply_to = None
        if "reply" in body:
            reply_to = (body["reply"] or {}).get("in_reply_to_tweet_id")
            answered = emu._find(reply_to) if isinstance(reply_to, str) else None
            if answered is None or reply_to in emu.deleted:
                return self._invalid("The tweet you are replying to does not exist or is not visible")
            if answered.author_id != USER_ID and not emu.mentions_it(answered):
                return self._error("reply_not_allowed")

        if scripted == "too_long" or parse_tweet(body["text"]).weightedLength > 280:
            return self._error("too_long")
        if scripted == "duplicate" or (emu.duplicate_check and body["text"] in emu.texts):
            return self._error("duplicate")
        if len(emu._posts_since(15 * 60)) >= emu.posts_per_window:
            return self._error("rate_limit")
        if len(emu._posts_since(24 * 3600)) >= emu.posts_per_day:
            return self._error("rate_limit", day_exhausted=True)

        post = emu._create(body["text"], reply_to, attached)
        hostile = emu._scripted("post")
        if hostile is not None:  # X made the post; its answer is what the test scripted
            return self._answer(hostile)
        if scripted == "posted_then_drop":
            return self._drop()
        if scripted == "posted_then_slow":
            time.sleep(emu.slow_seconds)
        if scripted == "posted_then_hang":
            emu.release.wait(timeout=60)
            return self._drop()
        status, recorded_headers, _ = _RECORDED
        headers = {
            "location": f"{ORIGIN}/2/tweets/{post.id}",
            "api-version": recorded_headers.get("api-version", "2.28"),
            "x-access-level": "read-write",
        }
        return self._json(
            status, {"data": {"edit_history_tweet_ids": [post.id], "id": post.id, "text": post.shown}}, headers
        )

    def _timeline(self, user_id: str) -> int:
        """``GET /2/users/:id/tweets``: the account's posts, newest first, with X's query checks
        (``max_results`` 5..100, ``start_time`` RFC 3339) and paging (``meta.next_token``)."""
        emu = self.emu
        query = parse_qs(urlsplit(self.path).query)
        if user_id not in (USER_ID, emu.keys["access_token"].split("-", 1)[0]):
            return self._json(
                200, {"errors": [{"title": "Not Found Error", "detail": f"Could not find user with id: [{user_id}]."}]}
            )
        try:
            max_results = int(query.get("max_results", ["10"])[0])
            start = query.get("start_time", [None])[0]
            since = datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() if start else 0.0
        except ValueError:
            return self._invalid("max_results or start_time is not valid")
        if not 5 <= max_results <= 100:
            return self._invalid(f"The `max_results` query parameter value [{max_results}] is not between 5 and 100")
        fields = set(",".join(query.get("tweet.fields", [])).split(",")) - {""}
        unknown = sorted(fields - TWEET_FIELDS)
        if unknown:
            return self._invalid(
                f"The `tweet.fields` query parameter value [{unknown[0]}] is not one of [{','.join(sorted(TWEET_FIELDS))}]"
            )
        emu.timeline_reads += 1
        posts = [post for post in reversed(emu.posts) if post.at >= since and post.id not in emu.deleted]
        page = posts[:max_results]
        data = [
            {
                "id": post.id,
                "text": post.shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"),
                "edit_history_tweet_ids": [post.id],
                **({"created_at": _rfc3339(post.at)} if "created_at" in fields else {}),
                **({"entities": {"urls": post.urls}} if "entities" in fields and post.urls else {}),
                **(
                    {"referenced_tweets": [{"type": "replied_to", "id": post.reply_to}]}
                    if "referenced_tweets" in fields and post.reply_to
                    else {}
                ),
            }
            for post in page
        ]
        meta: Dict[str, object] = {"result_count": len(page)}
        if page:
            meta.update(newest_id=page[0].id, oldest_id=page[-1].id)
        if len(posts) > max_results:
            meta["next_token"] = "emu-next-page"
        return self._json(200, {"data": data, "meta": meta} if data else {"meta": meta})

    def _mentions(self) -> int:
        """``GET /2/users/:id/mentions``: the posts that name the account, newest first, with X's
        query checks, its paging (``pagination_token`` from ``meta.next_token``) and its fields."""
        emu = self.emu
        query = {name: ",".join(values) for name, values in parse_qs(urlsplit(self.path).query).items()}
        unknown = sorted(set(query) - MENTION_PARAMETERS)
        if unknown:
            return self._invalid(
                f"The query parameters [{unknown[0]}] is not one of [{','.join(sorted(MENTION_PARAMETERS))}]"
            )
        try:
            max_results = int(query.get("max_results", "10"))
            start = query.get("start_time")
            since = datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() if start else 0.0
            since_id = int(query.get("since_id", "0"))
            token = query.get("pagination_token")
            before = int(token.removeprefix("emu-")) if token else None
        except ValueError:
            return self._invalid("max_results, start_time, since_id or pagination_token is not valid")
        if not 5 <= max_results <= 100:
            return self._invalid(f"The `max_results` query parameter value [{max_results}] is not between 5 and 100")
        for name, allowed in (("tweet.fields", TWEET_FIELDS), ("expansions", EXPANSIONS), ("user.fields", USER_FIELDS)):
            asked = set(query.get(name, "").split(",")) - {""}
            if asked - allowed:
                return self._invalid(
                    f"The `{name}` query parameter value [{sorted(asked - allowed)[0]}] is not one of [{','.join(sorted(allowed))}]"
                )
        fields = set(query.get("tweet.fields", "").split(","))
        emu.mention_reads += 1
        posts = sorted(
            (
                post
                for post in emu.posts + emu.others
                if emu.mentions_it(post) and post.id not in emu.deleted and post.at >= since and int(post.id) > since_id
            ),
            key=lambda post: int(post.id),
            reverse=True,
        )
        if before is not None:
            posts = [post for post in posts if int(post.id) < before]
        page = posts[:max_results]
        data = [self._mention_shown(post, fields) for post in page]
        meta: Dict[str, object] = {"result_count": len(page)}
        if page:
            meta.update(newest_id=page[0].id, oldest_id=page[-1].id)
        if len(posts) > max_results:
            meta["next_token"] = f"emu-{page[-1].id}"
        answer: Dict[str, object] = {"data": data, "meta": meta} if data else {"meta": meta}
        if data and "author_id" in query.get("expansions", "").split(","):
            user_fields = set(query.get("user.fields", "").split(",")) | {"id", "name", "username"}
            authors = {post.author_id for post in page}
            accounts = [emu.users[author] for author in sorted(authors) if author in emu.users]
            if USER_ID in authors:
                accounts.append(User(USER_ID, emu.username, "Pi Bot"))
            answer["includes"] = {
                "users": [{key: value for key, value in vars(user).items() if key in user_fields} for user in accounts]
            }
        return self._json(200, answer)

    def _mention_shown(self, post: Post, fields: Set[str]) -> Dict[str, object]:
        """One mention as X gives it: its default fields and those `tweet.fields` asked for."""
        escaped = post.shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        shown: Dict[str, object] = {"id": post.id, "text": escaped, "edit_history_tweet_ids": [post.id]}
        if parse_tweet(post.text).weightedLength > 280:  # a long post (X Premium): its start, and the whole on demand
            shown["text"] = escaped[:270] + "\u2026"
            if "note_tweet" in fields:
                shown["note_tweet"] = {"text": escaped}
        if "created_at" in fields:
            shown["created_at"] = _rfc3339(post.at)
        if "author_id" in fields:
            shown["author_id"] = post.author_id
        if "conversation_id" in fields:
            shown["conversation_id"] = post.conversation_id
        if "in_reply_to_user_id" in fields and post.reply_to_user:
            shown["in_reply_to_user_id"] = post.reply_to_user
        if "referenced_tweets" in fields and post.reply_to:
            shown["referenced_tweets"] = [{"type": "replied_to", "id": post.reply_to}]
        return shown

    def _check_oauth(self, method: str, raw: bytes) -> Optional[str]:
        """Verify the OAuth 1.0a header the way X does. Returns what is wrong, or None."""
        emu = self.emu
        header = self.headers.get("Authorization") or ""
        if not header.startswith("OAuth "):
            return "no OAuth header"
        params = {key: utils.unescape(value) for key, value in utils.parse_authorization_header(header)}
        if params.get("oauth_consumer_key") != emu.keys["consumer_key"]:
            return "unknown consumer key"
        if params.get("oauth_token") != emu.keys["access_token"]:
            return "unknown token"
        if params.get("oauth_signature_method") != "HMAC-SHA1" or params.get("oauth_version", "1.0") != "1.0":
            return "unsupported signature method"
        try:
            timestamp = int(params.get("oauth_timestamp", ""))
        except ValueError:
            return "bad timestamp"
        if abs(time.time() - timestamp) > emu.clock_skew_allowed:
            return "timestamp out of window"
        nonce = params.get("oauth_nonce", "")
        with emu._lock:
            if not nonce or nonce in emu._nonces:
                return "nonce reused"
            emu._nonces.add(nonce)
        # The signature covers the original https URL and the query, not the JSON body.
        query = urlsplit(self.path).query
        collected = signature.collect_parameters(
            uri_query=query, headers={"Authorization": header}, exclude_oauth_signature=True
        )
        base = signature.signature_base_string(
            method,
            signature.base_string_uri(ORIGIN + urlsplit(self.path).path),
            signature.normalize_parameters(collected),
        )
        secrets = SimpleNamespace(
            client_secret=emu.keys["consumer_secret"], resource_owner_secret=emu.keys["access_token_secret"]
        )
        expected = signature.sign_hmac_sha1_with_client(base, secrets)
        if not hmac.compare_digest(expected, params.get("oauth_signature", "")):
            return "bad signature"
        # oauthlib signs a hash of a non-form body; if it is there, the body must match it.
        if "oauth_body_hash" in params:
            digest = base64.b64encode(hashlib.sha1(raw).digest()).decode()
            if not hmac.compare_digest(digest, params["oauth_body_hash"]):
                return "body does not match oauth_body_hash"
        return None

    # -- media -------------------------------------------------------------------------------

    def _media_upload(self, raw: bytes, scripted: Optional[str]) -> int:
        """One picture in one multipart request, as X's v2 upload takes images."""
        content_type = self.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            return self._invalid("Content-Type must be multipart/form-data")
        fields = multipart_fields(content_type, raw)
        if "media" not in fields:
            return self._invalid("The `media` field is required")
        data = fields["media"][0]
        category = fields.get("media_category", (b"", None))[0].decode()
        if category not in ("tweet_image", "tweet_gif", "dm_image", "subtitles"):
            return self._invalid(f"media_category {category!r} is not one of tweet_image, tweet_gif, dm_image")
        media_type = picture_type(data)
        if media_type is None:
            return self._invalid("media type unrecognized.")
        if len(data) > self.emu.max_image_bytes:
            return self._invalid(f"File size exceeds {self.emu.max_image_bytes} bytes.")
        media = self.emu._upload(data, media_type, category)
        if scripted == "posted_then_drop":
            return self._drop()
        return self._json(
            200,
            {
                "data": {
                    "id": media.id,
                    "media_key": f"3_{media.id}",
                    "size": len(data),
                    "expires_after_secs": 86400,
                    "image": {"image_type": media_type},
                }
            },
        )

    def _media_initialize(self, body: Optional[dict]) -> int:
        """INIT of X's chunked upload: the type, the bytes to come and the category, as JSON."""
        if "application/json" not in (self.headers.get("Content-Type") or ""):
            return self._invalid("Content-Type must be application/json")
        body = body or {}
        media_type, total, category = body.get("media_type"), body.get("total_bytes"), body.get("media_category")
        if media_type not in CHUNKED_TYPES:
            return self._invalid(f"media_type {media_type!r} is not one of {', '.join(CHUNKED_TYPES)}")
        if category not in ("tweet_video", "tweet_gif", "amplify_video", "dm_video"):
            return self._invalid(f"media_category {category!r} is not one of tweet_video, tweet_gif, amplify_video")
        if not isinstance(total, int) or isinstance(total, bool) or total <= 0:
            return self._invalid("total_bytes must be a positive integer")
        most = self.emu.max_video_bytes if media_type.startswith("video/") else 15 * 1024 * 1024
        if total > most:
            return self._invalid(f"File size exceeds {most} bytes.")
        media = self.emu._upload(b"", media_type, category)
        media.total, media.state = total, "uploading"
        return self._json(200, {"data": {"id": media.id, "media_key": f"7_{media.id}", "expires_after_secs": 86400}})

    def _media_append(self, media_id: str, raw: bytes, scripted: Optional[str]) -> int:
        """APPEND: one segment (multipart ``media`` and ``segment_index``), in order; sent again
        under the same index, it replaces the first (a retried segment)."""
        media = self.emu.media.get(media_id)
        if media is None or media.state != "uploading":
            return self._invalid("The `id` is not a media upload in progress of this account")
        content_type = self.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            return self._invalid("Content-Type must be multipart/form-data")
        fields = multipart_fields(content_type, raw)
        if "media" not in fields or "segment_index" not in fields:
            return self._invalid("The `media` and `segment_index` fields are required")
        chunk = fields["media"][0]
        try:
            index = int(fields["segment_index"][0].decode())
        except ValueError:
            return self._invalid("segment_index must be an integer")
        if not 0 <= index < MAX_SEGMENTS or index > len(media.segments):
            return self._invalid(f"segment_index {index} is out of order (expected {len(media.segments)})")
        if len(chunk) > MAX_SEGMENT_BYTES:
            return self._invalid(f"A segment may be at most {MAX_SEGMENT_BYTES} bytes")
        media.segments[index] = chunk
        if sum(len(each) for each in media.segments.values()) > media.total:
            return self._invalid("Segments add up to more than total_bytes")
        if scripted == "posted_then_drop":
            return self._drop()
        return self._json(200, {"data": {"expires_at": int(time.time()) + 86400}})

    def _media_finalize(self, media_id: str, raw: bytes, scripted: Optional[str]) -> int:
        """FINALIZE: the segments must add up to total_bytes and be the type announced; then
        processing starts (STATUS tells how it goes). A second FINALIZE answers as the first."""
        emu = self.emu
        media = emu.media.get(media_id)
        if media is None:
            return self._invalid("The `id` is not a media upload of this account")
        if media.state == "uploading":
            data = b"".join(media.segments[index] for index in sorted(media.segments))
            if len(data) != media.total:
                return self._invalid("Segments do not add up to provided total file size.")
            found = "image/gif" if data[:6] in (b"GIF87a", b"GIF89a") else "video/mp4" if data[4:8] == b"ftyp" else None
            if found is None or (found == "image/gif") != (media.media_type == "image/gif"):
                return self._invalid("media type unrecognized.")
            media.data, media.state, media.checks_left = data, "pending", emu.processing_checks
        if scripted == "posted_then_drop":
            return self._drop()
        return self._json(200, {"data": self._media_info(media)})

    def _media_status(self) -> int:
        """STATUS: ``GET /2/media/upload?command=STATUS&media_id=``: processing_info, as X reports it."""
        query = parse_qs(urlsplit(self.path).query)
        if query.get("command") != ["STATUS"]:
            return self._invalid("command must be STATUS")
        media = self.emu.media.get((query.get("media_id") or [""])[0])
        if media is None or media.state == "uploading":
            return self._invalid("The `media_id` is not a finalized media upload of this account")
        media.checks += 1
        if media.state in ("pending", "in_progress"):
            if media.checks_left > 0:
                media.checks_left -= 1
                media.state = "in_progress"
            else:
                media.state = "failed" if self.emu.processing_fails else "succeeded"
        return self._json(200, {"data": self._media_info(media)})

    def _media_info(self, media: Media) -> Dict[str, object]:
        info: Dict[str, object] = {"state": media.state}
        if media.state in ("pending", "in_progress"):
            info["check_after_secs"] = self.emu.check_after_secs
            info["progress_percent"] = 0 if media.state == "pending" else 50
        if media.state == "succeeded":
            info["progress_percent"] = 100
        if media.state == "failed":
            info["error"] = {
                "code": 1,
                "name": "InvalidMedia",
                "message": "Invalid or Unsupported media, Reason: UnsupportedMedia.",
            }
        return {
            "id": media.id,
            "media_key": f"7_{media.id}",
            "size": len(media.data),
            "expires_after_secs": 86400,
            "processing_info": info,
        }

    def _media_metadata(self, body: Optional[dict]) -> int:
        if "application/json" not in (self.headers.get("Content-Type") or ""):
            return self._invalid("Content-Type must be application/json")
        media_id = (body or {}).get("id")
        alt = ((body or {}).get("metadata") or {}).get("alt_text", {}).get("text")
        if media_id not in self.emu.media:
            return self._invalid("The `id` is not a media id of this account")
        if not isinstance(alt, str) or len(alt) > MAX_ALT:
            return self._invalid(f"alt_text.text must be a string of at most {MAX_ALT} characters")
        self.emu.media[media_id].alt = alt
        return self._json(200, {"data": {"id": media_id, "associated_metadata": True}})

    # -- replies -------------------------------------------------------------------------------

    def _rate_headers(self, day_exhausted: bool = False) -> Dict[str, str]:
        emu = self.emu
        now = int(time.time())
        window = emu._posts_since(15 * 60)
        day = emu._posts_since(24 * 3600)
        headers = {
            "x-rate-limit-limit": str(emu.posts_per_window),
            "x-rate-limit-remaining": str(max(0, emu.posts_per_window - len(window))),
            "x-rate-limit-reset": str(int(window[0].at) + 15 * 60 if window else now + 15 * 60),
        }
        if day_exhausted:
            headers.update(
                {
                    "x-user-limit-24hour-limit": str(emu.posts_per_day),
                    "x-user-limit-24hour-remaining": "0",
                    "x-user-limit-24hour-reset": str(int(day[0].at) + 24 * 3600 if day else now + 24 * 3600),
                }
            )
        return headers

    def _error(self, kind: str, day_exhausted: bool = False) -> int:
        status, body = ERRORS[kind]
        return self._json(status, body, self._rate_headers(day_exhausted) if status == 429 else None, problem=True)

    def _invalid(self, message: str) -> int:
        return self._json(
            400,
            {
                "errors": [{"parameters": {}, "message": message}],
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.twitter.com/2/problems/invalid-request",
            },
            problem=True,
        )

    def _json(self, status: int, body: dict, headers: Optional[Dict[str, str]] = None, problem: bool = False) -> int:
        data = json.dumps(body).encode()
        self._record(status)
        self.send_response(status)
        content_type = "application/problem+json" if problem else "application/json; charset=utf-8"
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("cache-control", "no-cache, no-store, max-age=0")
        for name, value in {**self._rate_headers(), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        return status

    def _answer(self, answer: Answer) -> int:
        """A scripted answer (`answer_next`), whatever it holds."""
        self._record(answer.status)
        answer.send(self)
        return answer.status

    def _drop(self) -> int:
        """Close the connection without a reply, as a crashed proxy or a cut network does."""
        self._record(0)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(2)
        return 0


_RECORDED = recorded_create_reply()
