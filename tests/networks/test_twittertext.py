"""twitter-text is imported with a stand-in for `pkg_resources` (twitterbot/twittertext.py): the
lengths must be twitter-text's own, and the stand-in must leave no trace."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

# In a fresh interpreter, so that neither twitter-text nor pkg_resources is imported yet. The
# texts: a family emoji (one ZWJ sequence), a flag, a keycap, a CJK line and a link.
MEASURE = """
import json, sys
{setup}
from twitter_text import parse_tweet
from twitter_text.regexp.emoji import emoji_list
texts = ["\U0001f468\u200d\U0001f469\u200d\U0001f467 family", "\U0001f1eb\U0001f1f7", "1\ufe0f\u20e3",
         "\u65e5\u672c\u8a9e\u306e\u6587", "see https://example.com/a/long/path ok"]
print(json.dumps({"lengths": [parse_tweet(t).weightedLength for t in texts], "emoji": len(emoji_list),
                  "pkg_resources": "pkg_resources" in sys.modules}))
"""


def _measure(setup: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE.replace("{setup}", setup)], capture_output=True, text=True, cwd=REPO, check=True
    )
    return json.loads(done.stdout)


def test_twitter_text_loads_without_pkg_resources_and_measures_alike() -> None:
    ours = _measure("from twitterbot.networks import twittertext; twittertext.load()")
    assert ours["pkg_resources"] is False  # the stand-in is gone once twitter-text is in
    assert ours["emoji"] > 3000  # the whole emoji list was read through the stand-in
    assert ours["lengths"] == [2 + 7, 2, 2, 10, 4 + 23 + 3]
    try:
        import pkg_resources  # noqa: F401  (the real one, where setuptools still ships it)
    except ImportError:
        return
    assert _measure("import pkg_resources") == {**ours, "pkg_resources": True}


def test_the_real_pkg_resources_is_used_when_it_is_already_there(monkeypatch) -> None:
    from twitterbot.networks import twittertext

    marker = object()
    monkeypatch.setitem(sys.modules, "pkg_resources", marker)
    twittertext.load()
    assert sys.modules["pkg_resources"] is marker  # left as it was, never replaced


def test_a_run_that_measured_its_new_lines_lets_twitter_text_go_again(tmp_path) -> None:
    """A scheduled run measures new lines before it imports tweepy: twitter-text's 6 MiB of
    compiled expressions are freed by then, and measuring again later loads it afresh."""
    tweets = tmp_path / "tweets.txt"
    tweets.write_text("a line with an emoji \U0001f600\nsee https://example.com\n", encoding="utf-8")
    code = f"""
import sys
from pathlib import Path
from twitterbot.networks.x import NETWORK
from twitterbot.posting.tweets import load_tweets
first = load_tweets(Path({str(tweets)!r}), (NETWORK,))
gone = "twitter_text" not in sys.modules and "pkg_resources" not in sys.modules
again = load_tweets(Path({str(tweets)!r}), (NETWORK,))
print([first.line(i).weighted_length for i in range(2)], gone, [again.line(i).weighted_length for i in range(2)])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split() == ["[23,", "27]", "True", "[23,", "27]"]
