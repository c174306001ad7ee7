"""Threads, languages and content warnings end to end through bot.py as cron runs it: X through
tweepy against the X emulator, Mastodon through Mastodon.py against the Mastodon emulator."""

from __future__ import annotations

import json
import sqlite3

import images
from conftest import BotHome
from mastodon_server import MastodonEmulator

SENTENCE = "This sentence is one of several that make a line too long for a single post on X. "
LONG = (SENTENCE * 8).strip()  # about 660 characters: three parts of at most 280


def test_a_thread_broken_by_a_lost_reply_is_finished_in_order_by_the_next_run_never_doubled(home: BotHome) -> None:
    home.write_env(LONG_LINES="thread", THREAD_NUMBERS="yes", MAX_POSTS_PER_DAY="3", MIN_POST_GAP="0")
    home.write_tweets(LONG + "\n")
    home.emulator.fail_next("ok", "posted_then_drop")  # part 1 is answered; part 2 is made, but its answer is lost
    first = home.run("--force", "--json")
    assert first.returncode in (0, 75), first.stderr
    assert json.loads(first.stdout)["networks"][0]["outcome"] == "posted"
    posts = home.emulator.posts
    assert [post.text[-3:] for post in posts] == ["1/3", "2/3"], (first.stderr, [p.text for p in posts])
    assert posts[0].reply_to is None and posts[1].reply_to == posts[0].id
    # The next run looks part 2 up by its own text, finds it, and part 3 answers it; the cap (a
    # thread's parts are posts: 3 of 3) then skips a new post.
    second = home.run("--json")
    assert second.returncode == 0, second.stderr
    posts = home.emulator.posts
    assert [post.text[-3:] for post in posts] == ["1/3", "2/3", "3/3"]  # part 2 never sent again
    assert posts[2].reply_to == posts[1].id  # in order: part 3 answers part 2
    assert json.loads(second.stdout)["action"] == "skipped"
    assert all(len(post.text) <= 280 for post in posts) and len({post.text for post in posts}) == 3
    third = home.run("--json")
    assert third.returncode == 0 and len(home.emulator.posts) == 3  # nothing left: nothing sent
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        rows = conn.execute("SELECT outcome, part, sent_text, post_id FROM attempts ORDER BY id").fetchall()
    assert [row[:2] for row in rows] == [("posted", 1), ("posted", 2), ("posted", 3)]
    assert [row[2] for row in rows] == [post.text for post in posts]  # each part recorded as sent
    assert rows[1][3] == posts[1].id  # the look-up found part 2's id


def test_a_thread_s_first_part_sent_by_a_later_run_keeps_its_picture(home: BotHome) -> None:
    images.photo(home.path / "garden.jpg", size=(400, 300))
    home.write_env(LONG_LINES="thread", THREAD_NUMBERS="yes", MAX_POSTS_PER_DAY="3", MIN_POST_GAP="0")
    home.write_tweets(LONG + " ![Beans at dawn](garden.jpg)\n")
    home.emulator.fail_next("ok", "ok", "server_error")  # part 1's picture and its alt pass; the post fails
    first = home.run("--force", "--json")
    assert first.returncode == 75, first.stderr
    assert home.emulator.posts == [] and len(home.emulator.media) == 1
    second = home.run("--json")  # the thread is finished first, from part 1
    assert second.returncode == 0, second.stderr
    posts = home.emulator.posts
    assert len(posts) == 3, second.stderr
    assert [media.alt for media in posts[0].media] == ["Beans at dawn"]
    assert posts[1].media == [] and posts[2].media == []
    assert (posts[0].reply_to, posts[1].reply_to, posts[2].reply_to) == (None, posts[0].id, posts[1].id)


def test_the_dry_run_and_check_show_the_thread_s_cost(home: BotHome) -> None:
    home.write_env(LONG_LINES="thread")
    home.write_tweets(LONG + "\n")
    dry = home.run("--dry-run", "--force")
    assert dry.returncode == 0, dry.stderr
    assert "X would get it as a thread of 3 posts, about $0.045 on X" in dry.stderr
    check = home.run("check")
    assert "it goes there as a thread of 3 posts, about $0.045 on X" in check.stdout + check.stderr
    home.write_env(LONG_LINES="skip")
    assert "no lines to post" in home.run("--dry-run", "--force").stderr  # as before: too long is left out


def test_language_and_warning_reach_mastodon_and_x_gets_the_warning_as_its_first_line(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon", POST_LANGUAGE="de")
    home.write_tweets("{cw: Film spoilers; lang: en} The butler did it.\n")
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    status = mastodon_emulator.statuses[0]
    assert (status.text, status.spoiler_text, status.language) == ("The butler did it.", "Film spoilers", "en")
    assert home.emulator.texts == ["CW: Film spoilers\nThe butler did it."]


def test_post_language_goes_on_every_post_and_only_leaves_networks_out(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon", POST_LANGUAGE="pt-BR")
    home.write_tweets("{only: mastodon} Só no Mastodon.\n")
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    assert [n["network"] for n in json.loads(result.stdout)["networks"]] == ["mastodon"]
    assert mastodon_emulator.statuses[0].language == "pt-BR" and mastodon_emulator.statuses[0].spoiler_text == ""
    assert home.emulator.texts == []


def test_bad_options_and_a_bad_language_are_refused_naming_the_line(home: BotHome) -> None:
    home.write_tweets("fine line\n{only: myspace} hi\n")
    result = home.run("--force")
    assert result.returncode == 65 and "line 2 names myspace in only" in result.stderr
    home.write_tweets("fine line\n")
    home.write_env(POST_LANGUAGE="english please")
    result = home.run("--force")
    assert result.returncode == 78 and "POST_LANGUAGE" in result.stderr and "BCP 47" in result.stderr


# -- a Tracery grammar's expansions carry options and go as threads like a line -----------------


def _grammar(home: BotHome, rules: dict) -> None:
    path = home.path / "tweets.json"
    path.write_text(json.dumps(rules), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path))


def test_a_grammar_s_expansion_carries_its_options_and_is_not_drawn_again(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon")
    _grammar(home, {"origin": ["{cw: #topic#; lang: en} The butler did it."], "topic": ["Film spoilers"]})
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    status = mastodon_emulator.statuses[0]
    assert (status.text, status.spoiler_text, status.language) == ("The butler did it.", "Film spoilers", "en")
    assert home.emulator.texts == ["CW: Film spoilers\nThe butler did it."]
    again = home.run("--force")  # its one expansion, options and all, is in the history
    assert again.returncode == 65 and "were all posted before" in again.stderr
    assert len(home.emulator.texts) == 1 and len(mastodon_emulator.statuses) == 1


def test_a_grammar_s_only_leaves_networks_out_and_a_long_expansion_goes_as_a_thread(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon", LONG_LINES="thread", THREAD_NUMBERS="yes")
    _grammar(home, {"origin": ["{only: x} #long#"], "long": [LONG]})
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    assert [network["network"] for network in json.loads(result.stdout)["networks"]] == ["x"]
    assert [text[-3:] for text in home.emulator.texts] == ["1/3", "2/3", "3/3"]
    assert mastodon_emulator.statuses == []


def test_check_names_a_grammar_s_bad_options(home: BotHome) -> None:
    _grammar(home, {"origin": ["{only: myspace} hi"]})
    result = home.run("check")
    assert result.returncode == 65
    assert "expansion '{only: myspace} hi' names myspace in only" in result.stdout + result.stderr


def test_one_word_of_five_thousand_characters_is_cut_into_parts_that_each_fit() -> None:
    """A word longer than a part is cut between characters, each piece the longest start that fits
    (found by halving: before, one measure per character made a 5 KB word take minutes on X)."""
    from conftest import REGISTRY

    from twitterbot.delivery.threads import parts_for

    word = "x" * 5000
    for name in ("x", "mastodon", "bluesky"):
        network = REGISTRY.network(name)
        parts = parts_for(word, network, True)
        assert all(network.measure(part).fits for part in parts), name
        assert "".join(part.rsplit(" ", 1)[0] for part in parts) == word
        numbers = [part.rsplit(" ", 1)[1] for part in parts]
        assert numbers == [f"{index}/{len(parts)}" for index in range(1, len(parts) + 1)]
        # Each piece but the last is as long as fits beside the widest number ("99/99"): no more parts.
        limit = network.measure("").limit
        assert len(parts) == -(-len(word) // (limit - len(" 99/99"))), name


def test_a_private_hidden_thread_stopped_after_part_1_goes_on_private_and_sensitive_in_order(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    home.write_env(
        **mastodon_emulator.env(),
        POST_TO="mastodon",
        MASTODON_VISIBILITY="public",
        LONG_LINES="thread",
        THREAD_NUMBERS="yes",
        MAX_POSTS_PER_DAY="5",
        MIN_POST_GAP="0",
        API_RETRIES="0",
    )
    _grammar(home, {"origin": ["{private}{hide}" + LONG + " " + LONG]})  # three parts of at most 500
    mastodon_emulator.fail_next("ok", "server_error")  # part 1 goes; the server fails part 2
    first = home.run("--force", "--json")
    assert first.returncode == 0, first.stderr  # the line went: part 1 is posted
    assert len(mastodon_emulator.statuses) == 1
    home.write_env(TWEET_ONE_IN="1000000")  # the next run only goes on with the thread
    second = home.run("--json")
    assert second.returncode == 0, second.stderr
    statuses = mastodon_emulator.statuses
    assert [status.text[-3:] for status in statuses] == ["1/3", "2/3", "3/3"]
    assert [(status.visibility, status.sensitive) for status in statuses] == [("private", True)] * 3
    assert [status.in_reply_to_id for status in statuses] == [None, statuses[0].id, statuses[1].id]
