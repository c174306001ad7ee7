"""The scheduled post: the tweets file, the roll and the pick, one run, and their commands; and
the `Delivery` (delivery.py) that every post, scheduled or not, goes out through."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, Optional

from ..capability import Capability, CheckLine, Feature
from ..errors import ConfigError
from ..settings.parsers import BOOL, DURATION, GRACE, PATH, POSITIVE_INT, SECONDS, show
from ..settings.table import POST_TO, Setting, SettingType, by_name

if TYPE_CHECKING:
    from ..delivery.deliver import DeliveryRules
    from ..settings.loading import Config

__all__ = [
    "GRAMMAR_MEMORY",
    "LATE_BY",
    "LONG_LINES",
    "LONG_LINE_CHOICES",
    "LOOK_UP_UNCERTAIN",
    "LOOK_UP_WINDOW",
    "MAX_POSTS_PER_DAY",
    "MIN_POST_GAP",
    "POSTING",
    "POST_LANGUAGE",
    "PICTURES_TIMEOUT",
    "SVG_RENDERER",
    "THREAD_NUMBERS",
    "delivery_rules",
    "TWEETS_FILE",
    "TWEET_ONE_IN",
    "monthly_budgets",
]

LONG_LINE_CHOICES = ("skip", "thread")


def _parse_language(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> Optional[str]:
    """A BCP 47 language tag in its usual case (pt-BR), or None when empty (no language is sent)."""
    from .options import language_tag

    if not text.strip():
        return None
    tag = language_tag(text)
    if tag is None:
        raise ConfigError(
            f"{name}={show(text.strip())} from {where} is not a BCP 47 language tag: set it to one like "
            "en, de or pt-BR, or leave it empty to send none"
        )
    return tag


def _parse_long_lines(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """What becomes of a line too long for a network: skip (not sent there) or thread."""
    value = text.strip().lower()
    if value not in LONG_LINE_CHOICES:
        raise ConfigError(
            f"{name}={show(text.strip())} from {where} is not skip or thread: set it to skip (a line too long for "
            "a network is not posted there) or thread (it is posted there as a thread of replies)"
        )
    return value


def _parse_svg_renderer(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """What draws a grammar's SVG pictures: auto (rsvg-convert), rsvg or chromium."""
    value = text.strip().lower() or "auto"
    if value not in ("auto", "rsvg", "chromium"):
        raise ConfigError(
            f"{name}={show(text.strip())} from {where} is not auto, rsvg or chromium: set it to auto (rsvg-convert, "
            "from librsvg2-bin) or chromium (Debian's chromium in bubblewrap's sandbox, for <foreignObject> and scripts)"
        )
    return value


LANGUAGE = SettingType("language", _parse_language)
RENDERER = SettingType("svg_renderer", _parse_svg_renderer)
SKIP_OR_THREAD = SettingType("long_lines", _parse_long_lines)


TWEETS_FILE = Setting("TWEETS_FILE", "tweets.txt", PATH, "the file of posts, one per line")
TWEET_ONE_IN = Setting("TWEET_ONE_IN", "4", POSITIVE_INT, "post on 1 run in N (1 = every run)")
MAX_POSTS_PER_DAY = Setting("MAX_POSTS_PER_DAY", "4", POSITIVE_INT, "at most this many posts in any 24 hours")
MIN_POST_GAP = Setting("MIN_POST_GAP", "1h", DURATION, "at least this long between two scheduled posts (0 = no gap)")
LATE_BY = Setting(
    "LATE_BY",
    "1h",
    GRACE,
    "a line's {at: ...} time: posted by the first run at or after it, unless that run comes later than "
    "this (then the line is noted as missed)",
)
POST_LANGUAGE = Setting(
    "POST_LANGUAGE", "", LANGUAGE, "the posts' language, a BCP 47 tag (en, de, pt-BR); empty: none is sent"
)
LONG_LINES = Setting(
    "LONG_LINES",
    "skip",
    SKIP_OR_THREAD,
    "a line too long for a network: skip (not posted there) or thread (posted as replies)",
)
THREAD_NUMBERS = Setting("THREAD_NUMBERS", "no", BOOL, "number a thread's parts 1/3, 2/3, 3/3 (yes or no)")
GRAMMAR_MEMORY = Setting(
    "GRAMMAR_MEMORY",
    "365d",
    DURATION,
    "a Tracery grammar (a TWEETS_FILE ending in .json) never posts a text posted within this long",
)
SVG_RENDERER = Setting(
    "SVG_RENDERER",
    "auto",
    RENDERER,
    "what draws a grammar's {svg ...} pictures: auto (rsvg-convert, from librsvg2-bin) or chromium "
    "(Debian's chromium, headless, in bubblewrap's sandbox: for <foreignObject> and scripts; slower, more memory)",
)
PICTURES_TIMEOUT = Setting(
    "PICTURES_TIMEOUT",
    "60",
    SECONDS,
    "seconds all of one post's pictures ({svg} drawn, {img} fetched) may take, in all: a post past it is not sent",
)
LOOK_UP_UNCERTAIN = Setting(
    "LOOK_UP_UNCERTAIN",
    "yes",
    BOOL,
    "each real run first asks the networks whether a post of the last 7 days whose outcome was "
    "not known is there: found, it counts as posted; not found, its line goes back into the round",
)


class Posting(Capability):
    """The scheduled post's settings (where to post, what, how often) and its commands: the plain
    run, `check` and `history`. Its command module comes first: it owns the plain run."""

    name = "posting"
    # The tweets file's ![alt](path) pictures, and the jobs' drawings; a grammar's {svg ...}
    # pictures, drawn by a program Debian builds for every Pi (pictures/svg.py).
    features = (
        Feature("pictures", ("PIL",), "pictures", "python3-pil"),
        Feature("SVG pictures ({svg ...} in a grammar)", (), "", "librsvg2-bin", programs=("rsvg-convert",)),
    )
    title = "The scheduled post"
    page = "configuration.md"
    settings = by_name(
        POST_TO,
        TWEETS_FILE,
        TWEET_ONE_IN,
        MAX_POSTS_PER_DAY,
        MIN_POST_GAP,
        LATE_BY,
        POST_LANGUAGE,
        LONG_LINES,
        THREAD_NUMBERS,
        GRAMMAR_MEMORY,
        SVG_RENDERER,
        PICTURES_TIMEOUT,
        LOOK_UP_UNCERTAIN,
    )
    commands = "twitterbot.posting.commands"
    command_names = ("check", "account", "history")

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """Whether the SVG renderer chosen is installed (SVG_RENDERER=chromium; rsvg-convert is the
        features' line), and whether Pillow has FreeType."""
        if config[SVG_RENDERER] == "chromium":
            from ..pictures.svg import renderer_problem

            missing = renderer_problem("chromium")
            yield (
                ("problem", missing)
                if missing
                else ("ok", "SVG pictures: drawn by chromium in bubblewrap's sandbox (SVG_RENDERER)")
            )
        yield from self._freetype()

    def _freetype(self) -> Iterable[CheckLine]:
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


# An uncertain post is looked up (LOOK_UP_UNCERTAIN) for this long after it was sent; older, it
# stays uncertain and counted as posted: a network's recent posts reach back only so far. (Here,
# beside the setting: a round of replies looks up its own without the scheduled run's code.)
LOOK_UP_WINDOW = timedelta(days=7)


def monthly_budgets(config: Config) -> Dict[str, float]:
    """The monthly budget of each network in POST_TO that has one set (X_MONTHLY_BUDGET), by
    network: what a run's posts, its catch-ups, a job's posts and a round of replies are held to."""
    return {
        network.name: config[network.budget]
        for network in config[POST_TO]
        if network.budget and config[network.budget] is not None
    }


def delivery_rules(config: Config, *, language: bool = True) -> DeliveryRules:
    """The delivery kernel's rules from the settings, the one way the scheduled run, the replies
    and the jobs make them: the monthly budgets, POST_LANGUAGE, THREAD_NUMBERS and
    MAX_POSTS_PER_DAY. `language=False`: posts that name no language go in none, not
    POST_LANGUAGE's (a job's: its text is the job's templates', in whatever language they were
    written). Imports the kernel: only a run that sends or plans a post calls it."""
    from ..delivery.deliver import DeliveryRules

    return DeliveryRules(
        monthly_budgets(config),
        config[POST_LANGUAGE] if language else None,
        config[THREAD_NUMBERS],
        cap=config[MAX_POSTS_PER_DAY],
    )


POSTING = Posting()
