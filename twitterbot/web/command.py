"""The status page's command.

python bot.py serve [--host 127.0.0.1] [--port 8080]   a read-only status page and /status.json

Flask and waitress are imported only when `serve` runs: registering the command costs nothing.
"""

from __future__ import annotations

import argparse
import ipaddress

from ..arguments import Commands, Parser, add_command
from ..errors import ConfigError
from ..settings.loading import Config

__all__ = ["register", "is_loopback"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def register(parser: Parser, commands: Commands) -> None:
    serve = add_command(commands, "serve", _serve, help="serve a read-only status page and /status.json")
    serve.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDRESS",
        help=f"the address to listen on (default {DEFAULT_HOST}: this machine only; any other needs WEB_PASSWORD)",
    )
    serve.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, metavar="N", help=f"the port (default {DEFAULT_PORT})"
    )


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any address


def _serve(args: argparse.Namespace, config: Config) -> int:
    password = str(config["WEB_PASSWORD"] or "")
    if not is_loopback(args.host) and not password:
        raise ConfigError(
            f"--host {args.host} would show the status page to other machines, and WEB_PASSWORD is not set:"
            " set WEB_PASSWORD in the env file (every request then needs it), or leave --host out to listen"
            f" on {DEFAULT_HOST} only"
        )
    from .server import serve

    return serve(config, host=args.host, port=args.port, password=password or None)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535 (0: any free one), got {text!r}")
    return value
