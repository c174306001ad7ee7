"""`monkey --animate` (issue 59): the run's final post carries its progress as a short video, the
record chart filling in one record a step; an H.264 MP4 with no metadata, its alt text saying
what it shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import clips
import pytest
from conftest import BotHome
from x_emulator import XEmulator

from twitterbot.jobs.monkey.chart import progress_animation, progress_frames
from twitterbot.jobs.monkey.setup import Options, prepare


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


@dataclass
class Record:
    keystrokes: int
    length: int
    text: str


def _probe(path: Path) -> dict:
    found = subprocess.run(
        [shutil.which("ffprobe") or "ffprobe", "-v", "error", "-count_frames", "-show_format", "-show_streams"]
        + ["-of", "json", str(path)],
        capture_output=True,
        check=True,
    )
    return json.loads(found.stdout)


def _setup(tmp_path: Path):
    target = tmp_path / "target.txt"
    target.write_text("to be or not to be\n")
    return prepare(Options(mode="prefix", target=target), tmp_path / "texts", cache_dir=tmp_path / "cache")


def test_the_animation_is_an_h264_mp4_of_every_record_with_no_metadata(tmp_path: Path) -> None:
    records = [Record(20, 1, "t"), Record(900, 2, "to"), Record(5_000, 3, "to "), Record(400_000, 5, "to be")]
    setup = _setup(tmp_path)
    picture = progress_animation(setup, records)
    assert picture.video is not None and picture.png.startswith(b"\x89PNG")  # the finished chart, for the page
    clip = tmp_path / "progress.mp4"
    clip.write_bytes(picture.video)
    probed = _probe(clip)
    (stream,) = probed["streams"]
    assert (stream["codec_name"], stream["pix_fmt"]) == ("h264", "yuv420p")
    assert (int(stream["width"]), int(stream["height"])) == (1200, 900)
    frames, per_second = progress_frames(setup, records)
    assert len(set(frames)) == 1 + len(records)  # the empty chart, then one frame a record
    seconds = len(frames) / per_second
    assert 9 <= seconds <= 11 and float(probed["format"]["duration"]) == pytest.approx(seconds, abs=0.1)
    assert int(stream["nb_read_frames"]) == pytest.approx(seconds * 25, abs=2)  # encoded at 25 frames a second
    tags = probed["format"].get("tags", {})
    assert not {"creation_time", "encoder", "location"} & set(tags), tags
    assert picture.attachment.is_video and picture.attachment.name == "monkey-records.mp4"
    assert picture.alt.startswith("An animation, about 10 seconds: 4 records appear one at a time on the chart")
    assert "to 5 letters ('to be') after 400,000 keystrokes" in picture.alt


def test_monkey_animate_posts_the_progress_as_a_video(tmp_path: Path, emulator: XEmulator) -> None:
    emulator.check_after_secs = 0
    home = BotHome(tmp_path / "bot", emulator)
    home.path.mkdir()
    home.write_env(**emulator.env(), BOT_STATE_DIR=str(home.path / "state"), PROGRESS_FIRST_AFTER="0")
    target = home.path / "target.txt"
    target.write_text("to be or not to be\n")
    run = home.run(
        "monkey", "--mode", "prefix", "--target", str(target), "--seed", "3", "--keystrokes", "200k", "--animate"
    )
    assert run.returncode == 0, run.stderr
    final = emulator.posts[-1]
    assert final.text.startswith("monkey finished after"), final.text
    (media,) = final.media
    assert media.category == "tweet_video" and media.media_type == "video/mp4"
    assert media.alt and re.match(r"An animation, about \d+ seconds: \d+ records appear one at a time", media.alt)
    assert all(not post.media or post.media[0].media_type != "video/mp4" for post in emulator.posts[:-1])


def test_the_dry_run_writes_the_animation_and_chart_refuses_it(tmp_path: Path) -> None:
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(BOT_STATE_DIR=str(home.path / "state"))
    target = home.path / "target.txt"
    target.write_text("to be or not to be\n")
    common = ("monkey", "--mode", "prefix", "--target", str(target), "--seed", "3", "--animate")
    run = home.run(*common, "--keystrokes", "200k", "--dry-run")
    assert run.returncode == 0, run.stderr
    assert re.search(r"for X: \S+monkey-records\.x\.mp4 \(MP4 video", run.stderr), run.stderr
    assert re.search(r"monkey: animation of \d+ frames \(\d+ distinct\), 10\.0 s, [\d,]+ bytes", run.stderr), run.stderr
    refused = home.run(*common, "--chart", str(home.path / "chart.png"))
    assert refused.returncode == 64 and "--animate is for the run's final post" in refused.stderr, refused.stderr


def test_without_ffmpeg_the_still_chart_is_posted_and_the_log_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    setup = _setup(tmp_path)
    records = [Record(20, 1, "t"), Record(900, 2, "to")]
    monkeypatch.setenv("PATH", str(tmp_path))  # no ffmpeg on it
    picture = progress_animation(setup, records)
    assert picture.video is None and picture.name == "monkey-records.png" and not picture.attachment.is_video
    assert "2 records as blue dots" in picture.alt
    assert "--animate needs ffmpeg (sudo apt install ffmpeg): posting the still picture instead" in caplog.text
