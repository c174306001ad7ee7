"""Mastodon: its settings and length rule, as data on `Mastodon`, whose poster (`poster.py`) posts
through Mastodon.py, which is imported only when a poster is made, so a run that posts only to X
never loads it; a round of replies reads the mentions with `reader.py`, without it. `status.py` counts a text the way Mastodon's server does; `errors.py` turns the
server's error replies into `PostError`s, `instance.py` reads what the server says of its limits
and `media.py` uploads pictures::

    measure("Hello https://example.com/a/very/long/path").length   # 29: a link counts 23
    poster = NETWORK.poster(config)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://example.social/@pibot/113456789012345678'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ...capability import Feature
from ...errors import ConfigError
from ...settings.keys import API_RETRIES, API_TIMEOUT
from ...settings.parsers import OPTIONAL_URL, SECRET, show
from ...settings.table import Setting, SettingType, by_name
from .. import Fit, Network, twittertext
from .status import VISIBILITIES, measure

if TYPE_CHECKING:
    from ...pictures.limits import ImageLimits
    from ...settings.loading import Config
    from ..mentions import Mention
    from .poster import MastodonPoster
    from .reader import MastodonReader

__all__ = ["MASTODON_ACCESS_TOKEN", "MASTODON_INSTANCE", "MASTODON_VISIBILITY", "NETWORK"]


def _parse_visibility(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    value = text.strip().lower()
    if value not in VISIBILITIES:
        raise ConfigError(
            f"{name}={show(text)} from {where} is not a visibility: use {', '.join(VISIBILITIES)}"
            " (unlisted keeps a bot out of the public timelines, as most servers ask)"
        )
    return value


VISIBILITY = SettingType("visibility", _parse_visibility)


MASTODON_INSTANCE = Setting(
    "MASTODON_INSTANCE", "", OPTIONAL_URL, "Mastodon: your server's address, e.g. https://mastodon.social"
)
MASTODON_ACCESS_TOKEN = Setting(
    "MASTODON_ACCESS_TOKEN",
    "",
    SECRET,
    "Mastodon: access token of an application (Preferences > Development)",
    True,
    "your Mastodon server (Preferences > Development > your application)",
)
MASTODON_VISIBILITY = Setting(
    "MASTODON_VISIBILITY", "unlisted", VISIBILITY, "Mastodon: public, unlisted, private or direct"
)


class Mastodon(Network):
    """Mastodon: a server and an application's token; the server's own count of a status."""

    name = "mastodon"
    label = "Mastodon"
    features = (Feature("posting to Mastodon", ("mastodon",), "mastodon"),)
    settings = by_name(MASTODON_INSTANCE, MASTODON_ACCESS_TOKEN, MASTODON_VISIBILITY)
    required = ("MASTODON_INSTANCE", "MASTODON_ACCESS_TOKEN")
    guide = "Getting a Mastodon token"
    site = "your Mastodon server"
    content_warnings = True  # spoiler_text
    post_options = frozenset({"visibility", "sensitive"})
    listens = True  # MastodonReader.mentions: the account's mention notifications

    def addressed(self, text: str, mention: Mention) -> str:
        """A reply reaches only the accounts it names: it starts with the author's handle
        (``@ada``, or ``@ada@elsewhere.example`` from another server), as Cheap Bots Toot Sweet's
        replies did, unless the text names them already."""
        from ..mentions import named_first

        return named_first(text, mention.author.handle)

    def account_url(self, config: Config) -> Optional[str]:
        return str(config[MASTODON_INSTANCE] or "") or None  # the profile's address needs a request

    def measure(self, text: str) -> Fit:
        return measure(text)

    def image_limits(self) -> ImageLimits:
        """What a picture may be on a server that has not said (`media.image_limits`)."""
        from .media import image_limits  # with the upload code: the registry imports this package on every run

        return image_limits()

    def lines_measured(self) -> object:
        return twittertext.borrowed()  # links are found with twitter-text, as Mastodon does

    def poster(self, config: Config) -> MastodonPoster:
        from .poster import MastodonPoster  # only a run that posts to Mastodon imports the poster (and Mastodon.py)

        return MastodonPoster(
            instance=str(config[MASTODON_INSTANCE]),
            access_token=str(config[MASTODON_ACCESS_TOKEN]),
            visibility=str(config[MASTODON_VISIBILITY]),
            timeout=config[API_TIMEOUT],
            retries=config[API_RETRIES],
        )

    def reader(self, config: Config) -> MastodonReader:
        """Bearer-token GETs without Mastodon.py (reader.py): a round of replies with nothing new needs no more."""
        from .reader import MastodonReader

        return MastodonReader(
            instance=str(config[MASTODON_INSTANCE]),
            access_token=str(config[MASTODON_ACCESS_TOKEN]),
            timeout=config[API_TIMEOUT],
        )


NETWORK = Mastodon()
