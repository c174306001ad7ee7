"""The tweets file: one post per line, checked against each network's length rule.

Format (UTF-8): blank lines and lines starting with ``#`` are skipped; ``\\n`` inside a line
becomes a line break; a line that must start with a hashtag is written ``\\#tag ...``. A line
that fits none of the networks it is for (too long, forbidden characters) is reported with its
number and never posted; a line too long for one network only is posted to the others::

    tweets = load_tweets(Path("tweets.txt"), config["POST_TO"])
    tweets.texts[0], tweets.linenos[0]            # what a pick needs: plain texts, in file order
    tweets.line(0).fits, tweets.line(0).fit(config["POST_TO"][0].name)
    [problem.message for problem in tweets.problems]

Each network measures with its own rule (`networks.Network.measure_lines`). X's needs
twitter-text, whose import costs more than the rest of a run: given a `cache` (the history
store), a line measured once is not measured again, and a file whose lines are all known does
not import twitter-text at all. Then a scheduled run, which posts one line, checks only that
every text is in the cache and makes the `TweetLine` of the line it picks alone.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import TweetFileError
from ..files import NotAFile, read_regular, read_setting_file
from ..networks import Fit, LengthCache, Network
from .options import NO_OPTIONS, PLAIN_RULES, LineOptions, LineRules, OptionError, measured_text, split_options
from .when import LineTime

if TYPE_CHECKING:
    from ..delivery.post import Post
    from ..pictures.prepare import Attachment
    from .images import LineImage
    from .tags import Tagged

__all__ = [
    "TweetFile",
    "TweetLine",
    "LineProblem",
    "load_tweets",
    "parse_tweets",
    "scan_times",
    "is_grammar",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TweetLine:
    """One postable line: its text (what is sent), where it came from, and how each network it is
    for counts it (`fits`; it fits at least one)."""

    lineno: int
    text: str
    fits: Tuple[Fit, ...] = ()
    images: Tuple[LineImage, ...] = ()  # its pictures (posting/images.py), in the order written
    written: str = ""  # the line as written, pictures and all, when it has pictures or options
    options: LineOptions = NO_OPTIONS  # its {cw: ...; lang: ...; only: ...} (posting/options.py)
    threads: bool = False  # LONG_LINES=thread: too long for a network, it goes there as a thread
    # A grammar's expansion: what its services' tags asked for beyond its options (posting/tags.py),
    # and the pictures they made for the run that posts it (posting/tagpictures.py).
    tags: Optional[Tagged] = None
    drawn: Tuple[Attachment, ...] = ()

    @property
    def attachments(self) -> Tuple[Attachment, ...]:
        """Every picture the post carries: the line's own files, then those its tags made."""
        return tuple(image.attachment for image in self.images) + self.drawn

    @property
    def key(self) -> str:
        """What names this post in the history and the bag: its text, or with pictures the whole
        line, so the same words with other pictures are another post."""
        return self.written or self.text

    @property
    def weighted_length(self) -> int:
        """Its length where the count is weighted (X's), 0 when no network weighs it (for --json)."""
        return next((fit.length for fit in self.fits if fit.unit == "weighted characters"), 0)

    @property
    def urls(self) -> Tuple[str, ...]:
        """The links a network found in it, as written."""
        return next((fit.urls for fit in self.fits if fit.urls), ())

    @property
    def has_url(self) -> bool:
        return bool(self.urls)

    def fit(self, network: str) -> Optional[Fit]:
        return next((fit for fit in self.fits if fit.network == network), None)

    @property
    def networks(self) -> Tuple[str, ...]:
        """The networks this line goes to, in POST_TO's order: those it fits, and with threads on,
        those it is only too long for (`fits` holds only the networks its options leave in)."""
        return tuple(fit.network for fit in self.fits if fit.fits or self.threaded(fit))

    def threaded(self, fit: Fit) -> bool:
        """Whether the line goes to `fit`'s network as a thread: with threads on, too long there."""
        return self.threads and fit.length > fit.limit

    def post(self, file_name: str) -> Post:
        """The line as a `Post` to deliver (`Expansion.post`, as every source makes one): recorded
        by its key (what the bag knows it by), for the networks its only and skip leave in (those
        it has a measure for), in its own language if it names one (else the delivery's,
        POST_LANGUAGE), with what its tags ask."""
        from .read import Expansion  # only a run that posts, or plans a post

        read = Expansion(self.options, self.text, self.images, self.tags)
        where = f"{file_name} line {self.lineno}"
        return read.post(key=self.key, where=where, pictures=self.attachments, fits=self.fits, threads=self.threads)


@dataclass(frozen=True)
class LineProblem:
    """A line that will not be posted, and why, worded for the user."""

    lineno: int
    message: str


@dataclass(frozen=True)
class TweetFile:
    """The parsed file: the postable texts in file order (each once) with their line numbers,
    the lines set aside, and each text's `TweetLine` on demand (`line`). Every text fits at least
    one network: a text that fits none is among the problems, never among the texts. A line with
    pictures is among the texts as written (`TweetLine.key`): its text alone is what is sent."""

    path: Path
    texts: List[str]
    linenos: List[int]  # texts[i] is the file's line linenos[i]
    problems: List[LineProblem]
    # Makes the TweetLine of texts[i]: a run that posts one line looks up (or measures) that line only.
    line_at: Callable[[int], TweetLine] = field(repr=False, compare=False)
    # The lines with time options (posting/when.py), by text: dated lines and one-offs, which are
    # not in the plain round (posting/calendar.py says when each may go).
    times: Mapping[str, LineTime] = field(default_factory=dict)

    @property
    def plain(self) -> List[str]:
        """The texts of the round: every line without time options."""
        times = self.times
        return [text for text in self.texts if text not in times] if times else self.texts

    def line(self, index: int) -> TweetLine:
        """The line of `texts[index]`: its number, its length and where it fits."""
        return self.line_at(index)

    @property
    def lines(self) -> List[TweetLine]:
        """Every postable line, made one by one (`check` and the daemon's reload: a run needs one)."""
        return [self.line_at(index) for index in range(len(self.texts))]


def load_tweets(
    path: Path, networks: Sequence[Network], cache: Optional[LengthCache] = None, rules: LineRules = PLAIN_RULES
) -> TweetFile:
    """Read and check the tweets file for `networks` (POST_TO's, from the registry) by `rules`
    (`options.LineRules`). Raises `TweetFileError` if it is unusable or has nothing to post."""
    data = read_setting_file(
        path, what="tweets file", setting="TWEETS_FILE", otherwise="set TWEETS_FILE", error=TweetFileError
    )
    return parse_tweets(data, path, networks, cache, rules)


def parse_tweets(
    data: bytes,
    path: Path,
    networks: Sequence[Network],
    cache: Optional[LengthCache] = None,
    rules: LineRules = PLAIN_RULES,
) -> TweetFile:
    """Parse the bytes of a tweets file (`path` is only used in messages) for `networks`. With a
    `cache`, a network whose rule is slow (X's) takes the lines it measured before from it, and
    keeps the file's lengths there when one was new. A line's options are read by `rules`."""
    first_seen, problems = _posts_of(data, path)

    by_name = {network.name: network for network in networks}
    names = tuple(by_name)
    options = _line_options(first_seen, path, rules.names or names)  # {} for a file without options (most)
    pictures = _pictures(first_seen, path, networks, options)  # {} for a file without "![" (most)

    def body(post: str) -> str:
        """What is posted of a line: its text without its options and pictures."""
        return pictures[post][0] if post in pictures else options[post][1] if post in options else post

    def measured(name: str, post: str) -> str:
        return measured_text(body(post), options[post][0], by_name[name]) if post in options else body(post)

    def made(post: str, lineno: int, fits: Tuple[Fit, ...]) -> TweetLine:
        line = TweetLine(lineno, body(post), fits, threads=rules.threads)
        if post in options:
            line = replace(line, options=options[post][0], written=post)
        return _with_pictures(line, post, pictures)

    # What each network measures: a line's text without its options and pictures, with its warning.
    bodies = {name: {measured(name, post): lineno for post, lineno in first_seen.items()} for name in names}
    if first_seen and cache is not None and len(names) == 1 and not options:
        # The usual scheduled run: the network took every line before. Nothing to measure; a run
        # posts one line, so only that line's length is looked up, when it is picked.
        known = by_name[names[0]].known_lines(bodies[names[0]], cache)
        if known is not None:
            texts, linenos = list(first_seen), list(first_seen.values())
            return TweetFile(
                path,
                texts,
                linenos,
                problems,
                lambda index: made(texts[index], linenos[index], (known(body(texts[index])),)),
            )

    with contextlib.ExitStack() as measuring:
        for name in names:
            measuring.enter_context(by_name[name].lines_measured())  # type: ignore[arg-type]
        fits = {name: by_name[name].measure_lines(bodies[name], cache) for name in names}
    lines: List[TweetLine] = []
    problems = list(problems)
    for post, lineno in first_seen.items():
        wanted = options[post][0] if post in options else NO_OPTIONS
        line = made(post, lineno, tuple(fits[name][measured(name, post)] for name in names if wanted.is_for(name)))
        if line.networks:
            lines.append(line)
        elif not line.fits:
            problems.append(
                LineProblem(lineno, "is for none of POST_TO's networks (its only or skip): it is not posted")
            )
        else:
            problems.append(LineProblem(lineno, _fits_nowhere(line.fits)))
    problems.sort(key=lambda problem: problem.lineno)  # repeats were found first; each line has one problem at most
    if not lines:
        detail = "".join(f"; line {p.lineno} {p.message}" for p in problems[:3])
        raise TweetFileError(
            f"{path} has no lines to post{detail}; add one post per line "
            "(blank lines and lines starting with # are skipped)"
        )
    times = {line.key: line.options.time for line in lines if line.options.time is not None}
    return TweetFile(
        path, [line.key for line in lines], [line.lineno for line in lines], problems, lines.__getitem__, times
    )


def scan_times(path: Path, names: Sequence[str]) -> Dict[str, LineTime]:
    """The time options of the lines of the tweets file at `path`, by text, read without measuring
    a line: what a run the roll skips reads to learn whether a one-off line's time has come. A file
    that cannot be read, or a line whose options cannot, gives nothing here: a run that reads the
    whole file reports it."""
    try:
        data = read_regular(path)
    except (OSError, NotAFile):
        return {}
    if b"{" not in data:
        return {}
    try:
        first_seen, _ = _posts_of(data, path)
    except TweetFileError:
        return {}
    found: Dict[str, LineTime] = {}
    for post in first_seen:
        if post[0] == "{":
            try:
                options, _text = split_options(post, names)
            except OptionError:
                continue
            if options.time is not None:
                found[post] = options.time
    return found


def _posts_of(data: bytes, path: Path) -> Tuple[Dict[str, int], List[LineProblem]]:
    """Each post of the file (blank lines and # comments skipped, escapes read) with its first
    line, in file order, and a problem for each line that repeats an earlier one."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = data[: exc.start].count(b"\n") + 1
        raise TweetFileError(
            f"{path} line {lineno} is not UTF-8 text: save the file as UTF-8 (most editors have an "
            "encoding option under 'Save as')"
        ) from None
    first_seen: Dict[str, int] = {}
    problems: List[LineProblem] = []
    for lineno, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        post = raw.strip()
        if not post or post[0] == "#":
            continue
        if "\\" in post:
            post = _unescape(post)
            if not post.strip():
                continue
        first = first_seen.setdefault(post, lineno)
        if first != lineno:
            problems.append(LineProblem(lineno, f"repeats line {first}; it is posted only once per round"))
    return first_seen, problems


def _line_options(
    first_seen: Mapping[str, int], path: Path, names: Sequence[str]
) -> Dict[str, Tuple[LineOptions, str]]:
    """Each line that starts with options (or an escaped brace): its options and the text after
    them. Raises one `TweetFileError` naming every line whose options cannot be read."""
    found: Dict[str, Tuple[LineOptions, str]] = {}
    wrong: List[str] = []
    for post, lineno in first_seen.items():
        if post[0] == "{" or post.startswith("\\{"):
            try:
                found[post] = split_options(post, names)
            except OptionError as exc:
                wrong.append(f"{path} line {lineno} {exc}")
            else:
                if not found[post][1]:
                    wrong.append(f"{path} line {lineno} has options but no text: write the post after the }}")
    if wrong:
        raise TweetFileError("\n".join(wrong))
    return found


def _pictures(
    first_seen: Mapping[str, int],
    path: Path,
    networks: Sequence[Network],
    options: Mapping[str, Tuple[LineOptions, str]],
) -> Dict[str, Tuple[str, tuple]]:
    """Each line with pictures: its text without them (and without its `options`) and its
    pictures. Raises one `TweetFileError` naming every line whose pictures cannot be posted (a
    missing file, no alt text...): a picture is not left out silently."""
    if not any("![" in post for post in first_seen):
        return {}
    from .images import image_problems, split_images

    found: Dict[str, Tuple[str, tuple]] = {}
    wrong: List[str] = []
    for post, lineno in first_seen.items():
        text, images = split_images(options[post][1] if post in options else post, path.parent)
        if images:
            found[post] = (text, images)
            wrong += [
                f"{path} line {lineno} {problem}"
                for problem in image_problems(text, images, networks, home=path.parent)
            ]
    if wrong:
        raise TweetFileError("\n".join(wrong))
    return found


def _with_pictures(line: TweetLine, post: str, pictures: Mapping[str, Tuple[str, tuple]]) -> TweetLine:
    """`line` (made from the text alone) with the pictures of `post`, its line as written."""
    if post not in pictures:
        return line
    return replace(line, images=pictures[post][1], written=post)


def _fits_nowhere(fits: Tuple[Fit, ...]) -> str:
    """Why a line can go to none of its networks: the network's own words when it is the only one."""
    if len(fits) == 1 and fits[0].problem:
        return fits[0].problem
    counts = "; ".join(
        fit.reason if fit.reason and fit.length <= fit.limit else f"{fit.network} counts {fit.length} of {fit.limit}"
        for fit in fits
    )
    return f"fits none of POST_TO's networks ({counts}): shorten it"


def _unescape(line: str) -> str:
    r"""Turn the file's escapes into text: ``\n`` is a line break, a leading ``\#`` a literal ``#``."""
    if "\\" not in line:
        return line  # nothing to unescape (most lines): `line` is already stripped
    if line.startswith("\\#"):
        line = line[1:]
    return "\n".join(part.strip(" \t") for part in line.split("\\n"))


def is_grammar(path: Path) -> bool:
    """A tweets file ending in .json is a Tracery grammar (posting/generated.py draws its posts),
    not lines: told by its name, so a plain file's run imports no grammar code."""
    return path.suffix.lower() == ".json"
