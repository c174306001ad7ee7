"""A web server on 127.0.0.1 for the link card tests: pages that behave well, and pages that do not.

Each route is a `Page`: a status, headers and a body (bytes, or a function that yields the body in
pieces, so a 50 MB page is never held in memory), optionally a pause before answering or between
pieces. `hang=True` accepts the connection and never answers. The server records every request
(path and User-Agent) and how many body bytes each route sent::

    with PageServer({"/post": Page(body=b"<title>Hi</title>")}) as server:
        fetch_card(server.url + "/post")
        server.requests, server.sent["/post"]
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

from loopback import LoopbackServer

__all__ = ["Page", "PageServer"]

Body = Union[bytes, Callable[[], Iterable[bytes]]]


@dataclass
class Page:
    body: Body = b""
    status: int = 200
    headers: Dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    length: Optional[int] = None  # Content-Length to announce for a generated body (None: close-delimited)
    hang: bool = False  # accept, then never answer
    delay: float = 0.0  # seconds before answering
    pause: float = 0.0  # seconds between the pieces of a generated body


class PageServer:
    def __init__(self, pages: Dict[str, Page]) -> None:
        self.pages = pages
        self.requests: List[Tuple[str, str]] = []
        self.sent: Dict[str, int] = {}
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                path = self.path.split("?", 1)[0]
                server.requests.append((self.path, self.headers.get("User-Agent", "")))
                page = server.pages.get(path)
                if page is None:
                    page = Page(b"not here", status=404, headers={"Content-Type": "text/plain"})
                if page.hang:
                    server._stop.wait()
                    return
                if page.delay:
                    server._stop.wait(page.delay)
                # The client may stop reading: what the tests want of a huge page.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(path, page)

            def _answer(self, path: str, page: Page) -> None:
                self.send_response(page.status)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                if isinstance(page.body, bytes):
                    self.send_header("Content-Length", str(len(page.body)))
                elif page.length is not None:
                    self.send_header("Content-Length", str(page.length))
                self.end_headers()
                pieces = [page.body] if isinstance(page.body, bytes) else page.body()
                for piece in pieces:
                    if server._stop.is_set():
                        return
                    self.wfile.write(piece)
                    self.wfile.flush()
                    server.sent[path] = server.sent.get(path, 0) + len(piece)
                    if page.pause:
                        time.sleep(page.pause)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = LoopbackServer(Handler)
        self.url = self._server.url

    def __enter__(self) -> PageServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # lets the hanging and streaming answers end
        self._server.stop()
