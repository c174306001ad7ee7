"""A monitor's URL (HEALTHCHECK_URL, NOTIFY_URL) read once into what a request needs: where to
connect, what to ask for, the HTTP Basic credentials its user-info gives, and which of its parts
are secrets on their own.

The setting is read with `parse` and sent with the same `Endpoint`, so a URL `check` accepts is one
the bot can use. A user name and password in the URL (``https://alice:pw@ntfy.example.org/topic``,
as ntfy's own tools take them) become an ``Authorization: Basic`` header and never a part of the
request line, a log or an error; `secret_parts` names the password, the user-info, a check's key
and a topic, so that the scrubber masks each of them alone too::

    endpoint = parse("https://alice:pw@ntfy.example.org/topic")
    endpoint.authorization      # 'Basic YWxpY2U6cHc='
    endpoint.target             # '/topic'
    endpoint.with_suffix("/start").target

Light: only the standard library's URL and base64 helpers; the sending is in `request.py`.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple
from urllib.parse import unquote, unquote_to_bytes, urlsplit

__all__ = ["Endpoint", "parse", "secret_parts"]

# A URL part shorter than this is an ordinary word ("ping", "topic", "alerts") that masking would
# blank from every text, and no key a service hands out is that short: a healthchecks.io check's
# id is 36 characters, a ping key 22. ntfy asks for a topic nobody can guess; a shorter one is not
# a secret anyway. A password is a secret whatever its length (down to the scrubber's own minimum).
MIN_SECRET_PART = 8


@dataclass(frozen=True)
class Endpoint:
    """Where one monitor request goes: `scheme` (http or https), `host` (a name or an address,
    without brackets), `port` (None: the scheme's), `target` (the path and query, as sent in the
    request line) and `authorization` (the header's value, from the URL's user-info, or None)."""

    scheme: str
    host: str
    port: Optional[int]
    target: str
    authorization: Optional[str] = field(default=None, repr=False)

    @property
    def origin(self) -> Tuple[str, str, int]:
        """(scheme, host, port): credentials are sent to this origin and no other."""
        return (self.scheme, self.host.lower(), self.port or (443 if self.scheme == "https" else 80))

    @property
    def address(self) -> str:
        """The URL without its user-info: what a redirect's relative `Location` is read against."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}{'' if self.port is None else f':{self.port}'}{self.target}"

    def with_suffix(self, suffix: str) -> Endpoint:
        """The same endpoint with `suffix` added to its path, before the query (healthchecks.io's
        ``/start`` and ``/<exit status>`` on a URL that has ``?rid=...``)."""
        path, mark, query = self.target.partition("?")
        return Endpoint(
            self.scheme, self.host, self.port, f"{path.rstrip('/')}{suffix}{mark}{query}", self.authorization
        )


def parse(url: str) -> Endpoint:
    """The endpoint `url` names; ValueError saying what is wrong, never quoting the URL (it is a
    secret). `url` is an http or https URL naming a server (a host name or an address) and a port
    from 1 to 65535 if any, printable ASCII without spaces, no fragment; its user-info, if any,
    must be one HTTP Basic auth can send (no ':' in the user name)."""
    if not url.isascii() or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise ValueError("it holds spaces, control characters or non-ASCII characters (percent-encode them)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # its own words quote the URL
        raise ValueError("it is not a URL (a [host] left open, or a port that is not a number up to 65535)") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("it is not an http or https URL")
    if not parts.hostname:
        raise ValueError("it names no server")
    if not _HOST_NAME.fullmatch(parts.hostname) and not _is_address(parts.hostname):
        raise ValueError("its server is neither a host name (letters, digits, '-' and '.') nor an address")
    if parts.fragment or "#" in url:
        raise ValueError("it has a #fragment, which is never sent to a server")
    if port == 0:
        raise ValueError("its port is 0")
    authorization = None
    if "@" in parts.netloc:
        user = unquote_to_bytes(parts.username or "")
        password = unquote_to_bytes(parts.password or "")
        if b":" in user:
            raise ValueError("its user name holds a ':' (%3A), which HTTP Basic auth cannot send")
        if user or password:  # ntfy takes an access token as the password of an empty user name
            authorization = "Basic " + base64.b64encode(user + b":" + password).decode("ascii")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Endpoint(parts.scheme, parts.hostname, port, target, authorization)


_HOST_NAME = re.compile(r"(?=.{1,253}\.?$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def secret_parts(url: object) -> Tuple[str, ...]:
    """The parts of a monitor URL that are secrets on their own, as written and decoded: the
    password, the user-info, and every path segment and query value of `MIN_SECRET_PART`
    characters or more (a check's id or ping key, a topic, a token). The user name alone and the
    host are not secrets."""
    text = str(url)
    if not text:
        return ()
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        return ()
    always: List[str] = []  # a password and the user-info are secrets whatever their length
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        always += [userinfo, unquote(userinfo)]
        if password:
            always += [password, unquote(password)]
    long: List[str] = []
    for piece in parts.path.split("/"):
        long += [piece, unquote(piece)]
    for pair in parts.query.split("&"):
        value = pair.partition("=")[2]
        long += [value, unquote(value.replace("+", " "))]
    found = [*always, *(piece for piece in long if len(piece) >= MIN_SECRET_PART)]
    return tuple(piece for piece in dict.fromkeys(found) if piece)
