"""The flock's status page: the whole flock at a glance at /, each bot's own page under /bots/NAME/,
one password for them all."""

from __future__ import annotations

import base64

from werkzeug.test import Client

from twitterbot.cli import built_in
from twitterbot.flock.folder import Flock as Folder
from twitterbot.flock.page import flock_app
from twitterbot.settings.loading import load_config

from .conftest import Flock, write_bot


def app_of(flock: Flock, password: str = "", local_only: bool = True):
    registry = built_in()
    root = load_config(registry, project_dir=flock.bots, environ={})
    folder = Folder.find(flock.bots, {}, project_dir=None)
    return flock_app(folder, registry, root=root, environ={}, password=password, local_only=local_only)


def test_the_page_shows_every_bot_and_links_each_bot_s_own_page(flock: Flock) -> None:
    assert flock.run("--bot", "bot2", "--force").returncode == 0
    write_bot(flock.bots / "broken", {"TWEET_ONE_IN": "often"}, "x\n")
    client = Client(app_of(flock))
    page = client.get("/", headers={"Host": "localhost"})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "1 of 4 bots to look at" in html
    for name in ("bot1", "bot2", "bot3"):
        assert f'<a href="bots/{name}/">{name}</a>' in html
    assert "TWEET_ONE_IN" in html and 'href="bots/broken/"' not in html
    assert "last post 20" in html
    assert "Content-Security-Policy" in page.headers
    own = client.get("/bots/bot2/", headers={"Host": "localhost"})
    assert own.status_code == 200 and "line of bot2" in own.get_data(as_text=True)
    other = client.get("/bots/bot1/", headers={"Host": "localhost"}).get_data(as_text=True)
    assert "line of bot2" not in other  # a bot's page shows its own history only
    document = client.get("/flock.json", headers={"Host": "localhost"}).get_json()
    assert [bot["name"] for bot in document["bots"]] == ["bot1", "bot2", "bot3", "broken"]


def test_one_password_guards_the_flock_and_every_bot_s_page(flock: Flock) -> None:
    client = Client(app_of(flock, password="a long flock password", local_only=False))
    for path in ("/", "/flock.json", "/bots/bot1/", "/bots/bot3/status.json"):
        assert client.get(path).status_code == 401, path
    token = base64.b64encode(b"me:a long flock password").decode()
    for path in ("/", "/bots/bot1/"):
        assert client.get(path, headers={"Authorization": f"Basic {token}"}).status_code == 200, path


def test_serve_in_a_flock_needs_the_flock_s_password_off_loopback(flock: Flock) -> None:
    result = flock.run("serve", "--host", "0.0.0.0")
    assert result.returncode == 78 and "flock.env" in result.stderr
