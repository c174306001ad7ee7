"""Link cards on Bluesky against the real reference PDS (tests/pds), with the linked pages served on
127.0.0.1 by the test (tests/page_server.py): a card as Bluesky's app makes it, with its thumbnail
read back from the PDS; and every page that misbehaves still gives a post, in time, without a card."""

from __future__ import annotations

import io
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest
from page_server import Page, PageServer
from pds.harness import Pds, PdsAccount

from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.linkcard import Limits
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login

PIL = pytest.importorskip("PIL", reason="Pillow makes the test's photo (requirements.txt installs it)")
import images  # noqa: E402
from PIL import Image  # noqa: E402

OG_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<title>Fallback title</title>
<meta property="og:title" content="Solving pegs &amp; holes on a Pi">
<meta property="og:description" content="How a Raspberry Pi finds the 18-move solution &#8212; in seconds.">
<meta property="og:image" content="/images/board.jpg">
</head><body><p>The post itself.</p></body></html>
"""


def huge_page() -> Iterator[bytes]:
    """50 MB of HTML whose title comes only after the first 2 MB."""
    yield b"<html><head><!-- "
    for _ in range(32):
        yield b"x" * 65536
    yield b" --><title>Too far down</title></head><body>"
    for _ in range(50 * 16 - 32):
        yield b"y" * 65536


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A phone photo (tests/images.py): 3,000x2,000 stored sideways, GPS in its EXIF, 2.6 MB."""
    return images.photo(tmp_path_factory.mktemp("photo") / "board.jpg", size=(3000, 2000)).read_bytes()


@pytest.fixture
def pages(photo: bytes) -> Iterator[PageServer]:
    jpeg = {"Content-Type": "image/jpeg"}
    with PageServer(
        {
            "/post": Page(OG_PAGE.encode()),
            "/images/board.jpg": Page(photo, headers=jpeg),
            "/plain": Page(b"<html><head><title>Only a title</title></head><body>hi</body></html>"),
            "/never": Page(hang=True),
            "/huge": Page(huge_page, length=50 * 2**20),
            "/paper.pdf": Page(b"%PDF-1.4 ...", headers={"Content-Type": "application/pdf"}),
            "/loop": Page(status=302, headers={"Location": "/loop"}),
        }
    ) as server:
        yield server


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("cards")


@pytest.fixture
def poster(bluesky_pds: Pds, account: PdsAccount, tmp_path: Path) -> BlueskyPoster:
    return BlueskyPoster(
        Login(account.handle, bluesky_pds.app_password(account), bluesky_pds.url, tmp_path / "session.json"),
        timeout=10,
        retries=1,
        sleep=lambda seconds: None,
        link_cards=True,  # as BLUESKY_LINK_CARDS (yes by default) makes it
        card_limits=Limits(local=True),  # the pages are on 127.0.0.1: as LINK_CARDS_LOCAL=yes makes it
    )


def only_post(pds: Pds, account: PdsAccount) -> Dict[str, Any]:
    (record,) = pds.posts(account)
    return record["value"]


def link_facets(value: Dict[str, Any]) -> list:
    return [f["features"][0]["uri"] for f in value.get("facets", []) if "uri" in f["features"][0]]


def blob(pds: Pds, account: PdsAccount, cid: str) -> bytes:
    query = urllib.parse.urlencode({"did": account.did, "cid": cid})
    with urllib.request.urlopen(f"{pds.url}/xrpc/com.atproto.sync.getBlob?{query}", timeout=30) as response:
        return response.read()


def test_a_page_with_open_graph_data_gives_the_card_with_a_fitted_thumbnail_and_no_exif(
    bluesky_pds: Pds, account: PdsAccount, poster: BlueskyPoster, pages: PageServer, photo: bytes
) -> None:
    link = pages.url + "/post"
    assert len(photo) > 1_000_000  # the photo must be made to fit
    assert poster.post(f"New on the blog: {link} #pegs").confirmed

    value = only_post(bluesky_pds, account)
    assert link_facets(value) == [link]  # the link stays clickable
    embed = value["embed"]
    assert embed["$type"] == "app.bsky.embed.external"
    external = embed["external"]
    assert (external["uri"], external["title"]) == (link, "Solving pegs & holes on a Pi")
    assert external["description"] == "How a Raspberry Pi finds the 18-move solution \u2014 in seconds."
    thumb = external["thumb"]
    assert thumb["mimeType"] == "image/jpeg" and thumb["size"] <= 1_000_000

    data = blob(bluesky_pds, account, thumb["ref"]["$link"])
    assert len(data) == thumb["size"] <= 1_000_000
    stored = Image.open(io.BytesIO(data))
    assert stored.format == "JPEG"
    assert not images.has_location(data)
    assert stored.height > stored.width  # turned upright by its orientation before the EXIF went
    assert max(stored.size) <= 2000

    agents = {agent for _, agent in pages.requests}
    assert len(agents) == 1 and agents.pop().startswith("twitterbot/")
    assert [path for path, _ in pages.requests] == ["/post", "/images/board.jpg"]


def test_a_page_with_only_a_title_gives_a_card_without_a_thumbnail(
    bluesky_pds: Pds, account: PdsAccount, poster: BlueskyPoster, pages: PageServer
) -> None:
    link = pages.url + "/plain"
    poster.post(f"see {link}")
    external = only_post(bluesky_pds, account)["embed"]["external"]
    assert external == {
        "$type": "app.bsky.embed.external#external",
        "uri": link,
        "title": "Only a title",
        "description": "",
    }


def test_a_page_that_never_answers_delays_the_post_by_the_time_limit_only(
    bluesky_pds: Pds, account: PdsAccount, poster: BlueskyPoster, pages: PageServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The default limit (10 s), measured: the post goes out, without a card, soon after it."""
    link = pages.url + "/never"
    poster.post("warming up the session")  # so the timing below is the card's and one post's
    started = time.monotonic()
    with caplog.at_level("INFO", logger="twitterbot.networks.bluesky.linkcard"):
        result = poster.post(f"slow page {link}")
    elapsed = time.monotonic() - started
    assert result.confirmed
    assert Limits().seconds == 10
    assert 10 <= elapsed < 12, elapsed
    newest = bluesky_pds.posts(account)[0]["value"]
    assert "embed" not in newest and link_facets(newest) == [link]
    assert "took over 10 s" in caplog.text


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/huge", "is too big (52,428,800 bytes) and its first 1,000,000 bytes hold no title"),
        ("/paper.pdf", "is not a web page (application/pdf)"),
        ("/loop", "redirects more than 3 times"),
        ("/missing", "answered 404 Not Found"),
    ],
)
def test_a_page_that_gives_no_card_gives_a_post_without_one(
    bluesky_pds: Pds,
    account: PdsAccount,
    poster: BlueskyPoster,
    pages: PageServer,
    caplog: pytest.LogCaptureFixture,
    path: str,
    why: str,
) -> None:
    link = pages.url + path
    started = time.monotonic()
    with caplog.at_level("INFO", logger="twitterbot.networks.bluesky.linkcard"):
        assert poster.post(f"look: {link}").confirmed
    assert time.monotonic() - started < 8
    value = only_post(bluesky_pds, account)
    assert "embed" not in value and link_facets(value) == [link]
    assert why in caplog.text
    if path == "/huge":
        assert pages.sent[path] < 10 * 2**20  # it stopped reading; the server's buffers took the rest
    if path == "/loop":
        assert len(pages.requests) == 4  # the first request and 3 redirects


def test_a_poster_made_without_link_cards_fetches_nothing(
    bluesky_pds: Pds, account: PdsAccount, tmp_path: Path, pages: PageServer
) -> None:
    poster = BlueskyPoster(
        Login(account.handle, bluesky_pds.app_password(account), bluesky_pds.url, tmp_path / "session.json"),
        timeout=10,
        retries=0,
    )
    poster.post(f"no card {pages.url}/post")
    assert "embed" not in only_post(bluesky_pds, account)
    assert pages.requests == []


def test_a_lost_thumbnail_upload_costs_the_thumbnail_not_the_card_nor_the_post(
    bluesky_pds: Pds, account: PdsAccount, pages: PageServer, tmp_path: Path
) -> None:
    from bluesky_emulator import LossyProxy

    with LossyProxy(bluesky_pds.url, lose={"com.atproto.repo.uploadBlob": 1}) as proxy:
        poster = BlueskyPoster(
            Login(account.handle, bluesky_pds.app_password(account), proxy.url, tmp_path / "session.json"),
            timeout=10,
            retries=1,
            sleep=lambda seconds: None,
            link_cards=True,
            card_limits=Limits(local=True),
        )
        assert poster.post(f"card without its picture {pages.url}/post").confirmed
    external = only_post(bluesky_pds, account)["embed"]["external"]
    assert external["title"] == "Solving pegs & holes on a Pi" and "thumb" not in external
    assert (proxy.calls["com.atproto.repo.uploadBlob"], proxy.calls["com.atproto.repo.createRecord"]) == (1, 1)


def test_a_line_with_a_picture_and_a_link_keeps_its_picture_and_fetches_no_card(
    bluesky_pds: Pds, account: PdsAccount, poster: BlueskyPoster, pages: PageServer
) -> None:
    """A post has one embed: the picture the user chose wins; the link stays a clickable facet."""
    from twitterbot.pictures.prepare import Attachment

    square = io.BytesIO()
    Image.new("RGB", (640, 480), (30, 140, 60)).save(square, "PNG")
    link = pages.url + "/post"
    picture = Attachment(square.getvalue(), "A green rectangle", "square.png")
    assert poster.post(f"the garden and {link}", PostOptions(images=(picture,))).confirmed

    value = only_post(bluesky_pds, account)
    assert value["embed"]["$type"] == "app.bsky.embed.images"
    assert [image["alt"] for image in value["embed"]["images"]] == ["A green rectangle"]
    assert link_facets(value) == [link]
    assert pages.requests == []  # the page was never fetched
