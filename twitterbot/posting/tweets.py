"""The tweets file: one post per line, checked against each network's length rule.

Format (UTF-8): blank lines and lines starting with ``#`` are skipped; ``\\n`` inside a line
becomes a line break; a line that must start with a hashtag is written ``\\#tag ...``. A line
that fits none of the networks it is for (too long, forbidden characters) is reported with its
number and never posted; a line too long for one network only is posted to the others::

    tweets = load_tweets(Path("tweets.txt"), networks=("x", "bluesky"))
    tweets.texts[0], tweets.linenos[0]            # what a pick needs: plain texts, in file order
    tweets.line(0).weighted_length, tweets.line(0).fit("bluesky")
    [problem.message for problem in tweets.problems]

Measuring needs twitter-text, whose import costs more than the rest of a run (it compiles about
200 regular expressions): given a `cache` (the history store), a line measured once is not
measured again, and a file whose lines are all known does not import twitter-text at all. Then
a scheduled run, which posts one line, checks only that every text is in the cache and makes the
`TweetLine` of the line it picks alone.
"""

from __future__ import annotations

import binascii
import importlib.util
import logging
import os
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Callable,
    Collection,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Protocol,
    Tuple,
)

from .. import twittertext
from ..errors import BotError, TweetFileError
from ..networks import Fit
from ..networks import measure as measure_on

if TYPE_CHECKING:
    from .images import LineImage

__all__ = [
    "MAX_WEIGHTED_LENGTH",
    "PRICES",
    "Prices",
    "TweetFile",
    "TweetLine",
    "LineProblem",
    "LengthCache",
    "load_tweets",
    "parse_tweets",
    "measure",
    "preview",
    "url_cost",
]

log = logging.getLogger(__name__)

MAX_WEIGHTED_LENGTH = 280
_ALLOWED_CONTROLS = {"\n", "\t"}
# Bump when `measure` changes what it returns for a text: cached lengths of other versions are dropped.
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class Prices:
    """What X charges per post, in US dollars."""

    post: float
    post_with_url: float  # any URL, bare domains included: "bot.py" is a link to X (.py is Paraguay)


# X's pay-per-use prices as of 2026 (new developer accounts since February 2026). X changes them
# now and then: the developer console shows the current ones. The one place the bot knows them.
PRICES = Prices(post=0.015, post_with_url=0.20)


@dataclass(frozen=True)
class TweetLine:
    """One postable line: its text (what is sent), where it came from, and what X will count."""

    lineno: int
    text: str
    weighted_length: int
    has_url: bool  # X charges more for posts with a URL (pay-per-use pricing)
    urls: Tuple[str, ...] = ()  # the URLs X finds in it, as written
    fits: Tuple[Fit, ...] = ()  # how each network it is for counts it; it fits at least one
    images: Tuple[LineImage, ...] = ()  # its pictures (posting/images.py), in the order written
    written: str = ""  # the line as written, pictures and all, when it has pictures

    @property
    def key(self) -> str:
        """What names this post in the history and the bag: its text, or with pictures the whole
        line, so the same words with other pictures are another post."""
        return self.written or self.text

    def fit(self, network: str) -> Optional[Fit]:
        return next((fit for fit in self.fits if fit.network == network), None)

    @property
    def networks(self) -> Tuple[str, ...]:
        """The networks this line fits, in POST_TO's order."""
        return tuple(fit.network for fit in self.fits if fit.fits)


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

    def line(self, index: int) -> TweetLine:
        """The line of `texts[index]`: its number, its length and where it fits."""
        return self.line_at(index)

    @property
    def lines(self) -> List[TweetLine]:
        """Every postable line, made one by one (`check` and the daemon's reload: a run needs one)."""
        return [self.line_at(index) for index in range(len(self.texts))]


@dataclass(frozen=True)
class Measure:
    """X's view of a text: weighted length, whether it contains a URL, and what makes it invalid."""

    weighted_length: int
    has_url: bool
    problem: Optional[str]  # None when X would accept the text; else what is wrong and the fix
    urls: Tuple[str, ...] = ()


class LengthCache(Protocol):
    """Where measured lengths are kept between runs (`HistoryStore`): for each exact text X
    accepts, its weighted length and its URLs, as measured by `version`."""

    def measured_texts(self, kind: str, version: str, longest: int) -> AbstractSet[str]: ...

    def measured_file(self, kind: str, version: str) -> Optional[str]: ...

    def remember_measured_file(self, kind: str, version: str, digest: str) -> None: ...

    def measured_lengths(
        self, kind: str, version: str, texts: Optional[Iterable[str]] = None
    ) -> Dict[str, Tuple[int, Tuple[str, ...]]]: ...

    def remember_lengths(self, kind: str, version: str, lengths: Mapping[str, Tuple[int, Tuple[str, ...]]]) -> None: ...


def measure(text: str) -> Measure:
    """Measure `text` the way X does (twitter-text v3: URLs 23, emoji 2, CJK 2, NFC first)."""
    twittertext.load()  # slow to import: only when a line is new
    from twitter_text import extract_urls, parse_tweet
    from twitter_text.has_invalid_characters import has_invalid_characters

    result = parse_tweet(unicodedata.normalize("NFC", text))
    urls = tuple(extract_urls(text))
    problem = None
    if result.weightedLength > MAX_WEIGHTED_LENGTH:
        problem = f"is too long: X counts {result.weightedLength} of {MAX_WEIGHTED_LENGTH}: shorten it"
    else:
        bad = next((ch for ch in text if _is_forbidden(ch) or has_invalid_characters(ch)), None)
        if bad is not None or not result.valid:
            problem = _forbidden_character(bad)
    return Measure(result.weightedLength, bool(urls), problem, urls)


def url_cost(line: TweetLine, prices: Prices = PRICES) -> Optional[str]:
    """Why a line costs more to post, naming its URLs and both prices; None for a line without one."""
    if not line.has_url:
        return None
    found = ", ".join(line.urls) or "a link"
    return (
        f"contains a URL ({found}): X charges about ${prices.post_with_url:.2f} to post it instead of "
        f"${prices.post:.3f} (X counts bare names like example.com or bot.py as links)"
    )


def load_tweets(path: Path, networks: Tuple[str, ...] = ("x",), cache: Optional[LengthCache] = None) -> TweetFile:
    """Read and check the tweets file for `networks` (POST_TO). Raises `TweetFileError` if it is
    unusable or has nothing to post."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TweetFileError(f"tweets file {path} does not exist: create it, or set TWEETS_FILE") from None
    except IsADirectoryError:
        raise TweetFileError(f"tweets file {path} is a folder, not a file: set TWEETS_FILE to the file") from None
    except OSError as exc:
        raise TweetFileError(f"cannot read tweets file {path}: {exc.strerror}: check its permissions") from None
    return parse_tweets(data, path, networks, cache)


def parse_tweets(
    data: bytes, path: Path, networks: Tuple[str, ...] = ("x",), cache: Optional[LengthCache] = None
) -> TweetFile:
    """Parse the bytes of a tweets file (`path` is only used in messages) for `networks`. With a
    `cache`, lines X measured before are taken from it, and the file's lengths are kept there when
    one was new."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = data[: exc.start].count(b"\n") + 1
        raise TweetFileError(
            f"{path} line {lineno} is not UTF-8 text: save the file as UTF-8 (most editors have an "
            "encoding option under 'Save as')"
        ) from None

    first_seen: Dict[str, int] = {}  # each text's first line, in file order
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
    pictures = _pictures(first_seen, path, networks)  # {} for a file without "![" (most)

    version = _measured_by() if cache is not None else ""
    bodies = [pictures[post][0] if post in pictures else post for post in first_seen]
    if first_seen and cache is not None and networks == ("x",) and _all_known(cache, version, bodies):
        # The usual scheduled run: X took every line before. Nothing to measure; a run posts one
        # line, so only that line's length is looked up, when it is picked.
        texts, linenos = list(first_seen), list(first_seen.values())
        return TweetFile(
            path,
            texts,
            linenos,
            problems,
            lambda index: _with_pictures(
                _cached_line(cache, version, bodies[index], linenos[index]), texts[index], pictures
            ),
        )

    with twittertext.borrowed():  # 6 MiB a run needs no more once it has measured its new lines
        lines, problems = _measure_all(first_seen, problems, networks, cache, version, pictures)
    if not lines:
        detail = "".join(f"; line {p.lineno} {p.message}" for p in problems[:3])
        raise TweetFileError(
            f"{path} has no lines to post{detail}; add one post per line "
            "(blank lines and lines starting with # are skipped)"
        )
    return TweetFile(path, [line.key for line in lines], [line.lineno for line in lines], problems, lines.__getitem__)


def _pictures(first_seen: Mapping[str, int], path: Path, networks: Tuple[str, ...]) -> Dict[str, Tuple[str, tuple]]:
    """Each line with pictures: its text without them and its pictures. Raises one
    `TweetFileError` naming every line whose pictures cannot be posted (a missing file, no alt
    text...): a picture is not left out silently."""
    if not any("![" in post for post in first_seen):
        return {}
    from .images import image_problems, split_images

    found: Dict[str, Tuple[str, tuple]] = {}
    wrong: List[str] = []
    for post, lineno in first_seen.items():
        text, images = split_images(post, path.parent)
        if images:
            found[post] = (text, images)
            wrong += [f"{path} line {lineno} {problem}" for problem in image_problems(text, images, networks)]
    if wrong:
        raise TweetFileError("\n".join(wrong))
    return found


def _with_pictures(line: TweetLine, post: str, pictures: Mapping[str, Tuple[str, tuple]]) -> TweetLine:
    """`line` (made from the text alone) with the pictures of `post`, its line as written."""
    if post not in pictures:
        return line
    return replace(line, images=pictures[post][1], written=post)


def _all_known(cache: LengthCache, version: str, texts: Collection[str]) -> bool:
    """Every one of `texts` has a length in the cache, measured by `version`, that X accepts.
    Checked text by text once after the file or the cache changed; then the file's digest says so."""
    if not version:
        return False
    digest = _digest(texts)
    try:
        if cache.measured_file("x", version) == digest:
            return True
        if not cache.measured_texts("x", version, MAX_WEIGHTED_LENGTH).issuperset(texts):
            return False
    except BotError as exc:  # only a cache: the run's own reads and writes report a history that fails
        log.debug("measuring every line: the cached lengths cannot be read (%s)", exc)
        return False
    try:
        cache.remember_measured_file("x", version, digest)
    except BotError as exc:
        log.debug("the next run checks the lines against the cache again (%s)", exc)
    return True


def _digest(texts: Collection[str]) -> str:
    """Names a file's texts, in order. Joined by NULs, which no text in the cache holds (X refuses
    control characters), so with the count it takes one list of texts to make one digest."""
    import hashlib  # here: a run that skips never reads the file (a post imports it anyway, for OAuth)

    return f"{len(texts)} {hashlib.sha256(chr(0).join(texts).encode()).hexdigest()}"


def _cached_line(cache: LengthCache, version: str, text: str, lineno: int) -> TweetLine:
    """The line of a text the cache knows (`_all_known`), from its cached length. Measured again
    if its row has gone since (another run kept another file's lengths), as any new line is."""
    cached = _cached_lengths(cache, version, (text,)).get(text)
    if cached is None or cached[0] > MAX_WEIGHTED_LENGTH:
        measured = measure(text)
    else:
        measured = Measure(cached[0], bool(cached[1]), None, cached[1])
    return TweetLine(
        lineno, text, measured.weighted_length, measured.has_url, measured.urls, (_fit("x", text, measured),)
    )


def _measure_all(
    first_seen: Mapping[str, int],
    problems: List[LineProblem],
    networks: Tuple[str, ...],
    cache: Optional[LengthCache],
    version: str,
    pictures: Mapping[str, Tuple[str, tuple]],
) -> Tuple[List[TweetLine], List[LineProblem]]:
    """Every text's line, measured for `networks` (X's lengths from the cache where it has them),
    and the problems, the texts that fit nowhere among them, in line order. New lengths are kept."""
    problems = list(problems)
    lines: List[TweetLine] = []
    known = _cached_lengths(cache, version)
    measured_anew = False
    for written, lineno in first_seen.items():
        post = pictures[written][0] if written in pictures else written
        cached = known.get(post) if "x" in networks else None
        if cached is not None and cached[0] <= MAX_WEIGHTED_LENGTH:  # measured before, and X accepted it
            measured = Measure(cached[0], bool(cached[1]), None, cached[1])
        elif "x" in networks:
            measured = measure(post)
            measured_anew = True
        else:
            measured = Measure(0, False, None)
        fits = tuple([_fit(network, post, measured) for network in networks])
        if not any([fit.fits for fit in fits]):
            problems.append(LineProblem(lineno, _fits_nowhere(fits, measured)))
            continue
        line = TweetLine(lineno, post, measured.weighted_length, measured.has_url, measured.urls, fits)
        lines.append(_with_pictures(line, written, pictures))
    problems.sort(key=lambda problem: problem.lineno)  # repeats were found first; each line has one problem at most
    if cache is not None and measured_anew and lines:
        _remember_lengths(cache, version, lines)
    return lines, problems


def _fit(network: str, text: str, measured: Measure) -> Fit:
    if network != "x":
        return measure_on(network, text)
    return Fit("x", measured.weighted_length, MAX_WEIGHTED_LENGTH, _X_UNIT, measured.problem)


_X_UNIT = "weighted characters"


def _fits_nowhere(fits: Tuple[Fit, ...], measured: Measure) -> str:
    """Why a line can go to none of its networks: X's own wording when X is the only one."""
    if len(fits) == 1 and fits[0].network == "x" and measured.problem:
        return measured.problem
    counts = "; ".join(
        fit.reason if fit.reason and fit.length <= fit.limit else f"{fit.network} counts {fit.length} of {fit.limit}"
        for fit in fits
    )
    return f"fits none of POST_TO's networks ({counts}): shorten it"


def _measured_by() -> str:
    """Names what measures lengths, so lengths measured by anything else are never used: this
    module's format, the limit, Python's Unicode tables and the installed twitter-text's files
    (names, sizes and times, so any upgrade or reinstall shows), without importing it."""
    spec = importlib.util.find_spec("twitter_text")
    if spec is None or not spec.submodule_search_locations:
        return ""  # not installed: measuring fails with the import error, as it would without a cache
    files = []
    for folder in spec.submodule_search_locations:
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            for name in sorted(names):
                info = os.stat(os.path.join(root, name))
                files.append(f"{os.path.relpath(os.path.join(root, name), folder)} {info.st_size} {info.st_mtime_ns}")
    fingerprint = binascii.crc32("\n".join(files).encode())
    return f"{_CACHE_FORMAT} {MAX_WEIGHTED_LENGTH} unicode {unicodedata.unidata_version} twitter-text {fingerprint:08x}"


def _cached_lengths(
    cache: Optional[LengthCache], version: str, texts: Optional[Iterable[str]] = None
) -> Dict[str, Tuple[int, Tuple[str, ...]]]:
    if cache is None or not version:
        return {}
    try:
        return cache.measured_lengths("x", version, texts)
    except BotError as exc:  # only a cache: the run's own reads and writes report a history that fails
        log.debug("measuring every line: the cached lengths cannot be read (%s)", exc)
        return {}


def _remember_lengths(cache: LengthCache, version: str, lines: List[TweetLine]) -> None:
    if not version:
        return
    try:
        accepted = [line for line in lines if line.fit("x") and line.fit("x").fits]  # type: ignore[union-attr]
        cache.remember_lengths("x", version, {line.text: (line.weighted_length, line.urls) for line in accepted})
    except BotError as exc:
        log.debug("the lengths measured cannot be kept for the next run (%s)", exc)


def _unescape(line: str) -> str:
    r"""Turn the file's escapes into text: ``\n`` is a line break, a leading ``\#`` a literal ``#``."""
    if "\\" not in line:
        return line  # nothing to unescape (most lines): `line` is already stripped
    if line.startswith("\\#"):
        line = line[1:]
    return "\n".join(part.strip(" \t") for part in line.split("\\n"))


def _is_forbidden(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS


def _forbidden_character(ch: Optional[str]) -> str:
    """The problem with a line holding a character X refuses, and the fix: shortening will not help."""
    if ch is None:
        return "contains a character X does not accept: retype the line"
    code = f"U+{ord(ch):04X}"
    if unicodedata.category(ch) == "Cc":
        what = f"the invisible control character {code}"
        caret = "^?" if ch == "\x7f" else f"^{chr(ord(ch) + 64)}" if ord(ch) < 32 else None
        where = f" (cat -A shows it as {caret})" if caret else ""
    else:
        what = f"the invisible character {code} ({unicodedata.name(ch, 'a non-character').lower()})"
        where = ""
    return f"contains {what}, which X does not accept: delete it{where}, or retype the line"


def preview(text: str, limit: int = 60) -> str:
    """A text quoted on one line and shortened, for log messages."""
    flat = text.replace("\n", " / ")
    return '"' + (flat if len(flat) <= limit else flat[: limit - 1] + "…") + '"'
