"""A grammar as the run's source of posts: each run draws a new expansion that the history does not
hold (within GRAMMAR_MEMORY) and that fits POST_TO's networks, and hands the run a file of one text.

An expansion too long for some network is drawn again, `FIT_TRIES` times at most; then the run
posts the one that fits the most networks and skips the others. A run's draws (and `check`'s
samples) share `DRAW_CHARACTERS` characters and `DRAW_STEPS` steps of work (each draw has its own
bounds too), so a grammar of long or deep posts cannot keep a run busy. Pictures written in an
expansion (``![alt](path)``) and options at its start (``{cw: ...; lang: ...; only: ...}``) are
read as in a line of a plain tweets file, and with LONG_LINES=thread an expansion too long for a
network goes there as a thread (`rules`, as `options.line_rules` makes them). What Tracery runs
through (a rule that is not there, written ``((name))``; an empty rule) is posted as Tracery
would, with a warning in the log naming the rule; `check` says it as a note::

    tweets = draw_post(Path("tweets.json"), networks, rng=rng, posted=store.texts_posted_since(since))
    tweets.line(0).text                        # what the run posts
    report = sample_grammar(Path("tweets.json"), networks, rng=random.Random(0))   # for `check`
"""

from __future__ import annotations

import logging
import random
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import AbstractSet, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from ..errors import TweetFileError
from ..networks import Network
from ..pictures.limits import MAX_IMAGES
from ..settings.secrets import masked_urls
from ..wording import plural
from .codes import Moment, codes_in, with_codes
from .grammar import MAX_DEPTH, MAX_TAGS, ORIGIN, Grammar, OutOfWork, TooDeep, Work, read_grammar
from .options import NO_OPTIONS, PLAIN_RULES, LineRules, OptionError, measured_text, split_options
from .read import Expansion
from .tags import TagError, Tagged, is_options, may_have_tags, read_tags
from .tweets import TweetFile, TweetLine

__all__ = [
    "DRAWS",
    "DRAW_CHARACTERS",
    "DRAW_STEPS",
    "FIT_TRIES",
    "SAMPLES",
    "GrammarReport",
    "draw_post",
    "read_expansion",
    "sample_grammar",
]

log = logging.getLogger(__name__)

DRAWS = 200  # expansions drawn at most in one run, new or not (each costs well under a millisecond)
FIT_TRIES = 5  # new expansions measured at most, looking for one that fits every network
SAMPLES = 50  # expansions `check` draws to see whether they fit
# What all of a run's draws may cost, counted as an expansion's own bounds are (MAX_CHARACTERS,
# MAX_STEPS): room for 20 posts of 100,000 characters, or 200 draws of 500 tags each, and at worst
# a second or two of a Pi's time.
DRAW_CHARACTERS = 10_000_000
DRAW_STEPS = 100_000


def draw_post(
    path: Path,
    networks: Sequence[Network],
    *,
    rng: random.Random,
    posted: AbstractSet[str],
    rules: LineRules = PLAIN_RULES,
    moment: Optional[datetime] = None,
    codes: Optional[Moment] = None,
) -> TweetFile:
    """A file of one new expansion of the grammar at `path` for this run. Raises `TweetFileError`
    (65) when the grammar is unusable, keeps repeating `posted` texts, or fits no network. An
    expansion whose time options (on, from, until, days, hours) do not hold at `moment` (naive,
    the bot's zone) is drawn again; when every draw is such, the file holds the last as a dated
    line, which the run does not post now. `at` has no meaning in a grammar: a data error. `codes`:
    the run's time and post number that Blue Bots Done Quick's codes are replaced with first."""
    grammar = read_grammar(path)
    if codes is not None:
        grammar = with_codes(grammar, codes)
    if ORIGIN not in grammar.rules:
        raise TweetFileError(f'{path} has no "{ORIGIN}" rule: add one (bot.py check shows every problem)')
    one_offs = _one_off_times(path, grammar)
    if one_offs:  # every run, not only one whose draw meets the rule
        raise TweetFileError(one_offs[0])
    best: Optional[TweetLine] = None
    best_text = ""
    repeats = too_deep = private = 0
    measured: Set[str] = set()  # new expansions that fit only some networks (a repeat is no new try)
    slips: Dict[str, Tuple[str, ...]] = {}  # what Tracery ran through to make each text
    work = Work(DRAW_CHARACTERS, DRAW_STEPS)
    drawn = 0
    untimely: Optional[TweetLine] = None  # an expansion whose time options do not hold now
    for _ in range(DRAWS):
        drawn += 1
        try:
            drawn_now = grammar.draw(rng, work=work)
        except TooDeep:
            too_deep += 1
            continue
        except OutOfWork:
            break
        text = drawn_now.text.strip()
        slips.setdefault(text, drawn_now.slips)
        if not text or text in posted:
            repeats += 1
            continue
        if text in measured:
            continue
        line = _measured(grammar, text, networks, rules)
        time = line.options.time
        if time is not None and time.at is not None:
            raise TweetFileError(
                f"{path} expansion {_shown(text)} has at: a grammar draws a new post each run, so a one-off time means "
                "nothing there: put the line in a tweets file, or use on, from, until, days or hours"
            )
        if time is not None and moment is not None and not time.holds(moment):
            untimely = line
            continue
        measured.add(text)
        private += not line.fits and line.tags is not None and line.tags.visibility in ("private", "direct")
        if line.networks and len(line.networks) == len(line.fits):  # every network its options leave in
            return _one(path, line, slips.get(text, ()))
        if line.networks and (best is None or len(line.networks) > len(best.networks)):
            best, best_text = line, text
        if len(measured) >= FIT_TRIES:
            break
    if best is not None:
        missed = ", ".join(fit.network for fit in best.fits if fit.network not in best.networks)
        log.info("%s: none of %d new expansions fit every network; this one skips %s", path.name, len(measured), missed)
        return _one(path, best, slips.get(best_text, ()))
    if untimely is not None and untimely.options.time is not None:
        return TweetFile(
            path, [untimely.key], [untimely.lineno], [], lambda index: untimely, {untimely.key: untimely.options.time}
        )
    spent = work.made > work.characters or work.taken > work.steps
    raise TweetFileError(
        _nothing_drawn(
            path, measured=len(measured), private=private, repeats=repeats, too_deep=too_deep, drawn=drawn, spent=spent
        )
    )


def _nothing_drawn(
    path: Path, *, measured: int, private: int = 0, repeats: int, too_deep: int, drawn: int, spent: bool
) -> str:
    """Why no expansion could be posted, and the fix, from what the draws met most."""
    if private and private == measured:
        return (
            f"{path}: {plural(private, 'new expansion')} of its grammar {'is' if private == 1 else 'are'} {{private}} "
            "or {direct}, which go only to Mastodon (X and Bluesky have only public posts), and POST_TO has no "
            "Mastodon: add mastodon to POST_TO, or take those tags out"
        )
    if measured:
        return (
            f"{path}: none of {measured} new expansions of its grammar fits any network in POST_TO: shorten its texts "
            "(or its pictures' alt texts: bot.py check names them)"
        )
    if spent and too_deep <= repeats:
        return (
            f"{path}: {drawn} expansions of its grammar read and made more than {DRAW_CHARACTERS:,} "
            f"characters or took {DRAW_STEPS:,} steps without a new post: shorten its texts, or give it "
            "more texts so it repeats less"
        )
    if too_deep > repeats:
        return (
            f"{path}: its grammar recursed past {MAX_DEPTH} rules inside each other (or used {MAX_TAGS:,}) in "
            f"{too_deep} of {drawn} draws: give each rule that uses itself more texts that do not"
        )
    return (
        f"{path}: its last {DRAWS} expansions were all posted before (within GRAMMAR_MEMORY) or empty: "
        "add rules or texts to the grammar, or shorten GRAMMAR_MEMORY"
    )


def _measured(grammar: Grammar, text: str, networks: Sequence[Network], rules: LineRules) -> TweetLine:
    """`text` as a line: its options, tags and pictures read (`read_expansion`), measured by each
    network its options leave in (with its warning, as it is sent there)."""
    lineno = grammar.lines.get(ORIGIN, 1)
    names = rules.names or tuple(network.name for network in networks)
    try:
        read = read_expansion(text, names, (grammar.path or Path(".")).parent)
    except (OptionError, TagError) as exc:
        raise TweetFileError(f"{grammar.path} expansion {_shown(text)} {exc}") from None
    options, body, images, tagged = read.options, read.text, read.images, read.tags
    if images:
        from .images import image_problems

        wrong = image_problems(body, images, networks, home=(grammar.path or Path(".")).parent)
        if wrong:
            raise TweetFileError("\n".join(f"{grammar.path} expansion {_shown(text)} {problem}" for problem in wrong))
    wanted = [
        network
        for network in networks
        if options.is_for(network.name) and not _kept_private(tagged, network) and not _alt_too_long(tagged, network)
    ]
    fits = tuple(network.measure(measured_text(body, options, network)) for network in wanted)
    line = TweetLine(lineno, body, fits, threads=rules.threads)
    if tagged:
        line = replace(line, tags=tagged)
    if not (options or images or tagged):
        return line
    # What the history knows it by: as written, but a fetched picture's token is for the fetch alone.
    return replace(line, options=options, images=images, written=masked_urls(text) if tagged else text)


def _kept_private(tagged: Optional[Tagged], network: Network) -> bool:
    """Whether a {private} or {direct} expansion (CBTS's) stays off `network`, whose posts are all
    public (X, Bluesky): it goes only where it can be as private as it asks (Mastodon)."""
    from ..delivery.post import PRIVATE_VISIBILITIES

    return tagged is not None and tagged.visibility in PRIVATE_VISIBILITIES and "visibility" not in network.post_options


def _alt_too_long(tagged: Optional[Tagged], network: Network) -> bool:
    """Whether a picture the tags make has alt text longer than `network` takes: the expansion is
    not for it (another is drawn), where sending it would stop the run (a data error)."""
    if tagged is None or not tagged.pictures:
        return False
    limit = network.image_limits().max_alt
    return any(len(picture.alt) > limit for picture in tagged.pictures)


def read_expansion(text: str, names: Sequence[str], folder: Path) -> Expansion:
    """`text` read as a post is, the one reader of a grammar's expansions and of reply rules'
    responses: the options at its start (``{cw: ...; lang: ...; only: ...}``, `names` the
    networks they may name), the services' tags (posting/tags.py; ``{cut}`` and ``{lang}`` fill
    in what the options leave unsaid) and its pictures (read beside `folder`). Raises
    `OptionError` or `TagError` (a message starting "has ...", for the caller to name the source
    before it) or `TweetFileError` for a picture or text that cannot be read."""
    options, body, images = NO_OPTIONS, text, ()
    if text.startswith("{") and is_options(text):
        options, body = split_options(text, tuple(names))
    tagged = None
    if may_have_tags(body) or body.startswith("\\{"):
        tagged = read_tags(body)
        body = tagged.text
        options = replace(
            options, warning=options.warning or tagged.warning, language=options.language or tagged.language
        )
    if not body and not (tagged and tagged.pictures):
        raise TagError("has options or tags but no text: write the post after them")
    if "![" in body:
        from .images import split_images

        body, images = split_images(body, folder)
    if tagged and len(images) + len(tagged.pictures) > MAX_IMAGES:
        raise TagError(
            f"has {len(images) + len(tagged.pictures)} pictures; a post takes {MAX_IMAGES}: draw or fetch fewer "
            "in one expansion"
        )
    return Expansion(options, body, images, tagged)


def _shown(text: str, most: int = 200) -> str:
    """An expansion in a message: quoted, and cut short (an SVG can be thousands of characters)."""
    return repr(text) if len(text) <= most else repr(text[:most]) + f"... ({len(text):,} characters)"


def _one(path: Path, line: TweetLine, slips: Sequence[str] = ()) -> TweetFile:
    """The file of the one expansion drawn, warning of what Tracery ran through to make it (the
    post shows it as Tracery would, as the service posted it)."""
    for slip in slips:
        log.warning("%s: %s (bot.py check names each such rule)", path.name, slip)
    return TweetFile(path, [line.key], [line.lineno], [], lambda index: line)


@dataclass
class GrammarReport:
    """What `check` says of a grammar: how many rules, what is wrong (each a sentence naming its
    line), and how the sampled expansions fit each network."""

    rules: int
    problems: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)  # what Tracery runs through: what the post shows
    notes: List[str] = field(default_factory=list)
    distinct: int = 0  # different texts among the samples
    tagged: List[TweetLine] = field(default_factory=list)  # the samples with the services' tags
    codes: List[str] = field(default_factory=list)  # BBDQ's codes its texts use


def sample_grammar(
    path: Path,
    networks: Sequence[Network],
    *,
    rng: random.Random,
    samples: int = SAMPLES,
    rules: LineRules = PLAIN_RULES,
    codes: Optional[Moment] = None,
) -> GrammarReport:
    """Read the grammar, name its problems, and draw `samples` expansions to see which fit: a
    grammar whose expansions never fit any network is a problem; a network some do not fit, a note.
    `codes`: what Blue Bots Done Quick's codes are replaced with first (as a run would now). The
    samples with tags are kept (`tagged`): `check` says which tags they use and draws their SVGs."""
    grammar = read_grammar(path)
    report = GrammarReport(len(grammar.rules))
    written = grammar
    if codes is not None:
        report.codes = codes_in(grammar)
        try:
            grammar = with_codes(grammar, codes)
        except TweetFileError as exc:
            report.problems.append(str(exc))
            return report
    report.problems, report.warnings = _problems(path, grammar)
    if not report.problems and codes is not None and report.codes:
        report.problems, later = _problems_at_other_times(path, written, codes, grammar)
        report.warnings += later
    if report.problems:
        return report  # an expansion would stop at the first of them
    texts: List[str] = []
    work = Work(DRAW_CHARACTERS, DRAW_STEPS)
    too_deep = 0
    for _ in range(samples):
        try:
            texts.append(grammar.expand(rng, work=work).strip())
        except TooDeep:
            too_deep += 1
        except OutOfWork:
            report.notes.append(
                f"{path}: {len(texts) + too_deep} of {samples} expansions sampled: together they read and made "
                f"more than {DRAW_CHARACTERS:,} characters or took {DRAW_STEPS:,} steps, as a run's draws may"
            )
            break
        except TweetFileError as exc:
            report.problems.append(str(exc))
            return report
    deep = f"recursed past {MAX_DEPTH} rules inside each other or used {MAX_TAGS:,}"
    if too_deep and not texts:
        report.problems.append(
            f"{path}: all {too_deep} sampled expansions {deep}: give each rule that uses itself more texts that do not"
        )
        return report
    if too_deep:
        report.notes.append(f"{path}: {too_deep} of {samples} sampled expansions {deep} (a run draws again)")
    lines: List[TweetLine] = []
    for text in sorted(set(texts)):
        if not text:
            continue
        try:
            lines.append(_measured(grammar, text, networks, rules))
        except TweetFileError as exc:
            report.problems.append(str(exc))  # the first is enough: each sample would say it again
            return report
    report.distinct = len(lines)
    report.tagged = [line for line in lines if line.tags]
    if not lines or not any(line.networks for line in lines):
        report.problems.append(
            f"{path}: none of {len(texts) + too_deep} sampled expansions fits any network in POST_TO: shorten its texts"
        )
        return report
    report.notes += _fit_notes(path, lines)
    return report


def _problems(path: Path, grammar: Grammar) -> Tuple[List[str], List[str]]:
    """What no expansion runs through (a data error), and what Tracery runs through (a warning
    saying what the post shows), each naming the file and line."""
    said: Dict[bool, List[str]] = {False: [], True: []}
    for problem in grammar.problems():
        where = f"{path} line {problem.lineno}" if problem.lineno else str(path)
        said[problem.tolerated].append(f"{where} {problem.message}")
    return said[False] + _one_off_times(path, grammar), said[True]


# An `at` option in a rule's text: `{at: ...}` or `{lang: en; at: ...}` (not `format:`, not `{svg ...}`'s `at`).
_AT_OPTION = re.compile(r"\{[^{}]*?(?<![\w-])at\s*:")


def _one_off_times(path: Path, grammar: Grammar) -> List[str]:
    """The rules whose texts hold an `at` option: any expansion may start with one, and a grammar
    has no one-offs (each run draws a new post). Found in every rule, not in the samples only, so
    `check` refuses what would stop some runs (exit 65) and not others."""
    return [
        f'{path} line {grammar.lines.get(name, 0)} rule "{name}" has at: a grammar draws a new post each run, so a '
        "one-off time means nothing there: put the line in a tweets file, or use on, from, until, days or hours"
        for name, texts in grammar.rules.items()
        if any(_AT_OPTION.search(text) for text in texts)
    ]


def _problems_at_other_times(
    path: Path, written: Grammar, now: Moment, checked: Grammar
) -> Tuple[List[str], List[str]]:
    """The problems (and warnings) Blue Bots Done Quick's codes make at another hour of the day,
    day of the week, month or post number than `now` (``#greet{hour}#`` names 24 rules, one of
    them now), each with when it would come; each different grammar the codes make is walked once."""
    seen = {_rules_key(checked)}
    found: List[str] = []
    warned: List[str] = []
    for moment, when in _other_moments(now):
        try:
            grammar = with_codes(written, moment)
        except TweetFileError as exc:
            found.append(f"{exc} ({when})")
            break
        key = _rules_key(grammar)
        if key in seen:
            continue
        seen.add(key)
        said, warnings = _problems(path, grammar)
        found += [f"{problem} ({when}: the codes make other texts then)" for problem in said if problem not in found]
        if len(warned) < 3:
            warned += [f"{warning} ({when}: the codes make other texts then)" for warning in warnings]
        if len(found) >= 3:
            break
    return found, warned[:3]


def _other_moments(now: Moment) -> Iterator[Tuple[Moment, str]]:
    """Each hour of today, the week's other days, the year's other months and the next posts'
    numbers, as moments for the codes, each with how to say it."""
    from datetime import timedelta

    at = now.at
    for hour in range(24):
        yield Moment(at.replace(hour=hour, minute=0), now.count), f"at {hour:02d}:00"
    for days in range(1, 7):
        day = at + timedelta(days=days)
        yield Moment(day, now.count), f"on a {day:%A}"
    for month in range(1, 13):
        yield Moment(at.replace(month=month, day=1), now.count), f"in {at.replace(month=month, day=1):%B}"
    first = now.count()
    for number in range(first + 1, first + 12):
        yield Moment(at, lambda number=number: number), f"at post number {number}"


def _rules_key(grammar: Grammar) -> int:
    return hash(tuple(sorted(grammar.rules.items())))


def _fit_notes(path: Path, lines: Sequence[TweetLine]) -> List[str]:
    """For each network, how many sampled expansions are too long for it, and how many go there
    as threads (LONG_LINES=thread)."""
    too_long: Dict[str, int] = {}
    threaded: Dict[str, int] = {}
    for line in lines:
        for fit in line.fits:
            too_long[fit.network] = too_long.get(fit.network, 0) + (not fit.fits and not line.threaded(fit))
            threaded[fit.network] = threaded.get(fit.network, 0) + line.threaded(fit)
    notes = [
        f"{path}: {count} of {len(lines)} sampled expansions are too long for {network} "
        "(a run draws again, then posts to the other networks only)"
        for network, count in too_long.items()
        if count
    ]
    notes += [
        f"{path}: {count} of {len(lines)} sampled expansions go to {network} as threads (LONG_LINES=thread)"
        for network, count in threaded.items()
        if count
    ]
    return notes
