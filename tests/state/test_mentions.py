"""The history's side of replies (state/mentions.py): mentions kept once, the cursor with them, a
claim in the same transaction as the reply's attempt, outcomes, stop, the cooldown's last reply,
the billed reads in the budget, and what settling and a killed run's recovery make of a reply."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from twitterbot.state.mentions import MentionRow, MentionTaken
from twitterbot.state.outcomes import AttemptStart, Ending
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)


def row(mention_id: str, author: str = "ada", minutes: int = 0) -> MentionRow:
    return MentionRow(
        "x",
        mention_id,
        author,
        f"@{author}",
        False,
        "",
        "@pibot hi",
        NOW + timedelta(minutes=minutes),
        mention_id,
        None,
        False,
    )


def test_a_mention_read_twice_is_kept_once_and_the_cursor_goes_with_the_read() -> None:
    with HistoryStore(":memory:") as store:
        assert store.record_mentions("x", [row("2", minutes=1), row("1")], "x:2", at=NOW, requests=1, cost=None) == 2
        assert store.record_mentions("x", [row("2", minutes=1)], None, at=NOW, requests=1, cost=None) == 0
        assert store.mention_cursor("x") == (True, "x:2")  # None kept the cursor there
        assert [each.mention_id for each in store.pending_mentions(["x"])] == ["1", "2"]  # oldest first
        assert store.pending_mentions(["mastodon"]) == []


def test_a_claim_is_one_transaction_with_the_attempt_and_only_one_claim_wins() -> None:
    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1")], "1", at=NOW, requests=1, cost=None)
        attempt = store.claim_reply("x", "1", "hi", AttemptStart("x", NOW, cost=0.01), rule="hi")
        with pytest.raises(MentionTaken):
            store.claim_reply("x", "1", "hi", AttemptStart("x", NOW), rule="hi")
        assert store.last_reply_to("x", "ada") == NOW  # pending counts: it may be on its way
        store.finish_reply(attempt, Ending("posted", NOW, post_id="9", url="https://x.com/i/9"), "answered")
        (record,) = store.recent_replies(5)
        assert (record.status, record.rule, record.reply_id, record.outcome) == ("answered", "hi", "9", "posted")
        assert store.posts_since(NOW - timedelta(hours=1), NOW + timedelta(hours=1)) == 0  # not in the cap
        assert store.costs_since("x", NOW - timedelta(hours=1)) == [(0.01, "hi")]  # in the budget


def test_a_passing_failure_leaves_the_mention_for_later_and_another_failure_ends_it() -> None:
    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1"), row("2", "bo")], "2", at=NOW, requests=1, cost=None)
        first = store.claim_reply("x", "1", "hi", AttemptStart("x", NOW), rule="hi")
        store.finish_reply(first, Ending("temporary", NOW, detail="X is down"), "pending")
        second = store.claim_reply("x", "2", "hi", AttemptStart("x", NOW), rule="hi")
        store.finish_reply(second, Ending("failed", NOW, detail="refused"), "failed")
        assert [each.mention_id for each in store.pending_mentions(["x"])] == ["1"]
        assert store.last_reply_to("x", "ada") is None and store.last_reply_to("x", "bo") is None


def test_stop_is_kept_for_good_and_listed() -> None:
    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1")], "1", at=NOW, requests=1, cost=None)
        store.stop_account(row("1"), at=NOW)
        assert store.is_stopped("x", "ada") and not store.is_stopped("mastodon", "ada")
        assert [(each.network, each.author) for each in store.stopped_accounts()] == [("x", "@ada")]
        assert store.pending_mentions(["x"]) == []


def test_a_killed_run_s_reply_stays_answered_and_stays_out_of_the_round() -> None:
    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1")], "1", at=NOW, requests=1, cost=None)
        store.claim_reply("x", "1", "a line of the file", AttemptStart("x", NOW), rule="hi")
        store.recover_interrupted(at=NOW)  # a scheduled run after the kill
        assert "a line of the file" not in store.used_texts()
        assert store.recent_replies(1)[0].status == "answered"
        assert store.recent_replies(1)[0].outcome == "interrupted"


def test_a_reply_settled_as_not_there_is_answered_again_and_one_found_stays_answered() -> None:
    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1"), row("2", "bo")], "2", at=NOW, requests=1, cost=None)
        for mention in ("1", "2"):
            attempt = store.claim_reply("x", mention, f"hi {mention}", AttemptStart("x", NOW), rule="hi")
            store.finish_reply(attempt, Ending("uncertain", NOW, detail="lost"), "answered")
        unsettled = store.unsettled(NOW - timedelta(days=1), ["x"], source="reply")
        assert [each.text for each in unsettled] == ["hi 1", "hi 2"]
        store.settle(unsettled[0].id, found=False, how="not in the timeline", at=NOW)
        store.settle(unsettled[1].id, found=True, how="in the timeline", at=NOW, post_id="5")
        assert [each.mention_id for each in store.pending_mentions(["x"])] == ["1"]


def test_billed_reads_count_in_the_month_s_spend() -> None:
    with HistoryStore(":memory:") as store:
        for minutes in range(3):
            store.record_mentions("x", [], "1", at=NOW + timedelta(minutes=minutes), requests=1, cost=0.001)
        store.record_mentions("x", [], "1", at=NOW, requests=1, cost=None)  # a free read is not kept
        assert store.costs_since("x", NOW - timedelta(days=1)) == [(0.001, "")] * 3
        assert store.costs_since("mastodon", NOW - timedelta(days=1)) == []


def test_a_reply_refused_as_a_duplicate_fails_its_mention_in_the_attempts_own_transaction() -> None:
    """X's duplicate refusal is no answer: the attempt's ending alone (what one transaction writes,
    so a kill right after it changes nothing) leaves the mention failed with the reason, never
    answered."""
    from twitterbot.replies.sending import ReplyAttempts

    with HistoryStore(":memory:") as store:
        store.record_mentions("x", [row("1")], "1", at=NOW, requests=1, cost=None)
        attempts = ReplyAttempts("1", "time")
        attempt = attempts.begin(store, _post(), AttemptStart("x", NOW))
        attempts.ending(store, attempt, lambda: NOW)(
            "duplicate", None, "You are not allowed to post duplicate content", None
        )
        (record,) = store.recent_replies(5)
        assert record.status == "failed" and record.outcome == "duplicate"
        assert store.pending_mentions(["x"]) == []


def _post():
    from twitterbot.delivery.post import Post

    return Post("@ada tea time", "@ada tea time")
