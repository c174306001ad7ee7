"""The emulator answers like the real PDS: the same requests go to both, and the replies must have
the same status, the same fields of the same types, and the same error names. A fault test
through the emulator is only worth what this comparison guarantees."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from bluesky_emulator import BlueskyEmulator, shape
from pds.harness import Pds


def call(
    base: str,
    method: str,
    *,
    body: Optional[Dict[str, Any]] = None,
    params: str = "",
    token: str = "",
    post: bool = False,
) -> Tuple[int, Dict[str, Any]]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{base}/xrpc/{method}{'?' + params if params else ''}",
        data=json.dumps(body).encode() if body is not None else None,
        headers=headers,
        method="POST" if body is not None or post else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def conversation(base: str, handle: str, password: str, other: str) -> List[Tuple[str, int, Any]]:
    """Every call the poster makes, the good and the refused ones: (what, status, reply's shape)."""
    replies: List[Tuple[str, int, Any]] = []

    def note(what: str, status: int, reply: Dict[str, Any]) -> Dict[str, Any]:
        summary = (
            {"error": reply.get("error")} if status >= 400 else shape({k: v for k, v in reply.items() if k != "didDoc"})
        )
        replies.append((what, status, summary))
        return reply

    note(
        "wrong password",
        *call(base, "com.atproto.server.createSession", body={"identifier": handle, "password": "wrong-pass"}),
    )
    session = note(
        "log in", *call(base, "com.atproto.server.createSession", body={"identifier": handle, "password": password})
    )
    token, did = session["accessJwt"], session["did"]
    note("refresh with the access token", *call(base, "com.atproto.server.refreshSession", token=token, post=True))
    refreshed = note(
        "refresh", *call(base, "com.atproto.server.refreshSession", token=session["refreshJwt"], post=True)
    )
    token = refreshed["accessJwt"]
    note("session", *call(base, "com.atproto.server.getSession", token=token))
    note("bad token", *call(base, "com.atproto.server.getSession", token="not-a-token"))
    note("resolve", *call(base, "com.atproto.identity.resolveHandle", params=f"handle={other}"))
    note("resolve unknown", *call(base, "com.atproto.identity.resolveHandle", params="handle=nobody-here.test"))
    record = {"$type": "app.bsky.feed.post", "text": "compare", "createdAt": "2026-11-23T01:00:00.000Z"}
    create = {
        "repo": did,
        "collection": "app.bsky.feed.post",
        "rkey": "3n2xaaaaaaa22",
        "record": record,
        "validate": True,
    }
    note("create", *call(base, "com.atproto.repo.createRecord", body=create, token=token))
    note("create again, same key", *call(base, "com.atproto.repo.createRecord", body=create, token=token))
    too_big = {**create, "rkey": "3n2xaaaaaaa23", "record": {**record, "text": "👨‍👩‍👧" * 167}}
    status, reply = call(base, "com.atproto.repo.createRecord", body=too_big, token=token)
    note("too many bytes", status, reply)
    replies.append(("too many bytes: message", status, reply.get("message", "").split(":", 1)[-1].strip()))
    note(
        "get",
        *call(
            base, "com.atproto.repo.getRecord", params=f"repo={did}&collection=app.bsky.feed.post&rkey=3n2xaaaaaaa22"
        ),
    )
    note(
        "get missing",
        *call(
            base, "com.atproto.repo.getRecord", params=f"repo={did}&collection=app.bsky.feed.post&rkey=3n2xaaaaaaa99"
        ),
    )
    return replies


def test_the_emulator_answers_the_posters_calls_as_the_real_pds_does(bluesky_pds: Pds) -> None:
    account = bluesky_pds.create_account("same")
    other = bluesky_pds.create_account("other")
    real = conversation(bluesky_pds.url, account.handle, account.password, other.handle)
    with BlueskyEmulator() as emulator:
        emulated = conversation(emulator.url, emulator.handle, emulator.password, "bob.test")
    assert emulated == real
