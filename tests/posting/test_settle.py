"""Settling uncertain posts (twitterbot/delivery/settle.py): a later run asks the network whether a
post whose outcome was not known is there, through the command line, against the X emulator's
timeline; the Mastodon and Bluesky look-ups are tested against their servers in tests/networks."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import datetime, timedelta
from typing import Callable, Dict, List

import pytest
from conftest import BotHome
from loopback import Answer
from x_emulator import XEmulator


def history(home: BotHome) -> List[dict]:
    result = home.run("history", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def skip_seed(one_in: int) -> int:
    return next(seed for seed in range(100) if random.Random(seed).randrange(one_in) != 0)


def test_an_uncertain_post_that_exists_is_found_by_a_later_run_the_die_skips(
    home: BotHome, emulator: XEmulator
) -> None:
    home.write_tweets("alpha\nbeta\n")
    emulator.fail_next("posted_then_drop")
    assert home.run("--force").returncode == 75
    (posted,) = emulator.posts
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["settled"] == ["X: uncertain → posted (found among the account's recent posts)"]
    assert emulator.timeline_reads == 1 and len(emulator.posts) == 1  # one read, no post
    first = history(home)[-1]
    assert first["action"] == "posted" and first["post_id"] == posted.id
    assert first["url"] == f"https://x.com/i/status/{posted.id}"
    assert "uncertain → posted (found among the account's recent posts)" in first["reason"]
    home.run("--one-in", "1000", "--seed", str(skip_seed(1000)))
    assert emulator.timeline_reads == 1  # settled once: never asked again


def age_attempts(home: BotHome, minutes: int) -> None:
    """Make every attempt of the history that many minutes old, as if time had passed."""
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as db:
        rows = db.execute("SELECT id, sent_at FROM attempts").fetchall()
        for attempt_id, sent_at in rows:
            older = datetime.strptime(sent_at, "%Y-%m-%dT%H:%M:%S.%fZ") - timedelta(minutes=minutes)
            db.execute("UPDATE attempts SET sent_at = ? WHERE id = ?", (f"{older:%Y-%m-%dT%H:%M:%S.%f}Z", attempt_id))


def test_a_post_not_found_soon_after_it_was_sent_stays_uncertain(home: BotHome, emulator: XEmulator) -> None:
    """A request in flight when its run died may land after the next run looks: not yet settled."""
    home.write_tweets("alpha\nbeta\n")
    emulator.fail_next("drop")
    assert home.run("--force").returncode == 75 and emulator.posts == []
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert json.loads(skipped.stdout)["settled"] == [] and "may still land" in skipped.stderr
    first = history(home)[-1]
    assert emulator.timeline_reads == 1 and first["action"] != "failed"
    assert home.run("--force").returncode == 0
    other = ({"alpha", "beta"} - {first["text"]}).pop()
    assert [post.text for post in emulator.posts] == [other]  # still counted as posted: not sent again


def test_an_uncertain_post_that_is_not_there_goes_back_into_the_round_and_posts_again(
    home: BotHome, emulator: XEmulator
) -> None:
    home.write_tweets("alpha\n")
    emulator.fail_next("drop")  # the request never reached X
    assert home.run("--force").returncode == 75 and emulator.posts == []
    age_attempts(home, 20)  # longer ago than a request could still be in flight
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert json.loads(skipped.stdout)["settled"] == [
        "X: uncertain → not posted (not found among the account's recent posts)"
    ]
    assert "goes back into the round" in skipped.stderr
    assert history(home)[-1]["action"] == "failed"
    again = home.run("--force")
    assert again.returncode == 0, again.stderr
    assert emulator.texts == ["alpha"]  # the only line, posted once, by the later run


def test_a_dry_run_never_looks_up_and_look_up_uncertain_no_turns_it_off(home: BotHome, emulator: XEmulator) -> None:
    emulator.fail_next("posted_then_drop")
    assert home.run("--force").returncode == 75
    assert home.run("--dry-run", "--force").returncode == 0
    home.write_env(LOOK_UP_UNCERTAIN="no")
    assert home.run("--one-in", "1000", "--seed", str(skip_seed(1000))).returncode == 0
    assert emulator.timeline_reads == 0
    assert history(home)[-1]["action"] == "uncertain"


def test_a_run_with_nothing_uncertain_asks_nothing(home: BotHome, emulator: XEmulator) -> None:
    assert home.run("--force").returncode == 0
    assert home.run("--force").returncode == 0
    assert emulator.timeline_reads == 0
    assert [seen.path for seen in emulator.seen] == ["/2/tweets", "/2/tweets"]


def test_a_look_up_that_fails_leaves_the_post_uncertain_for_the_next_run(home: BotHome, emulator: XEmulator) -> None:
    emulator.fail_next("posted_then_drop")
    assert home.run("--force").returncode == 75
    emulator.fail_next("server_error")
    assert home.run("--one-in", "1000", "--seed", str(skip_seed(1000))).returncode == 0
    assert history(home)[-1]["action"] == "uncertain"
    assert home.run("--one-in", "1000", "--seed", str(skip_seed(1000))).returncode == 0
    assert history(home)[-1]["action"] == "posted"


def test_a_post_with_another_link_is_not_the_uncertain_one(home: BotHome, emulator: XEmulator) -> None:
    """X shortens links to t.co: the same words with another link are another post, not this one
    (it was settled as posted because every link looked alike)."""
    home.write_tweets("see https://example.com/1\n")
    emulator.fail_next("drop")  # the request never reached X
    assert home.run("--force").returncode == 75 and emulator.posts == []
    from conftest import credentials_for

    from twitterbot.networks.x.poster import XPoster

    XPoster(credentials_for(emulator), timeout=5, retries=0, base_url=emulator.url).post("see https://example.com/2")
    age_attempts(home, 20)
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert json.loads(skipped.stdout)["settled"] == [
        "X: uncertain → not posted (not found among the account's recent posts)"
    ]
    assert home.run("--force").returncode == 0
    assert emulator.texts == ["see https://example.com/2", "see https://example.com/1"]


def test_a_post_whose_link_x_wrote_its_own_way_stays_uncertain(home: BotHome, emulator: XEmulator) -> None:
    """A bare domain comes back as http://...: X cannot show it is the link sent, so the look-up
    cannot tell, and the post stays counted as posted rather than be found on a guess."""
    home.write_tweets("visit example.com\n")
    emulator.fail_next("posted_then_drop")
    assert home.run("--force").returncode == 75
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert json.loads(skipped.stdout)["settled"] == []
    assert "cannot tell yet" in skipped.stderr and "X changed" in skipped.stderr
    assert history(home)[-1]["action"] == "uncertain" and emulator.timeline_reads == 1


# Broken answers to the look-up of the uncertain post (its text given).
MALFORMED: Dict[str, Callable[[str], Answer]] = {
    "id-null": lambda text: Answer({"data": [{"id": None, "text": text}]}),
    "data-string": lambda text: Answer({"data": text}),
    "data-numbers": lambda text: Answer({"data": [5]}),
    "list": lambda text: Answer([]),
    "html": lambda text: Answer(b"<html>Bad Gateway</html>"),
    "400": lambda text: Answer({"errors": 5}, status=400),
    "20MB": lambda text: Answer(size=20 * 1024 * 1024),  # past the 8 MB any answer is read to
}


@pytest.mark.parametrize("broken", sorted(MALFORMED))
def test_a_malformed_timeline_leaves_the_post_uncertain_and_the_run_goes_on(
    home: BotHome, emulator: XEmulator, broken: str
) -> None:
    """Each of these made every run exit 1 (the run that should post too) for the 7 days a post is
    looked up; now the look-up cannot tell, the post stays uncertain and the run posts."""
    home.write_tweets("alpha\nbeta\n")
    emulator.fail_next("posted_then_drop")
    assert home.run("--force").returncode == 75
    answer = MALFORMED[broken](emulator.texts[0])
    emulator.answer_next("timeline", answer)
    skipped = home.run("--one-in", "1000", "--seed", str(skip_seed(1000)), "--json")
    assert skipped.returncode == 0, skipped.stderr
    assert "Traceback" not in skipped.stderr and json.loads(skipped.stdout)["settled"] == []
    assert "the next run asks again" in skipped.stderr
    if answer.size:
        assert "more than 8 MB" in skipped.stderr
    emulator.answer_next("timeline", answer)
    posted = home.run("--force")
    assert posted.returncode == 0, posted.stderr
    assert len(emulator.posts) == 2 and emulator.texts[0] != emulator.texts[1]  # the other line
    actions = [row["action"] for row in history(home)]
    assert actions.count("uncertain") == 1 and actions.count("posted") == 1, actions
