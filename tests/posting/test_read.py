"""What a source read becomes a Post one way (twitterbot/posting/read.py): the options' language and
warning, every tag field `Tagged` and `Post` share, the pictures and where it goes."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from twitterbot.delivery.post import Post
from twitterbot.posting.generated import read_expansion
from twitterbot.posting.read import Expansion
from twitterbot.posting.tags import Tagged

NAMES = ("x", "mastodon", "bluesky")


def test_a_tagged_expansion_carries_its_tags_options_and_networks_into_its_post(tmp_path: Path) -> None:
    read = read_expansion("{cw: spiders; only: mastodon}{private}{hide}{lang de} Eine Spinne", NAMES, tmp_path)
    post = read.post(key="the key", where="bot.json expansion 1")
    assert (post.key, post.text, post.where) == ("the key", "Eine Spinne", "bot.json expansion 1")
    assert (post.warning, post.language) == ("spiders", "de")
    assert (post.visibility, post.sensitive, post.labels) == ("private", True, ())
    assert post.networks is None and post.reply_to == {} and post.images == ()


def test_every_field_tagged_and_post_share_is_copied_so_a_new_tag_needs_no_other_change() -> None:
    shared = {each.name for each in fields(Tagged)} & {each.name for each in fields(Post)}
    assert shared - {"text", "language", "warning"} == {"visibility", "sensitive", "labels"}
    tags = Tagged("words", visibility="direct", sensitive=True, labels=("nudity",), words=("direct",))
    post = Expansion(text="words", tags=tags).post()
    assert (post.visibility, post.sensitive, post.labels) == ("direct", True, ("nudity",))


def test_a_plain_text_is_a_post_of_itself_with_the_defaults() -> None:
    post = Expansion(text="Day 3 of 10").post(where="the job", reply_to={"x": "17"}, unfit="")
    assert (post.key, post.text, post.language, post.warning, post.visibility) == (
        "Day 3 of 10",
        "Day 3 of 10",
        None,
        None,
        None,
    )
    assert (post.reply_to, post.unfit, post.sensitive, post.labels) == ({"x": "17"}, "", False, ())
