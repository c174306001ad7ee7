"""Posting to X (``POST /2/tweets``) with tweepy's `Client` and OAuth 1.0a user keys, and how X
makes a retry safe: it does not, so only a request that certainly made no post is sent again.
tweepy is imported when a poster is made, the pictures' code when a post carries pictures. tweepy
sends requests with no timeout and offers no base URL, so the client uses a session whose adapter
adds both (`api.posting_session`, which reads every answer within the bound all networks share);
the reads (the account, its recent posts, its mentions) are `XReader`'s::

    poster = XPoster(credentials, timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Union

from ...errors import ErrorKind, PostError
from .. import PLAIN, PostOptions, PostResult
from ..retry import Backoff
from .api import DEFAULT_BASE_URL, Credentials, posting_session, status_url
from .errors import classify, network_error, refusal
from .reader import XReader

if TYPE_CHECKING:
    from ...pictures.prepare import Attachment, PreparedImage

__all__ = ["XPoster"]

log = logging.getLogger(__package__)  # X's lines log under the network's name


class XPoster(XReader):
    """Posts to X. Retries, `retries` times with backoff, only what `retry_safety` allows; never
    waits out a rate limit (that is the next scheduled run's job). Reads as `XReader` does."""

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

        super().__init__(credentials, timeout=timeout, base_url=base_url)
        self._client = tweepy.Client(
            consumer_key=credentials.api_key,
            consumer_secret=credentials.api_secret,
            access_token=credentials.access_token,
            access_token_secret=credentials.access_token_secret,
            wait_on_rate_limit=False,  # True retries 429s forever: never in a cron bot
        )
        self._session = posting_session(timeout=timeout, base_url=base_url)  # timeout, bound, X_API_BASE_URL
        self._client.session = self._session
        self._policy = Backoff(retries, backoff, sleep)

    def may_retry(self, error: PostError) -> bool:
        """Whether sending the request again cannot make a second post (see `retry_safety`)."""
        return error.kind in _NEVER_POSTED_RETRYABLE

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        """Create one post (a reply to `options.reply_to`), with its pictures uploaded first. X's
        API takes no language (it guesses one) and has no content warning: `language` is not
        sent, and `spoiler` is never given (the network does not declare `content_warnings`). Returns a confirmed `PostResult`, or an
        uncertain one when the request may have reached X but no answer came (never sent again).
        Raises `DuplicatePost` if X already has this text, `PostError` when X certainly did not post it."""
        import requests
        import tweepy

        images, reply_to = options.images, options.reply_to
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

    def _upload(self, images: Sequence[Union[Attachment, PreparedImage]]) -> List[str]:
        """The pictures fitted to X's limits and uploaded with their alt text (media.py: imported
        here, as only a post with pictures needs it)."""
        from ..uploads import fit_pictures
        from .media import image_limits, upload_to_x

        return upload_to_x(
            self._session,
            self._credentials,
            fit_pictures(images, image_limits()),
            policy=self._policy,
            classify=refusal,
            network_error=network_error,
        )

    def _uncertain(self, text: str, why: str) -> PostResult:
        log.debug("not sending it again: %s", self.retry_safety)
        return PostResult(text=text, post_id=None, uncertain=why, check_url=self.account_url)

    def bot_label(self) -> Optional[bool]:
        """None: X's "Automated" label is set on x.com, not through the API (see the docs)."""
        return None

    def mark_bot(self) -> bool:
        """False: X's "Automated" label is set on x.com, not through the API (see the docs)."""
        return False


# What each failure says about the post (errors.py names the kinds). Retried:
# failures that certainly made no post. Uncertain: the request was sent and no answer came back.
_NEVER_POSTED_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR}
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}
