"""Videos and animated GIFs prepared for each network with the real ffprobe and ffmpeg: metadata
gone without re-encoding, re-encoded only where a network needs it, too long refused before any
upload, hostile files refused (exit 65) within seconds."""

from __future__ import annotations

import struct
import time
from dataclasses import replace
from pathlib import Path

import clips
import pytest
from conftest import REGISTRY

from twitterbot.pictures.prepare import Attachment, PictureError, prepare, prepare_all
from twitterbot.pictures.video import ffmpeg_missing, sniff_video

LIMITS = {name: REGISTRY.network(name).image_limits() for name in ("x", "mastodon", "bluesky")}


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


def tags(found: dict) -> dict:
    every = dict(found["format"].get("tags") or {})
    for stream in found["streams"]:
        every.update(stream.get("tags") or {})
    return every


@pytest.mark.parametrize("network", ["x", "mastodon", "bluesky"])
def test_a_phone_clip_loses_its_metadata_without_being_re_encoded(tmp_path: Path, network: str) -> None:
    clip = clips.phone_clip(tmp_path / "bees.mp4")
    before = clips.probe(clip)
    assert "location" in tags(before) and "creation_time" in tags(before)
    prepared = prepare(clip, "Bees on lavender", LIMITS[network], name="clips/bees.mp4")
    assert prepared.mime_type == "video/mp4" and prepared.is_video
    assert (prepared.width, prepared.height) == (640, 360) and prepared.seconds == pytest.approx(2, abs=0.1)
    after = clips.probe(prepared.data)
    left = tags(after)
    for secret in ("location", "location-eng", "creation_time", "make", "model", "encoder"):
        assert secret not in left, (secret, left)
    assert b"+48.8577" not in prepared.data and b"Pixel" not in prepared.data and b"CameraSecret" not in prepared.data
    # the same H.264 stream, copied, not re-encoded
    assert [s["codec_name"] for s in after["streams"]] == ["h264", "aac"]
    assert after["streams"][0].get("bit_rate") == before["streams"][0].get("bit_rate")
    assert "no re-encoding" in prepared.describe() and "2.0 s" in prepared.describe()
    assert clip.read_bytes() == clip.read_bytes()  # the user's file is only read


def test_a_clip_too_large_in_pixels_is_scaled_down(tmp_path: Path) -> None:
    clip = clips.phone_clip(tmp_path / "big.mp4", seconds=1, size="2560x1440", rate=10)
    prepared = prepare(clip, "A wide view", LIMITS["x"])
    assert (prepared.width, prepared.height) == (1920, 1080)
    stream = clips.probe(prepared.data)["streams"][0]
    assert (stream["width"], stream["height"], stream["codec_name"]) == (1920, 1080, "h264")
    assert "re-encoded as H.264" in prepared.describe() and "scaled down from 2560x1440" in prepared.describe()


def test_a_webm_becomes_an_mp4(tmp_path: Path) -> None:
    clip = clips.webm_clip(tmp_path / "loop.webm")
    for network in ("x", "bluesky", "mastodon"):
        prepared = Attachment(clip, "A test card", "loop.webm", kind="video").prepare(LIMITS[network])
        assert prepared.mime_type == "video/mp4"
        assert clips.probe(prepared.data)["streams"][0]["codec_name"] == "h264"


def test_a_clip_too_long_for_a_network_is_refused_before_any_upload(tmp_path: Path) -> None:
    clip = clips.phone_clip(tmp_path / "long.mp4", seconds=3, size="160x90", rate=5)
    short = replace(LIMITS["bluesky"], video_seconds=2.0)
    with pytest.raises(PictureError, match=r"long.mp4 is 3.0 s long; Bluesky takes 2 s: cut it shorter") as caught:
        prepare(clip, "alt", short)
    assert caught.value.exit_status == 65


def test_a_clip_too_big_for_a_network_is_re_encoded_to_fit(tmp_path: Path) -> None:
    clip = clips.phone_clip(tmp_path / "heavy.mp4", seconds=2, size="640x360")
    small = replace(LIMITS["mastodon"], video_bytes=clip.stat().st_size // 2)
    prepared = prepare(clip, "alt", small)
    assert len(prepared.data) <= small.video_bytes and "re-encoded" in prepared.describe()


def test_an_animated_gif_moves_on_bluesky_as_a_video_and_goes_as_it_is_elsewhere(tmp_path: Path) -> None:
    gif = clips.animated_gif(tmp_path / "wave.gif")
    on_bluesky = prepare(gif, "A test card, moving", LIMITS["bluesky"])
    assert on_bluesky.mime_type == "video/mp4" and on_bluesky.seconds == pytest.approx(2, abs=0.2)
    assert clips.probe(on_bluesky.data)["streams"][0]["codec_name"] == "h264"
    assert "animated GIF made a video" in on_bluesky.describe()
    for network in ("x", "mastodon"):
        assert prepare(gif, "A test card, moving", LIMITS[network]).mime_type == "image/gif"


def test_a_video_goes_alone(tmp_path: Path) -> None:
    clip = clips.phone_clip(tmp_path / "a.mp4", seconds=1, size="160x90")
    gif = clips.animated_gif(tmp_path / "b.gif", seconds=1, size="64x48")
    with pytest.raises(PictureError, match="takes one video on a post, without pictures"):
        prepare_all([Attachment(clip, "a", "a.mp4", kind="video"), Attachment(gif, "b", "b.gif")], LIMITS["x"])
    # a GIF beside a picture is fine on X, but on Bluesky the GIF is a video
    prepare_all([Attachment(gif, "b", "b.gif"), Attachment(gif, "c", "c.gif")], LIMITS["x"])
    with pytest.raises(PictureError, match="b.gif goes to Bluesky as a video, beside 1 other"):
        prepare_all([Attachment(gif, "b", "b.gif"), Attachment(gif, "c", "c.gif")], LIMITS["bluesky"])


def test_video_alt_text_within_the_network_limit(tmp_path: Path) -> None:
    clip = clips.phone_clip(tmp_path / "a.mp4", seconds=1, size="160x90")
    with pytest.raises(PictureError, match="1001 characters; Bluesky takes 1000 for a video"):
        prepare(clip, "x" * 1001, LIMITS["bluesky"])
    with pytest.raises(PictureError, match="no alt text"):
        prepare(clip, " ", LIMITS["x"])


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda clip: clip[: len(clip) // 3], "could not be read|damaged|no duration"),
        (lambda clip: b"\x00\x00\x00\x18ftypisom" + b"\x00" * 4000, "could not be read|damaged|no picture"),
    ],
    ids=["cut short", "only a header"],
)
def test_a_hostile_video_is_refused_with_exit_65_within_seconds(tmp_path: Path, make, said: str) -> None:
    clip = clips.phone_clip(tmp_path / "ok.mp4", seconds=1, size="160x90")
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(make(clip.read_bytes()))
    started = time.monotonic()
    with pytest.raises(PictureError, match=said) as caught:
        prepare(bad, "alt", LIMITS["bluesky"], name="clips/bad.mp4")
    assert time.monotonic() - started < 5
    assert caught.value.exit_status == 65 and "clips/bad.mp4" in str(caught.value)


def test_a_small_file_of_absurd_pixels_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    """4,200x4,200 black frames: a few kilobytes that would decode to 17.6 megapixels a frame."""
    bomb = tmp_path / "black.mp4"
    clips._ffmpeg("-f", "lavfi", "-i", "color=c=black:size=4200x4200:rate=1", "-t", "1", "-c:v", "libx264",
                  "-preset", "ultrafast", str(bomb))  # fmt: skip
    assert bomb.stat().st_size < 100_000
    started = time.monotonic()
    with pytest.raises(PictureError, match="announces 4,200x4,200 pixels a frame") as caught:
        prepare(bomb, "alt", LIMITS["x"])
    assert time.monotonic() - started < 5 and caught.value.exit_status == 65


def test_a_decompression_bomb_gif_is_refused_before_ffmpeg_decodes_it(tmp_path: Path) -> None:
    """A GIF's header says 4,000x4,000 and its frames are counted without decoding: 3,000 such
    frames are 48 billion pixels, refused at once."""
    frame = b"\x21\xf9\x04\x00\x01\x00\x00\x00" + b"\x2c\x00\x00\x00\x00\xa0\x0f\xa0\x0f\x00" + b"\x02\x02\x44\x01\x00"
    bomb = (
        b"GIF89a" + struct.pack("<HH", 4000, 4000) + b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff" + frame * 3000 + b";"
    )
    path = tmp_path / "bomb.gif"
    path.write_bytes(bomb)
    started = time.monotonic()
    with pytest.raises(PictureError, match="too much to decode on a Pi") as caught:
        prepare(path, "alt", LIMITS["bluesky"])
    assert time.monotonic() - started < 2 and caught.value.exit_status == 65


def test_sniffing_video_types() -> None:
    assert sniff_video(b"\x00\x00\x00\x18ftypisom") == "video/mp4"
    assert sniff_video(b"\x00\x00\x00\x14ftypqt  ") == "video/quicktime"
    assert sniff_video(b"\x1a\x45\xdf\xa3\x01") == "video/webm"
    assert sniff_video(b"GIF89a") is None
    assert ffmpeg_missing() is None


def test_a_playlist_named_as_a_video_is_never_handed_to_ffmpeg(tmp_path: Path) -> None:
    """An HLS playlist naming another file is no MP4 by its first bytes: refused before ffmpeg,
    which in any case reads with the demuxer the bot names and the file protocol only."""
    playlist = tmp_path / "clip.mp4"
    playlist.write_text("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:/etc/passwd\n#EXT-X-ENDLIST\n")
    with pytest.raises(PictureError, match=r"clip.mp4 is not a video \(MP4, MOV or WebM\)") as caught:
        Attachment(playlist, "alt", "clip.mp4", kind="video").prepare(LIMITS["mastodon"])
    assert caught.value.exit_status == 65
