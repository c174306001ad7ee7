"""Grammars written for Cheap Bots Done Quick, Cheap Bots Toot Sweet and Blue Bots Done Quick, run
through bot.py as they are (tests/fixtures/grammars): their tags reach each network as pictures,
warnings, languages, visibility, sensitive flags and labels, never as text; their codes are the
bot's own time and post number; `check` lists the tags a grammar uses and names one it cannot read."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator

FIXTURES = Path(__file__).parent.parent / "fixtures" / "grammars"
TAG = re.compile(r"\{[^{}]*\}")


def use(home: BotHome, name: str, **settings: str) -> Path:
    path = home.path / name
    shutil.copy(FIXTURES / name, path)
    home.write_env(TWEETS_FILE=str(path), **settings)
    return path


def test_cbts_words_set_the_warning_sensitive_and_the_most_private_visibility_on_mastodon(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    use(
        home,
        "cbts_moods.json",
        **mastodon_emulator.env(),
        POST_TO="mastodon",
        MASTODON_VISIBILITY="public",
        MAX_POSTS_PER_DAY="20",
    )
    check = home.run("check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "sampled expansions use the services' tags: cut, " in check.stdout
    assert "hide" in check.stdout and "private" in check.stdout
    for seed in range(6):  # the same draws every time
        result = home.run("--force", "--seed", str(seed))
        assert result.returncode == 0, result.stderr
    assert len(mastodon_emulator.statuses) == 6
    assert {status.visibility for status in mastodon_emulator.statuses} == {"unlisted", "private"}
    for status in mastodon_emulator.statuses:
        assert not TAG.search(status.text) and "{" not in status.text
        assert status.spoiler_text.startswith("weather, ")
        # {private} is more private than {unlisted}, and both than MASTODON_VISIBILITY=public
        assert status.visibility == ("unlisted" if status.text.startswith("Grey skies") else "private")
        assert status.sensitive  # {hide} wins over {show}


def test_bbdq_codes_are_the_bot_s_zone_its_post_number_and_an_item_and_lang_its_language(
    home: BotHome, emulator: XEmulator, mastodon_emulator: MastodonEmulator
) -> None:
    use(home, "bbdq_calendar.json", **mastodon_emulator.env(), POST_TO="x,mastodon", TWEET_TIMEZONE="Pacific/Auckland")
    check = home.run("check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert (
        "use Blue Bots Done Quick's codes {hour}, {weekday}, {weekdayName}, {date ...}, {n}, {item ...}" in check.stdout
    )
    assert "sampled expansions use the services' tags: lang" in check.stdout
    for _ in range(3):
        result = home.run("--force", "--json")
        assert result.returncode == 0, result.stderr
    texts = [status.text for status in mastodon_emulator.statuses]
    assert texts == emulator.texts
    numbers = [int(re.match(r"Post (\d+) on", text).group(1)) for text in texts]
    assert numbers == [1, 2, 3]
    assert ["odd post" in text for text in texts] == [True, False, True]
    assert all("{" not in text and "#" not in text for text in texts)
    assert {status.language for status in mastodon_emulator.statuses} == {"en"}
    # the bot's zone, not UTC's: the weekday named is Auckland's today
    from datetime import datetime
    from zoneinfo import ZoneInfo

    today = datetime.now(ZoneInfo("Pacific/Auckland"))
    assert f"on {today:%A}, {today.day}" in texts[-1]


def test_an_unknown_tag_is_a_data_error_check_names(home: BotHome, emulator: XEmulator) -> None:
    path = home.path / "typo.json"
    path.write_text(json.dumps({"origin": ["A picture {imgg https://example.org/a.png} of #thing#"], "thing": ["a"]}))
    home.write_env(TWEETS_FILE=str(path))
    check = home.run("check")
    assert check.returncode == 65
    assert "{imgg https://example.org/a.png}, which is no tag" in check.stdout + check.stderr
    result = home.run("--force")
    assert result.returncode == 65 and emulator.posts == []
    assert "which is no tag" in result.stderr


def test_a_caught_up_expansion_keeps_its_tags_meaning_and_never_their_text(
    home: BotHome, emulator: XEmulator, mastodon_emulator: MastodonEmulator
) -> None:
    use(home, "cbts_moods.json", **mastodon_emulator.env(), POST_TO="x,mastodon", MASTODON_VISIBILITY="public")
    mastodon_emulator.fail_next("server_error")
    first = home.run("--force", "--seed", "1")  # an {unlisted} mood: a {private} one goes to Mastodon alone
    assert first.returncode == 75, first.stderr
    assert len(emulator.posts) == 1 and mastodon_emulator.statuses == []
    home.write_env(TWEET_ONE_IN="1000000")  # the next run only catches up
    second = home.run()
    assert second.returncode == 0, second.stderr
    (status,) = mastodon_emulator.statuses
    assert "{" not in status.text and status.text in emulator.texts[0]
    assert status.spoiler_text.startswith("weather, ") and status.sensitive
    assert status.visibility in ("unlisted", "private")


def test_a_dry_run_shows_what_a_grammar_s_tags_send_besides_the_text(home: BotHome) -> None:
    """A CBTS bot moving in sees its {cut}, visibility and {hide} in the dry run, even posting to
    Mastodon alone (where the text alone was shown, as if the tags had done nothing)."""
    use(home, "cbts_moods.json", POST_TO="mastodon")
    result = home.run("--dry-run", "--force", "--seed", "1")
    assert result.returncode == 0, result.stderr
    heading, text = result.stdout.strip().split("\n", 1)
    assert heading.startswith("Mastodon (behind the content warning 'weather, ")
    assert re.search(r"visibility (unlisted|private) \(or MASTODON_VISIBILITY if more private\)", heading)
    assert "marked sensitive" in heading
    assert "{" not in text and "CW:" not in text


@pytest.mark.usefixtures("rsvg")
def test_the_history_and_the_status_page_show_a_tagged_post_as_read_not_its_markup(
    home: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    """A grammar's posts are kept as expanded, tags and all: `history` and the status page showed
    an SVG card as its markup, and the page said a grammar "cannot be read" where it has no lines."""
    path = use(home, "cbts_moods.json", **mastodon_emulator.env(), POST_TO="mastodon", MAX_POSTS_PER_DAY="20")
    assert home.run("--force", "--seed", "1").returncode == 0
    card = '{"origin": ["A card {svg <svg width=\\"40\\" height=\\"20\\"><rect width=\\"40\\" height=\\"20\\"/></svg> black}"]}'
    path.write_text(card)
    assert home.run("--force").returncode == 0
    history = home.run("history")
    assert history.returncode == 0, history.stderr
    assert "A card [picture: black]" in history.stdout and "CW: weather, " in history.stdout
    assert "{" not in history.stdout
    from twitterbot.cli import read_config
    from twitterbot.web.app import create_app

    config = read_config(env_file=home.path / ".env", environ={"PATH": "/usr/bin:/bin"}, project_dir=home.path)
    page = create_app(config).test_client().get("/").get_data(as_text=True)
    assert "A card [picture: black]" in page and "{svg" not in page and "{cut" not in page
    assert "A Tracery grammar: each post is drawn anew" in page and "cannot be read" not in page


@pytest.mark.usefixtures("rsvg")
def test_a_dry_run_of_pictures_alone_says_so_rather_than_print_an_empty_line(home: BotHome) -> None:
    use(home, "cbdq_shapes.json")
    result = home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(no words: the pictures alone)"
