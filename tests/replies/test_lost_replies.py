"""A reply whose answer was lost, looked up by the next round (LOOK_UP_UNCERTAIN=yes), through the
real client libraries against the emulators: the look-up reads the reply as the history stored
it (the mention it answers, its visibility, warning and language), so a reply to a `direct`
Mastodon mention is never sent again in public, and a lost reply is never taken for another
mention's reply with the same words. The log says "found" only for a post that was there before."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import List, Optional, Tuple

import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator


@pytest.fixture
def replying(home: BotHome) -> BotHome:
    rules = {"🐸": "ribbit {cut frogs}{lang de}", "(?<=\\s|^)hello\\b": "hi there!", ".": ""}
    (home.path / "replies.json").write_text(json.dumps(rules, ensure_ascii=False), encoding="utf-8")
    home.write_env(
        REPLY_RULES=str(home.path / "replies.json"),
        MIN_POST_GAP="0",
        REPLY_COOLDOWN="0",
        API_TIMEOUT="1",
        API_RETRIES="0",
        LOOK_UP_UNCERTAIN="yes",
    )
    return home


def _replies(home: BotHome) -> List[Tuple[str, Optional[str], Optional[str]]]:
    """Each reply attempt in the history: (outcome, post id, what settled it)."""
    with closing(sqlite3.connect(home.path / "state" / "history.sqlite3")) as conn:
        return conn.execute(
            "SELECT outcome, post_id, settled FROM attempts WHERE source = 'reply' ORDER BY id"
        ).fetchall()


@pytest.mark.parametrize("lost", ["posted_then_drop", "drop"])
def test_a_lost_reply_to_a_direct_mastodon_mention_is_looked_up_as_it_was_sent_and_never_made_public(
    replying: BotHome, mastodon_emulator: MastodonEmulator, lost: str
) -> None:
    replying.write_env(**mastodon_emulator.env(), POST_TO="mastodon", MASTODON_VISIBILITY="unlisted")
    asked = mastodon_emulator.mention("@pibot 🐸", by="ada", visibility="direct", ago=60)
    mastodon_emulator.fail_next(lost)  # the reply's POST: made then its answer lost, or lost on the way
    first = replying.run("replies")
    assert first.returncode in (0, 75), first.stderr
    assert _replies(replying)[0][0] == "uncertain"
    made_before = len(mastodon_emulator.statuses)
    second = replying.run("replies")
    assert second.returncode == 0, second.stderr
    (reply,) = mastodon_emulator.statuses  # never a second status
    assert (reply.text, reply.visibility, reply.in_reply_to_id, reply.spoiler_text, reply.language) == (
        "@ada ribbit",
        "direct",
        asked.id,
        "frogs",
        "de",
    )
    ((outcome, post_id, settled),) = _replies(replying)
    assert outcome == "posted" and post_id == reply.id
    if made_before == 0:  # the look-up made it: it says so, never "found"
        assert "found" not in settled and "sent again with its Idempotency-Key" in settled
        assert "found" not in second.stderr
    else:
        assert "found among the account's recent statuses" in settled


def test_a_lost_reply_on_x_is_never_taken_for_another_mention_s_reply_with_the_same_words(
    replying: BotHome, emulator: XEmulator
) -> None:
    replying.write_env(POST_TO="x")
    ada = emulator.mention("@pi_bot hello", by="ada", ago=120)
    assert replying.run("replies").returncode == 0
    (answer_to_ada,) = emulator.posts
    grace = emulator.mention("@pi_bot hello", by="grace", ago=60)
    emulator.fail_next("ok", "drop")  # the round's read goes through; its reply to grace is lost on the way
    replying.run("replies")
    assert [(post.text, post.reply_to) for post in emulator.posts] == [("@ada hi there!", ada.id)]
    again = replying.run("replies")  # the look-up: the only reply answers ada, not grace
    assert again.returncode == 0, again.stderr
    assert len(emulator.posts) == 1
    (first, lost) = _replies(replying)
    assert first[:2] == ("posted", answer_to_ada.id)
    assert lost[0] == "uncertain" and lost[1] is None  # never "found" as the reply to ada
    assert grace.id not in {post.reply_to for post in emulator.posts}
