"""A server on 127.0.0.1 that answers one byte at a time and never finishes: the red team's hang.
`headers`: the status line, then a header that never ends; `body`: whole headers (of
`content_type`, chunked), then a chunked body that never ends. Each byte comes `every` seconds,
well within any per-read timeout, so only a deadline over the whole answer ends the request::

    with TrickleServer("body", every=0.2) as slow:
        fetch_picture(slow.url + "/cat.png", ...)     # must end at its deadline
    slow.paths                                        # the requests' paths, in order
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Iterator, List

__all__ = ["TrickleServer"]


class TrickleServer:
    def __init__(self, mode: str, *, every: float = 1.0, content_type: str = "application/json") -> None:
        assert mode in ("headers", "body")
        self.mode = mode
        self.every = every
        self.content_type = content_type
        self.paths: List[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="trickle-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> TrickleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(client,), daemon=True).start()

    def _answer(self, client: socket.socket) -> None:
        with contextlib.closing(client), contextlib.suppress(OSError):
            client.settimeout(5)
            request = b""
            while b"\r\n\r\n" not in request:
                piece = client.recv(65536)
                if not piece:
                    return
                request += piece
            self.paths.append(request.split(b" ", 2)[1].decode("latin-1"))
            for byte in self._bytes():
                if self._stop.is_set():
                    return
                client.sendall(byte)
                time.sleep(self.every)

    def _bytes(self) -> Iterator[bytes]:
        if self.mode == "headers":
            yield from (bytes([each]) for each in b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while True:
                yield b"a"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {self.content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        yield head
        while True:
            yield from (b"1", b"\r\n", b"{", b"\r\n")
