"""The scheduled post: the tweets file, the roll and the pick, one run, and their commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..capability import Capability, CheckLine, Feature
from ..settings.table import Setting

if TYPE_CHECKING:
    from ..settings.loading import Config

__all__ = ["POSTING"]


class Posting(Capability):
    """The scheduled post's settings (where to post, what, how often) and its commands: the plain
    run, `check` and `history`. Its command module comes first: it owns the plain run."""

    name = "posting"
    # The tweets file's ![alt](path) pictures, and the jobs' drawings.
    features = (Feature("pictures", ("PIL",), "pictures", "python3-pil"),)
    title = "The scheduled post"
    page = "configuration.md"
    settings = {
        # Its default and help name the registry's networks (`Registry`).
        "POST_TO": Setting("", "networks", "where to post"),
        "TWEETS_FILE": Setting("tweets.txt", "path", "the file of posts, one per line"),
        "TWEET_ONE_IN": Setting("4", "positive_int", "post on 1 run in N (1 = every run)"),
        "MAX_POSTS_PER_DAY": Setting("4", "positive_int", "at most this many posts in any 24 hours"),
        "MIN_POST_GAP": Setting("1h", "duration", "at least this long between two scheduled posts (0 = no gap)"),
        "GRAMMAR_MEMORY": Setting(
            "365d", "duration", "a Tracery grammar (a TWEETS_FILE ending in .json) never posts a text posted within this long"
        ),
        "LOOK_UP_UNCERTAIN": Setting(
            "yes",
            "bool",
            "each real run first asks the networks whether a post of the last 7 days whose outcome was "
            "not known is there: found, it counts as posted; not found, its line goes back into the round",
        ),
    }
    commands = "twitterbot.posting.commands"

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """A Pillow without FreeType (pip built it where libfreetype-dev was missing) still draws,
        with its small bitmap font: a note, with the reinstall that works (pip reuses the wheel it
        built unless told not to)."""
        try:
            from PIL import features
        except ImportError:
            return  # the feature's own line says it is missing
        if features.check("freetype2"):
            return
        from importlib import metadata

        yield (
            "note",
            "pictures: this Pillow has no FreeType, so boards are drawn with its small bitmap font; for clear text: "
            "sudo apt install libfreetype-dev, then .venv/bin/python -m pip install --force-reinstall --no-deps "
            f"--no-cache-dir Pillow=={metadata.version('Pillow')} (on 32-bit Raspberry Pi OS: sudo apt install python3-pil)",
        )


POSTING = Posting()
