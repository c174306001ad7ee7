"""A Mastodon status as the server judges it: how long it is (StatusLengthValidator, no network and
no client library) and who may see it::

    measure("Hello https://example.com/a/very/long/path").length   # 29: a link counts 23
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .. import Fit, twittertext

__all__ = ["DEFAULT_LIMIT", "URL_LENGTH", "VISIBILITIES", "among_statuses", "measure", "status_length", "status_text"]

# Mastodon's own defaults (StatusLengthValidator): an instance may raise the limit, and says so
# in its instance endpoint (`MastodonPoster.limit`).
DEFAULT_LIMIT = 500
URL_LENGTH = 23

# Who sees a post: everyone on public timelines, everyone but off the public timelines (most
# instances ask bots for this), followers only, mentioned accounts only.
VISIBILITIES = ("public", "unlisted", "private", "direct")

# Mastodon's Account::MENTION_RE: "@user" or "@user@domain", not after a word character, '=' or '/'.
# Both patterns are text, compiled (and cached by `re`) only when a text has an @: the registry
# imports this module on every run.
_MENTION = r"(?i)(?<![=/\w])@(?P<name>(?P<user>[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@(?P<domain>[\w.-]+\w+))?)"
# twitter-text's end_mention_match: what may not follow a mention (another @, an accented
# Latin letter, "://").
_NOT_AFTER_MENTION = (
    "[@\uff20\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b"
    "\u0263\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff]|://"
)
_MAX_DOMAIN_LENGTH = 253


def measure(text: str, limit: int = DEFAULT_LIMIT) -> Fit:
    """How long `text` is as Mastodon counts it, against `limit` (the instance's, when known)."""
    return Fit(network="mastodon", length=status_length(text), limit=limit, unit="characters")


def status_length(text: str) -> int:
    """Mastodon's count of a status (StatusLengthValidator, Mastodon 4.x): user-perceived
    characters (extended grapheme clusters, so an emoji with a skin tone is one), after every
    http(s) link becomes 23 characters whatever its length and every ``@user@domain`` counts as
    ``@user``. Links are found with twitter-text's extractor, as Mastodon does; a link Mastodon's
    looser path rules would stretch further, or a gemini:// one, is counted in full here (longer,
    never shorter, so a line that fits here fits there). An Indic conjunct counts as Ruby before
    4.0 counts it, without Unicode 15.1's rule GB9c: one more than a newer server, never less."""
    from ..graphemes import count_graphemes

    if not text.strip():
        return 0
    return count_graphemes(_countable_text(text), indic_conjuncts=False)


def _countable_text(text: str) -> str:
    """`text` with each link replaced by 23 x's and each remote mention by its local part."""
    entities: List[Tuple[int, int, str]] = []
    if ":" in text:
        twittertext.load()
        from twitter_text.extract_urls import extract_urls_with_indices

        for url in extract_urls_with_indices(text, extract_urls_without_protocol=False):
            start, end = url["indices"]
            entities.append((start, end, "x" * URL_LENGTH))
    if "@" in text:
        not_after = re.compile(_NOT_AFTER_MENTION)
        for match in re.finditer(_MENTION, text):
            if not_after.match(text, match.end()):
                continue
            domain = match.group("domain")
            if domain and len(domain) > _MAX_DOMAIN_LENGTH:
                continue
            entities.append((match.start(), match.end(), "@" + match.group("user")))
    if not entities:
        return text
    # twitter-text's remove_overlapping_entities: by start; one that overlaps a kept one goes.
    pieces, position = [], 0
    for start, end, replacement in sorted(entities, key=lambda entity: entity[0]):
        if start < position:
            continue
        pieces += [text[position:start], replacement]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def status_text(content: str) -> str:
    """A status's text from its HTML (``content``), with its whitespace made single: enough to
    tell whether a status is the one a post sent."""
    import html

    text = re.sub(r"<br\s*/?>|</p>\s*<p>", "\n", content or "")
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def among_statuses(
    statuses: Sequence[Any],
    text: str,
    sent_at: datetime,
    result: Callable[[Any], Any],
    *,
    full: bool,
    reply_to: Optional[str] = None,
    any_reply: bool = False,
) -> Any:
    """A look-up through the account's last statuses (newest first): found when one has `text`,
    was made since `sent_at` (less two minutes of clock slack) and answers the status `reply_to`
    (None: it answers none; `any_reply`: not compared, for an attempt recorded before the history
    kept what it answered): another mention's reply with the same words is another status. Not found when the page
    reaches back past `sent_at`, or `full` (it holds every status), and every status on it could
    be read; else nobody can tell (a status that cannot be read may be the one)."""
    from datetime import timedelta

    from .. import LookUp

    since = sent_at - timedelta(minutes=2)
    wanted = " ".join(text.split())
    oldest: Optional[datetime] = None
    unreadable = False
    for status in statuses:
        made = status.get("created_at") if isinstance(status, dict) else None
        content = status.get("content") if isinstance(status, dict) else None
        if not isinstance(made, datetime) or not isinstance(content, str):
            unreadable = True
            continue
        oldest = made if oldest is None or made < oldest else oldest
        answers = status.get("in_reply_to_id")
        same_parent = any_reply or (str(answers) if answers is not None else None) == reply_to
        if made >= since and status_text(content) == wanted and same_parent:
            found = result(status)
            if found.confirmed:
                return LookUp(True, "found among the account's recent statuses", found)
            unreadable = True  # it is there, but its id could not be read
    if unreadable:
        return LookUp(None, "the server's answer holds a status that could not be read")
    if full or (oldest is not None and oldest < since):
        return LookUp(False, "not found among the account's recent statuses")
    return LookUp(None, "more statuses since than one look-up reads")
