"""The one way the tests' HTTP servers (the X, Mastodon and Bluesky emulators) listen: on
127.0.0.1 at a free port, served from a daemon thread, quiet about clients that hang up; what
they share to read an upload (a multipart form, a picture's type from its first bytes); and the
one way a test makes any of them answer what a hostile or broken server would (`Answer`)."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Tuple, Type


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: Type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (timeout, kill) leaves a broken pipe behind: expected here."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, OSError)):
            super().handle_error(request, client_address)


def multipart_fields(content_type: str, raw: bytes) -> Dict[str, Tuple[bytes, Optional[str]]]:
    """The fields of a multipart/form-data body, by name: (bytes, the part's Content-Type)."""
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: Dict[str, Tuple[bytes, Optional[str]]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[str(name)] = (part.get_payload(decode=True) or b"", part.get_content_type())
    return fields


def picture_type(data: bytes) -> Optional[str]:
    """The image type a server reads from a file's first bytes (JPEG, PNG, GIF, WebP), or None:
    written here again, not taken from twitterbot.pictures, so the servers check the bot."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass
class Answer:
    """A reply a test scripts in place of a server's own: `body` as JSON (bytes as they are), any
    `status` and content type; or, with `size`, a JSON document of that many bytes streamed in
    pieces (a timeline that never ends), never held whole by the server. `gzip` sends it
    compressed, as a server may (a small answer that unpacks to `size`)."""

    body: Any = None
    status: int = 200
    content_type: str = "application/json; charset=utf-8"
    size: int = 0
    gzip: bool = False
    headers: Tuple[Tuple[str, str], ...] = ()  # more headers (a 429's X-RateLimit-Reset)

    def send(self, handler: BaseHTTPRequestHandler) -> None:
        """Write the reply on `handler`'s connection; a client that stops reading ends it."""
        handler.close_connection = True  # and says so: a client must not send on it again
        handler.send_response(self.status)
        handler.send_header("Connection", "close")
        handler.send_header("Content-Type", self.content_type)
        for name, value in self.headers:
            handler.send_header(name, value)
        with contextlib.suppress(OSError):  # the client hung up, as it should past its bound
            if self.size:
                self._stream(handler)
                return
            data = self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

    def _stream(self, handler: BaseHTTPRequestHandler) -> None:
        """`{"data": [{"id": "1", "text": "xx..."}, ...]}` of `size` bytes, 64 KB at a time."""
        import zlib

        item = b'{"id": "1", "text": "' + b"x" * 200 + b'"},'
        piece = item * (65536 // len(item))
        packer = zlib.compressobj(9, zlib.DEFLATED, 31) if self.gzip else None
        handler.send_header("Transfer-Encoding", "chunked")
        if packer:
            handler.send_header("Content-Encoding", "gzip")
        handler.end_headers()

        def chunk(data: bytes) -> None:
            data = packer.compress(data) if packer else data
            if data:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        chunk(b'{"data": [')
        sent = 10
        while sent < self.size:
            chunk(piece)
            sent += len(piece)
        chunk(b'{"id": "1", "text": "x"}]}')
        if packer:
            tail = packer.flush()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(tail), tail))
        handler.wfile.write(b"0\r\n\r\n")
