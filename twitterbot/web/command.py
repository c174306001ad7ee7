"""The status page's command.

python bot.py serve [--host 127.0.0.1] [--port 8080]   a read-only status page and /status.json

Flask and waitress are imported only when `serve` runs: registering the command costs nothing.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import re

from ..arguments import Commands, Parser, add_command
from ..errors import ConfigError
from ..settings.loading import Config, env_file_warnings
from ..settings.parsers import is_loopback
from . import MIN_PASSWORD_LENGTH, WEB_PASSWORD

__all__ = ["register", "password_problem"]

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
# A host name as DNS writes it: labels of letters, digits and hyphens, at most 253 characters.
_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*", re.I)


def register(parser: Parser, commands: Commands) -> None:
    serve = add_command(commands, "serve", _serve, help="serve a read-only status page and /status.json")
    serve.add_argument(
        "--host",
        type=_host,
        default=DEFAULT_HOST,
        metavar="ADDRESS",
        help=f"the address to listen on (default {DEFAULT_HOST}: this machine only; any other needs WEB_PASSWORD"
        f" of {MIN_PASSWORD_LENGTH} characters or more)",
    )
    serve.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, metavar="N", help=f"the port (default {DEFAULT_PORT})"
    )


def password_problem(host: str, password: str) -> str:
    """Why `password` may not guard a page listening on `host` ("" when it may): off loopback
    it must be set and at least MIN_PASSWORD_LENGTH characters long."""
    if is_loopback(host) or len(password) >= MIN_PASSWORD_LENGTH:
        return ""
    if not password:
        return (
            f"--host {host} would show the status page to other machines, and WEB_PASSWORD is not set:"
            f" set WEB_PASSWORD (at least {MIN_PASSWORD_LENGTH} characters; spaces are fine) in the env file"
            f" (every request then needs it), or leave --host out to listen on {DEFAULT_HOST} only"
        )
    return (
        f"--host {host} would show the status page to other machines, and WEB_PASSWORD has {len(password)}"
        f" characters: off this machine it must have at least {MIN_PASSWORD_LENGTH} (a few words with spaces"
        f" will do), or leave --host out to listen on {DEFAULT_HOST} only"
    )


def _serve(args: argparse.Namespace, config: Config) -> int:
    password = str(config[WEB_PASSWORD] or "")
    problem = password_problem(args.host, password)
    if problem:
        raise ConfigError(problem)
    for warning in env_file_warnings(config):
        log.warning(warning)
    from .server import serve

    return serve(
        config, host=args.host, port=args.port, password=password, local_only=is_loopback(args.host) and not password
    )


def _host(text: str) -> str:
    """--host: an IP address (IPv6 with or without brackets) or a host name; a name's final dot
    ("localhost.") is dropped, as DNS reads it, and localhost is 127.0.0.1. Anything else is a usage
    error (exit 64)."""
    value = text.strip()
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    name = value[:-1] if value.endswith(".") else value
    if name.lower() == "localhost":
        return DEFAULT_HOST  # one address: "localhost" may also name ::1, which a Pi without IPv6 cannot bind
    if not _NAME.fullmatch(name) or name.replace(".", "").isdigit():
        raise argparse.ArgumentTypeError(
            f"expected an address such as 127.0.0.1, 0.0.0.0, :: or a host name such as pi.local, got {text!r}"
        )
    return name.lower()


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535 (0: any free one), got {text!r}")
    return value
