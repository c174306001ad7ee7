"""Bluesky's login session: kept in a file (mode 0600) and refreshed, because ``createSession`` is
rate limited (30 per 5 minutes, a few hundred a day), so the app password is sent again only when
the saved refresh token is refused. Imported by the poster (`poster.py`), which connects with the
atproto SDK."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

from ...files import write_atomically
from ...settings.secrets import scrub_also
from .errors import reason

if TYPE_CHECKING:
    from atproto_client import Client

__all__ = [
    "FRESH_FOR",
    "Saved",
    "fresh_session",
    "load_session",
    "log_in",
    "save_session",
    "sdk_request",
    "tokens",
    "trusted_did",
]

log = logging.getLogger(__package__)  # its lines log as the poster's do

# How long a saved access token must have left to be used without asking the server first: more
# than the 15 minutes before expiry at which the SDK refreshes it on its own.
FRESH_FOR = 20 * 60


def log_in(
    service: str,
    timeout: float,
    handle: str,
    password: str,
    saved: Optional[str],
    save: Callable[[Any], None],
    *,
    trust: bool = False,
) -> Tuple[Client, Optional[str]]:
    """A logged-in client and, when the saved session was taken, its DID: the `saved` session if the
    server still takes it (refreshed when its access token is old), else a new one made with the app
    password. `save` is called with every new or refreshed session (it notes the DID then). With
    `trust`, a saved session whose access token has a while left is taken without asking the server
    (no request): the caller's first request proves it, and the caller logs in again if it is
    refused (`trusted_did` says when this happens)."""
    from atproto_client import Client
    from atproto_client.exceptions import BadRequestError, UnauthorizedError

    def request() -> Any:
        return sdk_request(timeout)

    did = None
    client = Client(base_url=service, request=request())
    client.on_session_change(lambda event, session: save(session))
    if saved and trust and trusted_did(saved):
        client.login(session_string=saved, fetch_bsky_profile=False)  # no request: the token is fresh
        return client, trusted_did(saved)
    if saved:
        try:
            client.login(session_string=saved, fetch_bsky_profile=False)
            session = client.com.atproto.server.get_session()  # refreshes first if the access token is old
        except (BadRequestError, UnauthorizedError) as exc:
            log.info("the saved Bluesky session was refused (%s): logging in with the app password", reason(exc))
            client = Client(base_url=service, request=request())
            client.on_session_change(lambda event, session: save(session))
            saved = None
        else:
            did = session.did
    if not saved:
        client.login(handle, password, fetch_bsky_profile=False)  # save notes the DID
    return client, did


def sdk_request(timeout: float) -> Any:
    """The SDK's requests (an atproto_client Request), each answer read within the bound all
    networks share and within `timeout` in all: for the PDS, and for a video service."""
    from atproto_client.request import Request

    from ..http import httpx_hooks, httpx_transport

    return Request(timeout=timeout, event_hooks=httpx_hooks(), transport=httpx_transport(timeout))


def trusted_did(saved: str, now: Optional[float] = None) -> Optional[str]:
    """The DID of a saved session whose access token has more than `FRESH_FOR` seconds left (the
    SDK refreshes a token with less than 15 minutes left, which is a request), else None."""
    from atproto_client.client.session import Session

    try:
        session = Session.decode(saved)
        expires = session.access_jwt_payload.exp
    except Exception:  # a session string the SDK cannot read is simply not trusted
        return None
    if not isinstance(expires, (int, float)) or expires - (time.time() if now is None else now) < FRESH_FOR:
        return None
    return session.did if isinstance(session.did, str) and session.did.startswith("did:") else None


@dataclass(frozen=True)
class Saved:
    """A saved session's parts a read needs: the account's DID, its access token (kept out of
    repr()) and the server the SDK talks to with it (its PDS, as the SDK noted it at login)."""

    did: str
    access_jwt: str = field(repr=False)
    pds: str


def fresh_session(saved: str, now: Optional[float] = None) -> Optional[Saved]:
    """The saved session (`session_of`) when its access token has more than `FRESH_FOR` seconds
    left, as `trusted_did` asks; else None (the SDK path then refreshes or logs in)."""
    session = session_of(saved)
    if session is None:
        return None
    expires = _expiry(session.access_jwt)
    if expires is None or expires - (time.time() if now is None else now) < FRESH_FOR:
        return None
    return session


def session_of(saved: str) -> Optional[Saved]:
    """A session string read without the SDK (handle, DID, access token, refresh token and PDS,
    joined by ":::", as the SDK exports it): its DID, access token and PDS's base URL; None for
    one it cannot be (an older string without the PDS: the SDK reads it)."""
    parts = saved.split(":::")
    if len(parts) != 5:
        return None
    _, did, access, _, pds = parts
    if not did.startswith("did:") or not pds.startswith(("https://", "http://")):
        return None
    pds = pds.rstrip("/")
    return Saved(did, access, pds[: -len("/xrpc")] if pds.endswith("/xrpc") else pds)


def _expiry(jwt: str) -> Optional[float]:
    """The ``exp`` of a JWT's payload (unverified: the server checks it; this only says when not
    to bother), or None when it is not a JWT with one."""
    pieces = jwt.split(".")
    if len(pieces) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(pieces[1] + "=" * (-len(pieces[1]) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        return None
    expires = payload.get("exp") if isinstance(payload, dict) else None
    return float(expires) if isinstance(expires, (int, float)) and not isinstance(expires, bool) else None


def load_session(session_file: Path, handle: str, service: str) -> Optional[str]:
    """The saved session string, if it is for this account and server."""
    try:
        saved = json.loads(session_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring the saved Bluesky session %s (%s): logging in again", session_file, exc)
        return None
    if not isinstance(saved, dict) or saved.get("handle") != handle or saved.get("service") != service:
        return None
    session = saved.get("session")
    if not isinstance(session, str):
        return None
    scrub_also(tokens(session))
    return session


def save_session(session_file: Path, handle: str, service: str, session: Any) -> None:
    """Keep the session (mode 0600, written whole or not at all) for the next run."""
    text = session.encode()
    scrub_also(tokens(text))
    document = json.dumps({"service": service, "handle": handle, "session": text})
    try:
        session_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(session_file, document + "\n", 0o600)
    except OSError as exc:  # the post can still go out; only the next run's login is at stake
        log.warning(
            "could not save the Bluesky session to %s (%s): the next run logs in again, and Bluesky "
            "allows only 30 logins in 5 minutes; make the state folder writable",
            session_file,
            exc.strerror or exc,
        )


def tokens(session_string: str) -> list:
    """The secret parts of an exported session string (the access and refresh tokens)."""
    return [part for part in session_string.split(":::") if part.count(".") == 2 and len(part) > 20]
