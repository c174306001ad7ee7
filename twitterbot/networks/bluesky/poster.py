"""Posting to Bluesky through the atproto SDK, and how a retry is made safe. `BlueskyPoster` writes
an ``app.bsky.feed.post`` record (`records.py`) into the account's repository with
``com.atproto.repo.createRecord``, logged in with an app password (`session.py`). Links, hashtags
and mentions become facets so they are clickable (the SDK finds them; a mention is linked only
when its handle resolves). The SDK is imported only when a poster connects::

    login = Login("alice.bsky.social", password, "https://bsky.social", state / "bluesky-session.json")
    poster = BlueskyPoster(login, timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://bsky.app/profile/alice.bsky.social/post/3lbq7...'
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence

from ...errors import ErrorKind, PostError
from ...settings.secrets import scrub_also
from .. import PLAIN, LookUp, PostOptions, PostResult
from ..retry import Backoff
from ..uploads import fit_pictures
from .errors import classify, network_error
from .media import bluesky_embed, image_limits
from .records import (
    BOT_LABEL,
    COLLECTION,
    PROFILE,
    PostRef,
    among,
    answers,
    fetch_link_card,
    new_record_key,
    post_record,
    post_url,
    self_labels,
    text_of,
    with_bot_label,
)
from .session import load_session, log_in, save_session, trusted_did

if TYPE_CHECKING:  # the SDK is imported when a poster connects, never at module import
    from atproto_client import Client

    from ..mentions import MentionPage
    from .linkcard import Card, Limits

__all__ = ["BlueskyPoster", "Login"]

log = logging.getLogger(__package__)  # Bluesky's lines log under the network's name


@dataclass(frozen=True)
class Login:
    """Whom the poster logs in as and where: the account's handle and app password (kept out of
    repr(), so never in a log or a traceback), the server it talks to (BLUESKY_SERVICE) and the file
    its session is kept in between runs (a saved session spares a rate-limited login)."""

    handle: str
    app_password: str = field(repr=False)
    service: str
    session_file: Path


class BlueskyPoster:
    """Posts to Bluesky. Retries, `retries` times with backoff, every failure after which the same
    record key can be sent again; never waits out a rate limit (the next scheduled run's job)."""

    name = "bluesky"
    retry_safety = (
        "a record key (a TID) is chosen here once per post and sent with every try of it: the server "
        "refuses a second record under the same key, so a retry can never make a second post; before "
        "each retry, and when a retry is refused (the reference PDS answers 500 for a taken key, others "
        "'already exists'), getRecord looks the key up: found means an earlier try landed"
    )

    def __init__(
        self,
        login: Login,
        *,
        timeout: float,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 2.0,
        link_cards: bool = False,
        card_limits: Optional[Limits] = None,
        video_service: str = "auto",
    ) -> None:
        self.handle = login.handle.strip().lstrip("@").lower()  # handles are case-insensitive
        self._password = login.app_password
        scrub_also([login.app_password])
        self._service = login.service.rstrip("/")
        self._session_file = Path(login.session_file)
        self._timeout = timeout
        self._policy = Backoff(retries, backoff, sleep)
        self._client: Optional[Client] = None
        self._did: Optional[str] = None
        # The client's session was taken from the file on trust, no request proving it yet.
        self._on_trust = False
        self._link_cards = link_cards  # BLUESKY_LINK_CARDS (on unless set to no) turns them on
        self._card_limits = card_limits
        self._video_service = video_service  # BLUESKY_VIDEO_SERVICE: auto, none or a URL (videoservice.py)

    @property
    def account_url(self) -> str:
        """Where a person sees this account's posts (to check an uncertain one)."""
        return f"https://bsky.app/profile/{self.handle}"

    def may_retry(self, error: PostError) -> bool:
        """Whether to send the same record again: any failure that may be passing, since the record
        key keeps a second try from making a second post (see `retry_safety`)."""
        return error.kind in _RETRYABLE

    def account(self) -> str:
        """Log in with the app password and return the account, e.g. "@alice.test (did:plc:...)".
        Always a real login (the new session is saved): the saved session cannot prove the password,
        since a revoked app password leaves its access tokens working for up to two hours."""
        client = self._call(self._connect, True)
        session = self._call(client.com.atproto.server.get_session)
        self.handle = session.handle
        return f"@{session.handle} ({session.did})"

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        """Create one post as `options` say (a reply to `reply_to`, an earlier result's `post_id`,
        if given), its `langs` set to `language` when given, its self-labels to `labels` (what its
        pictures show: sexual, nudity, porn, graphic-media). Bluesky has no content warning of its
        own: `spoiler` is never given (the caller writes it into the text).
        Returns a confirmed `PostResult`, or an uncertain one when no try got an answer and the
        post cannot be looked up. Raises `PostError` when Bluesky certainly did not post it."""
        images, language, labels = options.images, options.language, options.labels
        parent = PostRef.decode(options.reply_to) if options.reply_to else None
        embed = self._pictures(images) if images else None  # uploaded before the post: a failure here posted nothing
        record_key = new_record_key()
        created_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        # The attempt is recorded already; the card is fetched once, before any try. A post has one
        # embed: the pictures the user chose come before a link card.
        card = None if images else self._link_card(text)
        record = None
        error: Optional[PostError] = None
        kinds: List[str] = []  # what each failed try met
        for attempt in self._policy.attempts():
            if attempt:
                assert error is not None
                self._policy.wait(attempt, error, "with the same record key")
                # The earlier try may have landed: then there is nothing to send.
                found = self._look_up(record_key, text, parent)
                if found:
                    return found
            try:
                client = self._call(self._connect)
                if record is None:
                    record = self._call(self._record, client, text, created_at, parent, embed, card, language, labels)
                return self._call(self._create, client, text, record_key, record, parent)
            except PostError as exc:
                error = exc
                kinds.append(exc.kind)
            if not self.may_retry(error):
                break
        assert error is not None
        # Any try that got no answer may have landed (or may still land: the key keeps it to one).
        maybe_posted = error.kind in _MAYBE_POSTED or any(kind in _MAYBE_POSTED for kind in kinds)
        if attempt or maybe_posted or error.kind == ErrorKind.EXISTS:
            found = self._look_up(record_key, text, parent)
            if found:
                return found
        if maybe_posted:
            log.debug("not known whether it was posted: %s", self.retry_safety)
            return PostResult(
                text=text, post_id=None, uncertain=error.summary, check_url=self.account_url, lookup_key=record_key
            )
        raise error

    # -- later: an uncertain post looked up, and the bot label -----------------------------------

    def look_up(
        self, text: str, sent_at: datetime, key: Optional[str], options: Optional[PostOptions] = None
    ) -> LookUp:
        """Whether an uncertain post is there: by its record key when it is known (getRecord), else
        among the account's last 50 posts (listRecords), a reply only as a reply to the post it
        answered (`options.reply_to`). Nothing is sent again: the record key keeps a post to one,
        and a post not found goes back to its sender. Raises PostError when it cannot ask, or the
        answer cannot be read."""
        parent = PostRef.decode(options.reply_to) if options and options.reply_to else None
        client = self._call(self._connect)
        if key:
            found = self._get_record(client, COLLECTION, key)
            if found is None:
                return LookUp(False, "not found by record key")
            if text_of(found) != text or (options is not None and answers(found) != (parent.uri if parent else None)):
                # The key is this post's alone: a record under it with other text is no answer.
                return LookUp(None, "a record under its key has other text, or answers another post")
            return LookUp(True, "found by record key", self._result(text, found.uri, found.cid or "", parent))
        page = self._call(
            self._ask,
            lambda: client.com.atproto.repo.list_records({"repo": self._did, "collection": COLLECTION, "limit": 50}),
        )
        return among(
            page.records,
            text,
            sent_at,
            self._result,
            full=len(page.records) < 50,
            parent=parent,
            any_reply=options is None,
        )

    def bot_label(self) -> Optional[bool]:
        """Whether the account's profile carries the ``bot`` self-label."""
        client = self._call(self._connect)
        profile = self._get_record(client, PROFILE, "self")
        return profile is not None and BOT_LABEL in self_labels(profile.value)

    def mark_bot(self) -> bool:
        """Add the ``bot`` self-label to the account's profile, keeping the rest of it; the write
        names the profile it read (swapRecord), so a change made meanwhile is never overwritten."""
        from atproto_client import models

        client = self._call(self._connect)
        profile = self._get_record(client, PROFILE, "self")
        record = with_bot_label(profile.value if profile else None)
        self._call(
            lambda: client.com.atproto.repo.put_record(
                models.ComAtprotoRepoPutRecord.Data(
                    repo=self._did or "",
                    collection=PROFILE,
                    rkey="self",
                    record=record,
                    swap_record=profile.cid if profile else None,
                )
            )
        )
        return True

    # -- replies: the account's mentions (notifications.py) ------------------------------------

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's mentions and replies to its posts newer than `cursor`, oldest first, at
        most `limit` (`mentions.Listener`), read from its notifications through its PDS (which
        passes the request on to its AppView), with the session posting uses: a run that reads and
        replies logs in once at most."""
        from .notifications import PAGE_SIZE, REASONS, read

        # A saved session with a fresh token is used as it is, unasked: a run with nothing new is
        # then one request, whose answer proves the session for the replies that follow.
        self._call(self._connect, False, True)

        def ask(params: Dict[str, Any]) -> Any:
            client = self._call(self._connect, False, True)
            return self._call(self._ask, lambda: client.app.bsky.notification.list_notifications(params))

        def fetch(page: Optional[str]) -> Any:
            params: Dict[str, Any] = {"reasons": list(REASONS), "limit": PAGE_SIZE}
            if page:
                params["cursor"] = page
            try:
                answer = ask(params)
            except PostError as exc:
                if not self._refused(exc):
                    raise
                answer = ask(params)
            self._on_trust = False
            return list(answer.notifications or ()), answer.cursor

        return read(fetch, self._did or "", cursor, not_before=not_before, limit=limit)

    def log_in_again(self) -> None:
        """Log in with the app password now (and save the new session): the saved one was refused
        by a read made without the SDK (`reader.py`), so trying it again would be a wasted request."""
        self._call(self._connect, True)

    def _get_record(self, client: Client, collection: str, rkey: str) -> Any:
        """A record of the account's repository, or None when the server has none under `rkey`;
        any other failure is the PostError it means."""
        from atproto_client.exceptions import BadRequestError

        def get() -> Any:
            try:
                return client.com.atproto.repo.get_record({"repo": self._did, "collection": collection, "rkey": rkey})
            except BadRequestError as exc:
                if getattr(getattr(exc.response, "content", None), "error", None) == "RecordNotFound":
                    return None
                raise

        return self._call(self._ask, get)

    # -- the steps, each through the SDK -------------------------------------------------------

    def _pictures(self, images: Sequence[Any]) -> Any:
        """The pictures fitted to Bluesky's limits, uploaded as blobs, as the post's embed (media.py);
        a video through the account's video service, where it has one (videoservice.py)."""
        prepared = fit_pictures(images, image_limits())
        client = self._call(self._connect)
        through = None
        if any(image.is_video for image in prepared):
            from .videoservice import account_of, upload_through, video_service_for

            service = video_service_for(self._video_service, account_of(client)[1])
            if service is not None:

                def through(number: int, video: Any) -> Any:
                    return upload_through(
                        client, service, video, number=number, timeout=self._timeout, policy=self._policy,
                        call=self._call_at,
                    )  # fmt: skip

        return bluesky_embed(client, prepared, policy=self._policy, call=self._call, through=through)

    def _record(
        self,
        client: Client,
        text: str,
        created_at: str,
        parent: Optional[PostRef],
        embed: Any = None,
        card: Optional[Card] = None,
        language: Optional[str] = None,
        labels: Sequence[str] = (),
    ) -> Any:
        return post_record(client, text, created_at, parent, (embed, card), self._call, language, labels)

    def _create(self, client: Client, text: str, record_key: str, record: Any, parent: Optional[PostRef]) -> PostResult:
        from atproto_client import models

        data = models.ComAtprotoRepoCreateRecord.Data(
            repo=self._did or "", collection=COLLECTION, rkey=record_key, record=record, validate=True
        )
        response = self._ask(lambda: client.com.atproto.repo.create_record(data))
        return self._result(text, response.uri, response.cid, parent)

    def _result(self, text: str, uri: str, cid: str, parent: Optional[PostRef]) -> PostResult:
        root_uri, root_cid = (parent.root_uri, parent.root_cid) if parent else (uri, cid)
        return PostResult(
            text=text, post_id=PostRef(uri, cid, root_uri, root_cid).encode(), url=post_url(self.handle, uri)
        )

    def _look_up(self, record_key: str, text: str, parent: Optional[PostRef]) -> Optional[PostResult]:
        """The post under this record key, if the server has it (so an earlier try landed)."""
        try:
            client = self._call(self._connect)
            found = self._get_record(client, COLLECTION, record_key)
        except PostError as exc:
            log.debug("could not look the post up: %s", exc.summary)
            return None
        if found is None or text_of(found) != text:
            return None  # not ours: a record key is never reused, so this should not happen
        log.info("the post had landed on an earlier try (found under its record key %s)", record_key)
        return self._result(text, found.uri, found.cid or "", parent)

    # -- the session (session.py) ----------------------------------------------------------------

    def _connect(self, fresh: bool = False, trust: bool = False) -> Client:
        """A logged-in client: the saved session if the server still takes it (refreshed when its
        access token is old), else (or when `fresh`) a new one made with the app password (and saved).
        With `trust`, a saved session with a fresh access token is taken without asking the server
        (`session.log_in`): the caller's request proves it, and `_refused` logs in again if it fails."""
        if self._client is not None and not fresh and (trust or not self._on_trust):
            return self._client
        saved = None if fresh else self._load()
        client, did = log_in(self._service, self._timeout, self.handle, self._password, saved, self._save, trust=trust)
        self._on_trust = bool(trust and saved and did and trusted_did(saved) == did)
        if did:
            self._did = did
        self._client = client
        return client

    def _refused(self, error: PostError) -> bool:
        """Whether `error` is the server refusing a session taken on trust; if so the poster logs in
        with the app password, and the caller tries once more."""
        if error.kind != ErrorKind.UNAUTHORIZED or not self._on_trust:
            return False
        log.info("the saved Bluesky session was refused (%s): logging in with the app password", error.summary)
        self._call(self._connect, True)
        return True

    def _load(self) -> Optional[str]:
        """The saved session string, if it is for this account and server."""
        return load_session(self._session_file, self.handle, self._service)

    def _save(self, session: Any) -> None:
        """Keep the session (mode 0600, written whole or not at all) for the next run; note its DID."""
        self._did = session.did
        save_session(self._session_file, self.handle, self._service, session)

    # -- errors (errors.py) --------------------------------------------------------------------

    def _call(self, step: Callable[..., Any], *args: Any) -> Any:
        """Run one SDK step, turning its exceptions into PostErrors that say what to do."""
        return self._call_at(self._service, step, *args)

    def _call_at(self, where: str, step: Callable[..., Any], *args: Any) -> Any:
        """`_call` for a step sent to the server at `where` (the PDS, or a video service)."""
        import httpx
        from atproto_client.exceptions import AtProtocolError

        from ..http import AnswerTooLarge

        try:
            return step(*args)
        except AtProtocolError as exc:
            raise classify(exc, self.handle, where) from None
        # The SDK passes some through as they are: a dropped reply, one that could not be
        # unpacked, one past the bound on an answer.
        except (httpx.HTTPError, AnswerTooLarge) as exc:
            raise network_error(exc, where) from None

    def _ask(self, request: Callable[[], Any]) -> Any:
        """One request of the SDK, alone (nothing of the bot's is built in it), whose answer may not
        be JSON at all: the SDK's reader then raises a bare ValueError, which is the answer's fault."""
        from ..answers import unreadable

        try:
            return request()
        except ValueError as exc:
            if type(exc) is not ValueError:  # pydantic's and the like: a model, not the answer
                raise
            raise unreadable(self._service, "not JSON") from None

    # -- link cards (docs/bluesky-link-cards.md; their embed: records.py) -----------------------

    def _link_card(self, text: str) -> Optional[Card]:
        """The card of the text's first link, as Bluesky's app would attach it, or None (cards off,
        no link, or the page gave none: `fetch_card` logs why). Never raises for a page's doing."""
        found = fetch_link_card(text, limits=self._card_limits) if self._link_cards else None
        return found.card if found else None


# Kinds of failure: retried (the record key makes it safe), and those after which the post may
# exist (the request was sent; no answer came).
_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR, ErrorKind.TIMEOUT, ErrorKind.NETWORK}
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}
