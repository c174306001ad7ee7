"""The one way the tests' HTTP servers (the X, Mastodon and Bluesky emulators) listen: on
127.0.0.1 at a free port, served from a daemon thread, quiet about clients that hang up; and what
they share to read an upload (a multipart form, a picture's type from its first bytes)."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Optional, Tuple, Type


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
