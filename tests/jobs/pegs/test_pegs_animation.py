"""`pegs solve --animate` (issue 59): the solution posted as a short video, jump by jump, on the
board the job draws; an H.264 MP4 with no metadata, its alt text saying what it shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import clips
import pytest
from conftest import BotHome
from x_emulator import XEmulator

from twitterbot.jobs.pegs.animation import solution_animation
from twitterbot.jobs.pegs.board import builtin
from twitterbot.jobs.pegs.solve import Solved, solve


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


def _solution(name: str):
    board = builtin(name)
    solved = next(event for event in solve(board) if isinstance(event, Solved))
    return board, solved.jumps


def _probe(path: Path) -> dict:
    found = subprocess.run(
        [
            shutil.which("ffprobe") or "ffprobe",
            "-v",
            "error",
            "-show_format",
            "-show_streams",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        check=True,
    )
    return json.loads(found.stdout)


def test_the_animation_is_an_h264_mp4_of_every_jump_with_no_metadata(tmp_path: Path) -> None:
    board, jumps = _solution("triangle")
    picture = solution_animation(board, jumps)
    assert picture.video is not None and picture.png.startswith(b"\x89PNG")  # the still, for the page
    clip = tmp_path / "solution.mp4"
    clip.write_bytes(picture.video)
    (stream,) = _probe(clip)["streams"]
    assert (stream["codec_name"], stream["pix_fmt"]) == ("h264", "yuv420p")
    assert int(stream["width"]) % 2 == 0 and int(stream["height"]) % 2 == 0
    per_second = max(1, min(8, round(len(jumps) / 7)))
    frames = per_second + len(jumps) + 2 * per_second  # the start held a second, the finish two
    assert float(_probe(clip)["format"]["duration"]) == pytest.approx(frames / per_second, abs=0.1)
    tags = _probe(clip)["format"].get("tags", {})
    assert not {"creation_time", "encoder", "location"} & set(tags), tags
    assert picture.attachment.is_video and picture.attachment.name.endswith(".mp4")
    assert f"{len(jumps)} jumps solve the triangle" in picture.alt and "ends with 1 peg" in picture.alt


def test_pegs_solve_animate_posts_the_solution_as_a_video(tmp_path: Path, emulator: XEmulator) -> None:
    emulator.check_after_secs = 0
    home = BotHome(tmp_path / "bot", emulator)
    home.path.mkdir()
    home.write_env(**emulator.env(), BOT_STATE_DIR=str(home.path / "state"), PROGRESS_FIRST_AFTER="0")
    run = home.run("pegs", "solve", "triangle", "--animate")
    assert run.returncode == 0, run.stderr
    (result,) = [post for post in emulator.posts if "solved in" in post.text]
    (media,) = result.media
    assert media.category == "tweet_video" and media.media_type == "video/mp4"
    assert media.alt and "jumps solve the triangle" in media.alt


def test_animate_is_refused_where_it_means_nothing(tmp_path: Path) -> None:
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(BOT_STATE_DIR=str(home.path / "state"))
    for args in (("pegs", "count", "triangle", "--animate"), ("pegs", "solve", "--fewest-moves", "--animate")):
        run = home.run(*args, "--dry-run")
        assert run.returncode == 64 and "--animate is for pegs solve of one board" in run.stderr, run.stderr


def test_the_dry_run_writes_the_animation(tmp_path: Path) -> None:
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(BOT_STATE_DIR=str(home.path / "state"))
    run = home.run("pegs", "solve", "triangle", "--animate", "--dry-run")
    assert run.returncode == 0, run.stderr
    assert re.search(r"for X: \S+pegs-triangle-solution\.x\.mp4 \(MP4 video", run.stderr), run.stderr
