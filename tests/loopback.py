"""The one way the tests' HTTP servers (the X, Mastodon and Bluesky emulators) listen: on
127.0.0.1 at a free port, served from a daemon thread, quiet about clients that hang up."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Type


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
