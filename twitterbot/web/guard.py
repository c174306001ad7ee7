"""Who the status page answers, decided without Flask: the `Host` names a page on loopback answers
(a web page elsewhere that makes its own name resolve to 127.0.0.1, DNS rebinding, must not read
it), and how many wrong passwords one address may try::

    local_host("localhost:8080")            # True
    local_host("evil.example:8080")         # False
    tries = FailedTries(clock=time.monotonic)
    tries.wait("192.0.2.7")                 # 0.0: may try; else seconds before the next try
    tries.failed("192.0.2.7"); tries.succeeded("192.0.2.7")
"""

from __future__ import annotations

import ipaddress
import threading
from collections import OrderedDict
from typing import Callable, Tuple

from ..settings.parsers import is_loopback

__all__ = ["FREE_TRIES", "LONGEST_WAIT", "REMEMBERED", "FailedTries", "local_host"]

FREE_TRIES = 5  # wrong passwords one address may give before it has to wait
FIRST_WAIT = 2.0  # seconds, doubled for each further wrong password ...
LONGEST_WAIT = 15 * 60.0  # ... up to this
REMEMBERED = 1024  # addresses kept; the one longest without a wrong password is forgotten first


def local_host(header: str) -> bool:
    """Whether a request's `Host` header names this machine by a loopback name or address
    (localhost, 127.0.0.1, [::1], with or without a port). Empty or missing: not local."""
    host = header.strip().lower()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not _port(rest)):
            return False
        return _ip_literal(name) and is_loopback(name)
    name, colon, port = host.rpartition(":")
    if not colon:
        name = host
    elif not port.isdigit():
        return False
    return bool(name) and (name.rstrip(".") == "localhost" or (_ip_literal(name) and is_loopback(name)))


def _port(text: str) -> bool:
    return text.startswith(":") and text[1:].isdigit()


def _ip_literal(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class FailedTries:
    """Wrong passwords by client address: after FREE_TRIES, each next try from that address must
    wait FIRST_WAIT seconds, doubled with every further wrong one, up to LONGEST_WAIT. A right
    password forgets the address. Safe to share between the server's threads."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._seen: OrderedDict[str, Tuple[int, float]] = OrderedDict()  # address -> (wrong tries, last one)
        self._lock = threading.Lock()

    def wait(self, address: str) -> float:
        """Seconds `address` must wait before its password is looked at again (0: now)."""
        with self._lock:
            wrong, last = self._seen.get(address, (0, 0.0))
        if wrong < FREE_TRIES:
            return 0.0
        return max(0.0, last + self.penalty(wrong) - self._clock())

    def failed(self, address: str) -> None:
        with self._lock:
            wrong, _ = self._seen.pop(address, (0, 0.0))
            self._seen[address] = (wrong + 1, self._clock())
            while len(self._seen) > REMEMBERED:
                self._seen.popitem(last=False)

    def succeeded(self, address: str) -> None:
        with self._lock:
            self._seen.pop(address, None)

    @staticmethod
    def penalty(wrong: int) -> float:
        """The wait after `wrong` wrong passwords in a row."""
        if wrong < FREE_TRIES:
            return 0.0
        return min(LONGEST_WAIT, FIRST_WAIT * 2 ** min(wrong - FREE_TRIES, 20))
