"""The networks the bot posts to: what every network is and does, and one package each.

Each network's package (`x`, `mastodon`, `bluesky`) holds everything about it, as data on a
`Network` subclass (a `Capability`): its name and label, the settings it needs and the docs
section that explains them, its length rule and what a post costs, how a post's link and an
account's page look, and how to build its poster from the settings. Its poster (`post(text,
options) -> PostResult`, `options` one typed `PostOptions`) states how a retry is made safe and
maps the network's errors.
The rest of the package asks the registry (`twitterbot.registry`) and never decides by a
network's name. A network imports its client library only when it makes a poster, so declaring
it is cheap::

    network = config[POST_TO][0]                     # POST_TO's networks, as objects
    network.label                                    # 'Bluesky'
    posters = posters_for(config)                    # {network: poster} for POST_TO, keys checked
    result = posters[network].post("Hello from my Pi")
    result.post_id, result.confirmed

A fourth network is one more package: a `Network` subclass, listed with the built-in
capabilities (`twitterbot.cli.built_in`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Callable,
    ClassVar,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
    cast,
)

from ..capability import Capability
from ..errors import ConfigError, ErrorKind, ExitStatus, PostError
from ..settings.table import POST_TO

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from ..pictures.limits import ImageLimits
    from ..pictures.prepare import Attachment, PreparedImage
    from ..settings.loading import Config
    from .mentions import Listener, Mention

__all__ = [
    "Fit",
    "LengthCache",
    "LookUp",
    "Network",
    "PostResult",
    "PLAIN",
    "PostOptions",
    "Poster",
    "check_keys",
    "posters_for",
    "rejected",
    "server_error",
]


@dataclass(frozen=True)
class Fit:
    """How long a text is as one network counts it, against that network's limit. `unit` names
    what is counted ("weighted characters", "characters", "graphemes"); `reason` says why it does
    not fit when a second rule fails (Bluesky's 3,000-byte limit, a character X refuses), else it
    is None. `problem` is the network's own sentence for a line it alone refuses; `urls` the links
    it found and `cost`, when posting this text costs more there, why (X's price of a link)."""

    network: str
    length: int
    limit: int
    unit: str = "characters"
    reason: Optional[str] = None
    urls: Tuple[str, ...] = ()
    cost: Optional[str] = None
    problem: Optional[str] = None

    @property
    def fits(self) -> bool:
        return self.length <= self.limit and self.reason is None


@dataclass(frozen=True)
class PostResult:
    """What became of one post. Confirmed (`uncertain` is None): the network answered with the
    post's `post_id`. Uncertain: the request may have reached the network but no answer came, so
    nobody can tell whether the post exists; `uncertain` says why and `check_url` is where a person
    can look. Callers count an uncertain post as made and never send its text again. `url` is the
    post's public link, in the network's own form."""

    text: str
    post_id: Optional[str]
    uncertain: Optional[str] = None
    check_url: Optional[str] = None
    url: Optional[str] = None
    # What a later run can look an uncertain post up by (Bluesky's record key, Mastodon's
    # Idempotency-Key); None: the network has no such key (X), or the post is confirmed.
    lookup_key: Optional[str] = None

    @property
    def confirmed(self) -> bool:
        return self.uncertain is None


@dataclass(frozen=True)
class LookUp:
    """What a network said of an uncertain post, asked later: `found` True (it is there: `result`
    holds its id and link), False (certainly not there) or None (it cannot tell: the look-up is
    tried again by the next run). `how` says how it looked: "by record key"."""

    found: Optional[bool]
    how: str
    result: Optional[PostResult] = None


@dataclass(frozen=True)
class PostOptions:
    """Everything a network is told with a post's text, as one value: its pictures (each with its
    alt text; prepared for the network, or as the user gave them for a network that fits them
    itself), the post it answers there (`reply_to`: a `PostResult.post_id` of the same network),
    its BCP 47 `language`, its content warning (`spoiler`: only for a network that declares
    `content_warnings`), and the options only some networks take (`Network.post_options`):
    Mastodon's `visibility` and `sensitive`, Bluesky's self-`labels`. A poster reads the fields
    its network has and leaves the rest; a re-send after a look-up sends the same value again."""

    images: Tuple[Union[Attachment, PreparedImage], ...] = ()
    reply_to: Optional[str] = None
    language: Optional[str] = None
    spoiler: Optional[str] = None
    visibility: Optional[str] = None
    sensitive: bool = False
    labels: Tuple[str, ...] = ()


PLAIN = PostOptions()  # a post with nothing but its text


class Poster(Protocol):
    """A network to post to. Each one states how it keeps a repeated request from making a second
    post (`retry_safety`) and decides with `may_retry` which failures it sends again. `reply_to`
    is the `post_id` of an earlier `PostResult` from the same network: an opaque string that only
    that network's module reads."""

    name: str
    retry_safety: str

    def post(self, text: str, options: PostOptions = PLAIN) -> PostResult:
        """Post `text` as `options` say (a reply to `options.reply_to`, its pictures uploaded
        first, each with its alt text: a failed upload is a PostError and no post). The caller
        gives a network only what it takes: the warning as `spoiler` only where the network
        declares `content_warnings` (elsewhere it is in the text), and visibility, sensitive and
        labels only where `Network.post_options` lists them."""
        ...

    def may_retry(self, error: PostError) -> bool: ...

    def account(self) -> str:
        """Check the keys online and name the account they post as (for `check --online`)."""
        ...

    def look_up(
        self, text: str, sent_at: datetime, key: Optional[str], options: Optional[PostOptions] = None
    ) -> LookUp:
        """Whether a post of `text` sent at `sent_at` (with `key`, the `PostResult.lookup_key` of
        its uncertain result, if known, and `options`, what it was sent with, when the history
        kept it) is on the network now. A reply is found only as a reply to the post it answered
        (`options.reply_to`), never by its text alone. A look-up that sends the post again sends
        exactly `options` (never a part of them), and says "found" only for a post that was there
        before it asked. A failure to ask is a PostError; an answer that cannot be read, or
        cannot show whether the post is there, is `found` None: whatever the network answers,
        nothing else is raised."""
        ...

    def bot_label(self) -> Optional[bool]:
        """Whether the account says it is a bot (Bluesky's self-label, Mastodon's flag); None
        when the network keeps that where the API cannot reach (X's "Automated" label)."""
        ...

    def mark_bot(self) -> bool:
        """Make the account say it is a bot; False when the network cannot through its API."""
        ...


class LengthCache(Protocol):
    """Where measured lengths are kept between runs (the history store): for each exact text a
    network accepts, its length and its URLs, as measured by `version`."""

    def measured_texts(self, kind: str, version: str, longest: int) -> AbstractSet[str]: ...

    def measured_file(self, kind: str, version: str) -> Optional[str]: ...

    def remember_measured_file(self, kind: str, version: str, digest: str) -> None: ...

    def measured_lengths(
        self, kind: str, version: str, texts: Optional[Iterable[str]] = None
    ) -> Dict[str, Tuple[int, Tuple[str, ...]]]: ...

    def remember_lengths(self, kind: str, version: str, lengths: Mapping[str, Tuple[int, Tuple[str, ...]]]) -> None: ...


class Network(Capability):
    """One network's facts, as class data, and the few things only it can do: a capability whose
    settings are needed only when POST_TO names it. A subclass sets the data and implements
    `measure` and `poster`; the rest has defaults that suit most."""

    name: ClassVar[str]  # as POST_TO writes it
    label: ClassVar[str]  # as people write it, for messages
    required: ClassVar[Tuple[str, ...]] = ()  # the settings a post cannot do without
    guide: ClassVar[str] = ""  # the README section that shows where to find the settings

    @property
    def title(self) -> str:  # type: ignore[override]
        """Its heading in the settings reference: its label."""
        return self.label

    @property
    def page(self) -> str:  # type: ignore[override]
        """Its page of the docs, which says where to find its settings."""
        return f"networks/{self.name}.md"

    site: ClassVar[str] = ""  # where a person looks for a post, in words ("bsky.app")
    former_names: ClassVar[Tuple[str, ...]] = ()  # what POST_TO may say by habit ("twitter")
    # The setting of a network that charges per post that caps its spending in a calendar month
    # (in US dollars; its value None: no cap); None: a free network.
    budget: ClassVar[Optional[str]] = None

    def price(self, fit: Fit) -> Optional[float]:
        """What posting a text measured as `fit` costs here, in US dollars; None: nothing."""
        return None

    def reply_price(self, fit: Fit) -> Optional[float]:
        """What answering a mention with a text measured as `fit` costs (X bills a reply where the
        account was mentioned less than a post); None: nothing."""
        return self.price(fit)

    # What one read of the account's mentions costs, in US dollars (X bills reads); None: nothing.
    read_price: ClassVar[Optional[float]] = None
    # Whether its poster can read the account's mentions (`mentions.Listener`): replies need it.
    listens: ClassVar[bool] = False

    def addressed(self, text: str, mention: Mention) -> str:
        """A reply's text as this network needs it to reach the author of `mention`: on most
        networks the reply's own link to the mention does; Mastodon's reply names the author."""
        return text

    # Whether a post here can carry a content warning of its own (Mastodon's spoiler_text); where
    # it cannot, a line's warning is written as its first line ("CW: ...").
    content_warnings: ClassVar[bool] = False
    # The options beyond text, pictures, language and warning its poster's `post` takes, when a
    # post sets them: "visibility" (Mastodon's), "sensitive" (pictures behind a warning), "labels"
    # (Bluesky's self-labels). Elsewhere they are not sent.
    post_options: ClassVar[FrozenSet[str]] = frozenset()
    # Whether its poster takes a post's pictures fitted to this network's limits; False: it takes
    # them as drawn and fits them itself (the dry run writes each as every network would get it).
    takes_prepared_pictures: ClassVar[bool] = True

    def measure(self, text: str) -> Fit:
        """`text` as this network counts it, against its limit; cheap (no client library)."""
        raise NotImplementedError

    def measure_lines(self, texts: Iterable[str], cache: Optional[LengthCache]) -> Dict[str, Fit]:
        """Every one of `texts` measured (a network whose rule is slow keeps lengths in `cache`)."""
        return {text: self.measure(text) for text in texts}

    def known_lines(self, texts: Iterable[str], cache: Optional[LengthCache]) -> Optional[Callable[[str], Fit]]:
        """When `cache` knows every text and all fit: how to get one text's `Fit` from it, so a
        run that posts one line measures nothing. None: measure them (`measure_lines`)."""
        return None

    def lines_measured(self) -> object:
        """A context manager around measuring a file's lines (X lets go of twitter-text after)."""
        import contextlib

        return contextlib.nullcontext()

    def describe(self, fit: Fit) -> str:
        """A fit in words, for a dry run's log line: "12 of 300 graphemes"."""
        return f"{fit.length} of {fit.limit} {fit.unit}"

    def post_url(self, post_id: Optional[str]) -> Optional[str]:
        """A post's public link made from its id alone (older history rows have no link), if it can be."""
        return None

    def account_url(self, config: Config) -> Optional[str]:
        """Where a person looks for the account's posts (to check an uncertain one), from the
        settings alone, without the client library; None if the settings cannot say."""
        return None

    def uses(self, config: Config) -> bool:
        """A network is used when POST_TO names it: `check` then fails without its client library."""
        return self in config[POST_TO]

    def missing(self, config: Config) -> List[str]:
        """The required settings still empty."""
        return [name for name in self.required if not config[name]]

    def poster(self, config: Config) -> Poster:
        """A poster for this network, built from the settings (the client library is imported here)."""
        raise NotImplementedError

    def reader(self, config: Config) -> Listener:
        """What reads the account's mentions (`mentions.Listener`), built from the settings: a
        round of replies makes it first and a poster only when a reply is due. A network whose
        reads need less than its poster (X's: no tweepy) says so; the default is the poster."""
        return cast("Listener", self.poster(config))

    def image_limits(self) -> ImageLimits:
        """What a picture may be here (bytes, pixels, formats, alt text), without asking the
        network: a poster may know better once online (a Mastodon server's own limits). The
        default suits a network that states nothing: 1 MB, 4,096 pixels a side, 1,000 characters."""
        from ..pictures.limits import ImageLimits

        return ImageLimits(self.name, 1_000_000, 4096 * 4096, 4096, 1000, title=self.label)

    def preview(
        self, text: str, config: Config, *, pictures: int = 0, folder: Optional[Callable[[], Path]]
    ) -> List[str]:
        """What a post of `text` (with that many `pictures`) would carry here beyond its text and
        pictures (Bluesky's link card), for a person: a dry run's lines, with what can be opened
        written into `folder()`; or, when `folder` is None (`check --online`), one short line each.
        Most networks add nothing."""
        return []


def check_keys(config: Config) -> None:
    """Raise one ConfigError naming every key POST_TO's networks still need, and where to put them."""
    missing = config.missing()
    if not missing:
        return
    post_to: Sequence[Network] = config[POST_TO]
    where = config.env_file or (config.base_dir / ".env" if config.base_dir else "an env file (--env-file PATH)")
    guide = " and ".join(f"'{network.guide}'" for network in post_to if network.guide)
    shows = f"; README {guide} shows where to find them" if guide else ""
    raise ConfigError(
        f"{', '.join(missing)} not set (POST_TO={','.join(network.name for network in post_to)}): put them in "
        f"{where} (copy config.example.env{shows}), or try --dry-run"
    )


def posters_for(config: Config) -> Dict[Network, Poster]:
    """A poster for each network in POST_TO, in that order, or one ConfigError naming every
    setting still missing (only the networks in POST_TO need theirs)."""
    check_keys(config)
    return {network: network.poster(config) for network in config[POST_TO]}


def server_error(where: str, said: str) -> PostError:
    """A network's own failure (a 5xx): certainly no post, nothing for the user to fix."""
    what = f"{where} had a server error ({said})"
    return PostError(
        f"{what}: nothing to fix here; the next run will try again",
        kind=ErrorKind.SERVER_ERROR,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        summary=what,
    )


def rejected(where: str, said: str, status: int) -> PostError:
    """A refusal no rule of ours foresaw: a 400 is the request's fault (the text), anything else a
    case this module does not know yet, i.e. a bug (exit 1)."""
    return PostError(
        f"{where} rejected the request ({said}): run with -v and report it if it persists",
        kind=ErrorKind.REJECTED,
        exit_status=ExitStatus.DATA_ERROR if status == 400 else ExitStatus.UNEXPECTED,
    )
