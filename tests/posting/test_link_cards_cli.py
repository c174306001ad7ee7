"""Link cards through bot.py, as a user meets them: `--dry-run` shows the card Bluesky's post would
carry and writes its thumbnail to a folder it names; `check --online` previews the card of every
line with a link; BLUESKY_LINK_CARDS=no turns both off. The pages are served on 127.0.0.1."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Iterator

import pytest
from conftest import BotHome
from page_server import Page, PageServer
from pds.harness import Pds

X_KEYS = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")

PAGE = (
    b'<html><head><meta property="og:title" content="Peg solitaire, solved">'
    b'<meta name="description" content="Every board &amp; its shortest solution.">'
    b'<meta property="og:image" content="pics/board.png"></head><body></body></html>'
)


def board_png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGBA", (1200, 630), (200, 120, 40, 255)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def pages() -> Iterator[PageServer]:
    pytest.importorskip("PIL", reason="Pillow makes the thumbnails (requirements.txt installs it)")
    with PageServer(
        {
            "/blog/pegs": Page(PAGE),
            "/blog/pics/board.png": Page(board_png(), headers={"Content-Type": "image/png"}),
            "/gone": Page(b"gone", status=410, headers={"Content-Type": "text/plain"}),
        }
    ) as server:
        yield server


@pytest.fixture
def bluesky_home(home: BotHome) -> BotHome:
    for name in X_KEYS:
        home.settings.pop(name)
    home.write_env(POST_TO="bluesky", LINK_CARDS_LOCAL="yes")  # the pages are on 127.0.0.1
    return home


def test_a_dry_run_shows_the_card_and_writes_its_thumbnail(bluesky_home: BotHome, pages: PageServer) -> None:
    link = f"{pages.url}/blog/pegs"
    bluesky_home.write_tweets(f"Solved every board: {link}\n")
    result = bluesky_home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert "Bluesky would show this link card for " + link in result.stderr
    assert "title: Peg solitaire, solved" in result.stderr
    assert "description: Every board & its shortest solution." in result.stderr
    (written,) = re.findall(r"thumbnail: (\S+/card\.png) \(1200x630, ", result.stderr)  # a PNG that fits stays PNG
    assert Path(written).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(written).parent.name.startswith("twitterbot-dry-run-")
    assert f"from {pages.url}/blog/pics/board.png" in result.stderr
    assert result.stdout == f"Solved every board: {link}\n"  # stdout is still the line alone


def test_a_dry_run_says_why_there_is_no_card_and_cards_off_fetches_nothing(
    bluesky_home: BotHome, pages: PageServer
) -> None:
    bluesky_home.write_tweets(f"Old news {pages.url}/gone\n")
    result = bluesky_home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert f"no link card for {pages.url}/gone: {pages.url}/gone answered 410 Gone" in result.stderr

    asked = len(pages.requests)
    bluesky_home.write_env(BLUESKY_LINK_CARDS="no")
    result = bluesky_home.run("--dry-run", "--force")
    assert result.returncode == 0 and "link card" not in result.stderr
    assert len(pages.requests) == asked


def test_by_default_a_page_on_this_machine_gives_no_card_and_is_never_asked(
    bluesky_home: BotHome, pages: PageServer
) -> None:
    """The finding: a link to 127.0.0.1 (or a camera on the LAN) was fetched and its title published."""
    bluesky_home.settings.pop("LINK_CARDS_LOCAL")
    bluesky_home.write_env()
    link = f"{pages.url}/blog/pegs".replace("127.0.0.1", "2130706433")
    bluesky_home.write_tweets(f"Solved every board: {link}\n")
    result = bluesky_home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert "is a loopback address (this machine): link cards fetch only pages on the public internet" in result.stderr
    assert "LINK_CARDS_LOCAL=yes" in result.stderr and "Peg solitaire" not in result.stderr
    assert pages.requests == []


def test_check_online_previews_the_card_of_each_line_with_a_link(
    bluesky_home: BotHome, bluesky_pds: Pds, pages: PageServer
) -> None:
    account = bluesky_pds.create_account("check")
    bluesky_home.write_env(
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=bluesky_pds.app_password(account),
        BLUESKY_SERVICE=bluesky_pds.url,
    )
    tweets = bluesky_home.write_tweets(f"No link here\nRead {pages.url}/blog/pegs today\nAnd {pages.url}/gone\n")
    result = bluesky_home.run("check", "--online")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        f"note     {tweets} line 2: Bluesky link {pages.url}/blog/pegs: card 'Peg solitaire, solved', "
        "'Every board & its shortest solution.' (thumbnail 1200x630, " in result.stdout
    )
    assert f"note     {tweets} line 3: Bluesky link {pages.url}/gone: no card: " in result.stdout
    assert "line 1:" not in result.stdout
    assert bluesky_pds.posts(account) == []  # a check posts nothing


def test_a_scheduled_run_posts_the_card_with_the_setting_at_its_default(
    bluesky_home: BotHome, bluesky_pds: Pds, pages: PageServer
) -> None:
    account = bluesky_pds.create_account("run")
    bluesky_home.write_env(
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=bluesky_pds.app_password(account),
        BLUESKY_SERVICE=bluesky_pds.url,
    )
    link = f"{pages.url}/blog/pegs"
    bluesky_home.write_tweets(f"Solved every board: {link}\n")
    result = bluesky_home.run("--force")
    assert result.returncode == 0, result.stderr
    (post,) = bluesky_pds.posts(account)
    external = post["value"]["embed"]["external"]
    assert (external["uri"], external["title"]) == (link, "Peg solitaire, solved")
    assert external["thumb"]["mimeType"] == "image/png" and external["thumb"]["size"] <= 1_000_000


def test_a_dry_run_of_a_line_with_a_picture_shows_the_picture_and_no_card(
    bluesky_home: BotHome, pages: PageServer
) -> None:
    from PIL import Image

    Image.new("RGB", (640, 480), (30, 140, 60)).save(bluesky_home.path / "square.png")
    bluesky_home.write_tweets(f"The garden ![A green rectangle](square.png) {pages.url}/blog/pegs\n")
    result = bluesky_home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert "picture 1 for Bluesky" in result.stderr and "A green rectangle" in result.stderr
    assert "link card" not in result.stderr
    assert pages.requests == []


def test_the_page_is_fetched_after_the_attempt_is_recorded_and_before_the_post(
    bluesky_home: BotHome, bluesky_pds: Pds, pages: PageServer
) -> None:
    """At most once is unchanged: when the linked page is asked for, the history already holds the
    attempt (pending), and the network has no post yet."""
    import sqlite3

    account = bluesky_pds.create_account("order")
    bluesky_home.write_env(
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=bluesky_pds.app_password(account),
        BLUESKY_SERVICE=bluesky_pds.url,
    )
    seen = []

    def page() -> Iterator[bytes]:
        history = bluesky_home.path / "state" / "history.sqlite3"
        with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
            seen.append(
                (db.execute("SELECT network, outcome, text FROM attempts").fetchall(), len(bluesky_pds.posts(account)))
            )
        yield PAGE

    pages.pages["/recorded"] = Page(page)
    line = f"Recorded first: {pages.url}/recorded"
    bluesky_home.write_tweets(line + "\n")
    result = bluesky_home.run("--force")
    assert result.returncode == 0, result.stderr
    assert seen == [([("bluesky", "pending", line)], 0)]
    assert bluesky_pds.posts(account)[0]["value"]["embed"]["external"]["title"] == "Peg solitaire, solved"
