"""A `Post` stored whole with its attempt (`Post.to_stored`) reads back as the same post, and what
each network is told of it (`Post.told`) is a function of the stored post alone."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from twitterbot.delivery.post import Post, stored_post
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky import NETWORK as BLUESKY
from twitterbot.networks.mastodon import NETWORK as MASTODON
from twitterbot.networks.x import NETWORK as X
from twitterbot.pictures.prepare import Attachment

POST = Post(
    "{only: mastodon, bluesky} a line as written ![a frog](frog.png)",
    "a line as written",
    (Attachment(Path("/srv/bot/frog.png"), "a frog", "frog.png"), Attachment(b"\x89PNG drawn", "", "drawn", True)),
    language="de",
    warning="frogs",
    where="tweets.txt line 3",
    reply_to={"mastodon": "113", "bluesky": "at://a b at://c d"},
    networks=("mastodon", "bluesky"),
    threads=True,
    visibility="direct",
    sensitive=True,
    labels=("nudity",),
    unfit="",
)


def test_a_stored_post_reads_back_as_the_same_post() -> None:
    stored = POST.to_stored()
    assert Post.from_stored(stored) == POST
    assert json.loads(stored)["images"][1]["data"]  # a drawn picture's bytes are kept to send again
    assert POST.to_stored() == stored  # stable: the same post is stored the same way


def test_each_network_is_told_only_what_it_takes() -> None:
    stored = Post.from_stored(POST.to_stored())
    assert stored.told(MASTODON) == PostOptions(
        reply_to="113", language="de", spoiler="frogs", visibility="direct", sensitive=True
    )
    assert stored.told(BLUESKY) == PostOptions(reply_to="at://a b at://c d", language="de", labels=("nudity",))
    assert stored.told(X) == PostOptions(language="de")  # its warning is in its text: X has no field for it


def test_a_thread_s_later_part_answers_the_part_before_without_the_pictures_or_their_labels() -> None:
    second = POST.part(2, {"bluesky": "at://e f at://c d"})
    assert second.told(BLUESKY, second.images) == PostOptions(reply_to="at://e f at://c d", language="de")
    first = POST.part(1)
    assert first.told(BLUESKY, first.images).labels == ("nudity",) and first.reply_to == {}


def test_a_post_no_later_run_sends_again_keeps_its_pictures_alt_text_but_not_their_bytes() -> None:
    kept = Post.from_stored(POST.to_stored(keep_pictures=False))
    assert [(image.source, image.alt) for image in kept.images] == [
        (Path("/srv/bot/frog.png"), "a frog"),
        (b"", ""),
    ]
    assert replace(kept, images=POST.images) == POST


@pytest.mark.parametrize("damaged", ["not json", "[]", '{"v": 99}', json.dumps({"v": 1, "key": "k"})])
def test_a_damaged_stored_post_is_read_as_an_older_row_is_and_says_so(
    damaged: str, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ValueError):
        Post.from_stored(damaged)
    with caplog.at_level(logging.WARNING):
        assert stored_post(damaged) is None
    assert "cannot be read" in caplog.text
    assert stored_post(None) is None
