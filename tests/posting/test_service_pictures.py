"""Pictures from grammars written for CBDQ, CBTS and BBDQ (tests/fixtures/grammars), through bot.py
to each network's local server: every ``{svg}`` a PNG of the SVG's size with something drawn on
it, every ``{img}`` fetched from the page server on 127.0.0.1 (LINK_CARDS_LOCAL=yes), alt text
where the grammar gave it, no tag left in the text, the tags' meaning on the server, `check` exit 0;
a picture that cannot be made stops the post with one message and posts nothing."""

from __future__ import annotations

import io
import json
import re
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from page_server import Page, PageServer
from pds.harness import Pds, PdsAccount
from PIL import Image, ImageDraw
from x_emulator import XEmulator

FIXTURES = Path(__file__).parent.parent / "fixtures" / "grammars"
X_KEYS = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")
COLOURS = {"moth": (200, 190, 160), "beetle": (40, 160, 60), "fern": (30, 110, 40)}


def specimen(name: str) -> bytes:
    """A picture the page server serves: a coloured field with a darker mark, 320x240."""
    picture = Image.new("RGB", (320, 240), COLOURS[name])
    ImageDraw.Draw(picture).ellipse((100, 60, 220, 180), fill=(20, 20, 20))
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def pages() -> Iterator[PageServer]:
    served = {f"/pictures/{name}.png": Page(specimen(name), headers={"Content-Type": "image/png"}) for name in COLOURS}
    with PageServer(served) as server:
        yield server


def use(home: BotHome, name: str, server: PageServer = None, **settings: str) -> Path:
    """The fixture grammar in the bot's folder (its addresses pointed at the page server)."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if server is not None:
        text = text.replace("PAGE_SERVER", server.url)
    path = home.path / name
    path.write_text(text, encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path), MAX_POSTS_PER_DAY="50", **settings)
    return path


def drawn(data: bytes) -> Image.Image:
    """A posted picture: a PNG, with more than one colour on it (something was drawn)."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    picture = Image.open(io.BytesIO(data))
    colours = picture.convert("RGBA").getcolors(maxcolors=1_000_000)
    assert colours is None or len(colours) > 1, "a blank picture"
    return picture


def no_tags(text: str) -> None:
    assert not re.search(r"\{[a-z]+[ }]", text) and "<svg" not in text, text


def checked(home: BotHome) -> str:
    result = home.run("check")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.usefixtures("rsvg")
def test_a_cbdq_text_card_goes_to_x_as_a_1600x1200_png(home: BotHome, emulator: XEmulator) -> None:
    use(home, "cbdq_text_card.json")
    said = checked(home)
    assert "use the services' tags: svg" in said and "can be drawn here" in said
    for seed in ("1", "2"):  # two headlines: X refuses the same words twice, whatever the picture
        result = home.run("--force", "--seed", seed)
        assert result.returncode == 0, result.stderr
    assert len(emulator.posts) == 2
    for post in emulator.posts:
        no_tags(post.text)
        assert post.text.endswith(":")
        (media,) = post.media
        assert drawn(media.data).size == (1600, 1200)
        assert media.alt is None  # CBDQ gave no alt text


@pytest.mark.usefixtures("rsvg")
def test_shape_art_with_an_xml_declaration_goes_to_mastodon(home: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    use(home, "cbdq_shapes.json", **mastodon_emulator.env(), POST_TO="mastodon")
    checked(home)
    result = home.run("--force")
    assert result.returncode == 0, result.stderr
    (status,) = mastodon_emulator.statuses
    assert status.text == ""  # a picture alone, as the grammar wrote it
    (media,) = status.media
    assert drawn(media["data"]).size == (800, 600)


@pytest.mark.usefixtures("rsvg")
def test_a_noughts_and_crosses_board_drawn_with_transforms_goes_to_x(home: BotHome, emulator: XEmulator) -> None:
    use(home, "cbdq_noughts.json")
    checked(home)
    assert home.run("--force").returncode == 0
    (post,) = emulator.posts
    assert post.text.startswith("Move ") and post.text.endswith(".")
    board = drawn(post.media[0].data).convert("RGB")
    assert board.size == (600, 600)
    assert board.getpixel((200, 300)) == (0, 0, 0)  # a line of the grid, drawn in its <g>


@pytest.mark.usefixtures("rsvg")
def test_a_drawn_picture_s_bytes_are_kept_while_its_post_may_go_again_and_let_go_once_posted(
    home: BotHome, emulator: XEmulator
) -> None:
    """The history keeps a drawn picture with its attempt only while a later run may send it again
    (settling, a catch-up): once the network has the post, its stored post keeps the alt text alone,
    so a bot that draws every post does not fill its SD card with pictures."""
    import json
    import sqlite3

    use(home, "cbdq_noughts.json", API_RETRIES="0")
    emulator.fail_next("server_error")  # the post fails: a later run may send it again
    assert home.run("--force").returncode != 0 and not emulator.posts
    assert home.run("--force").returncode == 0 and len(emulator.posts) == 1
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as db:
        rows = db.execute("SELECT outcome, post FROM attempts ORDER BY id").fetchall()
    kept = {outcome: json.loads(post)["images"] for outcome, post in rows}
    assert set(kept) == {"temporary", "posted"}
    assert all(image.get("data") for image in kept["temporary"])  # what a later run would send again
    assert kept["posted"] and not any("data" in image for image in kept["posted"])
    assert all("alt" in image and "name" in image for image in kept["posted"])


def test_cbts_pictures_pair_alts_hide_cut_and_visibility_on_mastodon(
    home: BotHome, mastodon_emulator: MastodonEmulator, pages: PageServer
) -> None:
    use(home, "cbts_pictures.json", pages, **mastodon_emulator.env(), POST_TO="mastodon", LINK_CARDS_LOCAL="yes")
    checked(home)
    online = home.run("check", "--online")
    assert "fetched now" in online.stdout, online.stdout + online.stderr
    result = home.run("--force")
    assert result.returncode == 0, result.stderr
    (status,) = mastodon_emulator.statuses
    no_tags(status.text)
    assert status.text in ("Two from the archive.", "A pair for today.")
    assert [media["description"] for media in status.media] == [
        "The first picture of the pair",
        "The second picture of the pair",
    ]
    assert [drawn(media["data"]).size for media in status.media] == [(320, 240), (320, 240)]
    assert status.sensitive and status.visibility == "unlisted"
    assert status.spoiler_text in ("insects", "bugs up close")


def blob(pds: Pds, account: PdsAccount, cid: str) -> bytes:
    query = urllib.parse.urlencode({"did": account.did, "cid": cid})
    with urllib.request.urlopen(f"{pds.url}/xrpc/com.atproto.sync.getBlob?{query}", timeout=30) as response:
        return response.read()


def bluesky(home: BotHome, pds: Pds) -> PdsAccount:
    account = pds.create_account("bbdq")
    for name in X_KEYS:
        home.settings.pop(name)
    home.write_env(
        POST_TO="bluesky",
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=pds.app_password(account),
        BLUESKY_SERVICE=pds.url,
    )
    return account


def images_of(pds: Pds, account: PdsAccount, value: Dict[str, Any]) -> List[Tuple[Image.Image, str]]:
    return [
        (drawn(blob(pds, account, image["image"]["ref"]["$link"])), image["alt"]) for image in value["embed"]["images"]
    ]


@pytest.mark.usefixtures("rsvg")
def test_bbdq_nested_items_in_img_alt_text_an_svg_s_alt_labels_and_lang_on_bluesky(
    home: BotHome, bluesky_pds: Pds, pages: PageServer
) -> None:
    account = bluesky(home, bluesky_pds)
    use(home, "bbdq_pictures.json", pages, LINK_CARDS_LOCAL="yes")
    checked(home)
    for _ in range(2):
        result = home.run("--force")
        assert result.returncode == 0, result.stderr
    second, first = bluesky_pds.posts(account)  # newest first
    for number, record in ((1, first), (2, second)):
        value = record["value"]
        no_tags(value["text"])
        assert value["text"] in ("Specimen of the day:", "From the collection:")
        assert value["langs"] == ["en"]
        assert value["labels"]["values"][0]["val"] in ("nudity", "graphic-media")
        (fetched, alt), (card, card_alt) = images_of(bluesky_pds, account, value)
        # {n} is the post's number, {item #alts# {n}} the alt text at that number (from 0)
        expected = ["A pale moth with feathered antennae", "A green beetle on a leaf", "A curled fern frond"][number]
        assert alt == expected and fetched.size == (320, 240)
        assert card_alt == "A yellow card with the post's number" and card.size == (300, 200)
    requested = [path for path, _agent in pages.requests]
    assert "/pictures/beetle.png" in requested and "/pictures/fern.png" in requested


@pytest.mark.usefixtures("rsvg")
def test_the_dry_run_writes_the_pictures_it_would_draw(
    home: BotHome, emulator: XEmulator, mastodon_emulator: MastodonEmulator
) -> None:
    use(home, "cbdq_shapes.json", **mastodon_emulator.env(), POST_TO="mastodon")
    result = home.run("--dry-run", "--force", "-v")
    assert result.returncode == 0, result.stderr
    folder = re.search(r"are in (\S+)", result.stderr).group(1)
    (written,) = Path(folder).glob("*.png")
    assert drawn(written.read_bytes()).size == (800, 600)
    assert emulator.posts == [] and mastodon_emulator.statuses == []


def test_a_picture_that_cannot_be_fetched_stops_the_post_with_the_address(
    home: BotHome, emulator: XEmulator, pages: PageServer
) -> None:
    path = home.path / "missing.json"
    path.write_text('{"origin": ["Here: {img ' + pages.url + '/pictures/nothing-here.png A thing}"]}', encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path), LINK_CARDS_LOCAL="yes")
    result = home.run("--force")
    assert result.returncode in (65, 69, 75), result.stderr
    assert "/pictures/nothing-here.png" in result.stderr
    assert emulator.posts == []


def test_a_private_address_is_not_fetched_unless_link_cards_local(
    home: BotHome, emulator: XEmulator, pages: PageServer
) -> None:
    use(home, "cbts_pictures.json", pages)
    result = home.run("--force")
    assert result.returncode != 0 and emulator.posts == []
    assert "LINK_CARDS_LOCAL" in result.stderr
    # check says so too, without fetching: the address names this machine outright
    check = home.run("check")
    assert check.returncode == 65, check.stdout
    assert "a picture it fetches, http://127.0.0.1:" in check.stdout
    assert "is a loopback address (this machine): pictures are fetched only from the public" in check.stdout
    assert "set LINK_CARDS_LOCAL=yes" in check.stdout
    assert pages.requests == []


@pytest.mark.usefixtures("rsvg")
def test_an_svg_that_cannot_be_drawn_is_a_data_error_check_names(home: BotHome, emulator: XEmulator) -> None:
    path = home.path / "browser.json"
    path.write_text(
        '{"origin": ["A page {svg <svg xmlns=\\"http://www.w3.org/2000/svg\\" width=\\"200\\" height=\\"100\\">'
        '<foreignObject width=\\"200\\" height=\\"100\\"><div xmlns=\\"http://www.w3.org/1999/xhtml\\">hi</div>'
        '</foreignObject></svg>}"]}',
        encoding="utf-8",
    )
    home.write_env(TWEETS_FILE=str(path))
    check = home.run("check")
    assert check.returncode == 65 and "foreignObject" in check.stdout, check.stdout
    result = home.run("--force")
    assert result.returncode == 65 and "foreignObject" in result.stderr
    assert emulator.posts == []


@pytest.mark.usefixtures("rsvg")
def test_a_picture_an_svg_embeds_by_url_is_fetched_like_an_img(
    home: BotHome, mastodon_emulator: MastodonEmulator, pages: PageServer
) -> None:
    path = home.path / "framed.json"
    path.write_text(
        '{"origin": ["Framed: {svg <svg xmlns=\\"http://www.w3.org/2000/svg\\" '
        'xmlns:xlink=\\"http://www.w3.org/1999/xlink\\" width=\\"400\\" height=\\"300\\">'
        '<rect width=\\"400\\" height=\\"300\\" fill=\\"white\\"/><image x=\\"40\\" y=\\"30\\" width=\\"320\\" '
        'height=\\"240\\" xlink:href=\\"' + pages.url + '/pictures/beetle.png\\"/></svg> A beetle in a white frame}"]}',
        encoding="utf-8",
    )
    home.write_env(TWEETS_FILE=str(path), **mastodon_emulator.env(), POST_TO="mastodon", LINK_CARDS_LOCAL="yes")
    checked(home)
    assert home.run("--force").returncode == 0
    (status,) = mastodon_emulator.statuses
    (media,) = status.media
    framed = drawn(media["data"]).convert("RGB")
    assert framed.size == (400, 300) and media["description"] == "A beetle in a white frame"
    assert framed.getpixel((10, 10)) == (255, 255, 255)  # the frame
    assert framed.getpixel((60, 50)) == COLOURS["beetle"]  # the fetched picture, drawn inside it
    assert ("/pictures/beetle.png") in [path for path, _agent in pages.requests]


def test_check_fetches_nothing_and_check_online_names_an_address_that_fails(
    home: BotHome, emulator: XEmulator, pages: PageServer
) -> None:
    path = home.path / "gone.json"
    path.write_text('{"origin": ["Gone: {img ' + pages.url + '/pictures/gone.png A thing}"]}', encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path), LINK_CARDS_LOCAL="yes")
    plain = home.run("check")
    assert plain.returncode == 0, plain.stdout
    assert "fetch 1 different {img} address at each run" in plain.stdout
    assert pages.requests == []  # a plain check reaches no server
    online = home.run("check", "--online")
    assert online.returncode == 65, online.stdout
    assert "/pictures/gone.png" in online.stdout and "PROBLEM" in online.stdout


def test_without_the_renderer_check_names_its_package_once_and_a_run_exits_69(
    home: BotHome, emulator: XEmulator
) -> None:
    """A process whose PATH holds no rsvg-convert (what cron's PATH would be without librsvg2-bin)."""
    use(home, "cbdq_noughts.json")
    bare = {"PATH": str(home.path)}  # no programs at all: bot.py runs by the venv's absolute path
    check = home.run_process("check", env=bare)
    assert check.returncode == 69, check.stdout + check.stderr
    problems = [line for line in check.stdout.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 1 and "librsvg2-bin" in problems[0]  # once, not once for each SVG
    result = home.run_process("--force", env=bare)
    assert result.returncode == 69 and "librsvg2-bin" in result.stderr
    assert emulator.posts == []


@pytest.mark.usefixtures("rsvg")
def test_a_long_expansion_s_labels_go_with_its_pictures_on_the_thread_s_first_part(
    home: BotHome, bluesky_pds: Pds
) -> None:
    account = bluesky(home, bluesky_pds)
    words = " ".join(f"word{number}" for number in range(80))  # about 560 characters: a thread of two
    path = home.path / "long.json"
    path.write_text(
        '{"origin": ["' + words + ' {svg <svg xmlns=\\"http://www.w3.org/2000/svg\\" width=\\"60\\" height=\\"40\\">'
        '<rect width=\\"60\\" height=\\"40\\" fill=\\"red\\"/></svg> A red block}{label graphic-media}"]}',
        encoding="utf-8",
    )
    home.write_env(TWEETS_FILE=str(path), LONG_LINES="thread")
    result = home.run("--force")
    assert result.returncode == 0, result.stderr
    second, first = bluesky_pds.posts(account)  # newest first
    assert first["value"]["labels"]["values"][0]["val"] == "graphic-media"
    assert first["value"]["embed"]["images"][0]["alt"] == "A red block"
    assert "labels" not in second["value"] and "embed" not in second["value"]


@pytest.mark.usefixtures("rsvg")
def test_check_names_alt_text_longer_than_a_network_takes(home: BotHome, emulator: XEmulator) -> None:
    """A BBDQ picture's alt text of 1,440 characters: Bluesky took it, X takes 1,000; check said all
    was well and every run was refused."""
    path = home.path / "long.json"
    alt = "a very long description " * 60
    path.write_text(
        json.dumps(
            {"origin": ['{svg <svg width="100" height="100"><circle cx="50" cy="50" r="40"/></svg> ' + alt + "}"]}
        ),
        encoding="utf-8",
    )
    home.write_env(TWEETS_FILE=str(path))
    check = home.run("check")
    assert check.returncode == 65, check.stdout
    assert "a picture of its samples has alt text of 1439 characters; X takes 1000" in check.stdout
    result = home.run("--force")
    assert result.returncode == 65 and emulator.posts == []


@pytest.mark.usefixtures("rsvg")
def test_check_names_a_picture_an_svg_embeds_from_this_machine(home: BotHome, pages: PageServer) -> None:
    path = home.path / "framed.json"
    path.write_text(
        '{"origin": ["Framed: {svg <svg xmlns:xlink=\\"http://www.w3.org/1999/xlink\\" width=\\"40\\" height=\\"30\\">'
        '<image width=\\"40\\" height=\\"30\\" xlink:href=\\"'
        + pages.url
        + '/pictures/beetle.png\\"/></svg> A beetle}"]}',
        encoding="utf-8",
    )
    home.write_env(TWEETS_FILE=str(path))
    check = home.run("check")
    assert check.returncode == 65, check.stdout
    assert f"a picture it fetches, {pages.url}/pictures/beetle.png, is a loopback address" in check.stdout
    assert pages.requests == []


def test_check_masks_a_key_the_grammar_writes_as_a_run_s_log_does(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    """A grammar whose {img} address holds the account's token: the run's log masked it, check printed it."""
    token = mastodon_emulator.env()["MASTODON_ACCESS_TOKEN"]
    path = home.path / "keyed.json"
    path.write_text(
        json.dumps({"origin": [f"A picture {{img http://127.0.0.1:1/p.png?key={token}}}"]}), encoding="utf-8"
    )
    home.write_env(TWEETS_FILE=str(path), **mastodon_emulator.env(), POST_TO="mastodon")
    for args in (("check",), ("check", "--online")):
        result = home.run(*args)
        assert token not in result.stdout + result.stderr
        assert (
            "p.png?***" in result.stdout
        )  # the query masked whole, as any {img} address's (settings.secrets.masked_url)
