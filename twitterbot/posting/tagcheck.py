"""What `bot.py check` says of a grammar's services' tags (posting/tags.py): which tags its sampled
expansions use, whether each ``{svg}`` can be drawn here (pictures/svg.py's `svg_problems`, without
drawing it), and the ``{img}`` addresses a run will fetch; `check --online` fetches them
(`fetch_findings`). Findings are (status, message, error) for check.py to print::

    for status, message, error in tag_findings(report, PictureRules.of(config), where="bot.json"):
        ...
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from ..errors import BotError, MissingDependency, TweetFileError
from ..pictures.limits import ImageLimits, strictest_alt
from ..settings.secrets import masked_url
from ..wording import plural
from .generated import GrammarReport
from .tagpictures import PictureRules
from .tags import SvgPicture, UrlPicture

__all__ = ["MOST_FETCHED", "fetch_findings", "tag_findings"]

MOST_FETCHED = 8  # `check --online` fetches at most this many of the sampled addresses

Finding = Tuple[str, str, Optional[BotError]]
# A picture an SVG names by URL (``<image href="https://...">``), fetched like an ``{img}``'s.
_EMBEDDED = re.compile(r"""\bhref\s*=\s*["'](https?://[^"'\s]+)""", re.IGNORECASE)


def _pictures(report: GrammarReport) -> Tuple[List[str], List[str], List[str]]:
    """The tag words the samples use, their different SVGs and their different addresses."""
    words: List[str] = []
    svgs: Dict[str, SvgPicture] = {}
    urls: Dict[str, UrlPicture] = {}
    for line in report.tagged:
        assert line.tags is not None
        words += [word for word in line.tags.words if word not in words]
        for picture in line.tags.pictures:
            if isinstance(picture, SvgPicture):
                svgs.setdefault(picture.markup, picture)
            else:
                urls.setdefault(picture.url, picture)
    return words, list(svgs), list(urls)


def tag_findings(
    report: GrammarReport,
    rules: PictureRules,
    *,
    where: str,
    limits: Sequence[ImageLimits] = (),
    public_only: Sequence[str] = (),
) -> Iterator[Finding]:
    """The tags the samples use, a warning when some are {private} or {direct} and POST_TO has
    networks whose posts are all public (`public_only`: they never get those), then a problem for
    alt text longer than a network of `limits` takes, for each SVG that cannot be drawn here, then
    the addresses a run fetches."""
    if not report.tagged:
        return
    words, svgs, urls = _pictures(report)
    private = sum(1 for line in report.tagged if line.tags and line.tags.visibility in ("private", "direct"))
    if private and public_only:
        yield (
            "note",
            f"{where}: {plural(private, 'sampled expansion')} {'is' if private == 1 else 'are'} {{private}} or "
            f"{{direct}}: {' and '.join(public_only)} {'has' if len(public_only) == 1 else 'have'} only public posts, "
            "so such a post goes to Mastodon alone and never there (docs/moving-in.md)",
            None,
        )
    yield (
        "ok",
        f"{where}: {len(report.tagged)} of {report.distinct} sampled expansions use the services' tags: "
        + ", ".join(words),
        None,
    )
    bare = sum(1 for line in report.tagged for picture in line.tags.pictures if not picture.alt)  # type: ignore[union-attr]
    if bare:
        yield (
            "note",
            f"{where}: {plural(bare, 'picture')} of its samples {'has' if bare == 1 else 'have'} no alt text: add "
            "{alt what it shows} after a picture's tag, for people who cannot see it (they are posted without)",
            None,
        )
    if limits:
        yield from _long_alts(report, strictest_alt(limits), where)
    if svgs:
        yield from _svgs(svgs, rules, where)
    embedded = [url for markup in svgs for url in _EMBEDDED.findall(markup)]
    if (urls or embedded) and not rules.allow_local:
        yield from _local_addresses(urls + embedded, where)
    if urls:
        yield (
            "note",
            f"{where}: its samples fetch {len(urls)} different {{img}} {'address' if len(urls) == 1 else 'addresses'} "
            f"at each run, e.g. {masked_url(urls[0])} "
            "(bot.py check --online fetches them now)",
            None,
        )


def _long_alts(report: GrammarReport, strictest: ImageLimits, where: str) -> Iterator[Finding]:
    """The longest alt text of the samples' pictures, when a network of POST_TO takes less: every
    run that draws it would be refused (65), so check says it once."""
    longest = max((len(picture.alt) for line in report.tagged for picture in line.tags.pictures), default=0)  # type: ignore[union-attr]
    if longest > strictest.max_alt:
        message = (
            f"{where}: a picture of its samples has alt text of {longest} characters; {strictest.where} takes "
            f"{strictest.max_alt}: shorten the grammar's alt text"
        )
        yield "problem", message, TweetFileError(message)


def _local_addresses(urls: List[str], where: str) -> Iterator[Finding]:
    """An ``{img}`` address that names this machine or a private network outright (an IP address,
    localhost), which a run refuses without LINK_CARDS_LOCAL: said now, without a fetch, so the
    owner who moved a bot with its own picture server learns it before the first run fails."""
    import ipaddress
    from urllib.parse import urlsplit

    from ..networks.addresses import refusal

    for url in urls:
        try:
            host = (urlsplit(url).hostname or "").rstrip(".")
            why = "this machine" if host == "localhost" else refusal(ipaddress.ip_address(host))
        except ValueError:  # a name, which only a look-up tells: check --online fetches it
            continue
        if why:
            message = (
                f"{where}: a picture it fetches, {masked_url(url)}, is {why}: pictures are fetched only from the public "
                "internet; set LINK_CARDS_LOCAL=yes to allow your own network, or give a public address"
            )
            yield "problem", message, TweetFileError(message)
            return  # once: the samples draw many addresses from one host


def _svgs(markups: List[str], rules: PictureRules, where: str) -> Iterator[Finding]:
    """Each different SVG of the samples checked without drawing it; a renderer that is not
    installed is said once, as the missing package it is (69)."""
    from ..pictures.svg import font_problem, renderer_problem, svg_problems

    missing = renderer_problem(rules.renderer)
    if missing:
        message = f"{where}: its {{svg}} pictures cannot be drawn here: {missing}"
        yield "problem", message, MissingDependency(message)
    said = {missing} if missing else set()
    for markup in markups:
        for problem in svg_problems(markup, rules.renderer):
            if problem not in said:
                said.add(problem)
                message = f"{where}: an {{svg}} of its samples cannot be drawn here: {problem}"
                yield "problem", message, TweetFileError(message)
    fonts = font_problem(markups, rules.renderer)
    if fonts and not missing:
        said.add(fonts)
        message = f"{where}: an {{svg}} of its samples: {fonts}"
        yield "problem", message, MissingDependency(message)
    if not said:
        yield "ok", f"{where}: the {len(markups)} different {{svg}} pictures of its samples can be drawn here", None


def fetch_findings(report: GrammarReport, rules: PictureRules, *, where: str) -> Iterator[Finding]:
    """`check --online`: the addresses the samples use (`MOST_FETCHED` at most), each fetched now;
    one that fails is a problem with its exit status (75 for a server that did not answer)."""
    urls = _pictures(report)[2]
    if not urls:
        return
    from .tagpictures import make_pictures
    from .tags import Tagged

    fetched = 0
    for url in urls[:MOST_FETCHED]:
        try:
            make_pictures(Tagged("", (UrlPicture(url),), words=("img",)), rules, where=where)
        except BotError as exc:
            yield "problem", str(exc), exc
        else:
            fetched += 1
    if fetched:
        yield "ok", f"{where}: {fetched} of the {{img}} addresses its samples use fetched now", None
