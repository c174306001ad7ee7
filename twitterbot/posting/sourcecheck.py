"""What `bot.py check` says of the bot's posts' source (sources.py): a tweets file's lines (what
they cost, where they go, their pictures, their problems) or a grammar's samples (its problems,
how they fit, the services' tags they use; `check --online` fetches their pictures). Findings are
(status, message, error) for check.py to print, as tagcheck.py's::

    for status, message, error in line_findings(config):
        ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional, Tuple

from ..delivery.threads import parts_for, thread_cost, too_many_parts
from ..errors import BotError, MissingDependency, TweetFileError
from ..settings.loading import Config
from ..settings.table import POST_TO
from ..state.clock import utc_now, zone_for
from ..wording import plural
from . import MAX_POSTS_PER_DAY, THREAD_NUMBERS, TWEETS_FILE
from .options import line_rules, sent_text
from .tweets import TweetFile, load_tweets

if TYPE_CHECKING:
    from .generated import GrammarReport

__all__ = ["grammar_findings", "grammar_online_findings", "line_findings"]

Finding = Tuple[str, str, Optional[BotError]]


def _ok(message: str) -> Finding:
    return "ok", message, None


def _note(message: str) -> Finding:
    return "note", message, None


def _problem(message: str, error: Optional[BotError] = None) -> Finding:
    return "problem", message, error


def line_findings(config: Config) -> Iterator[Finding]:
    """A tweets file: its lines, those that cost more or fit only some networks, its pictures,
    and its problems, each naming its line."""
    path = config[TWEETS_FILE]
    try:
        tweets = load_tweets(path, config[POST_TO], rules=line_rules(config))
    except BotError as exc:
        yield _problem(str(exc), exc)
        return
    with_url = [line for line in tweets.lines if any(fit.cost for fit in line.fits)]
    costs = f" ({len(with_url)} with a URL, which costs more)" if with_url else ""
    yield _ok(f"{path}: {plural(len(tweets.lines), 'line')} ready to post{costs}")
    for line in with_url:  # not a problem, but a network charges more: say which lines and how much
        for fit in line.fits:
            if fit.cost:
                yield _note(f"{path} line {line.lineno} {fit.cost}")
    posting_to = {network.name: network for network in config[POST_TO]}  # a line's fits name theirs
    for line in tweets.lines:  # posted only where it fits: say where it will not go, or goes as a thread
        for fit in line.fits:
            network = posting_to[fit.network]
            if line.threaded(fit):
                parts = parts_for(sent_text(line.text, line.options, network), network, config[THREAD_NUMBERS])
                crowded = too_many_parts(len(parts), config[MAX_POSTS_PER_DAY])
                yield _note(
                    f"{path} line {line.lineno} is too long for {network.label}: "
                    + (
                        f"as {crowded}, it is not posted there (shorten it, or split it into lines)"
                        if crowded
                        else f"it goes there as {thread_cost(network, parts)}"
                    )
                )
            elif not fit.fits:
                why = (
                    fit.reason if fit.length <= fit.limit and fit.reason else f"{fit.length} of {fit.limit} {fit.unit}"
                )
                yield _note(
                    f"{path} line {line.lineno} is too long for {network.label} ({why}): "
                    "it is posted to the other networks only"
                )
    yield from _pictures(tweets, config)
    for found in tweets.problems:
        message = f"{path} line {found.lineno} {found.message}"
        yield _ok(message) if found.message.startswith("repeats") else _problem(message, TweetFileError(message))


def grammar_findings(config: Config) -> Iterator[Finding]:
    """A Tracery grammar: each problem (a data error, 65) with its line, each slip Tracery runs
    through (a note saying what the post shows), then how sampled expansions fit the networks,
    then the services' tags they use (tagcheck.py)."""
    path = config[TWEETS_FILE]
    try:
        report = _sampled(config)
    except BotError as exc:
        yield _problem(str(exc), exc)
        return
    for found in report.problems:
        yield _problem(found, TweetFileError(found))
    if not report.problems:
        yield _ok(
            f"{path}: a Tracery grammar of {plural(report.rules, 'rule')}; {plural(report.distinct, 'different post')} in the samples"
        )
    for said in report.warnings:  # Tracery runs through them: the post shows what each says
        yield _note(said)
    for said in report.notes:
        yield _note(said)
    if report.codes:
        yield _ok(
            f"{path}: its texts use Blue Bots Done Quick's codes {', '.join(report.codes)}, replaced at each run "
            "in the bot's own time zone (TWEET_TIMEZONE)"
        )
    if report.tagged:
        from .tagcheck import tag_findings
        from .tagpictures import PictureRules

        limits = [network.image_limits() for network in config[POST_TO]]
        public = [network.label for network in config[POST_TO] if "visibility" not in network.post_options]
        yield from tag_findings(report, PictureRules.of(config), where=str(path), limits=limits, public_only=public)


def _sampled(config: Config) -> GrammarReport:
    """The grammar's samples as `check` draws them: its own random source (the same samples each
    time), the codes at the time of the check and the post number 1."""
    import random

    from .codes import Moment
    from .generated import sample_grammar

    codes = Moment(utc_now().astimezone(zone_for(config["TWEET_TIMEZONE"])))  # the bot's zone, as Calendar.of
    rules = line_rules(config)
    return sample_grammar(config[TWEETS_FILE], config[POST_TO], rng=random.Random(0), rules=rules, codes=codes)


def grammar_online_findings(config: Config) -> Iterator[Finding]:
    """`check --online`: the pictures a grammar's samples fetch by URL (``{img}``), fetched now."""
    try:
        report = _sampled(config)
    except BotError:
        return  # the offline check said it
    if report.tagged and not report.problems:
        from .tagcheck import fetch_findings
        from .tagpictures import PictureRules

        rules = PictureRules.of(config)
        yield from fetch_findings(report, rules, where=str(config[TWEETS_FILE]))


def _pictures(tweets: TweetFile, config: Config) -> Iterator[Finding]:
    """Every picture of every line, prepared as each network in POST_TO will get it (a Mastodon
    server's own limits are read by `check --online` only when posting: offline, the defaults)."""
    lines = [line for line in tweets.lines if line.images]
    if not lines:
        return  # a file without pictures never imports Pillow
    try:
        import PIL  # noqa: F401
    except ImportError:
        said = f"{config[TWEETS_FILE]} has pictures (line {lines[0].lineno}) but Pillow is not installed: see pictures above"
        yield _problem(said, MissingDependency(said))
        return
    from ..pictures.prepare import PictureError
    from ..pictures.video import ffmpeg_missing
    from .images import how_sent

    moving = [image for line in lines for image in line.images if image.is_video or image.path.suffix.lower() == ".gif"]
    if moving:  # videos and animated GIFs (a video on Bluesky) are prepared with ffmpeg
        missing = ffmpeg_missing()
        if missing:
            yield _problem(f"{moving[0].written} needs ffmpeg: {missing}", MissingDependency(missing))
        else:
            yield _note("ffmpeg is installed: it prepares the videos (and the animated GIFs Bluesky gets as videos)")
    limits = [network.image_limits() for network in config[POST_TO]]
    for line in lines:
        for image, where, prepared in how_sent(line.images, limits):
            said = f"{config[TWEETS_FILE]} line {line.lineno} {image.written} for {where}"
            if isinstance(prepared, PictureError):
                yield _problem(f"{said}: {prepared}", prepared)
            else:
                yield _note(f"{said}: {prepared.describe()}")  # type: ignore[attr-defined]
