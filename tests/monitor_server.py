"""A monitor on 127.0.0.1 that answers what it is told, byte for byte: a good answer, a 500, a
broken status line, 101 headers, a redirect to anywhere. For the monitors' fault tests and the
fuzz driver (benchmarks/fuzz.py)::

    with MonitorServer() as monitor:
        monitor.answers = [FAILED, OK]              # the first request gets a 500, every later one a 200
        monitor.answers_to["/topic"] = [BROKEN["101 headers"]]
        ...run the bot with NOTIFY_URL=monitor.url + "/topic"...
        monitor.heard                               # every request read: method, path, headers, body

With `tls` (a server-side `ssl.SSLContext`, see tests/tls.py) it answers over https instead; a
client that refuses its certificate is listed in `handshakes_failed` (why, as the server saw it)
and heard nothing from.
"""

from __future__ import annotations

import contextlib
import socketserver
import ssl
import threading
from typing import Callable, Dict, List, NamedTuple, Optional, Union

__all__ = ["BROKEN", "FAILED", "OK", "Answer", "Heard", "MonitorServer", "redirect"]

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK"
FAILED = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
# Answers that are not HTTP, or not within its bounds: each a warning, never a traceback.
BROKEN = {
    "a status line that is not one": b"HTTP/1.1 two hundred OK\r\n\r\n",
    "no HTTP at all": b"\x00\xff\xfegarbage\r\n\r\n",
    "101 headers": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(101)) + b"\r\n",
    "a header of 70 KB": b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
    "a status line of 70 KB": b"HTTP/1.1 200 " + b"O" * 70_000 + b"\r\n\r\n",
    "the connection closed unanswered": b"",
    "a status out of range": b"HTTP/1.1 9999 What\r\n\r\n",
    "a reason with control characters": b"HTTP/1.1 503 \x1b[31mdown\x07\r\nContent-Length: 0\r\n\r\n",
}

Answer = Union[bytes, Callable[[str], bytes]]  # raw bytes, or made from the server's own URL


class Heard(NamedTuple):
    method: str
    path: str
    headers: Dict[str, str]  # names in lower case
    body: bytes


def redirect(status: int, location: Union[str, Callable[[str], str]]) -> Answer:
    """A redirect to `location` (or to what it makes of the server's URL)."""

    def answer(url: str) -> bytes:
        where = location(url) if callable(location) else location
        return f"HTTP/1.1 {status} Moved\r\nLocation: {where}\r\nContent-Length: 0\r\n\r\n".encode()

    return answer


class MonitorServer:
    """Answers each request with the next of `answers` (the last one again for every request after
    it) and closes the connection; records every request it read. `answers_to` holds other answers
    for the paths that start with a key (the end ping and an alert are sent at once)."""

    def __init__(self, tls: Optional[ssl.SSLContext] = None) -> None:
        self.answers: List[Answer] = [OK]
        self.answers_to: Dict[str, List[Answer]] = {}
        self.heard: List[Heard] = []
        self.handshakes_failed: List[str] = []
        self._tls = tls
        server = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = 10

            def setup(self) -> None:
                if tls is not None:  # the handshake in this connection's thread, not the server's
                    self.request.settimeout(self.timeout)
                    self.request = tls.wrap_socket(self.request, server_side=True, do_handshake_on_connect=False)
                super().setup()

            def handle(self) -> None:
                if tls is not None:
                    try:
                        self.request.do_handshake()
                    except OSError as exc:  # the client refused the certificate (or spoke no TLS)
                        server.handshakes_failed.append(str(exc))
                        return
                try:
                    line = self.rfile.readline(65537).decode("latin-1").split()
                    headers: Dict[str, str] = {}
                    while True:
                        header = self.rfile.readline(65537).decode("latin-1")
                        if header in ("\r\n", "\n", ""):
                            break
                        name, _, value = header.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    body = self.rfile.read(int(headers.get("content-length") or 0))
                except (OSError, ValueError):
                    return
                heard = Heard(line[0] if line else "", line[1] if len(line) > 1 else "", headers, body)
                server.heard.append(heard)
                answers = next(
                    (them for path, them in server.answers_to.items() if heard.path.startswith(path)), server.answers
                )
                answer = answers.pop(0) if len(answers) > 1 else answers[0]
                with contextlib.suppress(OSError):
                    self.wfile.write(answer(server.url) if callable(answer) else answer)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{'https' if self._tls else 'http'}://{host}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def to(self, path: str) -> List[Heard]:
        """The requests to the paths that start with `path`."""
        return [heard for heard in self.heard if heard.path.startswith(path)]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> MonitorServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
