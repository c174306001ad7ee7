"""The networks the bot posts to, each one module behind one small interface.

A poster is anything with ``post(text, reply_to=None) -> PostResult`` that also states how it keeps
a repeated request from making a second post (`retry_safety`) and decides which failures it sends
again (`may_retry`). Each network's module owns its length rule, its error mapping and its retry
policy: `x.py` is X (tweepy), `mastodon.py` Mastodon (Mastodon.py), `bluesky.py` Bluesky (the
atproto SDK), and `dryrun.py` prints instead of posting. A run posts to every network in POST_TO::

    posters = posters_for(config)        # {network: poster} for POST_TO, with their keys checked
    result = posters["x"].post("Hello from my Pi")
    result.tweet_id, result.confirmed
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Dict, Optional, Protocol

from ..config import Config
from ..errors import ConfigError, ExitStatus, PostError

__all__ = [
    "NETWORKS",
    "Fit",
    "Poster",
    "PostResult",
    "check_keys",
    "label",
    "measure",
    "posters_for",
    "rejected",
    "server_error",
]

# Every network the bot can post to, in the order runs post and reports list them. Each has a
# module of that name here with `measure(text) -> Fit` (its length rule, cheap: no client library
# imported) and a poster class.
NETWORKS = ("x", "mastodon", "bluesky")
_LABELS = {"x": "X", "mastodon": "Mastodon", "bluesky": "Bluesky"}


def label(network: str) -> str:
    """A network's name as people write it, for messages: "x" is X."""
    return _LABELS.get(network, network)


@dataclass(frozen=True)
class Fit:
    """How long a text is as one network counts it, against that network's limit. `unit` names
    what is counted ("weighted characters", "characters", "graphemes"); `reason` says why it does
    not fit when a second rule fails (Bluesky's 3,000-byte limit), else it is None."""

    network: str
    length: int
    limit: int
    unit: str = "characters"
    reason: Optional[str] = None

    @property
    def fits(self) -> bool:
        return self.length <= self.limit and self.reason is None


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
    post (`retry_safety`) and decides with `may_retry` which failures it sends again. `reply_to`
    is the `tweet_id` of an earlier `PostResult` from the same network: an opaque string that only
    that network's module reads."""

    name: str
    retry_safety: str

    def post(self, text: str, reply_to: Optional[str] = None) -> PostResult: ...

    def may_retry(self, error: PostError) -> bool: ...

    def account(self) -> str:
        """Check the keys online and name the account they post as (for `check --online`)."""
        ...


def server_error(where: str, said: str) -> PostError:
    """A network's own failure (a 5xx): certainly no post, nothing for the user to fix."""
    what = f"{where} had a server error ({said})"
    return PostError(
        f"{what}: nothing to fix here; the next run will try again",
        kind="server_error",
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        summary=what,
    )


def rejected(where: str, said: str, status: int) -> PostError:
    """A refusal no rule of ours foresaw: a 400 is the request's fault (the text), anything else a
    case this module does not know yet, i.e. a bug (exit 1)."""
    return PostError(
        f"{where} rejected the request ({said}): run with -v and report it if it persists",
        kind="rejected",
        exit_status=ExitStatus.DATA_ERROR if status == 400 else ExitStatus.UNEXPECTED,
    )


def measure(network: str, text: str) -> Fit:
    """`text` as `network` counts it. X's rule lives with the tweets file (`posting.tweets.measure`,
    which also knows what X charges); the other networks' rules are cheap functions of their
    modules, which import their client libraries only to post."""
    return importlib.import_module(f"{__name__}.{network}").measure(text)


def posters_for(config: Config) -> Dict[str, Poster]:
    """A poster for each network in POST_TO, in that order, or one ConfigError naming every
    setting still missing (only the networks in POST_TO need theirs)."""
    check_keys(config)
    return {network: _poster(network, config) for network in config.post_to}


def check_keys(config: Config) -> None:
    """Raise one ConfigError naming every key POST_TO's networks still need, and where to put them."""
    missing = config.missing()
    if missing:
        where = config.env_file or (config.base_dir / ".env" if config.base_dir else "an env file (--env-file PATH)")
        guides = {
            "x": "'Getting X keys'",
            "mastodon": "'Getting a Mastodon token'",
            "bluesky": "'Getting a Bluesky app password'",
        }
        guide = " and ".join(guides[network] for network in config.post_to)
        raise ConfigError(
            f"{', '.join(missing)} not set (POST_TO={','.join(config.post_to)}): put them in {where} (copy "
            f"config.example.env; README {guide} shows where to find them), or try --dry-run"
        )


def _poster(network: str, config: Config) -> Poster:
    if network == "mastodon":
        from .mastodon import MastodonPoster

        account = config.mastodon
        return MastodonPoster(
            instance=account.instance,
            access_token=account.access_token,
            visibility=account.visibility,
            timeout=config.api_timeout,
            retries=config.api_retries,
        )
    if network == "bluesky":
        from .bluesky import BlueskyPoster

        return BlueskyPoster(
            handle=config.bluesky.handle,
            app_password=config.bluesky.app_password,
            service=config.bluesky.service,
            session_file=config.state_dir / "bluesky-session.json",
            timeout=config.api_timeout,
            retries=config.api_retries,
            link_cards=config.bluesky.link_cards,
        )
    from .x import XPoster

    return XPoster(
        config.credentials, timeout=config.api_timeout, retries=config.api_retries, base_url=config.api_base_url
    )
