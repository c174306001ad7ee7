"""Bluesky's whole network, run by the test session on this machine: what serves notifications and
threads, which the PDS alone (`harness.py`) does not.

`bluesky_network` (session scope, one per xdist worker) starts a PostgreSQL (``initdb -A trust``
into a temporary folder, ``pg_ctl start`` on a free loopback port, as the ``postgres`` user when the
tests run as root, since PostgreSQL refuses root) and a Redis (``redis-server --port N --save ''``),
then ``start.mjs appview``: @atproto/dev-env's ``TestNetwork`` (PLC, PDS, the AppView, and the
bsync and ozone services it wires in) on them. The fixture is ready in about 8 s on the shared
2-core development machine once Node is installed (PostgreSQL about 1 s of it, Node loading
dev-env and the network starting the rest). Everything stops, and the folders go, when the session ends.

The AppView follows the PDS's event stream in the background, so what the PDS wrote shows up
there a moment later: `BlueskyNetwork.index()` waits until it has caught up (dev-env's
processAll), so a test reads the AppView only after calling it. A test::

    bot = bluesky_network.create_account("bot")
    ada = bluesky_network.create_account("ada")
    mention = bluesky_network.mention(ada, bot, "hello")        # "@bot… hello", with its facet
    bluesky_network.index()
    bluesky_network.notifications(bot)                          # what the AppView tells the bot

Without npm, PostgreSQL or redis-server the tests that use it are skipped, saying which is missing;
with ``TWITTERBOT_REQUIRE_APPVIEW=1`` (CI sets it) they fail instead. Like the PDS harness, it talks
to the servers with the standard library only, never through the code under test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

import pytest
from pds.harness import Pds, PdsAccount, install, run

__all__ = ["BlueskyNetwork", "PostRecord", "bluesky_network"]

REQUIRE = "TWITTERBOT_REQUIRE_APPVIEW"
SCHEMA = "twitterbot"  # dev-env's schema names take letters and _ only


@dataclass(frozen=True)
class PostRecord:
    """A post the harness wrote: its strong reference (what a reply names)."""

    uri: str
    cid: str


class BlueskyNetwork(Pds):
    """The running network: the PDS's calls (`Pds`), the AppView's URL, and the few things tests do
    as the people who speak to the bot: post, mention, reply, say they are a bot."""

    def __init__(self, url: str, plc_url: str, appview_url: str, control_url: str) -> None:
        super().__init__(url, plc_url)
        self.appview_url = appview_url
        self._control = control_url
        self._tokens: Dict[str, str] = {}

    def index(self) -> None:
        """Wait until the AppView has indexed everything the PDS has written (dev-env's processAll).
        It indexes each account's writes apart, in parallel: a reply notifies its parent's author
        only if the parent was indexed first, so index between a post and the replies to it."""
        request = urllib.request.Request(f"{self._control}/process", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()

    def token(self, account: PdsAccount) -> str:
        """An access token for `account` (one login per account per session)."""
        if account.did not in self._tokens:
            session = self.xrpc(
                "com.atproto.server.createSession", body={"identifier": account.handle, "password": account.password}
            )
            self._tokens[account.did] = session["accessJwt"]
        return self._tokens[account.did]

    def post(
        self,
        account: PdsAccount,
        text: str,
        *,
        reply_to: Optional[PostRecord] = None,
        root: Optional[PostRecord] = None,
        mentions: Sequence[PdsAccount] = (),
        created_at: Optional[datetime] = None,
        quote: Optional[PostRecord] = None,
    ) -> PostRecord:
        """A post by `account`; a reply to `reply_to` (in the thread of `root`, by default
        `reply_to` itself) when given, made at `created_at` (now by default), quoting `quote` when given; each of `mentions` whose ``@handle`` is in `text` linked by a
        mention facet, as an app links it (what makes the AppView notify them)."""
        record: Dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": (created_at or datetime.now(timezone.utc))
            .astimezone(timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        facets = []
        data = text.encode()
        for person in mentions:
            start = data.find(f"@{person.handle}".encode())
            assert start >= 0, f"@{person.handle} is not in {text!r}"
            facets.append(
                {
                    "index": {"byteStart": start, "byteEnd": start + len(person.handle.encode()) + 1},
                    "features": [{"$type": "app.bsky.richtext.facet#mention", "did": person.did}],
                }
            )
        if facets:
            record["facets"] = facets
        if quote is not None:
            record["embed"] = {"$type": "app.bsky.embed.record", "record": {"uri": quote.uri, "cid": quote.cid}}
        if reply_to is not None:
            top = root or reply_to
            record["reply"] = {
                "root": {"uri": top.uri, "cid": top.cid},
                "parent": {"uri": reply_to.uri, "cid": reply_to.cid},
            }
        reply = self.xrpc(
            "com.atproto.repo.createRecord",
            body={"repo": account.did, "collection": "app.bsky.feed.post", "record": record},
            token=self.token(account),
        )
        return PostRecord(reply["uri"], reply["cid"])

    def mention(self, author: PdsAccount, whom: PdsAccount, words: str, **reply: Any) -> PostRecord:
        """``@whom words``, posted by `author` with the mention linked (`post`'s reply options)."""
        return self.post(author, f"@{whom.handle} {words}", mentions=[whom], **reply)

    def settings(self, account: PdsAccount) -> Dict[str, str]:
        """The bot's settings for posting and listening as `account` here (a fresh app password)."""
        return {
            "BLUESKY_HANDLE": account.handle,
            "BLUESKY_APP_PASSWORD": self.app_password(account),
            "BLUESKY_SERVICE": self.url,
        }

    def set_profile(self, account: PdsAccount, *, description: str = "", labels: Sequence[str] = ()) -> None:
        """Write the account's profile: its bio and its self-labels (``bot`` says it is automated)."""
        record: Dict[str, Any] = {"$type": "app.bsky.actor.profile", "description": description}
        if labels:
            record["labels"] = {
                "$type": "com.atproto.label.defs#selfLabels",
                "values": [{"val": value} for value in labels],
            }
        self.xrpc(
            "com.atproto.repo.putRecord",
            body={"repo": account.did, "collection": "app.bsky.actor.profile", "rkey": "self", "record": record},
            token=self.token(account),
        )

    def notifications(self, account: PdsAccount, **params: str) -> List[Dict[str, Any]]:
        """The account's notifications as the AppView gives them (through its PDS), newest first."""
        reply = self.xrpc("app.bsky.notification.listNotifications", params=params, token=self.token(account))
        return reply["notifications"]

    def thread(self, uri: str) -> Dict[str, Any]:
        """The AppView's thread of a post (getPostThread, asked of the AppView directly)."""
        url = f"{self.appview_url}/xrpc/app.bsky.feed.getPostThread?" + urllib.parse.urlencode({"uri": uri})
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read())["thread"]


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1: the Bluesky AppView tests must run against the real network here)")
    pytest.skip(f"Bluesky network (PDS + AppView) unavailable: {reason}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _postgres_bin() -> Optional[Path]:
    """The folder of PostgreSQL's server programs: on PATH, else Debian's /usr/lib/postgresql/N/bin
    (the newest), which Debian leaves off PATH."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _as_postgres(command: List[str]) -> List[str]:
    """`command` as the ``postgres`` user when the tests run as root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return command
    runner = shutil.which("runuser")
    if runner:
        return [runner, "-u", "postgres", "--", *command]
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(shlex.quote(part) for part in command)]


def postgres() -> Iterator[str]:
    """A PostgreSQL of its own on a free loopback port, until the generator is closed: its URL."""
    binaries = _postgres_bin()
    if binaries is None:
        _unavailable("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    assert binaries is not None
    # Under /tmp, not pytest's folder: as root the server runs as postgres, who cannot enter root's.
    folder = Path(tempfile.mkdtemp(prefix="twitterbot-pg-", dir="/tmp" if os.geteuid() == 0 else None))
    data = folder / "data"
    port = _free_port()
    try:
        if os.geteuid() == 0:
            try:
                shutil.chown(folder, "postgres", "postgres")
            except (LookupError, OSError) as exc:
                _unavailable(f"the tests run as root and PostgreSQL needs its own user to run as: {exc}")
        log = folder / "server.log"
        for command in (
            [str(binaries / "initdb"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "-D", str(data)],
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(log),
                "-w",
                "-t",
                "60",
                "-o",
                f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                "start",
            ],
        ):
            done = subprocess.run(_as_postgres(command), capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                said = (done.stderr or done.stdout).strip()[-1500:]
                server = log.read_text(errors="replace")[-1500:] if log.exists() else ""
                _unavailable(f"PostgreSQL did not start ({command[0]} exit {done.returncode}): {said}\n{server}")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                _as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
                timeout=60,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def redis() -> Iterator[str]:
    """A Redis of its own on a free loopback port, keeping nothing on disk, until the generator is
    closed: its host:port."""
    server = shutil.which("redis-server")
    if server is None:
        _unavailable("redis-server is not installed (Debian: apt-get install redis-server)")
    assert server is not None
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),
    )
    try:
        deadline = time.monotonic() + 30
        while not _answers_ping(port):
            if process.poll() is not None or time.monotonic() > deadline:
                _unavailable(f"redis-server did not start on port {port} (exit {process.poll()})")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def bluesky_network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlueskyNetwork]:
    """Bluesky's network (PLC, PDS, AppView) for the whole test session, one per xdist worker, on
    a PostgreSQL and a Redis of its own (skipped, or failed under TWITTERBOT_REQUIRE_APPVIEW=1,
    when it cannot be had)."""
    cache = install(_unavailable)
    workdir = tmp_path_factory.mktemp("bluesky-network")
    database = postgres()
    cache_server = redis()
    try:
        extra = {"DB_POSTGRES_URL": next(database), "DB_POSTGRES_SCHEMA": SCHEMA, "REDIS_HOST": next(cache_server)}
        servers = run(cache, workdir, ["appview"], extra, _unavailable)
        try:
            urls = next(servers)
            yield BlueskyNetwork(urls["pds"], urls["plc"], urls["bsky"], urls["control"])
        finally:
            servers.close()
    finally:
        cache_server.close()
        database.close()
