"""Posting to X (``POST /2/tweets``) with tweepy's `Client` and OAuth 1.0a user keys, and how X
makes a retry safe: it does not, so only a request that certainly made no post is sent again.
tweepy and requests are imported when a poster is made. tweepy sends requests with no timeout and
offers no base URL, so an adapter mounted on the client's session adds both (and reads every answer
within the bound all networks share). The two reads, the account and its recent posts, are signed
requests the poster makes and reads itself through that session::

    poster = XPoster(credentials, timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence

from ...errors import ErrorKind, PostError
from .. import LookUp, PostResult
from ..http import json_object, unreadable
from ..mentions import Mention, MentionPage
from ..retry import Backoff
from ..uploads import fit_pictures
from .api import DEFAULT_BASE_URL, X_ORIGINS, Credentials, adapter, signer, status_url
from .errors import classify, network_error, refusal
from .media import image_limits, upload_to_x

if TYPE_CHECKING:
    import tweepy

    from ...pictures.prepare import Attachment

__all__ = ["XPoster"]

log = logging.getLogger(__package__)  # X's lines log under the network's name


class XPoster:
    """Posts to X. Retries, `retries` times with backoff, only what `retry_safety` allows; never
    waits out a rate limit (that is the next scheduled run's job)."""

    name = "x"
    # X has no idempotency key: a repeated POST /2/tweets is a second post, unless X's duplicate-
    # content check happens to refuse it, and that check is a policy, not a guarantee.
    retry_safety = (
        "none: X has no idempotency key, so a request that may have reached X is never sent again "
        "(its outcome is uncertain); only failures that certainly made no post are retried: no "
        "connection (refused, DNS, connect timeout) or a server error X answered with"
    )

    def __init__(
        self,
        credentials: Credentials,
        *,
        timeout: float,
        retries: int,
        base_url: str = DEFAULT_BASE_URL,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 2.0,
    ) -> None:
        import tweepy

        self._client = tweepy.Client(
            consumer_key=credentials.api_key,
            consumer_secret=credentials.api_secret,
            access_token=credentials.access_token,
            access_token_secret=credentials.access_token_secret,
            wait_on_rate_limit=False,  # True retries 429s forever: never in a cron bot
        )
        mounted = adapter(timeout=timeout, base_url=base_url)
        for origin in X_ORIGINS:
            self._client.session.mount(origin, mounted)
        self._policy = Backoff(retries, backoff, sleep)
        self._credentials = credentials  # the media upload signs its own requests (media.py)
        # An access token starts with the account's numeric id ("12345-abc..."): public, and
        # enough for a link to the account's posts without asking X.
        user_id = credentials.access_token.split("-", 1)[0]
        self._user_id = user_id if user_id.isdigit() else None
        self._username: Optional[str] = None
        self._reader: Optional[tweepy.Client] = None  # for reads whose answers the bot reads itself

    @property
    def account_url(self) -> Optional[str]:
        """Where a person sees this account's posts (to check an uncertain one), if known."""
        if self._username:
            return f"https://x.com/{self._username}"
        if self._user_id:
            return f"https://x.com/intent/user?user_id={self._user_id}"
        return None

    def may_retry(self, error: PostError) -> bool:
        """Whether sending the request again cannot make a second post (see `retry_safety`)."""
        return error.kind in _NEVER_POSTED_RETRYABLE

    def post(
        self,
        text: str,
        reply_to: Optional[str] = None,
        images: Sequence[Attachment] = (),
        *,
        language: Optional[str] = None,
        spoiler: Optional[str] = None,
    ) -> PostResult:
        """Create one post, with `images` uploaded first. X's API takes no language (it guesses one)
        and has no content warning: `language` is not sent, and `spoiler` is never given (the
        network does not declare `content_warnings`). Returns a confirmed `PostResult`, or an
        uncertain one when the request may have reached X but no answer came (never sent again).
        Raises `DuplicatePost` if X already has this text, `PostError` when X certainly did not post it."""
        import requests
        import tweepy

        media_ids = self._upload(images) if images else None
        error: Optional[PostError] = None
        for attempt in self._policy.attempts():
            if attempt:
                assert error is not None
                self._policy.wait(attempt, error)
            try:
                response = self._client.create_tweet(
                    text=text, in_reply_to_tweet_id=reply_to, media_ids=media_ids, user_auth=True
                )
            except tweepy.TweepyException as exc:
                error = classify(exc)
            except requests.RequestException as exc:
                error = network_error(exc)
            except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as exc:
                # tweepy reads X's answer as an object: one that is not (a list, a string, JSON
                # nested too deep) fails inside it. The request reached X: it may have posted.
                return self._uncertain(text, f"X's answer could not be read ({type(exc).__name__})")
            else:
                tweet_id = response.data.get("id") if isinstance(response.data, dict) else None
                if tweet_id is None:
                    return self._uncertain(text, "X answered without the post's id")
                return PostResult(text=text, post_id=str(tweet_id), url=status_url(str(tweet_id)))
            if error.kind in _MAYBE_POSTED:
                return self._uncertain(text, error.summary)
            if not self.may_retry(error):
                break
        assert error is not None
        raise error

    def _upload(self, images: Sequence[Attachment]) -> List[str]:
        """The pictures fitted to X's limits and uploaded with their alt text (media.py)."""
        return upload_to_x(
            self._client.session,
            self._credentials,
            fit_pictures(images, image_limits()),
            policy=self._policy,
            classify=refusal,
            network_error=network_error,
        )

    def _uncertain(self, text: str, why: str) -> PostResult:
        log.debug("not sending it again: %s", self.retry_safety)
        return PostResult(text=text, post_id=None, uncertain=why, check_url=self.account_url)

    def account(self) -> str:
        """The account the keys post as, checked online (`check --online`): "@username"."""
        return f"@{self.verify()}"

    def look_up(self, text: str, sent_at: datetime, key: Optional[str]) -> LookUp:
        """Whether an uncertain post is there: one read of the account's posts made since it was
        sent (``GET /2/users/:id/tweets``, at most 100, newest first, with their links; X bills the
        read), compared by words and links (timeline.py). Raises PostError when X cannot be asked."""
        from .timeline import among_posts, timeline_query

        user_id = self._user_id or self._me()
        answer = self._read(f"/2/users/{user_id}/tweets", timeline_query(sent_at))
        return among_posts(answer, text, status_url)

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's new mentions, oldest first, at most `limit` (`mentions.Listener`): X's
        ``GET /2/users/:id/mentions``, newest first, paged back to the cursor's mention (the first
        read: to `not_before`), each page a billed read. The cursor (mentions.py) keeps the
        account's id, so a run with nothing new makes one request; the first read asks X for the id
        (``GET /2/users/me``), one more. When more are new than `limit`, the cursor stops at the
        last one given, so the next read gets the rest. Raises PostError, as a post does, when X
        cannot be asked or its answer cannot be read."""
        from .mentions import MAX_PAGES, Cursor, mentions_query, read_page

        kept = Cursor.parse(cursor)
        reads = 0
        if kept is None:
            kept, reads = Cursor(self._me(), None), 1
        found: List[Mention] = []
        newest, token = kept.since, None
        for _ in range(MAX_PAGES):
            page, page_newest, token = read_page(
                self._mentions_page(kept.me, mentions_query(kept, not_before, token)), kept.me
            )
            reads += 1
            found += page
            if page_newest is not None and (newest is None or int(page_newest) > int(newest)):
                newest = page_newest
            if token is None:
                break
        if kept.since is None:  # the first read: X's start_time, checked here too
            found = [mention for mention in found if mention.created_at >= not_before]
        found.sort(key=lambda mention: int(mention.id))
        given = found[: max(limit, 0)]
        if len(found) > len(given):  # the rest are newer than the last one given: read them next time
            newest = given[-1].id if given else kept.since
        made = Cursor(kept.me, newest).dumps()
        return MentionPage(tuple(given), made if made != cursor else None, reads)

    def _mentions_page(self, user_id: str, query: Mapping[str, object]) -> dict:
        """One page of mentions through tweepy (``get_users_mentions``, signed as the account), the
        answer read by the bot itself whatever its shape, or the PostError X's answer means."""
        import requests
        import tweepy

        if self._reader is None:  # tweepy hands the raw answer back: its models fail on a malformed one
            self._reader = tweepy.Client(
                consumer_key=self._credentials.api_key,
                consumer_secret=self._credentials.api_secret,
                access_token=self._credentials.access_token,
                access_token_secret=self._credentials.access_token_secret,
                return_type=requests.Response,
                wait_on_rate_limit=False,
            )
            self._reader.session = self._client.session  # the adapter: timeout, bound, X_API_BASE_URL
        try:
            response = self._reader.get_users_mentions(user_id, user_auth=True, **query)
        except tweepy.TweepyException as exc:
            raise classify(exc) from None
        except requests.RequestException as exc:
            raise network_error(exc) from None
        except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as exc:
            # tweepy reads an error's body as an object: one that is not (null, a list) fails inside it.
            raise unreadable(
                "X", f"GET /2/users/:id/mentions refused with an answer tweepy cannot read ({type(exc).__name__})"
            ) from None
        return json_object(response, "X", "GET /2/users/:id/mentions")

    def bot_label(self) -> Optional[bool]:
        """None: X's "Automated" label is set on x.com, not through the API (see the docs)."""
        return None

    def mark_bot(self) -> bool:
        """False: X's "Automated" label is set on x.com, not through the API (see the docs)."""
        return False

    def _me(self) -> str:
        """The account's numeric id, asked of X (``GET /2/users/me``) when the token does not show it."""
        self._user_id = str(self._get_me()["id"])
        return self._user_id

    def verify(self) -> str:
        """Check the keys with ``GET /2/users/me``; returns the account's @username."""
        self._username = str(self._get_me()["username"])
        return self._username

    def _get_me(self) -> dict:
        """``GET /2/users/me``: the account the keys post as (its numeric ``id`` and ``username``),
        or the PostError X's answer means."""
        me = self._read("/2/users/me", {}).get("data")
        if not isinstance(me, dict) or not _is_id(me.get("id")) or not isinstance(me.get("username"), str):
            raise unreadable("X", "GET /2/users/me gave no account id and username")
        return me

    def _read(self, path: str, query: Mapping[str, object]) -> dict:
        """One signed GET of X's API v2 through the poster's session (its timeout, its bound on an
        answer, X_API_BASE_URL): the answer's JSON object, or the PostError that says why not. The
        bot reads these answers itself, whatever their shape: tweepy's models fail on a malformed one."""
        import requests

        try:
            response = self._client.session.get(DEFAULT_BASE_URL + path, params=query, auth=signer(self._credentials))
        except requests.RequestException as exc:
            raise network_error(exc) from None
        if not 200 <= response.status_code < 300:
            raise refusal(response)
        return json_object(response, "X", f"GET {path}")


def _is_id(value: object) -> bool:
    """An X id as the API writes it: a string of digits."""
    return isinstance(value, str) and value.isascii() and value.isdigit()


# What each failure says about the post (errors.py names the kinds). Retried:
# failures that certainly made no post. Uncertain: the request was sent and no answer came back.
_NEVER_POSTED_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR}
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}
