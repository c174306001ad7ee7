"""Serving the status page with waitress, a production WSGI server in pure Python (never Flask's
development server), until SIGTERM or Ctrl-C::

    serve(config, host="127.0.0.1", port=8080, password=None)   # returns 0 once stopped
"""

from __future__ import annotations

import logging
import signal
from typing import Optional

from ..errors import ConfigError, ExitStatus
from ..settings.loading import Config

__all__ = ["serve", "THREADS"]

log = logging.getLogger("twitterbot")

# Two worker threads: the page is read by one person and a dashboard; each thread costs memory
# on a Pi Zero (512 MB), and a request takes milliseconds.
THREADS = 2


def serve(config: Config, *, host: str, port: int, password: Optional[str]) -> int:
    """Listen on `host`:`port` and answer until SIGTERM (systemctl stop) or SIGINT; requests
    being answered are finished first."""
    from waitress import create_server

    from .app import create_app

    app = create_app(config, password=password)
    try:
        server = create_server(app, host=host, port=port, threads=THREADS, ident="twitterbot")
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host} port {port} ({exc.strerror or exc}): another program may use that port"
            " (pick another with --port), or the address is not this machine's"
        ) from None

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)  # waitress's loop catches it, finishes the requests in hand and returns

    previous = signal.signal(signal.SIGTERM, stop)
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "status page on http://%s:%s/ (and /status.json)%s; stop with Ctrl-C or SIGTERM",
        shown,
        server.effective_port,
        ", password required" if password else "",
    )
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
    log.info("status page stopped")
    return int(ExitStatus.OK)
