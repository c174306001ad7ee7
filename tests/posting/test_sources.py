"""The source of the bot's posts (twitterbot/posting/sources.py): TWEETS_FILE names a tweets file's
lines or a grammar, and each answers what the run, check, history and the page ask of it."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone

from conftest import BotHome

from twitterbot.cli import read_config
from twitterbot.posting.sources import GrammarSource, LinesSource, source_of
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)


def test_a_tweets_file_is_a_round_of_lines(home: BotHome) -> None:
    home.write_tweets("First post\n{at: 2030-01-01 09:00} Happy new year\n")
    source = source_of(read_config(env_file=home.env_file, environ={}))
    assert isinstance(source, LinesSource) and not source.draws
    lines = source.lines()
    assert lines is not None and lines.texts == ["First post", "{at: 2030-01-01 09:00} Happy new year"]
    assert list(source.times()) == ["{at: 2030-01-01 09:00} Happy new year"]
    assert source.readable("{private} words") == "{private} words"
    assert source.picture_rules() is None
    assert source.describe().endswith("2 lines ready to post")
    with HistoryStore(":memory:") as store:
        assert source.for_run(store, rng=random.Random(0), now=NOW).texts == lines.texts


def test_a_grammar_draws_one_post_a_run_and_reads_its_tags(home: BotHome) -> None:
    path = home.path / "bot.json"
    path.write_text(json.dumps({"origin": ["{unlisted}a #thing#"], "thing": ["cat"]}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path))
    source = source_of(read_config(env_file=home.env_file, environ={}))
    assert isinstance(source, GrammarSource) and source.draws
    assert source.lines() is None and source.times() == {}
    assert source.readable("{unlisted}a cat") == "a cat"
    assert source.picture_rules() is not None
    assert source.describe().endswith("a Tracery grammar of 2 rules")
    with HistoryStore(":memory:") as store:
        drawn = source.for_run(store, rng=random.Random(0), now=NOW)
    post = drawn.line(0).post("bot.json")
    assert (post.key, post.text, post.visibility) == ("{unlisted}a cat", "a cat", "unlisted")
    assert [status for status, _message, _error in source.findings()][0] == "ok"
