"""The status page's view of the tweets file: its postable texts and its problems, kept between
requests until the file changes."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Tuple

from ..errors import BotError
from ..files import read_regular
from ..posting import TWEETS_FILE
from ..settings.loading import Config
from ..settings.table import POST_TO
from .attention import Attention

if TYPE_CHECKING:
    from ..posting.tweets import TweetFile

__all__ = ["TweetsFile"]


class TweetsFile:
    """The tweets file's postable texts and its problems, as `bot.py check` reports them (a
    repeated line is a note there, not a problem); a grammar's problems alone. The file is read at
    every call; it is measured (a grammar's rules walked) again only when its bytes (or POST_TO)
    changed, since measuring a long file with twitter-text takes longer than the rest of the page."""

    def __init__(self) -> None:
        self._kept: Optional[Tuple[bytes, Tuple[str, ...], Optional[List[str]], List[Attention]]] = None
        self._lock = threading.Lock()
        self.parsed: Optional[TweetFile] = None  # the file as last read, for its calendar; None: unreadable

    def __call__(self, config: Config) -> Tuple[Optional[List[str]], List[Attention]]:
        """The texts of the round (lines without time options) and the file's problems."""
        from ..posting.options import line_rules
        from ..posting.tweets import is_grammar, load_tweets, parse_tweets  # measuring imports twitter-text: only here

        path = config[TWEETS_FILE]
        try:
            data = read_regular(path)
        except OSError:  # not there, or not a file (a FIFO would hang the page): load_tweets says which
            data = None
        with self._lock:
            digest = hashlib.sha256(data).digest() if data is not None else b""
            kept = self._kept
            if data is not None and kept and kept[0] == digest and kept[1] == config[POST_TO]:
                return kept[2], kept[3]
            networks = config[POST_TO]
            parsed: Optional[TweetFile] = None
            try:
                if is_grammar(path):
                    texts, problems = None, _grammar_attention(path, data)
                else:
                    rules = line_rules(config)
                    tweets = (
                        parse_tweets(data, path, networks, rules=rules)
                        if data is not None
                        else load_tweets(path, networks, rules=rules)
                    )
                    parsed, texts = tweets, tweets.plain
                    problems = [
                        Attention("tweets_file", f"{path.name} line {problem.lineno}", problem.message)
                        for problem in tweets.problems
                        if not problem.message.startswith("repeats")
                    ]
            except BotError as exc:  # kept too: a grammar of 100,000 rules takes a second to refuse
                texts, problems = None, [Attention("tweets_file", "The tweets file cannot be used", str(exc))]
            self._kept = (digest, config[POST_TO], texts, problems)
            self.parsed = parsed
            return texts, problems


def _grammar_attention(path: Path, data: Optional[bytes]) -> List[Attention]:
    """A Tracery grammar has no lines to count: what needs the owner's eye is its problems, as
    `bot.py check` names them, after Blue Bots Done Quick's codes are replaced as a run would now
    (``#parity{n % 2}#`` names a rule then); raises `TweetFileError` if it cannot be read."""
    from datetime import datetime, timezone

    from ..posting.codes import Moment, with_codes
    from ..posting.grammar import parse_grammar, read_grammar

    grammar = parse_grammar(data, path) if data is not None else read_grammar(path)
    grammar = with_codes(grammar, Moment(datetime.now(timezone.utc)))
    return [
        Attention("tweets_file", f"{path.name} line {problem.lineno}" if problem.lineno else path.name, problem.message)
        for problem in grammar.problems()
    ]
