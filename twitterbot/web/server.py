"""Serving the status page with waitress, a production WSGI server in pure Python (never Flask's
development server), until SIGTERM or Ctrl-C::

    serve(config, host="127.0.0.1", port=8080, password="", local_only=True)   # 0 once stopped

The server is set for a Pi that anyone on the network can reach: no request body is taken (the
page answers GET and HEAD only), headers are capped, idle connections are closed after
`IDLE_SECONDS`, and once `CONNECTION_LIMIT` connections are open the oldest that has not finished
sending its request is dropped to make room, so clients that open connections and never finish a
request cannot keep the owner out (waitress alone stops accepting at its limit).
"""

from __future__ import annotations

import logging
import signal
from typing import Any, Dict, Iterable, List, Tuple

from ..errors import ConfigError, ExitStatus
from ..settings.loading import Config

__all__ = ["serve", "server_settings", "unfinished_to_drop", "THREADS", "CONNECTION_LIMIT", "IDLE_SECONDS"]

log = logging.getLogger(__name__)

# Two worker threads: the page is read by one person and a dashboard; each thread costs memory
# on a Pi Zero (512 MB), and a request takes milliseconds.
THREADS = 2
# Open connections at once. Each costs a file descriptor and a few kB, not a thread; past this the
# oldest unfinished ones are dropped (see `unfinished_to_drop`).
CONNECTION_LIMIT = 64
# Dropping a few at once, so a stream of new connections does not drop one per accept.
DROP_AT_ONCE = 8
# A connection with no complete request for this long is closed (waitress's default is 120 s),
# looked for every CLEANUP_SECONDS.
IDLE_SECONDS = 20
CLEANUP_SECONDS = 5
# A browser's request with the password is under 2 kB; waitress's default allows 256 kB.
MAX_HEADER_BYTES = 16 * 1024


def server_settings(host: str, port: int) -> Dict[str, Any]:
    """waitress's adjustments for the status page on a Pi."""
    return {
        "host": host,
        "port": port,
        "threads": THREADS,
        "ident": "twitterbot",
        "connection_limit": CONNECTION_LIMIT,
        "channel_timeout": IDLE_SECONDS,
        "cleanup_interval": CLEANUP_SECONDS,
        # A Content-Length of 1 or more, or any chunk of a chunked body, is answered 413 before
        # a byte of it is kept: the page takes no body.
        "max_request_body_size": 1,
        "max_request_header_size": MAX_HEADER_BYTES,
        "asyncore_use_poll": True,  # select() fails past 1024 file descriptors
        "expose_tracebacks": False,
    }


def unfinished_to_drop(channels: Iterable[Any], open_now: int, limit: int) -> List[Any]:
    """The connections to close so a new one can be accepted: none below `limit`; else the oldest
    that have sent no complete request and have nothing left to receive, enough to leave
    DROP_AT_ONCE free. A connection being answered is never dropped."""
    if open_now < limit:
        return []
    idle = [channel for channel in channels if not channel.requests and not channel.total_outbufs_len]
    idle.sort(key=lambda channel: channel.creation_time)
    return idle[: open_now - limit + DROP_AT_ONCE]


def _server_class() -> type:
    from waitress.server import TcpWSGIServer

    class SheddingServer(TcpWSGIServer):
        """waitress's TCP server, dropping unfinished connections rather than stop accepting."""

        def readable(self) -> bool:
            if self.accepting:
                for channel in unfinished_to_drop(
                    self.active_channels.values(), len(self._map), self.adj.connection_limit
                ):
                    channel.will_close = True  # closed by the loop's next pass, before the accept
            return super().readable()

    return SheddingServer


def _create_server(app: Any, host: str, port: int) -> Tuple[Any, List[Tuple[str, int]]]:
    """waitress's `create_server`, with `SheddingServer` listening on each of `host`'s addresses;
    the server and where it listens."""
    from waitress.adjustments import Adjustments
    from waitress.server import MultiSocketServer
    from waitress.task import ThreadedTaskDispatcher

    adjustments = Adjustments(**server_settings(host, port))
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adjustments.threads)
    sockets: Dict[int, Any] = {}
    server_class = _server_class()
    try:
        servers = [
            server_class(app, sockets, dispatcher=dispatcher, adj=adjustments, sockinfo=info)
            for info in adjustments.listen
        ]
    except BaseException:
        dispatcher.shutdown()
        for server in list(sockets.values()):
            server.close()
        raise
    listening = [(server.effective_host, server.effective_port) for server in servers]
    if len(servers) == 1:
        return servers[0], listening
    return MultiSocketServer(sockets, adjustments, listening, dispatcher, servers[0].log_info), listening


def serve(config: Config, *, host: str, port: int, password: str, local_only: bool, app: Any = None) -> int:
    """Listen on `host`:`port` and answer until SIGTERM (systemctl stop) or SIGINT; requests
    being answered are finished first. `password` empty: none is asked; `local_only`: only
    requests to this machine's loopback names are answered. `app`: another WSGI application
    (a flock's page, twitterbot/flock/page.py) in place of `config`'s page."""
    from .app import create_app

    app = app or create_app(config, password=password or None, local_only=local_only)
    try:
        server, listening = _create_server(app, host, port)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host} port {port} ({exc.strerror or exc}): another program may use that port"
            " (pick another with --port), or the address is not this machine's"
        ) from None
    except ValueError:  # waitress found no address for the name
        raise ConfigError(
            f"cannot listen on {host}: it is not an address of this machine, or a name this machine can look up;"
            " use an address such as 127.0.0.1 or 0.0.0.0"
        ) from None

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)  # waitress's loop catches it, finishes the requests in hand and returns

    previous = signal.signal(signal.SIGTERM, stop)
    for address, effective_port in listening:
        shown = f"[{address}]" if ":" in address else address
        log.info(
            "status page on http://%s:%s/ (and /status.json)%s; stop with Ctrl-C or SIGTERM",
            shown,
            effective_port,
            ", password required" if password else "",
        )
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
    log.info("status page stopped")
    return int(ExitStatus.OK)
