"""The source of the bot's posts (TWEETS_FILE): a tweets file's lines, or a Tracery grammar that
draws a new post each run. Both are a `PostSource`; everything that asks about "the bot's posts"
(the scheduled run and its dry run, `check`, `history`, the status page, the daemon) asks the
source the settings name, never which kind it is. `source_of` is the one place that tells them
apart, by the file's name, so a plain file's run imports no grammar code::

    source = source_of(config)
    tweets = source.for_run(store, rng=rng, now=now)   # what this run may post (a file of one text: a grammar's)
    source.times()                                     # the timed lines, read without measuring a line
    source.readable(key)                               # a recorded post as a person reads it

Each source makes its posts' `Post` the one way (`read.Expansion.post`, through `TweetLine.post`).
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

from ..settings.loading import Config
from ..settings.table import POST_TO
from ..wording import plural
from . import GRAMMAR_MEMORY, TWEETS_FILE
from .options import line_rules
from .tweets import TweetFile, is_grammar, load_tweets, scan_times
from .when import LineTime

if TYPE_CHECKING:
    from ..state.store import HistoryStore
    from .sourcecheck import Finding  # what `check` says of a source: (status, message, error)
    from .tagpictures import PictureRules

__all__ = ["GrammarSource", "LinesSource", "PostSource", "source_of"]

log = logging.getLogger(__name__)


class PostSource:
    """What the bot's posts come from, as the settings (`config`) name it: what a run may post
    (`for_run`), the timed lines (`times`), every line when it has lines (`lines`), a recorded
    post as a person reads it (`readable`), how its tags make pictures (`picture_rules`), what
    `check` says of it (`findings`, `online_findings`) and of it in a word (`describe`). `draws`:
    each run draws a new post, so there is no round of lines to count."""

    __slots__ = ("config",)
    draws: bool = False

    def __init__(self, config: Config) -> None:
        self.config = config

    @property
    def path(self) -> Path:
        return self.config[TWEETS_FILE]

    def for_run(self, store: HistoryStore, *, rng: random.Random, now: datetime) -> TweetFile:
        """What the run at `now` (aware, in the bot's zone) may post, read with its history (`store`:
        the lengths measured before, the posts made). Raises `TweetFileError` when nothing can be."""
        raise NotImplementedError

    def times(self) -> Mapping[str, LineTime]:
        """The timed lines by text, read without measuring a line; {} when it cannot be read."""
        return {}

    def lines(self) -> Optional[TweetFile]:
        """Every line, measured for POST_TO (None: its posts are drawn at each run, there are no
        lines). Raises `BotError` when the file cannot be used."""
        return None

    def readable(self, key: str) -> str:
        """A recorded post (its key) as a person reads it in the history and on the status page."""
        return key

    def picture_rules(self) -> Optional[PictureRules]:
        """How its posts' tags make their pictures (tagpictures.py); None: its posts have no tags."""
        return None

    def findings(self) -> Iterator[Finding]:
        """What `bot.py check` says of it (sourcecheck.py)."""
        raise NotImplementedError

    def online_findings(self) -> Iterator[Finding]:
        """What `bot.py check --online` says of it beyond `findings`: what its posts fetch."""
        return iter(())

    def describe(self) -> str:
        """It in a few words, for the daemon's reload: raises `BotError` when it cannot be used."""
        raise NotImplementedError


class LinesSource(PostSource):
    """A tweets file: one post per line, a round of them (tweets.py)."""

    __slots__ = ()

    def for_run(self, store: HistoryStore, *, rng: random.Random, now: datetime) -> TweetFile:
        tweets = load_tweets(self.path, self.config[POST_TO], cache=store, rules=line_rules(self.config))
        for problem in tweets.problems:
            log.warning("%s line %d %s", tweets.path.name, problem.lineno, problem.message)
        return tweets

    def times(self) -> Mapping[str, LineTime]:
        return scan_times(self.path, self.config.registry.names())

    def lines(self) -> Optional[TweetFile]:
        return load_tweets(self.path, self.config[POST_TO], rules=line_rules(self.config))

    def findings(self) -> Iterator[Finding]:
        from .sourcecheck import line_findings

        return line_findings(self.config)

    def describe(self) -> str:
        lines = load_tweets(self.path, self.config[POST_TO], rules=line_rules(self.config))
        return f"{self.path}: {plural(len(lines.texts), 'line')} ready to post"


class GrammarSource(PostSource):
    """A Tracery grammar (a .json file): each run draws a new expansion (generated.py), its
    services' tags read and their pictures made."""

    __slots__ = ()
    draws = True

    def for_run(self, store: HistoryStore, *, rng: random.Random, now: datetime) -> TweetFile:
        """A file of one new expansion: none posted within GRAMMAR_MEMORY, its time options
        holding at `now`, BBDQ's codes replaced with `now` and the post's number from the history."""
        from .codes import Moment
        from .generated import draw_post

        posted = store.texts_posted_since(now - timedelta(seconds=self.config[GRAMMAR_MEMORY]))
        return draw_post(
            self.path,
            self.config[POST_TO],
            rng=rng,
            posted=posted,
            rules=line_rules(self.config),
            moment=now.replace(tzinfo=None),  # an expansion with a time goes only then
            codes=Moment(now, count=lambda: store.scheduled_posts() + 1),
        )

    def readable(self, key: str) -> str:
        """Without its tags, its pictures named (tags.py `readable`)."""
        from .tags import readable

        return readable(key)

    def picture_rules(self) -> Optional[PictureRules]:
        from .tagpictures import PictureRules

        return PictureRules.of(self.config)

    def findings(self) -> Iterator[Finding]:
        from .sourcecheck import grammar_findings

        return grammar_findings(self.config)

    def online_findings(self) -> Iterator[Finding]:
        from .sourcecheck import grammar_online_findings

        return grammar_online_findings(self.config)

    def describe(self) -> str:
        from .grammar import read_grammar

        return f"{self.path}: a Tracery grammar of {plural(len(read_grammar(self.path).rules), 'rule')}"


def source_of(config: Config) -> PostSource:
    """The source TWEETS_FILE names: a grammar when it ends in .json, else a tweets file's lines."""
    return GrammarSource(config) if is_grammar(config[TWEETS_FILE]) else LinesSource(config)
