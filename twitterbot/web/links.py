"""Links the status page shows: a post's public address, and where to look for an uncertain one.

Kept in one small module so that each question has one answer: when the networks' registry learns
to write its own links, these functions ask it instead::

    post_url("x", "1456012973835788293", None)     # 'https://x.com/i/status/1456012973835788293'
    safe_href("javascript:alert(1)")               # None: only http(s) links are ever shown
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import quote, urlsplit

from ..config import Config

__all__ = ["check_url", "post_url", "safe_href"]


def post_url(network: str, tweet_id: Optional[str], url: Optional[str]) -> Optional[str]:
    """A post's public link: the one its network gave and the history kept (every network since
    several were supported), else made from the id for X's older rows, as `history` does."""
    if url:
        return safe_href(url)
    if network == "x" and tweet_id and tweet_id.isdigit():
        return f"https://x.com/i/status/{tweet_id}"
    return None


def check_url(network: str, config: Config) -> Optional[str]:
    """Where the owner looks to see whether an uncertain post is there: the account's page, made
    from settings alone (the page never asks a network). The same places a run names when it logs
    an uncertain post."""
    if network == "x":
        # An access token starts with the account's numeric id: public, and enough for a link.
        user_id = config.credentials.access_token.split("-", 1)[0]
        return f"https://x.com/intent/user?user_id={user_id}" if user_id.isdigit() else "https://x.com/home"
    if network == "mastodon" and config.mastodon.instance:
        return safe_href(config.mastodon.instance)
    if network == "bluesky" and config.bluesky.handle:
        return f"https://bsky.app/profile/{quote(config.bluesky.handle)}"
    return None


def safe_href(url: Optional[str]) -> Optional[str]:
    """`url` if it is an http(s) address, else None: a link on the page can never run a script
    (`javascript:`) or open a local file, whatever a network or an old row wrote there."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None
