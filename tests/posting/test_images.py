"""Pictures in the tweets file (posting/images.py, hooked into posting/tweets.py): the syntax, the
data errors that name the line, the post's identity, and `check`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import images
import pytest
from conftest import BOT_PY, REGISTRY, BotHome
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.errors import TweetFileError
from twitterbot.posting.images import split_images
from twitterbot.posting.tweets import parse_tweets

FOLDER = Path("/home/pi/bot")


@pytest.mark.parametrize(
    "line, text, pictures",
    [
        ("Hi ![A cat](cat.jpg)", "Hi", [("cat.jpg", "A cat")]),
        ("![A](a.jpg) Morning ![B](photos/b.png) all", "Morning all", [("a.jpg", "A"), ("photos/b.png", "B")]),
        ("A ![x](y.jpg) B", "A B", [("y.jpg", "x")]),
        ("Spaced ![ alt with spaces ]( <my photo.jpg> )", "Spaced", [("my photo.jpg", "alt with spaces")]),
        ("wow ![ is not a picture", "wow ![ is not a picture", []),
        ("[a link](https://example.com) stays", "[a link](https://example.com) stays", []),
        ("no pictures here", "no pictures here", []),
    ],
)
def test_split_images(line: str, text: str, pictures: list) -> None:
    found_text, found = split_images(line, FOLDER)
    assert found_text == text
    assert [(image.written, image.alt) for image in found] == pictures
    assert all(image.path == FOLDER / image.written for image in found)


@given(st.text().filter(lambda line: "![" not in line))
def test_a_line_without_the_mark_is_left_alone(line: str) -> None:
    assert split_images(line, FOLDER) == (line, ())


@given(st.text(alphabet=st.characters(blacklist_characters="]\n\r"), max_size=30), st.text(max_size=40))
def test_a_picture_is_taken_out_whatever_its_alt(alt: str, words: str) -> None:
    words = words.replace("![", "")
    text, found = split_images(f"{words} ![{alt}](a.jpg)", FOLDER)
    assert [image.alt for image in found] == [alt.strip()] and text == words.strip()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "photos").mkdir()
    images.photo(tmp_path / "photos" / "beans.jpg", size=(400, 300))
    images.screenshot(tmp_path / "shot.png", size=(300, 600))
    images.text_named_png(tmp_path / "notes.png")
    return tmp_path


def parse(folder: Path, text: str, networks=("x",)):
    return parse_tweets(text.encode(), folder / "tweets.txt", [REGISTRY.network(name) for name in networks])


def test_a_line_with_pictures_is_one_post_named_by_the_whole_line(folder: Path) -> None:
    tweets = parse(
        folder,
        "Plain line\nBeans ![Rows of beans](photos/beans.jpg)\nBeans ![A settings page](shot.png)\n"
        "Beans ![Rows of beans](photos/beans.jpg)\n",
    )
    assert tweets.texts == [
        "Plain line",
        "Beans ![Rows of beans](photos/beans.jpg)",
        "Beans ![A settings page](shot.png)",
    ]
    assert [problem.lineno for problem in tweets.problems] == [4]  # the same words and picture: a repeat
    line = tweets.line(1)
    assert (line.text, line.key, line.lineno) == ("Beans", tweets.texts[1], 2)
    assert [(image.path, image.alt) for image in line.images] == [(folder / "photos/beans.jpg", "Rows of beans")]
    assert tweets.line(0).images == () and tweets.line(0).key == "Plain line"
    assert line.fit("x").length == 5  # X counts the text, not the picture's markup


@pytest.mark.parametrize(
    "line, message",
    [
        ("Beans ![](photos/beans.jpg)", "line 2 has a picture without alt text (photos/beans.jpg)"),
        ("Beans ![Rows](photos/gone.jpg)", "line 2 names a picture that does not exist"),
        ("Notes ![My notes](notes.png)", "line 2 names notes.png, which is not a picture"),
        ("![Rows](photos/beans.jpg)", "line 2 has only pictures: add a few words"),
        ("Many " + "![a](shot.png) " * 5, "line 2 has 5 pictures; a post takes 4"),
        ("Long ![" + "a" * 1001 + "](shot.png)", "line 2 has alt text of 1001 characters for shot.png; X takes 1000"),
        ("Folder ![A folder](photos)", "line 2 names a folder, not a picture"),
    ],
)
def test_pictures_that_cannot_be_posted_are_data_errors_naming_the_line(folder: Path, line: str, message: str) -> None:
    with pytest.raises(TweetFileError) as caught:
        parse(folder, f"Plain line\n{line}\n")
    assert message in str(caught.value) and str(folder / "tweets.txt") in str(caught.value)
    assert caught.value.exit_status == 65


def test_alt_text_is_held_to_the_strictest_network_in_post_to(folder: Path) -> None:
    line = "Long ![" + "a" * 1400 + "](shot.png)\n"
    assert parse(folder, line, ("mastodon", "bluesky")).line(0).images[0].alt == "a" * 1400
    with pytest.raises(TweetFileError, match="Mastodon takes 1500"):
        parse(folder, "Long ![" + "a" * 1600 + "](shot.png)\n", ("mastodon", "bluesky"))


def offline_home(tmp_path: Path, tweets: str, **settings: str) -> BotHome:
    """A bot home with no network to post to (check, dry runs): a phone photo, garden.jpg, beside its tweets file."""
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    images.photo(home.path / "garden.jpg")
    home.write_env(BOT_STATE_DIR=str(home.path / "state"), **settings)
    home.write_tweets(tweets)
    return home


def test_check_says_how_each_picture_goes_to_each_network(tmp_path: Path) -> None:
    home = offline_home(tmp_path, "Plain line\nThe garden ![A garden at dawn](garden.jpg)\n", POST_TO="x,bluesky")
    result = home.run("check")
    assert "line 2 garden.jpg for X: JPEG, " in result.stdout
    assert "line 2 garden.jpg for Bluesky: JPEG, " in result.stdout
    assert "scaled down from 3000x4000" in result.stdout and "turned upright" in result.stdout
    (home.path / "garden.jpg").write_text("no longer a picture")
    result = home.run("check")
    assert result.returncode != 0  # 78 first: the keys are not set either
    assert "line 2 names garden.jpg, which is not a picture" in result.stdout


def test_a_text_only_run_never_imports_pillow(tmp_path: Path) -> None:
    home = offline_home(tmp_path, "Plain line\nAnother line\n")
    run = subprocess.run(
        [sys.executable, "-X", "importtime", str(BOT_PY), "--env-file", str(home.env_file), "--dry-run", "--force"],
        capture_output=True,
        text=True,
        cwd=home.path,
    )
    assert run.returncode == 0, run.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "twitterbot.posting.tweets" in imported
    assert not [name for name in imported if name.startswith("PIL") or name.startswith("twitterbot.pictures")]


# -- a scheduled run that posts a line with pictures (bot.py against the X emulator) -------------


def test_a_scheduled_run_posts_the_line_with_its_picture_once(home: BotHome, emulator) -> None:
    images.photo(home.path / "garden.jpg")
    home.write_tweets("The garden ![Beans at dawn](garden.jpg)\n")
    posted = home.run("--force")
    assert posted.returncode == 0, posted.stderr
    (post,) = emulator.posts
    assert post.text == "The garden" and [media.alt for media in post.media] == ["Beans at dawn"]
    assert not images.has_location(post.media[0].data)
    history = home.run("history", "--json")
    assert json.loads(history.stdout)[0]["text"] == "The garden ![Beans at dawn](garden.jpg)"
    again = home.run("--force")  # a new round: the same line, but X already has it... and the bag knows it
    assert "every line of tweets.txt has been posted" in again.stderr


def test_a_run_that_uploaded_but_could_not_post_leaves_nothing_half_done(home: BotHome, emulator) -> None:
    images.photo(home.path / "garden.jpg", size=(400, 300))
    home.write_tweets("The garden ![Beans at dawn](garden.jpg)\nA plain line\n")
    emulator.fail_next("ok", "ok", "server_error")  # the upload and its alt text pass; the post fails
    failed = home.run("--force", "--seed", "1")
    assert failed.returncode == 75, failed.stderr
    assert emulator.posts == [] and len(emulator.media) == 1
    retried = home.run("--force", "--seed", "1")  # the same pick: the line is not marked used
    assert retried.returncode == 0, retried.stderr
    assert [post.text for post in emulator.posts] == ["The garden"] and len(emulator.media) == 2
    assert "stopped while posting" not in retried.stderr  # nothing was left in flight


def test_the_dry_run_writes_each_picture_for_each_network(tmp_path: Path) -> None:
    home = offline_home(tmp_path, "The garden ![Beans at dawn](garden.jpg)\n", POST_TO="x,bluesky")
    run = home.run("--dry-run", "--force")
    assert run.returncode == 0, run.stderr
    written = re.findall(r"picture 1 for (X|Bluesky): (\S+) \((JPEG, [\d,]+ bytes, \d+x\d+)", run.stderr)
    assert [network for network, _, _ in written] == ["X", "Bluesky"]
    for _, path, described in written:
        data = Path(path).read_bytes()
        assert f"{len(data):,} bytes" in described and not images.has_location(data)
    assert "alt text: 'Beans at dawn'" in run.stderr and run.stdout == "The garden\n"


def test_a_network_that_missed_a_post_with_a_picture_gets_it_next_run(
    home: BotHome, emulator, mastodon_emulator
) -> None:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon")
    images.photo(home.path / "garden.jpg", size=(400, 300))
    home.write_tweets("The garden ![Beans at dawn](garden.jpg)\n")
    mastodon_emulator.fail_next_upload("server_error")  # the one try (API_RETRIES=0 here) fails
    first = home.run("--force")
    assert first.returncode == 75, first.stderr
    assert "could not be uploaded to Mastodon" in first.stderr and mastodon_emulator.statuses == []
    assert [post.text for post in emulator.posts] == ["The garden"]
    second = home.run()  # the gap holds: only the catch-up, with its picture
    assert "catching up on Mastodon" in second.stderr, second.stderr
    (status,) = mastodon_emulator.statuses
    assert status.text == "The garden" and [media["description"] for media in status.media] == ["Beans at dawn"]
    assert len(emulator.posts) == 1


# -- a picture that cannot be prepared (issue 36): a data error before anything is recorded ---------


def test_a_damaged_picture_fails_the_run_before_any_attempt_and_the_line_posts_once_fixed(
    home: BotHome, emulator
) -> None:
    images.text_bomb_png(home.path / "chatty.png")
    home.write_tweets("The chart ![A chart of beans](chatty.png)\n")
    failed = home.run("--force")
    assert failed.returncode == 65, failed.stderr  # was exit 1, "unexpected error (ValueError ...)"
    assert "tweets.txt line 1: chatty.png is damaged" in failed.stderr
    assert emulator.posts == [] and not emulator.media
    images.screenshot(home.path / "chatty.png", size=(300, 200))  # the file fixed
    fixed = home.run("--force")
    assert fixed.returncode == 0, fixed.stderr
    assert "stopped while posting" not in fixed.stderr  # nothing was left in flight: the line was still in the round
    assert [post.text for post in emulator.posts] == ["The chart"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (images.text_bomb_png, "chatty.png is damaged"),
        (lambda path: images.many_pixels_png(path, (9400, 9400)), "chatty.png is 9,400x9,400 pixels (88.4 megapixels"),
    ],
)
def test_a_dry_run_and_check_of_a_picture_that_cannot_be_prepared_are_data_errors(
    tmp_path: Path, make, said: str
) -> None:
    home = offline_home(tmp_path, "The chart ![A chart of beans](chatty.png)\n")
    make(home.path / "chatty.png")
    dry = home.run("--dry-run", "--force")
    assert dry.returncode == 65, dry.stderr  # was "would post", exit 0
    assert said in dry.stderr and "would post" not in dry.stderr
    check = home.run("check")
    assert said in check.stdout and "unexpected error" not in check.stdout + check.stderr
    assert check.returncode not in (0, 1)


def test_a_fifo_named_as_a_picture_is_a_data_error_at_once(home: BotHome, emulator) -> None:
    import os

    os.mkfifo(home.path / "pipe.jpg")
    home.write_tweets("A pipe ![Not a picture](pipe.jpg)\nA plain line\n")
    run = home.run("--force", timeout=30)  # it used to block for ever
    assert run.returncode == 65, run.stderr
    assert "names a FIFO (a named pipe), not a picture" in run.stderr
