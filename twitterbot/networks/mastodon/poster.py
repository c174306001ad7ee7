"""Posting to Mastodon through Mastodon.py, and how its Idempotency-Key makes a retry safe.
Mastodon.py is imported when a poster is made::

    poster = MastodonPoster(instance="https://example.social", access_token=token,
                            visibility="unlisted", timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://example.social/@pibot/113456789012345678'
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence
from urllib.parse import urlsplit

from ... import __version__
from ...errors import ConfigError, ErrorKind, PostError
from ...settings.secrets import looks_like_a_key, scrub_also
from .. import PLAIN, LookUp, PostOptions, PostResult
from ..mentions import MentionPage, most_private
from ..retry import Backoff
from ..uploads import fit_pictures
from .errors import classify
from .instance import limits_from_instance, max_characters
from .media import image_limits, upload_to_mastodon
from .reader import MastodonReader, base_url
from .status import DEFAULT_LIMIT, VISIBILITIES, among_statuses

if TYPE_CHECKING:
    from ...pictures.limits import ImageLimits

__all__ = ["IDEMPOTENCY_KEY_LIFETIME", "MastodonPoster"]

log = logging.getLogger(__package__)  # Mastodon's lines log under the network's name

# How long a Mastodon server remembers an Idempotency-Key: PostStatusService stores the status id
# under the key in Redis for 3,600 s, per account, once the status is made.
IDEMPOTENCY_KEY_LIFETIME = 3600
# A look-up sends a post again with its key only this long before the server forgets the key.
KEY_MARGIN = 300
STATUSES_READ = 40  # the statuses one look-up reads: Mastodon's largest page


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

        from ..http import bounded_session

        self.instance = base_url(instance)
        self._client = Mastodon(
            access_token=access_token,
            api_base_url=self.instance,
            request_timeout=timeout,
            ratelimit_method="throw",  # "wait" sleeps through a rate limit: never in a cron bot
            version_check_mode="none",  # no extra request to ask the server's version
            user_agent=f"twitterbot/{__version__}",
            session=bounded_session(),  # every answer read within the bound all networks share
        )
        self._reader = MastodonReader(instance=instance, access_token=access_token, timeout=timeout)
        self._visibility = visibility
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

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        """Create one status as `options` say: a reply to status `reply_to`, when given, its
        pictures uploaded first, in `language` (ISO 639, its `language`) behind the warning
        `spoiler` (its `spoiler_text`) when given; as public as the most private of
        MASTODON_VISIBILITY and `visibility` (a post never goes wider than the owner set), its
        pictures marked `sensitive` when asked. Returns a confirmed `PostResult`, or an uncertain
        one when some try may have reached the server and none got an answer. Raises `PostError`
        when Mastodon certainly did not post it."""
        import uuid

        from mastodon import MastodonError

        images, reply_to = options.images, options.reply_to
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
                status = self._status_post(text, options, key, media_ids)
            except (MastodonError, RecursionError) as exc:
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
            # The key settles it later only for a post with no pictures: sent again with it, a
            # post the server never got would be made then, and it must be the same post.
            found_by = None if images else key
            return self._uncertain(text, f"{maybe_posted} ({counted} with the same Idempotency-Key)", found_by)
        raise error

    def look_up(
        self, text: str, sent_at: datetime, key: Optional[str], options: Optional[PostOptions] = None
    ) -> LookUp:
        """Whether an uncertain status is there: among the account's last 40 statuses, a status of
        `text` made since it was sent, in reply to the status it answered (`options.reply_to`).
        Not there and the server still keeping its Idempotency-Key (`key`), the same request is
        sent again with it, exactly as first sent (`options`, as the history kept them: its
        visibility, the status it answers, its warning and language): the server answers with the
        status the first request made, or makes it now, once either way. A request that cannot be
        sent again the same (its options not kept, or pictures, which would be uploaded again) is
        never sent: the look-up reads the statuses only. An answer that cannot be read cannot
        tell; a failure to ask is a PostError."""
        from mastodon import MastodonError

        try:
            found = self._among(text, sent_at, options)
            resend = key and options is not None and not options.images
            if found.found or not resend:
                return found
            if (datetime.now(timezone.utc) - sent_at).total_seconds() >= IDEMPOTENCY_KEY_LIFETIME - KEY_MARGIN:
                return found  # the server may have forgotten the key: a request now could post it twice
            assert options is not None and key is not None
            status = self._status_post(text, options, key, None)
        except (MastodonError, RecursionError) as exc:
            raise self._classify(exc) from None
        result = self._result(text, status)
        if not result.confirmed:
            return LookUp(None, "sent again with its Idempotency-Key, and the answer could not be read")
        # The statuses read just now could not show it: the server's answer is the status the first
        # request made, or one made now. Either way there is one, as it was first sent.
        return LookUp(True, "not seen among the recent statuses; sent again with its Idempotency-Key", result)

    def _among(self, text: str, sent_at: datetime, options: Optional[PostOptions]) -> LookUp:
        """The look-up through the account's last statuses (`among_statuses`): a reply only as a
        reply to the status it answered (`options` None: recorded before the history kept what a
        post answers, so that is not compared)."""
        me = self._client.account_verify_credentials()
        account_id = me.get("id") if isinstance(me, dict) else None
        if not isinstance(account_id, (str, int)) or isinstance(account_id, bool):
            return LookUp(None, "the server's answer could not be read (the account has no id)")
        statuses = self._client.account_statuses(account_id, limit=STATUSES_READ)
        if not isinstance(statuses, list):
            return LookUp(None, "the server's answer could not be read (its statuses are not a list)")
        return among_statuses(
            statuses,
            text,
            sent_at,
            lambda status: self._result(text, status),
            full=len(statuses) < STATUSES_READ,
            reply_to=options.reply_to if options else None,
            any_reply=options is None,
        )

    def _status_post(self, text: str, options: PostOptions, key: str, media_ids: Optional[List[str]]) -> Any:
        """The one request that makes a status: `options` as Mastodon names them, with `key`."""
        return self._client.status_post(
            text,
            in_reply_to_id=options.reply_to,
            visibility=most_private(self._visibility, options.visibility),
            sensitive=options.sensitive,
            idempotency_key=key,
            media_ids=media_ids,
            spoiler_text=options.spoiler,
            language=options.language,
        )

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's new mentions, read as a round of replies reads them (`MastodonReader`,
        the same token and timeout): one read when nothing is new."""
        return self._reader.mentions(cursor, not_before=not_before, limit=limit)

    def bot_label(self) -> Optional[bool]:
        """Whether the account has Mastodon's bot flag ("automated" on its profile)."""
        from mastodon import MastodonError

        try:
            return bool(self._client.account_verify_credentials().get("bot"))
        except (MastodonError, RecursionError) as exc:
            raise self._classify(exc, reading=True) from None

    def mark_bot(self) -> bool:
        """Set the account's bot flag (update_credentials; the token needs write:accounts)."""
        from mastodon import MastodonError

        try:
            self._client.account_update_credentials(bot=True)
        except (MastodonError, RecursionError) as exc:
            raise self._classify(exc) from None
        return True

    def _upload(self, images: Sequence[Any]) -> List[str]:
        """The pictures fitted to this server's limits and uploaded with their alt text (media.py)."""
        prepared = fit_pictures(images, self.image_limits())
        return upload_to_mastodon(self._client, prepared, policy=self._policy, classify=self._classify)

    def image_limits(self) -> ImageLimits:
        """This server's picture limits, from ``/api/v2/instance`` (asked once); Mastodon's usual
        defaults, with a log line, when it does not say."""
        from mastodon import MastodonError

        if self._image_limits is None:
            try:
                self._image_limits = limits_from_instance(self._client.instance_v2())
            except (MastodonError, RecursionError) as exc:
                log.info("%s did not say its picture limits (%s): fitting pictures to the defaults", self.instance, exc)
                self._image_limits = image_limits()
        return self._image_limits

    def limit(self) -> int:
        """The instance's own status length limit, from ``/api/v2/instance`` (Mastodon 4.0+), else
        ``/api/v1/instance``; Mastodon's default 500, with a log line, when neither says."""
        from mastodon import MastodonError

        problems = []
        for version, fetch in (("v2", self._client.instance_v2), ("v1", self._client.instance_v1)):
            try:
                info = fetch()
            except (MastodonError, RecursionError) as exc:
                problems.append(f"{version}: {self._classify(exc, reading=True).summary}")
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
        except (MastodonError, RecursionError) as exc:
            raise self._classify(exc, reading=True) from None
        self._account_url = me.get("url") or self._account_url
        acct = str(me.get("acct") or me.get("username"))
        if "@" in acct:
            return "@" + acct
        domain = urlsplit(self._account_url or self.instance).hostname or urlsplit(self.instance).hostname
        return f"@{acct}@{domain}"

    # -- answers ---------------------------------------------------------------------------------

    def _result(self, text: str, status: Any) -> PostResult:
        """The status as a `PostResult`; uncertain when the answer gives no id (whatever its shape)."""
        status_id = status.get("id") if isinstance(status, dict) else None
        if not isinstance(status_id, (str, int)) or isinstance(status_id, bool) or not str(status_id).strip():
            return self._uncertain(text, "Mastodon answered without the status's id")
        account = status.get("account")
        url = account.get("url") if isinstance(account, dict) else None
        self._account_url = url if isinstance(url, str) else self._account_url
        link = status.get("url") or status.get("uri")
        return PostResult(text=text, post_id=str(status_id), url=link if isinstance(link, str) else None)

    def _uncertain(self, text: str, why: str, key: Optional[str] = None) -> PostResult:
        log.debug("outcome unknown: %s", self.retry_safety)
        return PostResult(
            text=text, post_id=None, uncertain=why, check_url=self._account_url or self.instance, lookup_key=key
        )

    def _classify(self, exc: Exception, reply_to: Optional[str] = None, *, reading: bool = False) -> PostError:
        """Turn Mastodon.py's exception into a PostError that says what to do (errors.py); a
        `reading` request posted nothing whatever happened."""
        return classify(exc, self.instance, self._client, reply_to, reading=reading)


# What each failure says about the post. Retried (with the same key): everything that did not get
# a refusal. Maybe posted: the request was sent and no readable answer came back.
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}
_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR} | _MAYBE_POSTED
