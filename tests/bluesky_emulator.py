"""A small loopback emulator of the few XRPC endpoints the Bluesky poster uses, for the faults the
real PDS cannot be made to produce: a reply lost after the record was written, 5xx, 429 with a
``ratelimit-reset``, a dropped connection, an expired session. Everything else is tested against the
real PDS (tests/pds); `tests/networks/test_bluesky_emulator.py` sends the same requests to both and
checks that the emulator's replies have the real server's shape (status, fields, error names).

    with BlueskyEmulator() as emu:
        emu.fail("com.atproto.repo.createRecord", Fault.lose_reply())   # write it, answer nothing
        poster = BlueskyPoster(Login(emu.handle, emu.password, emu.url, session_file), timeout=2, retries=2)
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Deque, Dict, List, Optional
from urllib.parse import parse_qs, urlsplit

from loopback import Answer, LoopbackServer

__all__ = ["BlueskyEmulator", "Fault", "shape"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(payload: Dict[str, Any]) -> str:
    """A JWT-shaped token (unsigned: the emulator checks tokens by value, the SDK reads `exp`)."""
    header = {"typ": "at+jwt", "alg": "HS256"}
    return ".".join([_b64(json.dumps(header).encode()), _b64(json.dumps(payload).encode()), _b64(b"signature")])


@dataclass
class Fault:
    """What to do with one request instead of answering it normally."""

    status: int = 0  # answer with this status and `body` (0: none)
    body: Dict[str, Any] = field(default_factory=dict)
    headers: Dict[str, str] = field(default_factory=dict)
    lose_reply_after_handling: bool = False  # do the work, then close the connection: no answer
    drop_before_handling: bool = False  # close the connection without doing anything
    delay: float = 0.0  # wait this long first (the client's timeout may fire)
    answer: Optional[Answer] = None  # answer this instead, whatever it holds (not JSON, endless)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls(status=status, body={"error": "InternalServerError", "message": "Internal Server Error"})

    @classmethod
    def rate_limited(cls, reset: int) -> Fault:
        return cls(
            status=429,
            body={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
            headers={
                "ratelimit-limit": "30",
                "ratelimit-remaining": "0",
                "ratelimit-reset": str(reset),
                "ratelimit-policy": "30;w=300",
            },
        )

    @classmethod
    def lose_reply(cls) -> Fault:
        return cls(lose_reply_after_handling=True)

    @classmethod
    def drop(cls) -> Fault:
        return cls(drop_before_handling=True)

    @classmethod
    def takedown(cls) -> Fault:
        return cls(status=401, body={"error": "AccountTakedown", "message": "Account has been taken down"})


class XrpcError(Exception):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message


class BlueskyEmulator:
    """One account (`handle`, `password`) on a PDS-like server at `url` (127.0.0.1)."""

    def __init__(self, handle: str = "alice.test", password: str = "abcd-efgh-ijkl-mnop") -> None:
        self.handle = handle
        self.password = password
        self.did = "did:plc:emulatoraliceaaaaaaaaaaa"
        self.others = {"bob.test": "did:plc:emulatorbobbbbbbbbbbbbbbb"}
        self.calls: Counter = Counter()  # method name -> how many requests reached it
        self.records: Dict[str, Dict[str, Any]] = {}  # rkey -> {uri, cid, value}
        self.access_lifetime = 7200.0  # seconds; set to 0 to hand out already-expired access tokens
        self.refuse_refresh = False  # answer refreshSession with ExpiredToken
        self.canned: Dict[str, Any] = {}  # method -> the answer it gives a logged-in caller, as it is
        self._faults: Dict[str, Deque[Fault]] = defaultdict(deque)
        self._access: set = set()
        self._refresh: set = set()
        self._serial = 0
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._handler())
        self.url = self._server.url

    def __enter__(self) -> BlueskyEmulator:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def fail(self, method: str, *faults: Fault) -> None:
        """The next requests to `method` meet these faults, one each, in order."""
        self._faults[method].extend(faults)

    def posts(self) -> List[Dict[str, Any]]:
        return list(self.records.values())

    # -- the endpoints -------------------------------------------------------------------------

    def _tokens(self) -> Dict[str, str]:
        self._serial += 1
        now = int(time.time())
        access = make_jwt(
            {
                "scope": "com.atproto.appPass",
                "sub": self.did,
                "iat": now,
                "exp": int(now + self.access_lifetime),
                "aud": "did:web:localhost",
                "n": self._serial,
            }
        )
        refresh = make_jwt(
            {
                "scope": "com.atproto.refresh",
                "sub": self.did,
                "iat": now,
                "exp": now + 90 * 86400,
                "jti": f"refresh-{self._serial}",
                "aud": "did:web:localhost",
            }
        )
        self._access.add(access)
        self._refresh.add(refresh)
        return {"accessJwt": access, "refreshJwt": refresh}

    def _session_reply(self) -> Dict[str, Any]:
        return {
            **self._tokens(),
            "handle": self.handle,
            "did": self.did,
            "email": f"{self.handle}@example.com",
            "emailConfirmed": False,
            "active": True,
        }

    def _authorised(self, headers: Any) -> None:
        token = (headers.get("Authorization") or "").removeprefix("Bearer ")
        if token not in self._access:
            raise XrpcError(400, "InvalidToken", "Malformed token")
        payload = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        if payload["exp"] <= time.time():
            raise XrpcError(400, "ExpiredToken", "Token has expired")

    def answer(self, method: str, headers: Any, params: Dict[str, str], body: Dict[str, Any]) -> Dict[str, Any]:
        """The reply to one call, or an XrpcError. Runs under the lock."""
        if method == "com.atproto.server.createSession":
            if body.get("identifier") not in (self.handle, self.did) or body.get("password") != self.password:
                raise XrpcError(401, "AuthenticationRequired", "Invalid identifier or password")
            return self._session_reply()
        if method == "com.atproto.server.refreshSession":
            token = (headers.get("Authorization") or "").removeprefix("Bearer ")
            if token not in self._refresh:
                raise XrpcError(400, "InvalidToken", "Invalid token type")
            if self.refuse_refresh:  # as the PDS answers a refresh token past its 90 days
                raise XrpcError(400, "ExpiredToken", "Token has expired")
            self._refresh.discard(token)
            return self._session_reply()
        if method == "com.atproto.server.getSession":
            self._authorised(headers)
            return {
                "handle": self.handle,
                "did": self.did,
                "email": f"{self.handle}@example.com",
                "emailConfirmed": False,
                "active": True,
            }
        if method in self.canned:
            self._authorised(headers)
            return self.canned[method]
        if method == "com.atproto.identity.resolveHandle":
            handle = params.get("handle", "")
            did = self.did if handle == self.handle else self.others.get(handle)
            if not did:
                raise XrpcError(400, "HandleNotFound", "Unable to resolve handle")
            return {"did": did}
        if method == "com.atproto.repo.createRecord":
            self._authorised(headers)
            rkey = body.get("rkey") or f"auto{len(self.records)}"
            text = body.get("record", {}).get("text", "")
            if len(text.encode()) > 3000:
                raise XrpcError(
                    400,
                    "InvalidRequest",
                    f"Invalid app.bsky.feed.post record: string too big (maximum 3000, got {len(text.encode())}) "
                    "at $.record.text",
                )
            if rkey in self.records:  # what the reference PDS answers: its database refuses the key
                raise XrpcError(500, "InternalServerError", "Internal Server Error")
            uri = f"at://{self.did}/{body['collection']}/{rkey}"
            cid = "bafyrei" + f"{len(self.records):052d}".replace("0", "a")
            self.records[rkey] = {"uri": uri, "cid": cid, "value": body.get("record", {})}
            return {
                "uri": uri,
                "cid": cid,
                "commit": {"cid": cid, "rev": f"3rev{len(self.records):09d}"},
                "validationStatus": "valid",
            }
        if method == "com.atproto.repo.getRecord":
            record = self.records.get(params.get("rkey", ""))
            if record is None or params.get("repo") not in (self.did, self.handle):
                raise XrpcError(
                    400,
                    "RecordNotFound",
                    f"Could not locate record: at://{params.get('repo')}/{params.get('collection')}/{params.get('rkey')}",
                )
            return record
        raise XrpcError(501, "MethodNotImplemented", "Method Not Implemented")

    def _handler(self) -> type:
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                method = parts.path.removeprefix("/xrpc/")
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                with emulator._lock:
                    emulator.calls[method] += 1
                    queue = emulator._faults.get(method)
                    fault = queue.popleft() if queue else None
                if fault and fault.delay:
                    time.sleep(fault.delay)
                if fault and fault.drop_before_handling:
                    self._drop()
                    return
                if fault and fault.answer:
                    fault.answer.send(self)
                    return
                if fault and fault.status:
                    self._reply(fault.status, fault.body, fault.headers)
                    return
                try:
                    with emulator._lock:
                        reply = emulator.answer(method, self.headers, params, body)
                    status = 200
                except XrpcError as exc:
                    status, reply = exc.status, {"error": exc.error, "message": exc.message}
                if fault and fault.lose_reply_after_handling:
                    self._drop()
                    return
                self._reply(status, reply, {})

            def _reply(self, status: int, body: Dict[str, Any], headers: Dict[str, str]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _drop(self) -> None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(2)

        return Handler


def shape(value: Any) -> Any:
    """The structure of a JSON value: field names and types, not contents, for comparing replies."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


class LossyProxy:
    """A loopback proxy in front of a real server that loses the reply to the first N requests of a
    method after the server has handled them: the server acts, the client hears nothing. It drops
    ``didDoc`` from replies so the SDK keeps talking through the proxy instead of switching to the
    PDS endpoint the DID document names."""

    def __init__(self, upstream: str, lose: Dict[str, int]) -> None:
        self.upstream = urlsplit(upstream)
        self.lose = dict(lose)
        self.calls: Counter = Counter()
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._handler())
        self.url = self._server.url

    def __enter__(self) -> LossyProxy:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def _handler(self) -> type:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def _forward(self) -> None:
                import http.client

                method = urlsplit(self.path).path.removeprefix("/xrpc/")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=30)
                upstream.request(self.command, self.path, body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
                upstream.close()
                with proxy._lock:
                    proxy.calls[method] += 1
                    lost = proxy.lose.get(method, 0) > 0
                    if lost:
                        proxy.lose[method] -= 1
                if lost:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if "json" in (reply.getheader("Content-Type") or ""):
                    document = json.loads(data)
                    if isinstance(document, dict):
                        document.pop("didDoc", None)
                    data = json.dumps(document).encode()
                self.send_response(reply.status)
                for name in ("Content-Type", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
                    if reply.getheader(name):
                        self.send_header(name, reply.getheader(name))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
