"""The pictures an expansion's tags ask for, made for the run that posts it (and its dry run): each
``{svg}`` drawn (pictures/svg.py), each ``{img URL}`` fetched (networks/fetch.py, held to the
link cards' address rules: public addresses only unless LINK_CARDS_LOCAL=yes, within a size and a
time), each then an `Attachment` of bytes that the delivery prepares like the user's own pictures
(upright, metadata left behind, fitted to each network)::

    attachments = make_pictures(line.tags, PictureRules.of(config), where="tweets.json expansion 'A card'")

All of a post's pictures share one deadline (PICTURES_TIMEOUT): each draw and fetch waits at most
what is left of it, so four slow SVGs cannot hold a run (and its lock) for minutes. A picture that
cannot be made stops the post before anything is recorded, with one message naming
the expansion and the fix: an SVG that cannot be drawn is the grammar's (a data error, 65); a URL
that cannot be fetched now is a temporary failure (75) or a refusal to fix (65, a private address
or not a picture). A blank picture or the raw tag is never posted.
"""

from __future__ import annotations

import posixpath
import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple
from urllib.parse import urlsplit

from ..errors import BotError, ErrorKind, ExitStatus, MissingDependency, PostError, TweetFileError
from ..networks.bluesky import LINK_CARDS_LOCAL
from ..networks.request import Deadline
from ..settings.keys import FETCH_TIMEOUT
from ..settings.secrets import masked_url
from . import PICTURES_TIMEOUT, SVG_RENDERER
from .tags import SvgPicture, Tagged, UrlPicture

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment
    from ..settings.loading import Config

__all__ = ["FETCH_BYTES", "FETCH_SECONDS", "PICTURES_SECONDS", "PictureRules", "make_pictures"]

# A picture fetched for a post: as big as any network takes before fitting (Mastodon's 16 MB),
# and (FETCH_TIMEOUT's default) as long as CBDQ waited (5 s) and a little more for a Pi's slow link.
FETCH_BYTES = 16 * 1024 * 1024
FETCH_SECONDS = 10.0
# All of one post's pictures (PICTURES_TIMEOUT's default): CBDQ's four pictures, each drawn in a few
# seconds on a Pi Zero 2 W, with room; one SVG alone may take 30 s (pictures/svg.RENDER_SECONDS).
PICTURES_SECONDS = 60.0

Fetch = Callable[[str], bytes]


@dataclass(frozen=True)
class PictureRules:
    """How an expansion's pictures are made: whether a fetch may reach the owner's own network
    (LINK_CARDS_LOCAL), the SVG renderer (SVG_RENDERER), a fetch's bounds, and how long all of one
    post's pictures may take (PICTURES_TIMEOUT)."""

    allow_local: bool = False
    renderer: str = "auto"
    max_bytes: int = FETCH_BYTES
    timeout: float = FETCH_SECONDS
    seconds: float = PICTURES_SECONDS

    @classmethod
    def of(cls, config: Config) -> PictureRules:
        return cls(
            allow_local=bool(config[LINK_CARDS_LOCAL]),
            renderer=str(config[SVG_RENDERER] or "auto"),
            timeout=float(config[FETCH_TIMEOUT]),
            seconds=float(config[PICTURES_TIMEOUT]),
        )

    def fetcher(self, deadline: Optional[Deadline] = None) -> Fetch:
        """A fetch of one picture's bytes by URL, within these rules and what is left of the post's
        `deadline` (socket.timeout when nothing is)."""

        def fetch(url: str) -> bytes:
            from ..networks.fetch import fetch_picture

            timeout = self.timeout if deadline is None else min(self.timeout, deadline.left())
            return fetch_picture(url, allow_local=self.allow_local, max_bytes=self.max_bytes, timeout=timeout)

        return fetch


def make_pictures(
    tagged: Tagged, rules: PictureRules, *, where: str, fetch: Optional[Fetch] = None
) -> Tuple[Attachment, ...]:
    """The tags' pictures, in order, as attachments of PNG (drawn) or fetched bytes. `fetch`
    replaces the network fetch (a test's); raises `TweetFileError` (65) for a picture the grammar
    must fix, `PostError` (75 or 65) for a fetch that failed."""
    if not tagged.pictures:
        return ()
    from ..pictures.prepare import Attachment

    deadline = Deadline(rules.seconds)
    fetch = fetch or rules.fetcher(deadline)
    made: List[Attachment] = []
    total = len(tagged.pictures)
    for number, picture in enumerate(tagged.pictures, start=1):
        drawn = isinstance(picture, SvgPicture)
        try:
            if isinstance(picture, SvgPicture):
                data, name = _drawn(picture, rules, fetch, where, number, deadline), f"svg-{number}.png"
            else:
                data, name = _fetched(picture, fetch, where), _name(picture.url, number)
        except (BotError, socket.timeout):
            if _over(deadline):
                raise _late(rules, where, number, total, drawn) from None
            raise
        # CBDQ had no alt text: a grammar's picture may go without (check suggests some)
        made.append(Attachment(data, picture.alt, name, alt_optional=True))
    return tuple(made)


def _over(deadline: Deadline) -> bool:
    """Whether nothing is left of the post's pictures' time."""
    try:
        deadline.left()
    except socket.timeout:
        return True
    return False


def _late(rules: PictureRules, where: str, number: int, total: int, drawn: bool) -> BotError:
    """The post's pictures past PICTURES_TIMEOUT: the grammar's to lighten when a drawing ran
    out of it (65), a temporary failure when a fetch did (75: the next run tries again)."""
    doing = "drawing" if drawn else "fetching"
    said = f"{where}: its pictures took over PICTURES_TIMEOUT={rules.seconds:g} s in all ({doing} picture {number} of {total})"
    if drawn:
        return TweetFileError(f"{said}: make its SVGs simpler or fewer, or raise PICTURES_TIMEOUT")
    return PostError(
        f"{said}: the next run tries again; if it keeps happening, raise PICTURES_TIMEOUT",
        kind=ErrorKind.UNREACHABLE,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
    )


def _drawn(
    picture: SvgPicture, rules: PictureRules, fetch: Fetch, where: str, number: int, deadline: Deadline
) -> bytes:
    from ..pictures.svg import SvgError, draw_svg

    try:
        return draw_svg(picture.markup, fetch=fetch, renderer=rules.renderer, seconds=deadline.left()).png
    except SvgError as exc:
        if int(getattr(exc, "exit_status", ExitStatus.DATA_ERROR)) == ExitStatus.UNAVAILABLE:
            raise MissingDependency(f"{where}: its {{svg ...}} picture cannot be drawn here: {exc}") from None
        raise TweetFileError(
            f"{where}: its {{svg ...}} picture{_nth(number)} cannot be drawn: {exc}; "
            "fix the grammar's SVG (bot.py check names each problem)"
        ) from None


def _fetched(picture: UrlPicture, fetch: Fetch, where: str) -> bytes:
    try:
        data = fetch(picture.url)
    except PostError as exc:
        raise PostError(
            f"{where}: its picture {masked_url(picture.url)} cannot be fetched: {exc}",
            kind=exc.kind,
            exit_status=exc.exit_status,
        ) from None
    except BotError as exc:
        raise PostError(
            f"{where}: its picture {masked_url(picture.url)} cannot be fetched: {exc}",
            kind=ErrorKind.PICTURE,
            exit_status=exc.exit_status,
        ) from None
    except OSError as exc:
        raise PostError(
            f"{where}: its picture {masked_url(picture.url)} cannot be fetched now ({exc.strerror or exc}): the next run tries "
            "again; if it keeps failing, check the address in a browser",
            kind=ErrorKind.UNREACHABLE,
            exit_status=ExitStatus.TEMPORARY_FAILURE,
        ) from None
    except ValueError as exc:  # networks/fetch.py's FetchError: its exit status says whose it is
        if int(getattr(exc, "exit_status", ExitStatus.DATA_ERROR)) == ExitStatus.TEMPORARY_FAILURE:
            raise PostError(
                f"{where}: {exc}; the next run tries again",
                kind=ErrorKind.UNREACHABLE,
                exit_status=ExitStatus.TEMPORARY_FAILURE,
            ) from None
        raise TweetFileError(f"{where}: {exc}: fix the grammar's {{img}} address") from None
    return _a_picture(masked_url(picture.url), data, where)


def _a_picture(url: str, data: bytes, where: str) -> bytes:
    """`data` when it is a picture the networks take; else the data error naming the address (not
    the tweets file's words about a file to replace), and for an SVG the tag that draws one."""
    from ..pictures.prepare import sniff

    if sniff(data[:16]) is not None:
        return data
    svg = b"<svg" in data[:4096]
    raise TweetFileError(
        f"{where}: the picture at {url} is "
        + (
            "an SVG, which the networks do not take: put its markup in the grammar as {svg <svg ...>...</svg>}, "
            "or link a PNG"
            if svg
            else "not a PNG, JPEG, GIF or WebP picture: fix the grammar's {img} address"
        )
    )


def _nth(number: int) -> str:
    return "" if number == 1 else f" (picture {number} of the post)"


def _name(url: str, number: int) -> str:
    """A fetched picture's name for messages and the dry run's files: the URL's last part."""
    base = posixpath.basename(urlsplit(url).path)
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", base).strip("-") or f"picture-{number}"
