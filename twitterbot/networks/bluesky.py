"""Bluesky: its settings and length rule, posting through the atproto SDK, and how a retry is made
safe. `BlueskyPoster` writes an ``app.bsky.feed.post`` record into the account's repository with
``com.atproto.repo.createRecord``, logged in with an app password. Links, hashtags and mentions
become facets so they are clickable (the SDK finds them; a mention is linked only when its handle
resolves). The session is kept in a file (mode 0600) and refreshed, because ``createSession`` is
rate limited (30 per 5 minutes, a few hundred a day): the password is sent again only when the
saved refresh token is refused::

    result = NETWORK.poster(config).post("Hello from my Pi")
    result.url   # 'https://bsky.app/profile/alice.bsky.social/post/3lbq7...'

The atproto SDK is imported only when a poster connects: `measure` is cheap, and a run that posts
only to X never loads it. Its siblings, imported with the SDK: `bluesky_session` (the saved login),
`bluesky_records` (the post's record: facets, reply, embed) and `bluesky_errors` (Bluesky's error
replies as `PostError`s).
"""

from __future__ import annotations

import logging
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, NamedTuple, Optional, Sequence

from ..errors import ConfigError, ErrorKind, ExitStatus, PostError
from ..settings.parsers import show
from ..settings.secrets import scrub_also
from ..settings.table import Setting
from . import Fit, Network, PostResult

if TYPE_CHECKING:  # the SDK is imported when a poster connects, never at module import
    from atproto import Client

    from ..pictures.limits import ImageLimits
    from ..settings import Config
    from .linkcard import Card, CardResult, Limits  # and the card fetcher when a post has a link

__all__ = ["DEFAULT_SERVICE", "MAX_BYTES", "MAX_GRAPHEMES", "NETWORK", "BlueskyPoster", "PostRef"]
__all__ += ["fetch_link_card", "first_link", "measure", "new_record_key", "post_url"]

DEFAULT_SERVICE = "https://bsky.social"
MAX_GRAPHEMES = 300  # app.bsky.feed.post's text: maxGraphemes
MAX_BYTES = 3000  # ... and maxLength (UTF-8 bytes)
COLLECTION = "app.bsky.feed.post"

log = logging.getLogger(__name__)


def measure(text: str) -> Fit:
    """The text's length as Bluesky counts it (extended grapheme clusters, at most 300), and the
    byte rule (3,000 bytes of UTF-8) as the reason when that one fails."""
    from .graphemes import count_graphemes

    size = len(text.encode("utf-8"))
    reason = None
    if size > MAX_BYTES:
        reason = f"{size:,} bytes in UTF-8, over Bluesky's {MAX_BYTES:,}-byte limit"
    return Fit("bluesky", count_graphemes(text), MAX_GRAPHEMES, "graphemes", reason)


def post_url(handle: str, uri: str) -> str:
    """The bsky.app link of a post from its at:// URI."""
    return f"https://bsky.app/profile/{handle}/post/{uri.rsplit('/', 1)[-1]}"


# Record keys are TIDs: 53 bits of microseconds since 1970 and 10 bits of clock id, written in
# base32 "sortable" (13 characters), as the atproto spec defines them.
_S32 = "234567abcdefghijklmnopqrstuvwxyz"


def new_record_key(now: Optional[float] = None, clock_id: Optional[int] = None) -> str:
    """A fresh TID to use as one post's record key (the same key on every retry of that post)."""
    micros = int((time.time() if now is None else now) * 1_000_000)
    import random

    clock = random.getrandbits(10) if clock_id is None else clock_id & 0x3FF
    value = ((micros & ((1 << 53) - 1)) << 10) | clock
    return "".join(_S32[(value >> (5 * i)) & 31] for i in range(12, -1, -1))


class PostRef(NamedTuple):
    """What a reply needs to know of its parent: the parent's and the thread root's uri and cid.
    It travels as `PostResult.post_id`, written ``"<uri> <cid> <root uri> <root cid>"``."""

    uri: str
    cid: str
    root_uri: str
    root_cid: str

    def encode(self) -> str:
        return " ".join(self)

    @classmethod
    def decode(cls, text: str) -> PostRef:
        parts = text.split()
        if len(parts) != 4 or not (parts[0].startswith("at://") and parts[2].startswith("at://")):
            raise PostError(
                f"{text!r} is not a Bluesky post reference (expected '<at:// uri> <cid> <root uri> <root cid>'): "
                "the thread to reply to was recorded by another network or is damaged; start a new thread",
                kind=ErrorKind.BAD_REPLY_TO,
                exit_status=ExitStatus.DATA_ERROR,
            )
        return cls(*parts)


# A handle is a domain name: letters, digits and hyphens in dot-separated parts. Kept as text: `re`
# compiles it (and caches it) only for a run that has a handle to check.
_HANDLE = r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?"
# Bluesky makes app passwords as four groups of four letters and digits: xxxx-xxxx-xxxx-xxxx.
_APP_PASSWORD = r"[a-z0-9]{4}(-[a-z0-9]{4}){3}"


def _parse_handle(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().lstrip("@").lower()
    if value and not re.fullmatch(_HANDLE, value):
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a Bluesky handle: write it like alice.bsky.social"
            " (your profile shows it after the @)"
        )
    return value


def _parse_app_password(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip()
    if value and not re.fullmatch(_APP_PASSWORD, value):
        # Never echo it: it may be the account's real password.
        raise ConfigError(
            f"{name} from {where} is not an app password (they look like xxxx-xxxx-xxxx-xxxx): make one in"
            " Bluesky's Settings > Privacy and security > App passwords; never put your account password here"
        )
    return value


class Bluesky(Network):
    """Bluesky: a handle and an app password on a PDS; 300 graphemes and 3,000 bytes."""

    name = "bluesky"
    label = "Bluesky"
    settings = {
        "BLUESKY_HANDLE": Setting("", "handle", "Bluesky: your handle, e.g. alice.bsky.social", network="bluesky"),
        "BLUESKY_APP_PASSWORD": Setting(
            "",
            "app_password",
            "Bluesky: an app password (never your account password)",
            True,
            "bluesky",
            "Bluesky (Settings > Privacy and security > App passwords)",
        ),
        "BLUESKY_SERVICE": Setting(
            DEFAULT_SERVICE, "url", "Bluesky: your PDS (the default serves bsky.social accounts)", network="bluesky"
        ),
        "BLUESKY_LINK_CARDS": Setting(
            "yes",
            "bool",
            "Bluesky: a post with a link and no images shows the linked page's card (title, description, "
            "picture), fetched at post time within 10 s; no turns it off",
            network="bluesky",
        ),
    }
    required = ("BLUESKY_HANDLE", "BLUESKY_APP_PASSWORD")
    parsers = {"handle": _parse_handle, "app_password": _parse_app_password}
    guide = "Getting a Bluesky app password"
    site = "bsky.app"

    def account_url(self, values: Mapping[str, object]) -> Optional[str]:
        handle = str(values.get("BLUESKY_HANDLE") or "")
        return f"https://bsky.app/profile/{handle}" if handle else None

    def measure(self, text: str) -> Fit:
        return measure(text)

    def image_limits(self) -> ImageLimits:
        """A blob of ``app.bsky.embed.images`` is at most 2,000,000 bytes (the lexicon since April
        2026); the official app caps alt text at 2,000 characters and pictures at 4,000 pixels,
        and shows no animated GIFs as pictures."""
        from ..pictures.limits import ImageLimits

        return ImageLimits("bluesky", 2_000_000, 4000 * 4000, 4000, 2000, title=self.label)

    def poster(self, config: Config) -> BlueskyPoster:
        return BlueskyPoster(
            handle=str(config.setting("BLUESKY_HANDLE")),
            app_password=str(config.setting("BLUESKY_APP_PASSWORD")),
            service=str(config.setting("BLUESKY_SERVICE")),
            session_file=config.state_dir / "bluesky-session.json",
            timeout=config.api_timeout,
            retries=config.api_retries,
            link_cards=bool(config.setting("BLUESKY_LINK_CARDS")),
        )

    def preview(
        self, text: str, config: Config, *, pictures: int = 0, folder: Optional[Callable[[], Path]]
    ) -> List[str]:
        """The link card a post of `text` would carry (docs/bluesky-link-cards.md): none with
        pictures (a post has one embed); its thumbnail written into `folder()` for a dry run; one
        line for `check --online`."""
        found = fetch_link_card(text) if config.setting("BLUESKY_LINK_CARDS") and not pictures else None
        if found is None:
            return []
        from .linkcard import describe, summary

        if folder is None:
            return [f"link {found.url}: {summary(found)}"]
        has_thumb = found.card is not None and found.card.thumb is not None
        return ["\n".join(describe(found, folder() if has_thumb else None))]


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
        *,
        handle: str,
        app_password: str,
        service: str,
        session_file: Path,
        timeout: float,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 2.0,
        link_cards: bool = False,
        card_limits: Optional[Limits] = None,
    ) -> None:
        self.handle = handle.strip().lstrip("@").lower()  # handles are case-insensitive
        self._password = app_password
        scrub_also([app_password])
        self._service = service.rstrip("/")
        self._session_file = Path(session_file)
        self._timeout = timeout
        from .retry import Backoff  # here: the registry imports this module on every run

        self._policy = Backoff(retries, backoff, sleep)
        self._client: Optional[Client] = None
        self._did: Optional[str] = None
        self._link_cards = link_cards  # BLUESKY_LINK_CARDS (on unless set to no) turns them on
        self._card_limits = card_limits

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

    def post(self, text: str, reply_to: Optional[str] = None, images: Sequence[Any] = ()) -> PostResult:
        """Create one post (a reply to `reply_to`, an earlier result's `post_id`, if given).
        Returns a confirmed `PostResult`, or an uncertain one when no try got an answer and the
        post cannot be looked up. Raises `PostError` when Bluesky certainly did not post it."""
        parent = PostRef.decode(reply_to) if reply_to else None
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
                    record = self._call(self._record, client, text, created_at, parent, embed, card)
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
            return PostResult(text=text, post_id=None, uncertain=error.summary, check_url=self.account_url)
        raise error

    # -- the steps, each through the SDK -------------------------------------------------------

    def _pictures(self, images: Sequence[Any]) -> Any:
        """The pictures fitted to Bluesky's limits, uploaded as blobs, as the post's embed (networks/media.py)."""
        from .media import bluesky_embed
        from .uploads import fit_pictures

        prepared = fit_pictures(images, NETWORK.image_limits())
        return bluesky_embed(self._call(self._connect), prepared, policy=self._policy, call=self._call)

    def _record(
        self,
        client: Client,
        text: str,
        created_at: str,
        parent: Optional[PostRef],
        embed: Any = None,
        card: Optional[Card] = None,
    ) -> Any:
        from .bluesky_records import post_record

        return post_record(client, text, created_at, parent, embed, card, self._call)

    def _create(self, client: Client, text: str, record_key: str, record: Any, parent: Optional[PostRef]) -> PostResult:
        from atproto import models

        response = client.com.atproto.repo.create_record(
            models.ComAtprotoRepoCreateRecord.Data(
                repo=self._did or "", collection=COLLECTION, rkey=record_key, record=record, validate=True
            )
        )
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
            found = self._call(
                lambda: client.com.atproto.repo.get_record(
                    {"repo": self._did, "collection": COLLECTION, "rkey": record_key}
                )
            )
        except PostError as exc:
            log.debug("could not look the post up: %s", exc.summary)
            return None
        if getattr(found.value, "text", None) != text:
            return None  # not ours: a record key is never reused, so this should not happen
        log.info("the post had landed on an earlier try (found under its record key %s)", record_key)
        return self._result(text, found.uri, found.cid or "", parent)

    # -- the session (networks/bluesky_session.py) ---------------------------------------------

    def _connect(self, fresh: bool = False) -> Client:
        """A logged-in client: the saved session if the server still takes it (refreshed when its
        access token is old), else (or when `fresh`) a new one made with the app password (and saved)."""
        if self._client is not None and not fresh:
            return self._client
        from .bluesky_session import log_in

        saved = None if fresh else self._load()
        client, did = log_in(self._service, self._timeout, self.handle, self._password, saved, self._save)
        if did:
            self._did = did
        self._client = client
        return client

    def _load(self) -> Optional[str]:
        """The saved session string, if it is for this account and server."""
        from .bluesky_session import load_session

        return load_session(self._session_file, self.handle, self._service)

    def _save(self, session: Any) -> None:
        """Keep the session (mode 0600, written whole or not at all) for the next run; note its DID."""
        from .bluesky_session import save_session

        self._did = session.did
        save_session(self._session_file, self.handle, self._service, session)

    # -- errors (networks/bluesky_errors.py) ------------------------------------------------------

    def _call(self, step: Callable[..., Any], *args: Any) -> Any:
        """Run one SDK step, turning its exceptions into PostErrors that say what to do."""
        import httpx
        from atproto.exceptions import AtProtocolError

        from .bluesky_errors import classify, network_error

        try:
            return step(*args)
        except AtProtocolError as exc:
            raise classify(exc, self.handle, self._service) from None
        except httpx.TransportError as exc:  # the SDK passes some through as they are (a dropped reply)
            raise network_error(exc, self._service) from None

    # -- link cards (docs/bluesky-link-cards.md; their embed: networks/bluesky_records.py) -----

    def _link_card(self, text: str) -> Optional[Card]:
        """The card of the text's first link, as Bluesky's app would attach it, or None (cards off,
        no link, or the page gave none: `fetch_card` logs why). Never raises for a page's doing."""
        found = fetch_link_card(text, limits=self._card_limits) if self._link_cards else None
        return found.card if found else None


# Kinds of failure: retried (the record key makes it safe), and those after which the post may
# exist (the request was sent; no answer came).
_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR, ErrorKind.TIMEOUT, ErrorKind.NETWORK}
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}


def first_link(text: str) -> Optional[str]:
    """The first link of `text` as its facets find it (the SDK's own detection, which needs no
    connection): the page a link card shows."""
    from atproto_client.utils.facet_detection import detect_facets

    for facet in detect_facets(text):
        for feature in facet.features:
            uri = getattr(feature, "uri", None)
            if uri:
                return uri
    return None


def fetch_link_card(text: str, *, limits: Optional[Limits] = None) -> Optional[CardResult]:
    """The card a post of `text` would carry (its first link's page), or why it has none; None
    when the text has no link. What a dry run and `check --online` show."""
    from .linkcard import fetch_card

    link = first_link(text)
    return fetch_card(link, limits=limits) if link else None


NETWORK = Bluesky()
