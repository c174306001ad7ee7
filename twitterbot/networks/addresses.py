"""Which addresses a fetch the bot makes on a page's say-so may reach, and connections that reach
only the address that was checked.

A link in a post, a redirect or a page's picture may name anything: the Pi itself (127.0.0.1, or
the same written 2130706433, 0x7f.1 or [::ffff:127.0.0.1]), the home network (a camera, a router),
or a cloud's metadata service (169.254.169.254). `resolve` looks the name up once and refuses it
unless every address it gives is on the public internet; the connections below then connect to
those very addresses (no second look-up a DNS server could answer differently) while the request
still names the host (its Host header, its TLS server name and certificate check)::

    addresses = resolve("example.com", 443)            # AddressRefused for a private one
    connection = PinnedHTTPSConnection("example.com", 443, addresses, timeout=10, context=context)

The one bounded request (`request.py`) does both for every read from outside: the link cards, the
monitors, the pictures an SVG or a post names by URL, the networks' readers.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from typing import Callable, List, Optional, Tuple, Union

__all__ = [
    "Address",
    "AddressRefused",
    "PinnedHTTPConnection",
    "PinnedHTTPSConnection",
    "Screen",
    "refusal",
    "resolve",
]

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
# What a connection is made to: (family, socket address) as getaddrinfo gives them.
Address = Tuple[int, tuple]
# Why an address may not be reached, or None when it may: `refusal`, or a test's own rule.
Screen = Callable[[IPAddress], Optional[str]]

# NAT64's well-known prefix: its last 32 bits are an IPv4 address.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """A host whose address is not on the public internet: the fetch is not made."""


def _embedded(address: IPAddress) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, 6to4,
    Teredo's client, NAT64), which is where a connection to it may end up."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address.sixtofour:
        return address.sixtofour
    if address.teredo:
        return address.teredo[1]
    packed = int(address)
    if address in _NAT64 or (packed >> 32 == 0 and packed > 1):  # ::a.b.c.d (not :: nor ::1)
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress) -> Optional[str]:
    """Why `address` is not on the public internet ("a loopback address"), or None when it is."""
    inner = _embedded(address)
    if inner is not None:
        why = refusal(inner)
        return f"{why} (as {address})" if why else None
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address (this machine)"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (
            isinstance(address, ipaddress.IPv4Address) and address in ipaddress.ip_network("100.64.0.0/10"),
            "a shared address (carrier-grade NAT)",
        ),
        (address.is_private, "a private address (a home or office network)"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global, "not a public address"),
    )
    return next((why for refused, why in checks if refused), None)


def resolve(host: str, port: int, *, screen: Optional[Screen] = refusal) -> List[Address]:
    """The addresses of `host` to connect to, every one allowed by `screen` (None: any address);
    AddressRefused naming the first that is not. `OSError` (socket.gaierror) when it has none."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    addresses: List[Address] = []
    for family, _, _, _, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        why = screen(address) if screen is not None else None
        if why:
            said = "" if host.strip("[]") == str(address) else f" ({address})"
            raise AddressRefused(f"{host}{said} is {why}")
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if mapped is not None:  # connect to it as what it is: IPv4
            family, sockaddr = socket.AF_INET, (str(mapped), sockaddr[1])
        if (family, sockaddr) not in addresses:
            addresses.append((family, sockaddr))
    return addresses


def _connect(addresses: List[Address], left: Callable[[], Optional[float]]) -> socket.socket:
    """A socket connected to the first of `addresses` that answers, each try waiting what `left`
    gives (the time left of a deadline)."""
    last: Optional[OSError] = None
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(left())
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or OSError("no address to connect to")


class PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to `host` made to the addresses given (from `resolve`), not to a second
    look-up of the name. `left`, when given, says how long each step may still wait (a deadline's
    time left); else each waits `timeout`."""

    def __init__(
        self,
        host: str,
        port: Optional[int],
        addresses: List[Address],
        *,
        timeout: float,
        left: Optional[Callable[[], float]] = None,
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses
        self.left: Callable[[], Optional[float]] = left or (lambda: self.timeout)

    def connect(self) -> None:
        self.sock = _connect(self.addresses, self.left)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to `host` made to the addresses given; the certificate is checked against
    `host`, which is also the server name sent (SNI)."""

    def __init__(
        self,
        host: str,
        port: Optional[int],
        addresses: List[Address],
        *,
        timeout: float,
        context: ssl.SSLContext,
        left: Optional[Callable[[], float]] = None,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.addresses = addresses
        self.tls = context
        self.left: Callable[[], Optional[float]] = left or (lambda: self.timeout)

    def connect(self) -> None:
        sock = _connect(self.addresses, self.left)
        try:
            sock.settimeout(self.left())  # the handshake waits what is left, in all
            self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise
