"""The reference Bluesky PDS, run by the test session on this machine.

`bluesky_pds` (session scope) installs ``@atproto/dev-env`` and Node 22 once per machine with
``tests/pds/install.sh`` (into a cache folder outside the repository), starts ``start.mjs`` (a
PDS and an in-memory PLC directory on localhost, about ten seconds) and stops it when the session
ends. Tests make accounts on it with `Pds.create_account`.

Without npm the tests that use it are skipped with the reason shown in pytest's summary; with
``TWITTERBOT_REQUIRE_PDS=1`` (CI sets it) a PDS that cannot be installed or started fails them
instead, so CI can never pass by skipping the real server.

The harness talks to the PDS with the standard library only, never through the code under test.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import selectors
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

__all__ = ["Pds", "PdsAccount", "bluesky_pds"]

HERE = Path(__file__).resolve().parent
REQUIRE = "TWITTERBOT_REQUIRE_PDS"
INSTALL_TIMEOUT = 20 * 60  # a cold install compiles better-sqlite3: about 4 minutes on 2 cores
START_TIMEOUT = 90
ADMIN_PASSWORD = "admin-pass"  # @atproto/dev-env's fixed test value (its const.js)


@dataclass(frozen=True)
class PdsAccount:
    handle: str
    did: str
    password: str  # the account password; tests post with an app password made from it


class Pds:
    """A running PDS: its URL, and the few XRPC calls the tests make to set it up and check it."""

    def __init__(self, url: str, plc_url: str) -> None:
        self.url = url
        self.plc_url = plc_url
        self._names = itertools.count(1)

    def xrpc(
        self,
        method: str,
        *,
        body: Optional[Dict[str, Any]] = None,
        params: Optional[Dict[str, str]] = None,
        token: Optional[str] = None,
        admin: bool = False,
    ) -> Dict[str, Any]:
        """One XRPC call; returns the JSON reply, or raises urllib's HTTPError (its body is read)."""
        url = f"{self.url}/xrpc/{method}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if admin:
            headers["Authorization"] = "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()
        request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text else {}

    def create_account(self, name: Optional[str] = None) -> PdsAccount:
        """A new account with a unique handle (``<name>N.test``)."""
        handle = f"{name or 'user'}{next(self._names)}{os.getpid() % 1000}.test"
        password = f"account-pw-{handle}"
        reply = self.xrpc(
            "com.atproto.server.createAccount",
            body={"handle": handle, "email": f"{handle}@example.com", "password": password},
        )
        return PdsAccount(handle=reply["handle"], did=reply["did"], password=password)

    def app_password(self, account: PdsAccount, name: str = "twitterbot") -> str:
        """A real app password for `account` (what the README tells users to make)."""
        session = self.xrpc(
            "com.atproto.server.createSession", body={"identifier": account.handle, "password": account.password}
        )
        reply = self.xrpc("com.atproto.server.createAppPassword", body={"name": name}, token=session["accessJwt"])
        return reply["password"]

    def posts(self, account: PdsAccount) -> List[Dict[str, Any]]:
        """Every post in the account's repository, newest first: {uri, cid, value}."""
        reply = self.xrpc(
            "com.atproto.repo.listRecords",
            params={"repo": account.did, "collection": "app.bsky.feed.post", "limit": "100"},
        )
        return reply["records"]


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1: the Bluesky tests must run against the real PDS here)")
    pytest.skip(f"Bluesky PDS unavailable: {reason}")


def install(unavailable: Callable[[str], None] = _unavailable) -> Path:
    """The cache folder holding the PDS and its Node, installing them first if needed; `unavailable`
    (which raises) says why when they cannot be had."""
    if not shutil.which("npm"):
        unavailable("npm is not installed (the reference PDS is an npm package)")
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"twitterbot-pds-install-{os.getpid()}.log"
    with open(log, "w") as errors:
        try:
            done = subprocess.run(
                ["bash", str(HERE / "install.sh")],
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            unavailable(f"tests/pds/install.sh took over {INSTALL_TIMEOUT} s (log: {log})")
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        unavailable(f"tests/pds/install.sh failed with exit {done.returncode}:\n{tail}")
    return Path(done.stdout.strip().splitlines()[-1])


def start(cache: Path, workdir: Path) -> Iterator[Pds]:
    """Run the PDS until the generator is closed; its data and logs go into `workdir`."""
    servers = run(cache, workdir, [], {}, _unavailable)
    try:
        urls = next(servers)
        yield Pds(urls["pds"], urls["plc"])
    finally:
        servers.close()


def run(
    cache: Path, workdir: Path, args: List[str], extra: Dict[str, str], unavailable: Callable[[str], None]
) -> Iterator[Dict[str, str]]:
    """Run ``start.mjs`` with `args` and `extra` environment until the generator is closed, giving
    the URLs it printed; its data and logs go into `workdir`. `unavailable` is called (and must
    raise) when it does not start."""
    node = cache / "node_modules" / "node" / "bin" / "node"
    log = workdir / "pds.log"
    env = {
        "PATH": f"{node.parent}:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),  # dev-env puts the PDS's databases and blobs in the temp folder
        "TWITTERBOT_PDS_MODULES": str(cache / "node_modules"),
        "LOG_ENABLED": "false",
        "NODE_ENV": "development",
        **extra,
    }
    with open(log, "w") as errors:
        process = subprocess.Popen(
            [str(node), str(HERE / "start.mjs"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            cwd=workdir,
        )
    try:
        line = _first_line(process, START_TIMEOUT)
        if not line:
            process.kill()
            process.wait()
            unavailable(f"the servers did not start (exit {process.returncode}); their log:\n{log.read_text()[-3000:]}")
        urls = json.loads(line)
        # Anything it prints later goes to the log, so a full pipe can never stall the server.
        threading.Thread(target=_drain, args=(process.stdout, log), daemon=True).start()
        yield urls
    finally:
        if process.stdin:
            process.stdin.close()  # start.mjs stops the servers when its input closes
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _drain(stream: Any, log: Path) -> None:
    with open(log, "ab") as sink:
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.write(chunk)


def _first_line(process: subprocess.Popen, timeout: float) -> str:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=deadline - time.monotonic()):
            return process.stdout.readline().decode().strip()
        if process.poll() is not None:
            return ""
    return ""


@pytest.fixture(scope="session")
def bluesky_pds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pds]:
    """The reference PDS for the whole test session (skipped, or failed under
    TWITTERBOT_REQUIRE_PDS=1, when it cannot be had)."""
    cache = install()
    yield from start(cache, tmp_path_factory.mktemp("pds"))
