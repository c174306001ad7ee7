"""A video in a line of the tweets file: written as a picture is, a video kind of attachment,
alone on its post, kept whole in the history (older rows read as before)."""

from __future__ import annotations

import json
from pathlib import Path

import clips
from conftest import REGISTRY

from twitterbot.delivery.post import Post
from twitterbot.posting.images import image_problems, split_images

NETWORKS = [REGISTRY.network(name) for name in ("x", "mastodon", "bluesky")]


def test_a_video_is_written_as_a_picture_is_and_is_a_video_attachment(tmp_path: Path) -> None:
    text, found = split_images("Bees at work ![Bees landing on lavender](clips/bees.mp4)", tmp_path)
    assert text == "Bees at work" and found[0].is_video
    attachment = found[0].attachment
    assert attachment.kind == "video" and attachment.alt == "Bees landing on lavender"
    assert attachment.source == tmp_path / "clips/bees.mp4"


def test_a_video_beside_a_picture_is_a_problem_check_names(tmp_path: Path) -> None:
    clips.need_ffmpeg()
    clips.phone_clip(tmp_path / "bees.mp4", seconds=1, size="160x90")
    (tmp_path / "cat.gif").write_bytes((tmp_path / "bees.mp4").read_bytes())
    text, found = split_images("Bees ![Bees](bees.mp4) ![A cat](cat.gif)", tmp_path)
    problems = image_problems(text, found, NETWORKS)
    assert any("has a video (bees.mp4) beside 1 other" in p and "takes one video on a post" in p for p in problems)
    text, alone = split_images("Bees ![Bees](bees.mp4)", tmp_path)
    assert image_problems(text, alone, NETWORKS) == []


def test_a_file_named_as_a_video_that_is_none_is_named(tmp_path: Path) -> None:
    (tmp_path / "clip.mp4").write_text("not a video")
    text, found = split_images("Look ![Something](clip.mp4)", tmp_path)
    assert image_problems(text, found, NETWORKS) == [
        "names clip.mp4, which is not a video (MP4, MOV or WebM): replace it"
    ]


def test_a_stored_post_keeps_its_video_kind_and_old_rows_read_as_pictures(tmp_path: Path) -> None:
    _, found = split_images("Bees ![Bees](bees.mp4)", tmp_path)
    post = Post("Bees ![Bees](bees.mp4)", "Bees", images=(found[0].attachment,))
    stored = post.to_stored()
    assert json.loads(stored)["images"][0]["kind"] == "video"
    assert Post.from_stored(stored) == post
    old = json.loads(stored)
    del old["images"][0]["kind"]  # a row written before videos
    assert Post.from_stored(json.dumps(old)).images[0].kind == "picture"
    _, pictures = split_images("Cat ![A cat](cat.jpg)", tmp_path)
    assert "kind" not in json.loads(Post("c", "Cat", images=(pictures[0].attachment,)).to_stored())["images"][0]


def test_a_job_s_mp4_attachment_is_a_video_without_saying_so(tmp_path: Path) -> None:
    """Another part (a job's animation) attaches an .mp4 path as an ordinary Attachment: it goes as
    a video all the same, and its stored row reads back as it was made."""
    from twitterbot.pictures.prepare import Attachment

    made = Attachment(tmp_path / "solution.mp4", "The pegs jumping, move by move", "solution.mp4")
    assert made.is_video and made.kind == "picture"
    post = Post("pegs", "Solved", images=(made,))
    assert Post.from_stored(post.to_stored()) == post


def test_a_grammar_s_video_is_a_video(tmp_path: Path) -> None:
    from twitterbot.posting.images import split_images as split

    _, found = split("Look ![Bees](bees.webm)", tmp_path)
    assert found[0].attachment.kind == "video"


def test_a_mastodon_server_s_own_video_limits_are_read() -> None:
    from twitterbot.networks.mastodon.instance import limits_from_instance

    media = {"image_size_limit": 16_777_216, "video_size_limit": 41_943_040, "video_matrix_limit": 2_304_000}
    limits = limits_from_instance({"configuration": {"media_attachments": media}})
    assert (limits.video_bytes, limits.video_pixels) == (41_943_040, 2_304_000)
    bigger = limits_from_instance({"configuration": {"media_attachments": {**media, "video_size_limit": 103_809_024}}})
    assert bigger.video_bytes == 103_809_024
