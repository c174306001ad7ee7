"""Small edges of the services' tags the red team met (issue 60), each said or done as a maker
expects: a stray brace after {img URL} named, <xi:include> refused, {date e} the zone's name, an
alt text too long for a network drawn again rather than stopping the run."""

from __future__ import annotations

import json
import os
from datetime import datetime

import pytest
from conftest import BotHome
from x_emulator import XEmulator

from twitterbot.pictures.svg import svg_problems
from twitterbot.posting.codes import php_date
from twitterbot.posting.tags import TagError, read_tags
from twitterbot.state.clock import zone_for

CARD = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50" fill="red"/></svg>'
)


def test_a_stray_brace_after_an_img_is_named_not_fetched_as_part_of_the_address() -> None:
    with pytest.raises(TagError, match=r"whose address holds a brace: a tag ends at its one \}, so remove the extra"):
        read_tags("A pic {img https://example.com/x.png}}")
    assert read_tags("A pic {img https://example.com/x.png}").pictures[0].url == "https://example.com/x.png"


def test_an_xinclude_is_refused_naming_it_by_either_renderer() -> None:
    markup = CARD.replace(
        "</svg>", '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd" parse="text"/></svg>'
    )
    for renderer in ("auto", "chromium"):
        assert any("<xi:include>" in problem and "remove it" in problem for problem in svg_problems(markup, renderer))


@pytest.mark.skipif(not os.path.islink("/etc/localtime"), reason="no /etc/localtime link to name the zone by")
def test_date_e_writes_the_system_zones_name_not_localtime() -> None:
    zone = zone_for(None, environ={})
    assert php_date("e", datetime.now(zone)) not in ("localtime", "")
    assert "/" in php_date("e", datetime.now(zone)) or php_date("e", datetime.now(zone)) == "UTC"


@pytest.mark.usefixtures("rsvg")
def test_an_alt_text_too_long_for_x_is_drawn_again_not_a_stopped_run(home: BotHome, emulator: XEmulator) -> None:
    """X takes 1,000 characters of alt text: an expansion with 1,500 is not for X, so the run
    draws the other one (it stopped with exit 65 before)."""
    grammar = home.path / "cards.json"
    grammar.write_text(
        json.dumps({"origin": [f"Long {{svg {CARD}}}{{alt {'x' * 1500}}}", f"Short {{svg {CARD}}}{{alt A red card}}"]}),
        encoding="utf-8",
    )
    for attempt in range(3):  # whichever is drawn first, a fresh bot posts the one X takes
        home.write_env(TWEETS_FILE=str(grammar), BOT_STATE_DIR=str(home.path / f"state-{attempt}"))
        emulator.posts.clear()
        result = home.run("--force")
        assert result.returncode == 0, result.stderr
        assert [post.text for post in emulator.posts] == ["Short"]


def test_check_names_a_backslash_at_a_texts_end_that_empties_every_draw(home: BotHome) -> None:
    """Tracery drops the text before a backslash at a text's very end; every draw was empty and
    the run said only "posted before or empty". check now names the rule, the text and the fix."""
    grammar = home.path / "bot.json"
    grammar.write_text(json.dumps({"origin": ["Hello world\\"]}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(grammar))
    said = home.run("check").stdout
    assert 'rule "origin" has a backslash at its end in "Hello world' in said, said
    assert "Tracery drops the text from the last #tag# or bracket to it; remove it" in said


def test_a_fetched_bomb_is_described_as_a_picture_to_link_not_a_file_to_save() -> None:
    """An {img} address that serves a 30000x30000 PNG of a few bytes: the words are for a picture
    fetched by its address (link a smaller one), not a file on the Pi (save it smaller)."""
    import struct
    import zlib

    from twitterbot.networks.x import NETWORK
    from twitterbot.pictures.prepare import Attachment, PictureError

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    bomb = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 1, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00" * 4000, 9))
        + chunk(b"IEND", b"")
    )
    with pytest.raises(PictureError) as caught:
        Attachment(bomb, "a bomb", "bomb.png", alt_optional=True).prepare(NETWORK.image_limits())
    assert "link a smaller picture" in str(caught.value) and "save it" not in str(caught.value)


def test_an_item_with_a_number_that_is_none_is_named_as_written_not_expanded(home: BotHome) -> None:
    """BBDQ's {item #rule# N} with N = -1: said as the grammar wrote it, with the fix (it was
    reported as "{item a -1}, which is no tag", already expanded)."""
    grammar = home.path / "bot.json"
    grammar.write_text(json.dumps({"origin": ["{item #list# -1}"], "list": ["a", "b"]}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(grammar))
    result = home.run("--dry-run", "--force")
    assert result.returncode == 65
    assert "has {item #list# -1}, whose number '-1' is not a whole number from 0" in result.stderr, result.stderr
    assert "{item a -1}" not in result.stderr
