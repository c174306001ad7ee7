"""Bluesky: its settings, as data on `Bluesky`, whose poster (`poster.py`) posts through the atproto
SDK with a record key that makes a retry safe. Its parts: `text.py` (the length rule, measured
without the SDK), `records.py` (the post's record: key, reply, facets, embed, link card),
`session.py` (the saved login), `errors.py` (Bluesky's error replies as `PostError`s), `media.py`
(pictures) and `linkcard.py` with `opengraph.py` (a linked page's card). The session is kept in a
file (mode 0600) and refreshed, because ``createSession`` is rate limited (30 per 5 minutes, a few
hundred a day): the password is sent again only when the saved refresh token is refused::

    result = NETWORK.poster(config).post("Hello from my Pi")
    result.url   # 'https://bsky.app/profile/alice.bsky.social/post/3lbq7...'

The atproto SDK is imported only when a poster connects: measuring is cheap, and a run that posts
only to X never loads it. Only its client (`atproto_client`) is imported, not the `atproto`
package, which loads the firehose too and with it zstandard, websockets and dnspython: a 32-bit
Pi installs atproto without them (README, "32-bit Raspberry Pi OS").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional

from ...capability import Feature
from ...errors import ConfigError
from ...settings.keys import API_RETRIES, API_TIMEOUT, FETCH_TIMEOUT
from ...settings.parsers import BOOL, URL, show
from ...settings.table import Setting, SettingType, by_name
from .. import Fit, Network
from .text import measure

if TYPE_CHECKING:
    from ...pictures.limits import ImageLimits
    from ...settings.loading import Config
    from .linkcard import Limits
    from .poster import BlueskyPoster
    from .reader import BlueskyReader

__all__ = [
    "BLUESKY_APP_PASSWORD",
    "BLUESKY_HANDLE",
    "BLUESKY_LINK_CARDS",
    "BLUESKY_SERVICE",
    "BLUESKY_VIDEO_SERVICE",
    "DEFAULT_SERVICE",
    "LINK_CARDS_LOCAL",
    "NETWORK",
    "card_limits",
]

DEFAULT_SERVICE = "https://bsky.social"


# A handle is a domain name: letters, digits and hyphens in dot-separated parts. Kept as text: `re`
# compiles it (and caches it) only for a run that has a handle to check.
_HANDLE = r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?"
# Bluesky makes app passwords as four groups of four letters and digits: xxxx-xxxx-xxxx-xxxx.
_APP_PASSWORD = r"[a-z0-9]{4}(-[a-z0-9]{4}){3}"


def _parse_handle(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip().lstrip("@").lower()
    if value and not re.fullmatch(_HANDLE, value):
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a Bluesky handle: write it like alice.bsky.social"
            " (your profile shows it after the @)"
        )
    return value


def _parse_app_password(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip()
    if value and not re.fullmatch(_APP_PASSWORD, value):
        # Never echo it: it may be the account's real password.
        raise ConfigError(
            f"{name} from {where} is not an app password (they look like xxxx-xxxx-xxxx-xxxx): make one in"
            " Bluesky's Settings > Privacy and security > App passwords; never put your account password here"
        )
    return value


def _parse_video_service(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """auto, none, or a video service's base URL."""
    word = text.strip().lower()
    if word in ("auto", "none"):
        return word
    try:
        return URL.convert(name, text, where, base_dir, setting)
    except ConfigError:
        raise ConfigError(
            f"{name}={show(text)} from {where} is not auto, none or a base URL like https://video.bsky.app: "
            "leave it unset (auto) unless your PDS has a video service of its own"
        ) from None


HANDLE = SettingType("handle", _parse_handle)
VIDEO_SERVICE = SettingType("video_service", _parse_video_service)
APP_PASSWORD = SettingType("app_password", _parse_app_password)


BLUESKY_HANDLE = Setting("BLUESKY_HANDLE", "", HANDLE, "Bluesky: your handle, e.g. alice.bsky.social")
BLUESKY_APP_PASSWORD = Setting(
    "BLUESKY_APP_PASSWORD",
    "",
    APP_PASSWORD,
    "Bluesky: an app password (never your account password)",
    True,
    "Bluesky (Settings > Privacy and security > App passwords)",
)
BLUESKY_SERVICE = Setting(
    "BLUESKY_SERVICE", DEFAULT_SERVICE, URL, "Bluesky: your PDS (the default serves bsky.social accounts)"
)
BLUESKY_VIDEO_SERVICE = Setting(
    "BLUESKY_VIDEO_SERVICE",
    "auto",
    VIDEO_SERVICE,
    "Bluesky: where a video goes before its post: auto sends it through Bluesky's video service "
    "(video.bsky.app, its daily limits asked first) for an account Bluesky hosts, and straight to "
    "the PDS for a self-hosted one; none, always straight to the PDS; or a video service's URL",
)
BLUESKY_LINK_CARDS = Setting(
    "BLUESKY_LINK_CARDS",
    "yes",
    BOOL,
    "Bluesky: a post with a link and no images shows the linked page's card (title, description, "
    "picture), fetched at post time within FETCH_TIMEOUT; no turns it off",
)
LINK_CARDS_LOCAL = Setting(
    "LINK_CARDS_LOCAL",
    "no",
    BOOL,
    "yes lets a link card (Bluesky) and a picture a post names by URL (a grammar's {img}, an SVG's "
    "<image>) be fetched from this machine or your own network (loopback, private, link-local "
    "addresses); by default only the public internet",
)


class Bluesky(Network):
    """Bluesky: a handle and an app password on a PDS; 300 graphemes and 3,000 bytes."""

    name = "bluesky"
    label = "Bluesky"
    post_options = frozenset({"labels"})  # a post's self-labels: what its pictures show
    # On a 32-bit Pi the extra would build atproto's zstandard (no armv7 wheel): the README's
    # commands install its client without it.
    features = (
        Feature(
            "posting to Bluesky",
            ("atproto_client", "httpx"),
            "bluesky",
            "python3-cffi",
            pi32=".venv/bin/pip install -r requirements-pi.txt && .venv/bin/pip install -q --no-deps atproto==0.0.73",
        ),
    )
    settings = by_name(
        BLUESKY_HANDLE,
        BLUESKY_APP_PASSWORD,
        BLUESKY_SERVICE,
        BLUESKY_VIDEO_SERVICE,
        BLUESKY_LINK_CARDS,
        LINK_CARDS_LOCAL,
    )
    required = ("BLUESKY_HANDLE", "BLUESKY_APP_PASSWORD")
    guide = "Getting a Bluesky app password"
    site = "bsky.app"
    # Its reader (reader.py, else its poster) reads the account's mentions and replies from its
    # notifications (notifications.py).
    listens = True

    def account_url(self, config: Config) -> Optional[str]:
        handle = str(config[BLUESKY_HANDLE] or "")
        return f"https://bsky.app/profile/{handle}" if handle else None

    def measure(self, text: str) -> Fit:
        return measure(text)

    def image_limits(self) -> ImageLimits:
        """What a picture may be on Bluesky (`media.image_limits`)."""
        from .media import image_limits  # with the upload code: the registry imports this package on every run

        return image_limits()

    def poster(self, config: Config) -> BlueskyPoster:
        from .poster import BlueskyPoster, Login  # only a run that posts to Bluesky imports the poster (and the SDK)

        login = Login(
            handle=str(config[BLUESKY_HANDLE]),
            app_password=str(config[BLUESKY_APP_PASSWORD]),
            service=str(config[BLUESKY_SERVICE]),
            session_file=config.state.session("bluesky"),
        )
        return BlueskyPoster(
            login,
            timeout=config[API_TIMEOUT],
            retries=config[API_RETRIES],
            link_cards=bool(config[BLUESKY_LINK_CARDS]),
            card_limits=card_limits(config),
            video_service=str(config[BLUESKY_VIDEO_SERVICE]),
        )

    def reader(self, config: Config) -> BlueskyReader:
        """Plain GETs with the saved session (reader.py): a round of replies with nothing new needs
        no more; the poster (and the SDK) only when there is no fresh session, or a reply is due."""
        from .reader import BlueskyReader

        return BlueskyReader(
            str(config[BLUESKY_HANDLE]),
            str(config[BLUESKY_SERVICE]),
            config.state.session("bluesky"),
            timeout=config[API_TIMEOUT],
            poster=lambda: self.poster(config),
        )

    def preview(
        self, text: str, config: Config, *, pictures: int = 0, folder: Optional[Callable[[], Path]]
    ) -> List[str]:
        """The link card a post of `text` would carry (docs/bluesky-link-cards.md): none with
        pictures (a post has one embed); its thumbnail written into `folder()` for a dry run; one
        line for `check --online`."""
        if not config[BLUESKY_LINK_CARDS] or pictures:
            return []
        # Here, not at the top: fetching a card needs ssl, html.parser and the SDK's facet detection.
        from .linkcard import describe, summary
        from .records import fetch_link_card

        found = fetch_link_card(text, limits=card_limits(config))
        if found is None:
            return []
        if folder is None:
            return [f"link {found.url}: {summary(found)}"]
        has_thumb = found.card is not None and found.card.thumb is not None
        return ["\n".join(describe(found, folder() if has_thumb else None))]


def card_limits(config: Config) -> Limits:
    """The bounds of a link card's fetch the settings give (FETCH_TIMEOUT, LINK_CARDS_LOCAL)."""
    from .linkcard import Limits  # with the fetcher: only a run that fetches a card imports it

    return Limits(seconds=float(config[FETCH_TIMEOUT]), local=bool(config[LINK_CARDS_LOCAL]))


NETWORK = Bluesky()
