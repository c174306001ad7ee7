"""The networks the bot posts to, each one module behind one small interface.

A poster is anything with ``post(text, reply_to=None) -> PostResult`` that also states how it keeps
a repeated request from making a second post (`retry_safety`) and decides which failures it sends
again (`may_retry`). Each network's module owns its length rule, its error mapping and its retry
policy; `x.py` is X (tweepy), `dryrun.py` prints instead of posting::

    poster = poster_for(config)          # the network the settings name, with its keys checked
    result = poster.post("Hello from my Pi")
    result.tweet_id, result.confirmed
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

from ..config import Config
from ..errors import ConfigError, PostError

if TYPE_CHECKING:  # the X module imports tweepy: only when a real post is made
    from .x import XPoster

__all__ = ["Poster", "PostResult", "poster_for"]


@dataclass(frozen=True)
class PostResult:
    """What became of one post. Confirmed (`uncertain` is None): the network answered with the
    post's `tweet_id`. Uncertain: the request may have reached the network but no answer came, so
    nobody can tell whether the post exists; `uncertain` says why and `check_url` is where a person
    can look. Callers count an uncertain post as made and never send its text again. `url` is the
    post's public link, in the network's own form."""

    text: str
    tweet_id: Optional[str]
    uncertain: Optional[str] = None
    check_url: Optional[str] = None
    url: Optional[str] = None

    @property
    def confirmed(self) -> bool:
        return self.uncertain is None


class Poster(Protocol):
    """A network to post to. Each one states how it keeps a repeated request from making a second
    post (`retry_safety`) and decides with `may_retry` which failures it sends again."""

    retry_safety: str

    def post(self, text: str, reply_to: Optional[str] = None) -> PostResult: ...

    def may_retry(self, error: PostError) -> bool: ...


def poster_for(config: Config) -> XPoster:
    """The X poster for these settings, or a ConfigError saying which keys are missing."""
    missing = config.credentials.missing()
    if missing:
        where = config.env_file or (config.base_dir / ".env" if config.base_dir else "an env file (--env-file PATH)")
        raise ConfigError(
            f"{', '.join(missing)} not set: put your X keys in {where} (copy config.example.env; "
            "README 'Getting X keys' shows where to find them), or try --dry-run"
        )
    from .x import XPoster

    return XPoster(
        config.credentials, timeout=config.api_timeout, retries=config.api_retries, base_url=config.api_base_url
    )
