"""An X look-up read: the account's recent posts (``GET /2/users/:id/tweets``), and whether one of
them is the post the bot sent. No network and no client library here: the poster asks, this reads.

X gives a post's text back changed: every link shortened to a t.co link, and ``&``, ``<`` and
``>`` escaped. Asked for ``entities``, it says, for each t.co link, the link the post was sent with
(``expanded_url``). So a post is the one sent when its words match and each of its links expands
to the link sent. When the answer cannot show that (no entities, a link X wrote differently, a
post that cannot be read), the look-up says it cannot tell: never found on a guess, and never
"not found" while a post on the page may be the one. A reply is the one sent only when it answers
the same post (``referenced_tweets``): another mention's reply with the same words is another post::

    among_posts(answer, "see https://example.com/1", status_url)   # LookUp(found=..., how=...)
    among_posts(answer, "@ada thanks", status_url, reply_to="1456")
"""

from __future__ import annotations

import enum
import html
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit

from .. import LookUp, PostResult

__all__ = ["CLOCK_SLACK_SECONDS", "POSTS_READ", "Match", "among_posts", "compare", "timeline_query"]

# A look-up reads the account's posts made since this long before the attempt was recorded (the
# Pi's clock and X's may differ), at most this many: X's largest page, one billed read.
CLOCK_SLACK_SECONDS = 120
POSTS_READ = 100

# A t.co link as X writes it into a post's text.
_SHORTENED = re.compile(r"https?://t\.co/[A-Za-z0-9]+")
_LINK_MARK = "\ufffc"  # where a link stood, once links are set aside to compare the words


class Match(enum.Enum):
    """What one post on the page is to the post the bot sent."""

    SAME = "same"  # its words and every link: it is the post
    OTHER = "other"  # certainly another post: other words, or another link
    UNSURE = "unsure"  # its words match, but the answer cannot show its links are the ones sent


def timeline_query(sent_at: datetime) -> Dict[str, Any]:
    """The query of the one read: the posts since the attempt (less the slack), with their links."""
    since = sent_at - timedelta(seconds=CLOCK_SLACK_SECONDS)
    if since.tzinfo is not None:  # X takes UTC; a time without a zone is taken as UTC already
        since = since.astimezone(timezone.utc)
    return {
        "start_time": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "max_results": POSTS_READ,
        "tweet.fields": "entities,referenced_tweets",
    }


def among_posts(
    answer: Mapping[str, Any],
    text: str,
    link: Callable[[str], Optional[str]],
    reply_to: Optional[str] = None,
    *,
    any_reply: bool = False,
) -> LookUp:
    """Whether `answer` (the timeline's JSON object) holds the post of `text` (a reply to the post
    `reply_to`, when given; else a post answering none; with `any_reply`, what it answers is not
    known and not compared: an attempt recorded before the history kept its post): found (with its id and `link(id)`), not
    found (the page is whole and no post on it may be this one), or cannot tell (a post that may
    be it, one that cannot be read, more posts than one page, errors)."""
    data = answer.get("data", [])
    if not isinstance(data, list):
        return LookUp(None, "X's answer could not be read (its posts are not a list)")
    doubt: Optional[str] = None
    for post in data:
        match, why = compare(text, post) if isinstance(post, dict) else (Match.UNSURE, "a post that is not an object")
        if match is not Match.OTHER and isinstance(post, dict) and not any_reply:
            answered = _answers(post.get("referenced_tweets"))
            if answered is _UNREADABLE:
                match, why = Match.UNSURE, "a post whose replied-to post cannot be read"
            elif answered != reply_to:
                match, why = Match.OTHER, "a reply to another post" if answered else "a post that answers none"
        if match is Match.SAME:
            post_id = _post_id(post.get("id"))
            if post_id is None:
                doubt = doubt or "the post is there, but X gave no usable id for it"
                continue
            return LookUp(True, "found among the account's recent posts", PostResult(text, post_id, url=link(post_id)))
        if match is Match.UNSURE:
            doubt = doubt or why
    if doubt:
        return LookUp(None, f"cannot tell from X's answer: {doubt}")
    errors = answer.get("errors")
    if errors:
        return LookUp(None, f"X's answer reported errors ({_first_error(errors)})")
    meta = answer.get("meta", {})
    if not isinstance(meta, dict):
        return LookUp(None, "X's answer could not be read (its meta is not an object)")
    if meta.get("next_token"):
        return LookUp(None, "more posts since than one read holds")
    return LookUp(False, "not found among the account's recent posts")


def compare(sent: str, post: Mapping[str, Any]) -> Tuple[Match, str]:
    """What `post` (one of the timeline's) is to the post sent with the text `sent`, and why."""
    shown = post.get("text")
    if not isinstance(shown, str):
        return Match.UNSURE, "a post without a readable text"
    theirs = unicodedata.normalize("NFC", html.unescape(shown))
    ours = unicodedata.normalize("NFC", sent)
    expanded = _expansions(post.get("entities"))
    media = {url for url, (_, is_media) in expanded.items() if is_media}
    shortened = [url for url in _SHORTENED.findall(theirs) if url not in media]
    for url in media:  # a picture's own link, which X adds at the end
        theirs = theirs.replace(url, " ")
    their_words = _words(_SHORTENED.sub(_LINK_MARK, theirs))
    our_links, our_marked = _marked(ours)
    if their_words != _words(our_marked):
        # Other words, unless they are the same once every word holding a link is set aside on
        # both sides: X may have seen a link where the bot did not, or added a picture's link it
        # did not describe.
        if _unlinked_words(theirs) == _unlinked_words(ours):
            return Match.UNSURE, "a post with the same words, whose links X wrote its own way"
        return Match.OTHER, "other words"
    if len(shortened) != len(our_links):
        return Match.UNSURE, "a post with the same words and other links than were sent"
    verdict = Match.SAME, "the same words and links"
    for url, link in zip(shortened, our_links):
        expansion = expanded.get(url, (None, False))[0]
        if expansion is None:
            verdict = Match.UNSURE, "a post with the same words, whose links X did not expand"
        elif expansion != link:
            if _link_key(expansion) != _link_key(link):
                return Match.OTHER, "another link"
            verdict = Match.UNSURE, f"a post with the same words, whose link X changed ({link} became {expansion})"
    return verdict


_UNREADABLE = "?"  # a post's referenced_tweets that cannot be read


def _answers(referenced: Any) -> Optional[str]:
    """The id of the post a post answers (its ``replied_to`` reference), None when it answers
    none, `_UNREADABLE` when its references cannot be read."""
    if referenced is None:
        return None
    if not isinstance(referenced, list):
        return _UNREADABLE
    for each in referenced:
        if not isinstance(each, dict):
            return _UNREADABLE
        if each.get("type") == "replied_to":
            return _post_id(each.get("id")) or _UNREADABLE
    return None


def _expansions(entities: Any) -> Dict[str, Tuple[Optional[str], bool]]:
    """Each t.co link of the post's entities: the link it stands for (None if not given) and whether
    it is a picture's (it has a ``media_key``). Entries that cannot be read are left out."""
    urls = entities.get("urls") if isinstance(entities, dict) else None
    found: Dict[str, Tuple[Optional[str], bool]] = {}
    for entity in urls if isinstance(urls, list) else ():
        if not isinstance(entity, dict) or not isinstance(entity.get("url"), str):
            continue
        expanded = entity.get("expanded_url")
        is_media = "media_key" in entity
        found.setdefault(entity["url"], (expanded if isinstance(expanded, str) else None, is_media))
    return found


def _marked(text: str) -> Tuple[List[str], str]:
    """The links X finds in `text` (twitter-text, as X does: bare domains too), in order, and the
    text with each of them replaced by a mark."""
    from .. import twittertext

    twittertext.load()
    from twitter_text.extract_urls import extract_urls_with_indices

    links, pieces, position = [], [], 0
    for found in extract_urls_with_indices(text):
        start, end = found["indices"]
        pieces += [text[position:start], _LINK_MARK]
        links.append(found["url"])
        position = end
    pieces.append(text[position:])
    return links, "".join(pieces)


def _words(text: str) -> str:
    return " ".join(text.split())


def _unlinked_words(text: str) -> str:
    """`text`'s words but those that hold a link, found either way (twitter-text, or a scheme)."""
    _, marked = _marked(text)
    return " ".join(word for word in marked.split() if _LINK_MARK not in word and "://" not in word)


def _link_key(url: str) -> str:
    """A link as any way of writing it reads the same: the scheme X adds to a bare domain, letters'
    case in the scheme and host, percent-escapes, a bare trailing slash. Two links with other keys
    lead to other pages."""
    if "://" not in url:
        url = "http://" + url
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").encode("idna").decode("ascii")
        port = f":{parts.port}" if parts.port else ""
    except (ValueError, UnicodeError):  # not a link urllib can read: compared as written
        return unquote(url).lower()
    path = unquote(parts.path).rstrip("/")
    query = f"?{unquote(parts.query)}" if parts.query else ""
    fragment = f"#{unquote(parts.fragment)}" if parts.fragment else ""
    return f"{host}{port}{path}{query}{fragment}"


def _post_id(value: Any) -> Optional[str]:
    """A post's id as X writes it (a string of digits), or None for anything else."""
    if isinstance(value, str) and value.isdigit() and value.isascii():
        return value
    return None


def _first_error(errors: Any) -> str:
    first = errors[0] if isinstance(errors, list) and errors else errors
    if isinstance(first, dict):
        return str(first.get("detail") or first.get("title") or first.get("message") or "no detail")[:200]
    return str(first)[:200]
