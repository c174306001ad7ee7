"""A bot home with a history worth showing, made through the real CLI and the X emulator, and a
running `bot.py serve` to read it from: shared by the status page's HTTP and browser tests."""

from __future__ import annotations

import base64
import json
import re
import select
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import quote, quote_plus

from conftest import BotHome

PASSWORD = "correct-horse-battery-staple-9"
MASTODON_TOKEN = "mastoTokenZq81xPw2"
BLUESKY_PASSWORD = "abcd-efgh-ijkl-mnop"
SCRIPT_LINE = "A line with <script>alert('owned')</script> in it"
PLAIN_LINE = "Hello from the Pi in the cupboard"
UNCERTAIN_LINE = "Did this one make it?"
PICTURE_ALT = 'A 7 by 7 board, "pegs" <b>left</b>: 12 & counting'  # quotes and markup, to be escaped


@dataclass
class Made:
    """What the history holds after `populate`: the posts' ids on the emulator."""

    posted_id: str
    script_id: str
    job_name: str


def populate(home: BotHome, *, job: bool = True) -> Made:
    """Three scheduled runs (a post, an uncertain post, a post of a line with <script>) and a
    finished progress job, all through bot.py and the X emulator. The later runs do not settle the
    uncertain post (LOOK_UP_UNCERTAIN=no): the page must show one as it is."""
    home.write_env(
        LOOK_UP_UNCERTAIN="no",
        MIN_POST_GAP="0",
        MAX_POSTS_PER_DAY="10",
        WEB_PASSWORD=PASSWORD,
        MASTODON_ACCESS_TOKEN=MASTODON_TOKEN,
        BLUESKY_APP_PASSWORD=BLUESKY_PASSWORD,
    )
    emulator = home.emulator
    assert emulator is not None
    for text, failure in ((PLAIN_LINE, None), (UNCERTAIN_LINE, "posted_then_drop"), (SCRIPT_LINE, None)):
        only = home.path / "one-line.txt"
        only.write_text(text + "\n", encoding="utf-8")
        if failure:
            emulator.fail_next(failure)
        result = home.run("--tweets", str(only))
        assert result.returncode in (0, 75), result.stderr
    posts = {post.text: post.id for post in emulator.posts}
    name = "pegs english"
    if job:
        result = home.run("watch", "--name", name, "--first-after", "0", "--", "sh", "-c", "echo peg 12 of 32 removed")
        assert result.returncode == 0, result.stderr
    home.write_tweets(f"{PLAIN_LINE}\n{SCRIPT_LINE}\nA line not posted yet\n{UNCERTAIN_LINE}\n")
    return Made(posts[PLAIN_LINE], posts[SCRIPT_LINE], name)


def keep_job_picture(home: BotHome, name: str, alt: str = PICTURE_ALT) -> Tuple[int, bytes]:
    """Keep a real PNG as job `name`'s latest picture, as the reporter does after a post with
    pictures (tests/progress covers that part): the job's id and the PNG's bytes."""
    import io

    from PIL import Image

    from twitterbot.pictures.kept import keep
    from twitterbot.state.folder import StateFolder

    state = home.path / "state"
    with sqlite3.connect(StateFolder(state).history) as conn:
        (job_id,) = conn.execute("SELECT max(id) FROM jobs WHERE name = ?", (name,)).fetchone()
    buffer = io.BytesIO()
    Image.new("RGB", (48, 32), (30, 120, 200)).save(buffer, "PNG")
    keep(StateFolder(state).pictures, job_id, buffer.getvalue(), alt)
    return job_id, buffer.getvalue()


def secret_forms(secrets: List[str]) -> Dict[str, str]:
    """Every secret in every encoding a page or a JSON document could carry it in."""
    forms = {}
    for secret in secrets:
        raw = secret.encode()
        for name, form in {
            "raw": secret,
            "url": quote(secret, safe=""),
            "url_plus": quote_plus(secret),
            "json": json.dumps(secret)[1:-1],
            "base64": base64.b64encode(raw).decode(),
            "base64_unpadded": base64.b64encode(raw).decode().rstrip("="),
            "base64_url": base64.urlsafe_b64encode(raw).decode(),
            "hex": raw.hex(),
        }.items():
            forms[f"{secret[:4]}… as {name}"] = form
    return forms


class Server:
    """`bot.py serve` running in a bot home, on a free port."""

    def __init__(self, process: subprocess.Popen, port: int, said: Sequence[str] = ()) -> None:
        self.process = process
        self.port = port
        self.said = list(said)  # what serve logged up to the line that names its port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def get(self, path: str = "", *, password: Optional[str] = PASSWORD, method: str = "GET") -> Tuple[int, Any, str]:
        status, headers, body = self.get_bytes(path, password=password, method=method)
        return status, headers, body.decode()

    def get_bytes(
        self, path: str = "", *, password: Optional[str] = PASSWORD, method: str = "GET"
    ) -> Tuple[int, Any, bytes]:
        request = urllib.request.Request(self.url + path.lstrip("/"), method=method)
        if password is not None:
            token = base64.b64encode(f"owner:{password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read()

    def stop(self) -> Tuple[int, str]:
        """SIGTERM, as systemctl stop sends: its exit status and what it logged."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, stderr = self.process.communicate(timeout=15)
        return self.process.returncode, stderr


def start_server(home: BotHome, *args: str) -> Server:
    """Start `bot.py serve --port 0 ARGS` and wait for the line that names its port."""
    process = home.start("serve", "--port", "0", *args)
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.5)
        if ready:
            line = process.stderr.readline()
            seen.append(line)
            found = re.search(r"status page on http://127\.0\.0\.1:(\d+)/", line)
            if found:
                return Server(process, int(found.group(1)), seen)
        if process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"bot.py serve did not start: {''.join(seen)}{process.stderr.read()}")


def served(home: BotHome, *args: str) -> Iterator[Server]:
    server = start_server(home, *args)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate(timeout=10)
