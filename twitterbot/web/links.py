"""Links the status page shows: a post's public address, and where to look for an uncertain one.

Kept in one small module so that each question has one answer: the history's rows name their
network, and `posting/links.py` makes the link; here it is checked before the page shows it::

    post_url(network, post_id, stored_url, config)        # the stored link, else one made from the id
    safe_href("javascript:alert(1)")               # None: only http(s) links are ever shown
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import urlsplit

from ..posting.links import account_link, post_link
from ..settings.loading import Config

__all__ = ["check_url", "post_url", "safe_href"]


def post_url(network: str, post_id: Optional[str], url: Optional[str], config: Config) -> Optional[str]:
    """A post's public link: the one its network gave and the history kept, else the one its
    network's module makes from the id (older rows), as `bot.py history` does."""
    return safe_href(post_link(config, network, post_id, url))


def check_url(network: str, config: Config) -> Optional[str]:
    """Where the owner looks to see whether an uncertain post is there: the account's page, as the
    network's module makes it from the settings (the page never asks a network, nor imports its
    client). The history does not keep the link the poster gave (`PostResult.check_url`)."""
    return safe_href(account_link(config, network))


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
