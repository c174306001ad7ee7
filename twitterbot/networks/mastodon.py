"""Mastodon: its settings and length rule, posting, and how its Idempotency-Key makes a retry safe.

`measure` counts a text the way Mastodon's server does (no network, no client library), and
`MastodonPoster` posts through Mastodon.py, which is imported only when a poster is made, so a
run that posts only to X never loads it (nor its siblings `mastodon_errors`, the server's error
replies as `PostError`s, and `mastodon_instance`, what the server says of its limits)::

    measure("Hello https://example.com/a/very/long/path").length   # 29: a link counts 23
    poster = MastodonPoster(instance="https://example.social", access_token=token,
                            visibility="unlisted", timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://example.social/@pibot/113456789012345678'
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ..errors import ConfigError, ErrorKind, PostError
from ..settings.parsers import show
from ..settings.secrets import looks_like_a_key, scrub_also
from ..settings.table import Setting
from . import Fit, Network, PostResult, twittertext

if TYPE_CHECKING:
    from ..pictures.limits import ImageLimits
    from ..settings import Config

__all__ = [
    "DEFAULT_LIMIT",
    "IDEMPOTENCY_KEY_LIFETIME",
    "URL_LENGTH",
    "VISIBILITIES",
    "NETWORK",
    "MastodonPoster",
    "measure",
    "status_length",
]

log = logging.getLogger(__name__)

# Mastodon's own defaults (StatusLengthValidator): an instance may raise the limit, and says so
# in its instance endpoint (`MastodonPoster.limit`).
DEFAULT_LIMIT = 500
URL_LENGTH = 23

# Who sees a post: everyone on public timelines, everyone but off the public timelines (most
# instances ask bots for this), followers only, mentioned accounts only.
VISIBILITIES = ("public", "unlisted", "private", "direct")

# How long a Mastodon server remembers an Idempotency-Key: PostStatusService stores the status id
# under the key in Redis for 3,600 s, per account, once the status is made.
IDEMPOTENCY_KEY_LIFETIME = 3600

# Mastodon's Account::MENTION_RE: "@user" or "@user@domain", not after a word character, '=' or '/'.
# Both patterns are text, compiled (and cached by `re`) only when a text has an @: the registry
# imports this module on every run.
_MENTION = (
    r"(?i)(?<![=/\w])@(?P<name>(?P<user>[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@(?P<domain>[\w.-]+\w+))?)"
)
# twitter-text's end_mention_match: what may not follow a mention (another @, an accented
# Latin letter, "://").
_NOT_AFTER_MENTION = (
    "[@\uff20\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b"
    "\u0263\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff]|://"
)
_MAX_DOMAIN_LENGTH = 253


def measure(text: str, limit: int = DEFAULT_LIMIT) -> Fit:
    """How long `text` is as Mastodon counts it, against `limit` (the instance's, when known)."""
    return Fit(network="mastodon", length=status_length(text), limit=limit, unit="characters")


def status_length(text: str) -> int:
    """Mastodon's count of a status (StatusLengthValidator, Mastodon 4.x): user-perceived
    characters (extended grapheme clusters, so an emoji with a skin tone is one), after every
    http(s) link becomes 23 characters whatever its length and every ``@user@domain`` counts as
    ``@user``. Links are found with twitter-text's extractor, as Mastodon does; a link Mastodon's
    looser path rules would stretch further, or a gemini:// one, is counted in full here (longer,
    never shorter, so a line that fits here fits there)."""
    from .graphemes import count_graphemes

    if not text.strip():
        return 0
    return count_graphemes(_countable_text(text))


def _countable_text(text: str) -> str:
    """`text` with each link replaced by 23 x's and each remote mention by its local part."""
    entities: List[Tuple[int, int, str]] = []
    if ":" in text:
        twittertext.load()
        from twitter_text.extract_urls import extract_urls_with_indices

        for url in extract_urls_with_indices(text, extract_urls_without_protocol=False):
            start, end = url["indices"]
            entities.append((start, end, "x" * URL_LENGTH))
    if "@" in text:
        not_after = re.compile(_NOT_AFTER_MENTION)
        for match in re.finditer(_MENTION, text):
            if not_after.match(text, match.end()):
                continue
            domain = match.group("domain")
            if domain and len(domain) > _MAX_DOMAIN_LENGTH:
                continue
            entities.append((match.start(), match.end(), "@" + match.group("user")))
    if not entities:
        return text
    # twitter-text's remove_overlapping_entities: by start; one that overlaps a kept one goes.
    pieces, position = [], 0
    for start, end, replacement in sorted(entities, key=lambda entity: entity[0]):
        if start < position:
            continue
        pieces += [text[position:start], replacement]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _parse_visibility(name: str, text: str, where: str, base_dir: Optional[Path]) -> str:
    value = text.strip().lower()
    if value not in VISIBILITIES:
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a visibility: use {', '.join(VISIBILITIES)}"
            " (unlisted keeps a bot out of the public timelines, as most servers ask)"
        )
    return value


class Mastodon(Network):
    """Mastodon: a server and an application's token; the server's own count of a status."""

    name = "mastodon"
    label = "Mastodon"
    settings = {
        "MASTODON_INSTANCE": Setting(
            "", "optional_url", "Mastodon: your server's address, e.g. https://mastodon.social", network="mastodon"
        ),
        "MASTODON_ACCESS_TOKEN": Setting(
            "",
            "secret",
            "Mastodon: access token of an application (Preferences > Development)",
            True,
            "mastodon",
            "your Mastodon server (Preferences > Development > your application)",
        ),
        "MASTODON_VISIBILITY": Setting(
            "unlisted", "visibility", "Mastodon: public, unlisted, private or direct", network="mastodon"
        ),
    }
    required = ("MASTODON_INSTANCE", "MASTODON_ACCESS_TOKEN")
    parsers = {"visibility": _parse_visibility}
    guide = "Getting a Mastodon token"
    site = "your Mastodon server"

    def account_url(self, values: Mapping[str, object]) -> Optional[str]:
        return str(values.get("MASTODON_INSTANCE") or "") or None  # the profile's address needs a request

    def measure(self, text: str) -> Fit:
        return measure(text)

    def image_limits(self) -> ImageLimits:
        """Each server sets its own (`MastodonPoster.image_limits` asks it); until it says, those of
        Mastodon 3.5, which every later server takes too: 8 MiB, 16.7 megapixels (4.x allows 16 MiB
        and 33 megapixels), alt text ("description") 1,500 characters, animated GIFs within the size."""
        from ..pictures.limits import ImageLimits

        size = 8 * 1024 * 1024
        return ImageLimits("mastodon", size, 16_777_216, 8192, 1500, animated_gif_bytes=size, title=self.label)

    def lines_measured(self) -> object:
        return twittertext.borrowed()  # links are found with twitter-text, as Mastodon does

    def poster(self, config: Config) -> MastodonPoster:
        return MastodonPoster(
            instance=str(config.setting("MASTODON_INSTANCE")),
            access_token=str(config.setting("MASTODON_ACCESS_TOKEN")),
            visibility=str(config.setting("MASTODON_VISIBILITY")),
            timeout=config.api_timeout,
            retries=config.api_retries,
        )


class MastodonPoster:
    """Posts to one Mastodon account. Retries, `retries` times with backoff, what `may_retry`
    allows, every try of one post with the same Idempotency-Key; never waits out a rate limit."""

    name = "mastodon"
    retry_safety = (
        "Idempotency-Key: every try of one post sends the same random key, and Mastodon answers a "
        "key it has seen with the status the first try made instead of making a second one "
        f"(servers keep a key for {IDEMPOTENCY_KEY_LIFETIME // 60} minutes, per account). So a "
        "timeout or a broken connection is sent again; only when no try got an answer is the outcome "
        "uncertain. The server stores the key once the status is made, so a retry that arrives while "
        "the first try is still being processed is not covered: the backoff before each retry keeps "
        "that window small"
    )

    def __init__(
        self,
        *,
        instance: str,
        access_token: str,
        visibility: str,
        timeout: float,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 2.0,
    ) -> None:
        if visibility not in VISIBILITIES:
            shown = "that value" if looks_like_a_key(visibility, [access_token]) else repr(visibility)
            raise ConfigError(
                f"MASTODON_VISIBILITY is {shown}: use one of {', '.join(VISIBILITIES)} "
                "(unlisted, the default, keeps a bot off the public timelines, as most instances ask)"
            )
        scrub_also([access_token])  # whoever logs a request's headers, the token never shows
        from mastodon import Mastodon

        from .. import __version__

        self.instance = _base_url(instance)
        self._client = Mastodon(
            access_token=access_token,
            api_base_url=self.instance,
            request_timeout=timeout,
            ratelimit_method="throw",  # "wait" sleeps through a rate limit: never in a cron bot
            version_check_mode="none",  # no extra request to ask the server's version
            user_agent=f"twitterbot/{__version__}",
        )
        self._visibility = visibility
        from .retry import Backoff  # here: the registry imports this module on every run

        self._policy = Backoff(retries, backoff, sleep)
        self._account_url: Optional[str] = None
        self._image_limits: Optional[ImageLimits] = None  # the server's, asked at the first picture

    def __repr__(self) -> str:  # the client holds the token: never show it
        return f"MastodonPoster(instance={self.instance!r}, visibility={self._visibility!r})"

    @property
    def account_url(self) -> Optional[str]:
        """The account's public profile page, once a post or `account()` has shown it."""
        return self._account_url

    def may_retry(self, error: PostError) -> bool:
        """Whether sending the same post again, with the same Idempotency-Key, cannot make a second
        status: no connection was made, the server failed, or no answer came (see `retry_safety`)."""
        return error.kind in _RETRYABLE

    def post(self, text: str, reply_to: Optional[str] = None, images: Sequence[Any] = ()) -> PostResult:
        """Create one status (a reply to status `reply_to`, when given), with `images` uploaded
        first. Returns a confirmed `PostResult`, or an uncertain one when some try may have
        reached the server and none got an answer. Raises `PostError` when Mastodon certainly did
        not post it."""
        import uuid

        from mastodon import MastodonError

        media_ids = self._upload(images) if images else None
        key = uuid.uuid4().hex
        maybe_posted: Optional[str] = None  # why an earlier try may have made the status
        error: Optional[PostError] = None
        tries = 0
        for attempt in self._policy.attempts():
            if attempt:
                assert error is not None
                self._policy.wait(attempt, error, "with the same Idempotency-Key")
            tries += 1
            try:
                status = self._client.status_post(
                    text, in_reply_to_id=reply_to, visibility=self._visibility, idempotency_key=key, media_ids=media_ids
                )
            except MastodonError as exc:
                error = self._classify(exc, reply_to=reply_to)
            else:
                return self._result(text, status)
            if error.kind in _MAYBE_POSTED:
                maybe_posted = maybe_posted or error.summary
            if not self.may_retry(error):
                break
        assert error is not None
        if maybe_posted:
            counted = f"{tries} tries" if tries > 1 else "1 try"
            return self._uncertain(text, f"{maybe_posted} ({counted} with the same Idempotency-Key)")
        raise error

    def _upload(self, images: Sequence[Any]) -> List[str]:
        """The pictures fitted to this server's limits and uploaded with their alt text (networks/media.py)."""
        from .media import upload_to_mastodon
        from .uploads import fit_pictures

        prepared = fit_pictures(images, self.image_limits())
        return upload_to_mastodon(self._client, prepared, policy=self._policy, classify=self._classify)

    def image_limits(self) -> ImageLimits:
        """This server's picture limits, from ``/api/v2/instance`` (asked once); Mastodon's usual
        defaults, with a log line, when it does not say."""
        from mastodon import MastodonError

        from .mastodon_instance import limits_from_instance

        if self._image_limits is None:
            try:
                self._image_limits = limits_from_instance(self._client.instance_v2())
            except MastodonError as exc:
                log.info("%s did not say its picture limits (%s): fitting pictures to the defaults", self.instance, exc)
                self._image_limits = NETWORK.image_limits()
        return self._image_limits

    def limit(self) -> int:
        """The instance's own status length limit, from ``/api/v2/instance`` (Mastodon 4.0+), else
        ``/api/v1/instance``; Mastodon's default 500, with a log line, when neither says."""
        from mastodon import MastodonError

        from .mastodon_instance import max_characters

        problems = []
        for version, fetch in (("v2", self._client.instance_v2), ("v1", self._client.instance_v1)):
            try:
                info = fetch()
            except MastodonError as exc:
                problems.append(f"{version}: {self._classify(exc).summary}")
                continue
            value = max_characters(info)
            if value:
                return value
            problems.append(f"{version}: no max_characters in the answer")
        log.info(
            "%s did not say its status length limit (%s); counting against Mastodon's default %d",
            self.instance,
            "; ".join(problems),
            DEFAULT_LIMIT,
        )
        return DEFAULT_LIMIT

    def account(self) -> str:
        """Check the token with ``verify_credentials``; returns the account, e.g. "@alice@example.social".
        Raises `PostError` ("unauthorized" for a bad token) when it cannot."""
        from mastodon import MastodonError

        try:
            me = self._client.account_verify_credentials()
        except MastodonError as exc:
            raise self._classify(exc) from None
        self._account_url = me.get("url") or self._account_url
        acct = str(me.get("acct") or me.get("username"))
        if "@" in acct:
            return "@" + acct
        domain = urlsplit(self._account_url or self.instance).hostname or urlsplit(self.instance).hostname
        return f"@{acct}@{domain}"

    # -- answers ---------------------------------------------------------------------------------

    def _result(self, text: str, status: Any) -> PostResult:
        status_id = status.get("id") if hasattr(status, "get") else None
        if status_id is None:
            return self._uncertain(text, "Mastodon answered without the status's id")
        account = status.get("account") or {}
        self._account_url = account.get("url") or self._account_url
        return PostResult(text=text, post_id=str(status_id), url=status.get("url") or status.get("uri"))

    def _uncertain(self, text: str, why: str) -> PostResult:
        log.debug("outcome unknown: %s", self.retry_safety)
        return PostResult(text=text, post_id=None, uncertain=why, check_url=self._account_url or self.instance)

    def _classify(self, exc: Exception, reply_to: Optional[str] = None) -> PostError:
        """Turn Mastodon.py's exception into a PostError that says what to do (networks/mastodon_errors.py)."""
        from .mastodon_errors import classify

        return classify(exc, self.instance, self._client, reply_to)


# What each failure says about the post. Retried (with the same key): everything that did not get
# a refusal. Maybe posted: the request was sent and no readable answer came back.
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}
_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR} | _MAYBE_POSTED


def _base_url(instance: str) -> str:
    """``example.social`` or ``https://example.social/`` -> ``https://example.social``."""
    instance = instance.strip().rstrip("/")
    return instance if "://" in instance else "https://" + instance


NETWORK = Mastodon()
