"""X (Twitter): its settings, its length rule and its prices, as data on `X`, whose poster
(`poster.py`) posts through the X API v2 (`api.py`: how requests reach X; `errors.py`: X's error
replies; `media.py`: pictures).

X counts a text with twitter-text (URLs 23, emoji and CJK 2, NFC first), whose import costs more
than the rest of a run: given a cache (the history store), a line measured once is not measured
again, and a file whose lines are all known does not import twitter-text at all. The poster, and
with it tweepy and requests, is imported only when a poster is made (a reader, `reader.py`, reads
mentions without tweepy)::

    measure("Hello https://example.com").length       # 29: a link counts 23
    poster = NETWORK.poster(config)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Dict, Iterable, Optional, Tuple

from ...errors import ConfigError
from ...settings.keys import API_RETRIES, API_TIMEOUT
from ...settings.parsers import SECRET, URL, show
from ...settings.table import Setting, SettingType, by_name
from .. import Fit, LengthCache, Network, twittertext
from .api import DEFAULT_BASE_URL, Credentials, status_url

if TYPE_CHECKING:
    from ...pictures.limits import ImageLimits
    from ...settings.loading import Config
    from ..mentions import Mention
    from .poster import XPoster
    from .reader import XReader

__all__ = [
    "MAX_WEIGHTED_LENGTH",
    "NETWORK",
    "PRICES",
    "TWITTER_ACCESS_TOKEN",
    "TWITTER_ACCESS_TOKEN_SECRET",
    "TWITTER_API_KEY",
    "TWITTER_API_SECRET",
    "X_API_BASE_URL",
    "X_MONTHLY_BUDGET",
    "Prices",
    "measure",
    "url_cost",
]

MAX_WEIGHTED_LENGTH = twittertext.MAX_WEIGHTED_LENGTH
UNIT = "weighted characters"
_KEY_SOURCE = "the X developer portal"
_CREDENTIAL_NAMES = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")


class Prices:
    """What X charges per post, per reply to a mention and per read of the account's own data
    (its mentions), in US dollars. (A plain class, as `Credentials`: the registry imports this
    module on every run, and a dataclass costs a run about 1 ms to make.)"""

    def __init__(self, post: float, post_with_url: float, reply: float, read: float) -> None:
        self.post = post
        self.post_with_url = post_with_url  # any URL, bare domains included: "bot.py" is a link (.py is Paraguay)
        self.reply = reply  # a reply where the account was mentioned (without a URL)
        self.read = read  # one read of the account's own data: a page of its mentions


# X's pay-per-use prices as of 2026 (new developer accounts since February 2026). X changes them
# now and then: the developer console and X's pricing page show the current ones. The one place
# the bot knows them.
PRICES = Prices(post=0.015, post_with_url=0.20, reply=0.01, read=0.001)


def url_cost(line: object, prices: Prices = PRICES) -> Optional[str]:
    """Why a text costs more to post, naming its URLs and both prices; None for one without a URL.
    `line` is anything with the `urls` X found in it (a `Fit`, a tweets file's line)."""
    urls: Tuple[str, ...] = getattr(line, "urls", ())
    if not urls:
        return None
    return (
        f"contains a URL ({', '.join(urls)}): X charges about ${prices.post_with_url:.2f} to post it instead of "
        f"${prices.post:.3f} (X counts bare names like example.com or bot.py as links)"
    )


def _parse_dollars(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> Optional[float]:
    """An amount of US dollars ("5", "12.50", "$20"); empty: no budget."""
    value = text.strip().removeprefix("$").strip()
    if not value:
        return None
    try:
        amount = float(value)
    except ValueError:
        amount = -1.0
    if not (0 <= amount < 1e9):  # also refuses nan and inf
        raise ConfigError(
            f"{name}={show(text.strip(), 20)} from {where} is not an amount of dollars: write one like 5 or 12.50, "
            "or leave it empty for no budget"
        )
    return amount


def measure(text: str) -> Fit:
    """Measure `text` the way X does (twitter-text v3: URLs 23, emoji 2, CJK 2, NFC first). An
    empty text fits: twitter-text calls it no tweet, but X takes pictures alone (a grammar's
    picture-only post; a text without pictures is never empty)."""
    if not text:
        return _fit(0, ())
    length, urls, problem = twittertext.weigh(text)
    return _fit(length, urls, problem)


def _fit(length: int, urls: Tuple[str, ...], problem: Optional[str] = None) -> Fit:
    return Fit("x", length, MAX_WEIGHTED_LENGTH, UNIT, problem, urls, url_cost(Fit("x", 0, 0, urls=urls)), problem)


DOLLARS = SettingType("dollars", _parse_dollars)


TWITTER_API_KEY = Setting(
    "TWITTER_API_KEY", "", SECRET, "API Key (consumer key) from the X developer portal", True, _KEY_SOURCE
)
TWITTER_API_SECRET = Setting("TWITTER_API_SECRET", "", SECRET, "API Key Secret (consumer secret)", True, _KEY_SOURCE)
TWITTER_ACCESS_TOKEN = Setting(
    "TWITTER_ACCESS_TOKEN", "", SECRET, "Access Token (with Read and write permission)", True, _KEY_SOURCE
)
TWITTER_ACCESS_TOKEN_SECRET = Setting(
    "TWITTER_ACCESS_TOKEN_SECRET", "", SECRET, "Access Token Secret", True, _KEY_SOURCE
)
X_API_BASE_URL = Setting("X_API_BASE_URL", DEFAULT_BASE_URL, URL, "where requests go (tests, proxies)")
X_MONTHLY_BUDGET = Setting(
    "X_MONTHLY_BUDGET",
    "",
    DOLLARS,
    "at most this many US dollars of X posts in a calendar month (UTC), e.g. 5; empty: no cap",
)


class X(Network):
    """X: four OAuth 1.0a keys, twitter-text's weighted 280, a price per post."""

    name = "x"
    label = "X"
    settings = by_name(
        TWITTER_API_KEY,
        TWITTER_API_SECRET,
        TWITTER_ACCESS_TOKEN,
        TWITTER_ACCESS_TOKEN_SECRET,
        X_API_BASE_URL,
        X_MONTHLY_BUDGET,
    )
    budget = "X_MONTHLY_BUDGET"
    required = _CREDENTIAL_NAMES
    guide = "Getting X keys"
    site = "x.com"
    former_names = ("twitter",)

    def measure(self, text: str) -> Fit:
        return measure(text)

    def price(self, fit: Fit) -> Optional[float]:
        """X's price of a post: more when it holds a URL (`PRICES`)."""
        return PRICES.post_with_url if fit.urls else PRICES.post

    def reply_price(self, fit: Fit) -> Optional[float]:
        """X's price of a reply where the account was mentioned: less than a post, unless it holds
        a URL (X prices a post with a URL alike, reply or not)."""
        return PRICES.post_with_url if fit.urls else PRICES.reply

    read_price = PRICES.read  # each page of mentions (GET /2/users/:id/mentions), and GET /2/users/me
    listens = True  # XPoster.mentions

    def addressed(self, text: str, mention: Mention) -> str:
        """A reply starts with the author's handle (``@ada hi``), as Cheap Bots Done Quick's did,
        unless the text names them already: X refuses a second post of the same text, so without
        it the second person asking a fixed-response rule would get no answer."""
        from ..mentions import named_first

        return named_first(text, mention.author.handle)

    def image_limits(self) -> ImageLimits:
        """What a picture may be on X (`media.image_limits`)."""
        from .media import image_limits  # with the upload code: the registry imports this package on every run

        return image_limits()

    def describe(self, fit: Fit) -> str:
        return f"{fit.length} of {fit.limit} as X counts"

    def post_url(self, post_id: Optional[str]) -> Optional[str]:
        return status_url(post_id)

    def account_url(self, config: Config) -> Optional[str]:
        # An access token starts with the account's numeric id: public, and enough for a link.
        user_id = str(config[TWITTER_ACCESS_TOKEN] or "").split("-", 1)[0]
        return f"https://x.com/intent/user?user_id={user_id}" if user_id.isdigit() else "https://x.com/home"

    def lines_measured(self) -> object:
        return twittertext.borrowed()  # 6 MiB a run needs no more once it has measured its new lines

    def known_lines(self, texts: Collection[str], cache: Optional[LengthCache]) -> Optional[Callable[[str], Fit]]:
        version = twittertext.measured_by() if cache is not None else ""
        if cache is None or not texts or not twittertext.all_known(cache, version, texts):
            return None
        return lambda text: _cached_fit(cache, version, text)

    def measure_lines(self, texts: Iterable[str], cache: Optional[LengthCache]) -> Dict[str, Fit]:
        version = twittertext.measured_by() if cache is not None else ""
        known = twittertext.cached_lengths(cache, version)
        fits: Dict[str, Fit] = {}
        measured_anew = False
        for text in texts:
            cached = known.get(text)
            if cached is not None and cached[0] <= MAX_WEIGHTED_LENGTH:  # measured before, and X accepted it
                fits[text] = _fit(cached[0], cached[1])
            else:
                fits[text] = measure(text)
                measured_anew = True
        if cache is not None and measured_anew:
            accepted = {text: (fit.length, fit.urls) for text, fit in fits.items() if fit.fits}
            twittertext.remember_lengths(cache, version, accepted)
        return fits

    def poster(self, config: Config) -> XPoster:
        from .poster import XPoster  # only a run that posts to X imports the poster (and tweepy)

        return XPoster(
            _credentials(config),
            timeout=config[API_TIMEOUT],
            retries=config[API_RETRIES],
            base_url=str(config[X_API_BASE_URL]),
        )

    def reader(self, config: Config) -> XReader:
        """Signed GETs without tweepy (reader.py): a round of replies with nothing new needs no more."""
        from .reader import XReader

        return XReader(_credentials(config), timeout=config[API_TIMEOUT], base_url=str(config[X_API_BASE_URL]))


def _credentials(config: Config) -> Credentials:
    return Credentials(*(str(config[name]) for name in _CREDENTIAL_NAMES))


def _cached_fit(cache: LengthCache, version: str, text: str) -> Fit:
    """The fit of a text the cache knows (`twittertext.all_known`), from its cached length. Measured again
    if its row has gone since (another run kept another file's lengths), as any new line is."""
    cached = twittertext.cached_lengths(cache, version, (text,)).get(text)
    if cached is None or cached[0] > MAX_WEIGHTED_LENGTH:
        return measure(text)
    return _fit(cached[0], cached[1])


NETWORK = X()
