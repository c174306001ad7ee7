"""Keeping the X keys out of every output: logs, error messages, tracebacks and JSON.

The HTTP layers under tweepy write a key in several forms, and a scrubber that knows only the raw
value misses the others: requests and oauthlib percent-encode it (``+`` becomes ``%2B``, ``/``
``%2F``), the OAuth signature base string that oauthlib logs at DEBUG encodes it twice
(``%252B``), form bodies write ``+`` for a space, and JSON may escape ``/``. `Scrubber` replaces
every one of those forms, whatever the case of the hex digits::

    scrub = Scrubber(config.secrets())
    scrub("oauth_consumer_key=\\"ab%2Bcd%3D\\"")   # 'oauth_consumer_key="********"'

No HTTP layer we use writes a key in base64 (OAuth 1.0a signs with HMAC), but a post may carry
what a watched command printed, and a script's debug output or a dumped header can hold a key in
base64: its standard and URL-safe forms are masked too, alone or inside a longer base64 text (the
part of each of its three alignments that depends on the key alone).

The same scrubber masks every text the bot posts (progress posts, watch output, a scheduled line)
before it is recorded or sent, and what `history` shows.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from typing import Iterable, List, Optional, Set
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "ScrubSecrets",
    "Scrubber",
    "encodings",
    "hide_pieces",
    "looks_like_a_key",
    "scrub",
    "scrub_also",
]

MASK = "********"

# Shorter values would blank out ordinary words; X's keys are 25 to 50 characters.
_MIN_LENGTH = 4

# What keys look like: a long run of letters and digits. X's and Mastodon's mix upper- and
# lower-case letters (access tokens have a '-'; keys pasted from elsewhere may have base64's + / =);
# other services' tokens are lower-case letters and digits (hex, ntfy's tk_...), which a path
# (lower case, digits and '/') must not be taken for. A value holding one, in a non-secret setting,
# is never echoed. Setting names (upper case and '_' only) do not look like this.
_KEY_LIKE = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
# A Bluesky app password: four groups of four lower-case letters and digits.
_APP_PASSWORD_LIKE = re.compile(r"(?<![A-Za-z0-9])[a-z0-9]{4}(?:-[a-z0-9]{4}){3}(?![A-Za-z0-9])")


def _key_like(text: str) -> bool:
    return bool(_APP_PASSWORD_LIKE.search(text)) or any(
        any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
        and (any(c.isupper() for c in run) or "/" not in run)
        for run in _KEY_LIKE.findall(text)
    )


def encodings(secret: str) -> Set[str]:
    """Every form in which an HTTP layer, a log line or a JSON document may write `secret`."""
    # A value read from an environment that is not UTF-8 can hold lone surrogates (Python's
    # surrogateescape): percent-encode them as bytes too, rather than fail while hiding a key.
    errors = "surrogatepass"
    once = quote(secret, safe="", errors=errors)  # oauthlib's escape(), and query strings
    forms = {
        secret,
        once,
        quote(secret, safe="/", errors=errors),  # requests' default for URLs
        quote_plus(secret, errors=errors),  # form bodies (urlencode)
        quote(once, safe=""),  # the OAuth signature base string: encoded twice
        json.dumps(secret)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),  # JSON encoders that escape '/'
    }
    return {form for form in forms if len(form) >= _MIN_LENGTH} | _base64_forms(secret.encode("utf-8", "surrogatepass"))


# A shorter run of base64 could match ordinary text by chance.
_MIN_BASE64 = 8


def _base64_forms(key: bytes) -> Set[str]:
    """`key` in base64 (standard and URL-safe), whole, and as it appears inside a longer base64
    text: for each of the three offsets at which it may start, the characters only its bytes decide."""
    forms = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(key).decode("ascii")
        forms.update((whole, whole.rstrip("=")))
        for offset in range(3):
            encoded = encode(bytes(offset) + key).decode("ascii")
            start, end = -(-8 * offset // 6), 8 * (offset + len(key)) // 6  # whole 6-bit groups of key's bits
            forms.add(encoded[start:end])
    return {form for form in forms if len(form) >= _MIN_BASE64}


class Scrubber:
    """Replaces every encoding of the given secrets with ``********``. Calling it on text is cheap:
    one compiled pattern, case-insensitive so ``%2b`` and ``%2B`` are both caught."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = set().union(*(encodings(secret) for secret in secrets if len(secret) >= _MIN_LENGTH))
        self._pattern: Optional[re.Pattern] = None
        if forms:
            alternatives = sorted(forms, key=len, reverse=True)  # longest first: replace whole forms
            self._pattern = re.compile("|".join(map(re.escape, alternatives)), re.IGNORECASE)

    def __call__(self, text: str, keep: Iterable[str] = ()) -> str:
        """`text` with every secret masked, except a match that lies wholly inside one of the words
        in `keep` (setting names): a short secret ("blue") must not mask the name that says what to
        fix (BLUESKY_APP_PASSWORD). A secret that merely contains such a word is masked whole."""
        if not self._pattern:
            return text
        words = sorted(keep, key=len, reverse=True)
        if not words:
            return self._pattern.sub(MASK, text)
        kept = [match.span() for match in re.finditer("|".join(map(re.escape, words)), text)]

        def mask(match: re.Match) -> str:
            inside = any(start <= match.start() and match.end() <= end for start, end in kept)
            return match.group() if inside else MASK

        return self._pattern.sub(mask, text)

    def contains(self, text: str) -> bool:
        """Whether any form of a secret appears in `text`."""
        return bool(self._pattern and self._pattern.search(text))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every encoding of every secret replaced by ``********``."""
    return Scrubber(secrets)(text)


def looks_like_a_key(text: str, secrets: Iterable[str] = ()) -> bool:
    """Whether `text` holds one of `secrets` (in any form), is a piece of one (a partial paste), or
    is a long run of key-like characters: such a value, pasted into the wrong setting, must not be
    repeated in an error message."""
    value = text.strip()
    secrets = tuple(secrets)
    piece = len(value) >= _MIN_PIECE and any(value in secret for secret in secrets)
    return piece or _key_like(value) or Scrubber(secrets).contains(value)


_MIN_PIECE = 8  # a shorter value may well be part of a key by chance ("12:00" is not a leak)


def hide_pieces(text: str, values: Iterable[str], keep: Iterable[str] = ()) -> str:
    """`text` with each of `values`, and every piece of one at least 8 characters long, replaced by
    ``********``: a setting's error message may quote its value shortened ('AbCdEf0123456789GhIj'
    of a 40-character key), which hiding the whole value misses. A piece wholly inside one of the
    words in `keep` (setting names) stays, as in `Scrubber`. Meant for short texts (a message)."""
    values = [value for value in dict.fromkeys(values) if len(value) >= _MIN_PIECE]
    if not values:
        return text
    words = sorted(keep, key=len, reverse=True)
    kept = [match.span() for match in re.finditer("|".join(map(re.escape, words)), text)] if words else []
    shown: List[str] = []
    start = 0
    while start < len(text):
        end = max(_piece_end(text, start, value) for value in values)
        if end and not any(left <= start and end <= right for left, right in kept):
            shown.append(MASK)
            start = end
        else:
            shown.append(text[start])
            start += 1
    return "".join(shown)


def _piece_end(text: str, start: int, value: str) -> int:
    """Where the longest piece of `value` (at least `_MIN_PIECE` characters) that starts at
    `start` in `text` ends, or 0 if none does."""
    end = start + _MIN_PIECE
    if end > len(text) or text[start:end] not in value:
        return 0
    while end < len(text) and text[start : end + 1] in value:
        end += 1
    return end


class ScrubSecrets(logging.Filter):
    """Last line of defence on every log handler: no secret reaches a log, whoever logs it (tweepy,
    requests_oauthlib and oauthlib log headers and signing strings at DEBUG), tracebacks included."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(secrets)
        self._scrub = Scrubber(self._secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Scrub these too (the daemon re-read its settings and may have new keys)."""
        self._secrets = tuple(dict.fromkeys((*self._secrets, *secrets)))
        self._scrub = Scrubber(self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = self._scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, ()
        if record.exc_info and not record.exc_text:
            # The formatter uses exc_text when it is set: format the traceback here, scrubbed.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self._scrub(record.stack_info)
        return True


def scrub_also(secrets: Iterable[str]) -> None:
    """Keep every log handler's output free of these secrets too, from now on."""
    for handler in logging.getLogger().handlers:
        for scrubber in handler.filters:
            if isinstance(scrubber, ScrubSecrets):
                scrubber.add(secrets)


def masked_url(url: str) -> str:
    """`url` as it may be printed or stored: its user, password and query masked ("***"), as
    NOTIFY_URL's are, so a token in an `{img}` address never reaches a log or the history."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "***"
    netloc = parts.netloc
    if parts.username is not None or parts.password is not None:
        netloc = "***@" + (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_WEB_ADDRESS = re.compile(r"https?://[^\s\"'<>{}]+", re.IGNORECASE)


def masked_urls(text: str) -> str:
    """`text` with the user, password and query of every web address in it masked (`masked_url`):
    what the history keeps of a grammar's expansion whose tags fetch pictures, so an `{img}`
    address's token is used for the fetch and never stored. Addresses without either are kept."""
    return _WEB_ADDRESS.sub(
        lambda found: masked_url(found.group()) if "@" in found.group() or "?" in found.group() else found.group(),
        text,
    )
