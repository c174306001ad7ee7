"""The reporter's pictures: the opening picture on a run's first post, a progress picture at most
every PICTURES_EVERY, the result's own, none when pictures are off; and `watch --image`.
Posts go through the real tweepy client to the X emulator, with its media endpoints."""

from __future__ import annotations

import io
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import List

import pytest
from conftest import BotHome, by_network
from PIL import Image
from reporters import make_reporter

from twitterbot.pictures.draw import Picture, to_picture
from twitterbot.progress.reporter import Cadence, Reporter
from twitterbot.state.store import HistoryStore

HOUR = 3600


class Clock:
    """The reporter's clock, moved on by the test (started at the real time, as the emulator's limits are real)."""

    now = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def square(colour: str, alt: str) -> Picture:
    return to_picture(Image.new("RGB", (64, 48), colour), alt, f"{colour}.png")


@pytest.fixture
def store(tmp_path: Path):
    with HistoryStore(tmp_path / "history.sqlite3") as history:
        yield history


def make(store, poster, clock, **options) -> Reporter:
    cadence = Cadence(HOUR, HOUR, options.pop("first_after", 0), 50)
    return make_reporter("pegs", posters=by_network(poster), store=store, clock=clock, cadence=cadence, **options)


def alts(emulator) -> List[List[str]]:
    return [[media.alt for media in post.media] for post in emulator.posts]


def test_opening_progress_and_result_pictures(store, poster, emulator) -> None:
    clock = Clock()
    drawn: List[str] = []

    def chart() -> Picture:
        drawn.append("chart")
        return square("blue", "A chart")

    reporter = make(store, poster, clock, pictures=True, picture_every=24 * HOUR)
    reporter.opening_picture(lambda: square("white", "The board at the start"))
    reporter.update("searching", picture=chart)  # first post: the opening picture and the chart
    clock.now += timedelta(hours=2)
    reporter.update("still searching", picture=chart)  # within PICTURES_EVERY: text only, not even drawn
    clock.now += timedelta(hours=23)
    reporter.update("searching more", picture=chart)  # a day later: the chart again
    reporter.done("solved", picture=lambda: square("green", "The solution"))
    assert alts(emulator) == [["The board at the start", "A chart"], [], ["A chart"], ["The solution"]]
    assert drawn == ["chart", "chart"]
    with Image.open(io.BytesIO(emulator.posts[0].media[0].data)) as first:
        assert first.format == "PNG" and first.size == (64, 48)


def test_a_picture_offered_while_no_post_is_due_goes_with_the_next_post(store, poster, emulator) -> None:
    clock = Clock()
    reporter = make(store, poster, clock, pictures=True, first_after=HOUR)
    reporter.update("early news", picture=lambda: square("blue", "A chart"))  # not due yet
    clock.now += timedelta(hours=2)
    reporter.update("later news")  # no picture offered now: the pending one is kept
    assert alts(emulator) == [["A chart"]]


def test_no_pictures_when_they_are_off(store, poster, emulator) -> None:
    reporter = make(store, poster, Clock(), pictures=False)
    reporter.opening_picture(lambda: pytest.fail("drawn although pictures are off"))
    reporter.update("news", picture=lambda: pytest.fail("drawn although pictures are off"))
    reporter.done("done", picture=lambda: pytest.fail("drawn although pictures are off"))
    assert alts(emulator) == [[], []] and all(seen.path == "/2/tweets" for seen in emulator.seen)


def test_watch_attaches_the_image_the_command_made(home: BotHome, emulator, tmp_path: Path) -> None:
    plot = tmp_path / "plot.png"
    script = f"from PIL import Image; Image.new('RGB', (300, 200), 'teal').save({str(plot)!r})"
    run = home.run("watch", "--image", str(plot), "--image-alt", "A teal rectangle", "--", sys.executable, "-c", script)
    assert run.returncode == 0, run.stderr
    assert alts(emulator) == [["A teal rectangle"]]
    refused = home.run("watch", "--image", str(plot), "--", "true")
    assert refused.returncode == 64 and "--image-alt" in refused.stderr


def test_watch_posts_without_the_image_when_the_command_made_none(home: BotHome, emulator, tmp_path: Path) -> None:
    run = home.run("watch", "--image", str(tmp_path / "none.png"), "--image-alt", "A plot", "--", "true")
    assert run.returncode == 0, run.stderr
    assert alts(emulator) == [[]] and "cannot be read" in run.stderr


def test_the_last_picture_of_each_post_sent_is_kept_for_the_status_page(
    store, poster, emulator, tmp_path: Path
) -> None:
    kept = tmp_path / "state" / "pictures"
    clock = Clock()
    reporter = make(store, poster, clock, pictures=True, keep_pictures_in=kept)
    reporter.opening_picture(lambda: square("white", "The board at the start"))
    reporter.update("searching", picture=lambda: square("blue", "A chart"))
    job = reporter.job.id
    assert (kept / f"job-{job}.png").read_bytes() == emulator.posts[0].media[1].data  # the post's last picture
    assert (kept / f"job-{job}.txt").read_text(encoding="utf-8") == "A chart"
    reporter.done("solved", picture=lambda: square("green", "The solution <3"))
    with Image.open(kept / f"job-{job}.png") as result:
        assert result.getpixel((0, 0)) == (0, 128, 0)
    assert (kept / f"job-{job}.txt").read_text(encoding="utf-8") == "The solution <3"
    assert sorted(path.name for path in kept.iterdir()) == [f"job-{job}.png", f"job-{job}.txt"]  # no temporary left


def test_a_picture_that_cannot_be_kept_is_logged_and_the_post_goes_out(
    store, poster, emulator, tmp_path: Path, caplog
) -> None:
    in_the_way = tmp_path / "pictures"
    in_the_way.write_text("a file where the folder should be")
    reporter = make(store, poster, Clock(), pictures=True, keep_pictures_in=in_the_way)
    report = reporter.done("solved", picture=lambda: square("green", "The solution"))
    assert report.action == "posted" and alts(emulator) == [["The solution"]]
    (warning,) = [record for record in caplog.records if "could not keep" in record.getMessage()]
    assert warning.levelname == "WARNING" and str(in_the_way) in warning.getMessage()


def test_watch_keeps_its_posted_image_in_the_state_folder(home: BotHome, emulator, tmp_path: Path) -> None:
    plot = tmp_path / "plot.png"
    script = f"from PIL import Image; Image.new('RGB', (300, 200), 'teal').save({str(plot)!r})"
    run = home.run("watch", "--image", str(plot), "--image-alt", "A teal rectangle", "--", sys.executable, "-c", script)
    assert run.returncode == 0, run.stderr
    kept = home.path / "state" / "pictures"
    (png,) = kept.glob("job-*.png")
    with Image.open(png) as picture:  # the picture as the job made it, before any network's fitting
        assert (
            picture.format == "PNG"
            and picture.size == (300, 200)
            and picture.convert("RGB").getpixel((0, 0)) == (0, 128, 128)
        )
    assert png.with_suffix(".txt").read_text(encoding="utf-8") == "A teal rectangle"
    dry = home.run(
        "watch", "--dry-run", "--name", "rehearsal", "--image", str(plot), "--image-alt", "A plot", "--", "true"
    )
    assert dry.returncode == 0, dry.stderr
    assert list(kept.glob("job-*.png")) == [png]  # a dry run keeps nothing
