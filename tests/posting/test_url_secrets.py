"""A URL's user, password and query never reach an output, a log or the history (issue 60): an
`{img http://user:PASS@host/x.png?token=T}` line is fetched with its token (the server needs it),
but every place it is printed or stored shows `***` instead, and the line still counts as posted
this round (it is not posted twice)."""

from __future__ import annotations

import json
from typing import Iterator

import pytest
from conftest import BotHome
from page_server import Page, PageServer
from test_service_pictures import specimen
from x_emulator import XEmulator

PASSWORD, TOKEN = "hunter2PASS", "T0KEN4242"


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer({"/pictures/moth.png": Page(specimen("moth"), headers={"Content-Type": "image/png"})}) as server:
        yield server


def _everything(home: BotHome, *outputs: str) -> str:
    """Every output given, and every byte of every file the bot keeps (history, logs, state)."""
    kept = [path.read_bytes().decode("utf-8", "replace") for path in home.path.rglob("*") if path.is_file()]
    kept = [text for path, text in zip(home.path.rglob("*"), kept) if path.name not in ("cards.json", ".env")]
    return "\n".join([*outputs, *kept])


def test_a_urls_password_and_token_are_in_no_output_log_or_history(
    home: BotHome, emulator: XEmulator, pages: PageServer
) -> None:
    url = pages.url.replace("http://", f"http://moth:{PASSWORD}@") + f"/pictures/moth.png?token={TOKEN}"
    source = home.path / "cards.json"
    source.write_text(json.dumps({"origin": [f"A moth {{img {url} A pale moth}}"]}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(source), LINK_CARDS_LOCAL="yes", LOG_FILE=str(home.path / "bot.log"))
    outputs = [home.run("--dry-run", "--force"), home.run("check"), home.run("--force")]
    assert outputs[-1].returncode == 0, outputs[-1].stderr
    assert len(emulator.posts) == 1 and emulator.posts[0].media
    assert any(TOKEN in path for path, _agent in pages.requests)  # the server was asked with its token
    outputs += [home.run("history"), home.run("history", "--json"), home.run("--dry-run", "--force")]
    seen = _everything(home, *(each.stdout + each.stderr for each in outputs))
    assert PASSWORD not in seen and TOKEN not in seen
    again = home.run("--force")  # the one expansion is known as posted (GRAMMAR_MEMORY): not posted again
    assert [post.text for post in emulator.posts] == ["A moth"], again.stderr
