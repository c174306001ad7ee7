"""Adding a network is adding one module: a `Network` subclass and its poster, in the registry
the command line is built from. This file is that module for a small fake network whose "server" is an HTTP server
on 127.0.0.1, and it posts to it through the command line (POST_TO=fake), end to end: the
settings table, POST_TO, `check`, the tweets file's length rule, the send step, the history and
`--json` all learn of it from the registry alone."""

from __future__ import annotations

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

from twitterbot.cli import built_in, main
from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks import PLAIN, Fit, LookUp, Network, PostOptions, PostResult
from twitterbot.settings.parsers import OPTIONAL_URL, SECRET
from twitterbot.settings.table import Setting
from twitterbot.state.store import HistoryStore


class FakeServer(ThreadingHTTPServer):
    """Takes ``POST /posts`` with a JSON body and answers with the new post's id."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: List[dict] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("Authorization") != "Bearer fake-token-123":
            self.send_response(401)
            self.end_headers()
            return
        self.server.posts.append(body)
        answer = json.dumps({"id": str(len(self.server.posts))}).encode()
        self.send_response(201)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


class FakePoster:
    name = "fake"
    retry_safety = "not needed: the fake server never fails"

    def __init__(self, server: str, token: str) -> None:
        self._server, self._token = server, token

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        reply_to = options.reply_to
        request = urllib.request.Request(
            self._server + "/posts",
            data=json.dumps({"text": text, "reply_to": reply_to}).encode(),
            headers={"Authorization": f"Bearer {self._token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                post_id = json.loads(response.read())["id"]
        except urllib.error.HTTPError as exc:
            raise PostError(
                f"Fake refused the token ({exc.code})",
                kind=ErrorKind.UNAUTHORIZED,
                exit_status=ExitStatus.PERMISSION_DENIED,
            ) from None
        return PostResult(text=text, post_id=post_id, url=f"{self._server}/posts/{post_id}")

    def may_retry(self, error: PostError) -> bool:
        return False

    def account(self) -> str:
        return "@fake"

    def look_up(self, text: str, sent_at: object, key: Optional[str], options: Optional[PostOptions] = None) -> LookUp:
        return LookUp(None, "the fake server keeps no list of posts")

    def bot_label(self) -> Optional[bool]:
        return None

    def mark_bot(self) -> bool:
        return False


class Fake(Network):
    """Everything the bot knows of the fake network."""

    name = "fake"
    label = "Fake"
    settings = {
        "FAKE_SERVER": Setting("FAKE_SERVER", "", OPTIONAL_URL, "Fake: the server's address"),
        "FAKE_TOKEN": Setting("FAKE_TOKEN", "", SECRET, "Fake: the token", True, "the fake server"),
    }
    required = ("FAKE_SERVER", "FAKE_TOKEN")
    guide = "Getting a fake token"
    site = "the fake server"

    def measure(self, text: str) -> Fit:
        return Fit("fake", len(text), 20, "characters")

    def post_url(self, post_id: Optional[str]) -> Optional[str]:
        return None

    def poster(self, config: object) -> FakePoster:
        return FakePoster(str(config["FAKE_SERVER"]), str(config["FAKE_TOKEN"]))  # type: ignore[index]


WITH_FAKE = built_in([Fake()])  # what the command line is built from, with the fake network last


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _home(tmp_path: Path, server: FakeServer, **settings: str) -> Path:
    (tmp_path / "tweets.txt").write_text("short and sweet\nthis line is far too long for the fake network\n")
    env = tmp_path / ".env"
    values = {
        "POST_TO": "fake",
        "FAKE_SERVER": server.url,
        "FAKE_TOKEN": "fake-token-123",
        "TWEET_ONE_IN": "1",
        "MIN_POST_GAP": "0",
        **settings,
    }
    env.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    env.chmod(0o600)
    return env


def test_a_network_registered_from_one_module_is_posted_to_through_the_cli(
    tmp_path: Path, fake_server: FakeServer, capsys: pytest.CaptureFixture
) -> None:
    assert "FAKE_TOKEN" in WITH_FAKE.settings and WITH_FAKE.settings["FAKE_TOKEN"].secret
    assert WITH_FAKE.owner("FAKE_TOKEN").name == "fake" and "FAKE_TOKEN" not in built_in().settings
    env = _home(tmp_path, fake_server)

    status = main(["--env-file", str(env), "--json"], environ={}, registry=WITH_FAKE)

    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["action"] == "posted"
    assert fake_server.posts == [{"text": "short and sweet", "reply_to": None}]  # the long line never fits
    assert result["networks"][0]["network"] == "fake" and result["networks"][0]["id"] == "1"
    assert result["url"] == f"{fake_server.url}/posts/1"
    with HistoryStore(tmp_path / "state" / "history.sqlite3") as store:
        assert [run.action for run in store.recent_runs(5)] == ["posted"]


def test_check_names_the_fake_network_s_missing_setting_and_its_guide(
    tmp_path: Path, fake_server: FakeServer, capsys: pytest.CaptureFixture
) -> None:
    env = _home(tmp_path, fake_server, FAKE_TOKEN="")
    assert main(["--env-file", str(env)], environ={}, registry=WITH_FAKE) == int(ExitStatus.CONFIG_ERROR)
    assert "FAKE_TOKEN not set (POST_TO=fake)" in capsys.readouterr().err
    assert main(["--env-file", str(env), "check"], environ={}, registry=WITH_FAKE) != 0
    assert "posting to Fake (POST_TO): not set: FAKE_TOKEN" in capsys.readouterr().out


def test_a_wrong_token_is_the_network_s_own_error_and_never_shown(
    tmp_path: Path, fake_server: FakeServer, capsys: pytest.CaptureFixture
) -> None:
    env = _home(tmp_path, fake_server, FAKE_TOKEN="wrong-token-456789")
    assert main(["--env-file", str(env), "--json"], environ={}, registry=WITH_FAKE) == int(ExitStatus.PERMISSION_DENIED)
    out = capsys.readouterr()
    assert json.loads(out.out)["error"] == "unauthorized"
    assert "wrong-token-456789" not in out.out + out.err


def test_without_it_in_the_registry_it_is_not_a_network(tmp_path: Path, fake_server: FakeServer, capsys) -> None:
    env = _home(tmp_path, fake_server, FAKE_SERVER="", FAKE_TOKEN="")
    assert main(["--env-file", str(env)], environ={}) == int(ExitStatus.CONFIG_ERROR)
    assert "'fake' is not a network" in capsys.readouterr().err
