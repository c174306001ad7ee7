"""The scheduled post's commands: the plain run (no command), `check` and `history`.

python bot.py [--dry-run [--at TIME]] [--force] [--json] ...   one scheduled run
python bot.py check [--online]                     is everything set up right?
python bot.py history [-n N] [--json]              what recent runs and jobs posted
python bot.py account --mark-bot                   say on each network that the account is a bot
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from ..arguments import Commands, Parser, add_command, positive_int, print_json
from ..errors import ExitStatus
from ..networks import check_keys, posters_for
from ..settings.loading import Config, env_file_warnings
from ..settings.secrets import Scrubber
from ..settings.table import POST_TO
from ..state.outcomes import Outcome
from ..state.store import HistoryStore
from ..wording import one_line
from . import TWEET_ONE_IN
from .links import label_of, network_named, post_link

if TYPE_CHECKING:
    from ..delivery.post import Post
    from ..networks import Network
    from .result import RunResult

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(parser: Parser, commands: Commands) -> None:
    """The plain run's flags are the top-level parser's; `check` and `history` are commands."""
    _add_run(parser)
    _add_check(commands)
    _add_history(commands)
    _add_account(commands)


def _run(args: argparse.Namespace, config: Config) -> int:
    """One scheduled run: the command line without a command."""
    with _said_once(args, config):
        return _run_scheduled(args, config)


@contextlib.contextmanager
def _said_once(args: argparse.Namespace, config: Config) -> Iterator[None]:
    """A run started by cron or a timer (stderr not a terminal) logs a warning its last such run
    gave, word for word, at DEBUG: cron.log and the journal are not filled with the same lines
    every ten minutes. A run in a terminal shows every warning, and neither reads nor keeps the
    record (what a person saw is not what cron.log holds); so does a dry run, which writes nothing."""
    if args.dry_run or _on_a_terminal():
        yield
        return
    from ..settings.logs import folding_repeats
    from ..state.warned import WarnedLastRun

    record = WarnedLastRun(config.state.warned)
    last = record.read()
    with folding_repeats(last) as repeats:
        try:
            yield
        finally:
            record.keep(repeats.said, last=last)


def _on_a_terminal() -> bool:
    """Whether the log goes to a person's terminal (stderr is a tty), not to cron.log or a journal."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _run_scheduled(args: argparse.Namespace, config: Config) -> int:
    # Imported here: every other command's parser registers the plain run's flags (`register`),
    # and a round of replies from its timer needs none of the scheduled run's code.
    from .result import log_result
    from .scheduled import Occasion, run_once, run_watched, wait_jitter

    for warning in env_file_warnings(config):
        log.warning(warning)
    posters = None if args.dry_run else (lambda: posters_for(config))
    rng = random.Random(args.seed)  # seeded from the OS when --seed is not given
    if args.jitter and config["TWEET_JITTER"]:
        # Its own random source: a seeded dry run and real run pick the same line, jitter or not.
        wait_jitter(config["TWEET_JITTER"], rng=random.Random(), wait=time.sleep, what="this run")

    at, rolled = _pretended(args, config), _given_roll(args, config)
    bug = None  # a bug in the work before the roll (replies): the post goes on, and the run exits 1
    if at is None:
        from ..registry import registry_of

        bug = registry_of(config).before_run(config, dry_run=args.dry_run)  # replies, before the roll
        if bug is not None and args.debug:
            import traceback

            sys.stderr.write(
                Scrubber(config.secrets())("".join(traceback.format_exception(type(bug), bug, bug.__traceback__)))
            )

    def run() -> RunResult:
        if not args.dry_run:
            check_keys(config)  # now, not only on a run that posts: a missing key is news on every run
        return run_once(
            config,
            posters=posters,
            rng=rng,
            dry_run=args.dry_run,
            force=args.force,
            when=Occasion(at, args.trust_clock, args.one_offs, rolled),
        )

    result = run_watched(config, run, dry_run=args.dry_run)
    log_result(result)
    if result.action == Outcome.WOULD_POST and result.line and result.line.attachments:
        _show_pictures(result.line, config)
    _show_previews(config, result)
    if args.dry_run and result.action == Outcome.SKIPPED and result.roll is not None:
        log.info("add --force to see which line it would have posted")
    if args.json:
        print_json(result.as_dict(), secrets=config.secrets())
    elif result.action == Outcome.WOULD_POST and result.line:
        _show_text(result, Scrubber(config.secrets()))
    return int(ExitStatus.UNEXPECTED) if bug is not None else int(result.exit_status)


def _show_text(result: RunResult, mask: Scrubber) -> None:
    """The text a dry run would send, as each network would get it (secrets masked, as a real run
    sends it): a network without content warnings of its own gets a line's warning as its first
    line ("CW: ..."). Where networks get different texts, or a network gets more than the text
    (its own content warning, a visibility, sensitive pictures, labels: a grammar's tags), each
    is shown under their names, so that what a tag does is seen before it is posted."""
    post = result.line.post("")  # type: ignore[union-attr]
    texts: Dict[str, List[str]] = {}
    besides = False
    for sent in result.networks:
        if sent.outcome == Outcome.WOULD_POST:
            more = _besides_text(post, sent.network)
            besides = besides or bool(more)
            texts.setdefault(mask(post.text_for(sent.network)), []).append(
                sent.network.label + (f" ({mask(more)})" if more else "")
            )
    if len(texts) <= 1 and not besides:
        print(next(iter(texts), mask(post.text)) or _NO_WORDS)
        return
    for text, labels in texts.items():
        print(f"{' and '.join(labels)}:\n{text or _NO_WORDS}")


# What a dry run shows for a post of pictures alone (a grammar's {svg} card), not an empty line.
_NO_WORDS = "(no words: the pictures alone)"


def _besides_text(post: Post, network: Network) -> str:
    """What `network` gets with `post` besides its text, in words: its own content warning and the
    options it takes (`Network.post_options`: Mastodon's visibility, the sensitive flag, Bluesky's
    labels); "" for nothing."""
    said = []
    if post.spoiler_for(network):
        said.append(f"behind the content warning {post.warning!r}")
    if post.visibility and "visibility" in network.post_options:
        said.append(f"visibility {post.visibility} (or MASTODON_VISIBILITY if more private)")
    if post.sensitive and "sensitive" in network.post_options:
        said.append("marked sensitive (pictures behind a warning)")
    if post.labels and "labels" in network.post_options:
        said.append("labelled " + ", ".join(post.labels))
    return "; ".join(said)


def _show_pictures(line: Any, config: Config) -> None:
    """The dry run's pictures: each one as each network would get it, in a folder to open."""
    from ..pictures.dryrun import dry_run_folder, write_prepared

    folder = dry_run_folder()
    limits = [
        network.image_limits()
        for network in config[POST_TO]
        if any(fit.network == network.name and fit.fits for fit in line.fits)
    ]
    log.info("dry run: the pictures of line %d, as each network would get them, are in %s", line.lineno, folder)
    for said in write_prepared(line.attachments, limits, folder):
        log.info("dry run: %s", said)


def _check(args: argparse.Namespace, config: Config) -> int:
    """Check every piece of the setup and say what to fix; exit 0 only when all is well."""
    from .check import run_checks  # here: the plain run, which imports this module, never checks

    return run_checks(config, online=args.online)


def _show_previews(config: Config, result: RunResult) -> None:
    """A dry run shows what each network would attach to the post beyond its text (Bluesky's link
    card), writing what can be opened (a thumbnail) to a new folder it names."""
    if result.action != Outcome.WOULD_POST or result.line is None:
        return
    folder: List[Path] = []

    def make_folder() -> Path:  # made only when something is written
        if not folder:
            from ..pictures.dryrun import dry_run_folder

            folder.append(dry_run_folder())
        return folder[0]

    line = result.line
    for sent in result.networks:
        if sent.outcome == Outcome.WOULD_POST:
            preview = sent.network.preview
            for shown in preview(line.text, config, pictures=len(line.attachments), folder=make_folder):
                first, *rest = shown.splitlines() or [""]  # one log record per line
                log.info("dry run: %s would show this %s", sent.network.label, first)
                for each in rest:
                    log.info("%s", each)


def _history(args: argparse.Namespace, config: Config) -> int:
    """Show recent scheduled runs, progress jobs' posts and one-off lines missed (no run came
    within LATE_BY of their time), newest first, interleaved by time."""
    from ..wording import preview

    if not config.state.history.exists():
        if args.json:
            print_json([])
        else:
            print(f"no runs recorded yet ({config.state.history} does not exist)")
        return int(ExitStatus.OK)
    from ..state.calendar import Missed
    from ..state.mentions import ReplyRecord
    from ..state.records import RunRecord  # here: a plain run, which imports this module, never needs it
    from .sources import source_of

    with HistoryStore(config.state.history) as store:
        missed = sorted(store.missed(), key=lambda mark: mark.noted_at, reverse=True)[: args.limit]
        entries: List[Any] = [
            *store.recent_runs(args.limit),
            *store.recent_job_posts(args.limit),
            *store.recent_replies(args.limit),
            *missed,
        ]
    entries.sort(key=_when, reverse=True)
    entries = entries[: args.limit]
    if args.json:
        print_json([_history_json(entry, config) for entry in entries], secrets=config.secrets())
        return int(ExitStatus.OK)
    mask = Scrubber(config.secrets())  # what a post or a server's reply said may hold a key
    as_read = source_of(config).readable  # a grammar's post without its tags
    for entry in entries:
        if isinstance(entry, ReplyRecord):
            print(f"{entry.seen_at.astimezone():%Y-%m-%d %H:%M}  {_reply_line(entry, config, mask)}")
            continue
        if isinstance(entry, RunRecord):
            when, text, reason, url = entry.started_at, entry.text, entry.reason, _url(entry, config)
            text = as_read(text) if text else text
            what = entry.action + (" (dry run)" if entry.dry_run and entry.action != Outcome.WOULD_POST else "")
            tag = ""
        elif isinstance(entry, Missed):  # shown at the run that found it missed
            when, text, what, url, tag = entry.noted_at, entry.text, "missed", None, ""
            reason = f"due {entry.due_at.astimezone():%Y-%m-%d %H:%M}, not posted: {entry.reason}"
        else:
            when, text, reason, url, what = entry.sent_at, entry.text, entry.detail, _url(entry, config), entry.outcome
            thread = f", thread {entry.thread_root}" if entry.thread_root and entry.thread_root != entry.post_id else ""
            first = network_named(config, None) == network_named(config, entry.network)  # older rows': the first
            on = "" if first else f" on {label_of(config, entry.network)}"
            tag = f"[{entry.job_name}{' result' if entry.final else ''}{on}{thread}]"
        # Masked before it is cut, so no cut leaves part of a key; one entry, one line.
        shown = preview(mask(text), 50) if text else ""
        detail = " ".join(part for part in (tag, shown, reason or "", url or "") if part)
        print(f"{when.astimezone():%Y-%m-%d %H:%M}  {what:<11} {one_line(mask(detail))}")
    if not entries:
        print("no runs recorded yet")
    return int(ExitStatus.OK)


def _when(entry: Any) -> datetime:
    """When a history entry happened: a run's start, a job's post, a mention's reading, the run that
    found a one-off line missed."""
    for name in ("started_at", "sent_at", "seen_at", "noted_at"):
        if hasattr(entry, name):
            return getattr(entry, name)
    raise TypeError(entry)


def _reply_line(entry: Any, config: Config, mask: Scrubber) -> str:
    """A mention in `history`: what became of it, who wrote it, the rule, the reply's link or why none."""
    import json

    from ..wording import preview

    what = {"answered": "replied", "pending": "mention"}.get(entry.status, entry.status)
    tag = f"[reply to {entry.author} on {label_of(config, entry.network)}]"
    rule = f"rule {json.dumps(entry.rule, ensure_ascii=False)}" if entry.rule else ""
    link = post_link(config, entry.network, entry.reply_id, entry.url) if entry.status == "answered" else None
    outcome = entry.outcome if entry.outcome and entry.outcome != "posted" else ""
    detail = " ".join(
        part for part in (tag, preview(mask(entry.text), 40), rule, outcome, entry.reason or "", link or "") if part
    )
    return f"{what:<11} {one_line(mask(detail))}"


def _url(entry: Any, config: Config) -> Optional[str]:
    """A history entry's link: stored since several networks; made from the id for older posts."""
    return post_link(config, getattr(entry, "network", None), entry.post_id, entry.url)


def _history_json(entry: Any, config: Config) -> dict:
    """One entry of `history --json`: the same keys for every kind (a run, a job's post, a mention
    and its reply, a one-off line missed), plus each kind's own."""
    from ..state.calendar import Missed
    from ..state.mentions import ReplyRecord
    from ..state.records import RunRecord

    if isinstance(entry, Missed):
        return {
            "source": "one_off",
            "started_at": entry.noted_at.isoformat(),  # the run that found it missed
            "action": "missed",
            "reason": entry.reason,
            "text": entry.text,
            "post_id": None,
            "tweet_id": None,
            "url": None,
            "due_at": entry.due_at.isoformat(),
        }

    if isinstance(entry, ReplyRecord):
        return {
            "source": "reply",
            "started_at": entry.seen_at.isoformat(),
            "action": entry.status,
            "reason": entry.reason,
            "text": entry.text,
            "post_id": entry.reply_id,
            "url": post_link(config, entry.network, entry.reply_id, entry.url) if entry.status == "answered" else None,
            "network": entry.network,
            "author": entry.author,
            "rule": entry.rule,
            "outcome": entry.outcome,
        }
    if isinstance(entry, RunRecord):
        return {
            "source": "scheduled",
            "started_at": entry.started_at.isoformat(),
            "action": entry.action,
            "reason": entry.reason,
            "text": entry.text,
            "post_id": entry.post_id,
            "tweet_id": entry.post_id,  # deprecated alias of post_id, for one release
            "url": _url(entry, config),
            "one_in": entry.one_in,
            "roll": entry.roll,
            "dry_run": entry.dry_run,
        }
    return {
        "source": "job",
        "started_at": entry.sent_at.isoformat(),
        "action": entry.outcome,
        "reason": entry.detail,
        "text": entry.text,
        "post_id": entry.post_id,
        "tweet_id": entry.post_id,  # deprecated alias of post_id, for one release
        "url": _url(entry, config),
        "network": entry.network,
        "job": entry.job_name,
        "job_run": entry.job_id,
        "result": entry.final,
        "thread": entry.thread_root,
        "thread_url": post_link(config, entry.network, entry.thread_root, None),
    }


def _pretended(args: argparse.Namespace, config: Config) -> Optional[datetime]:
    """--at: the time a dry run pretends it is, read in the bot's zone (TWEET_TIMEZONE, else the
    system's), so it means the same on any machine with these settings. A real run posts at the
    real time only: --at without --dry-run is a usage error."""
    if args.at is None:
        return None
    from ..errors import UsageError
    from .calendar import Calendar, in_zone
    from .when import read_moment

    if not args.dry_run:
        raise UsageError("--at shows what a run at another time would do, posting nothing: add --dry-run")
    try:
        moment = read_moment(args.at, "--at")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    zone = Calendar.of(config).zone
    log.info("dry run as if it were %s (%s); nothing is recorded", args.at.strip(), getattr(zone, "key", zone))
    return in_zone(moment, zone)


def _given_roll(args: argparse.Namespace, config: Config) -> Optional[int]:
    """--roll N: the die's face, rolled before the run (the flock's daemon rolls in its own process
    and starts a run only when it posts or has work besides the roll). A face the die does not have,
    or a roll beside --force or --one-offs (which roll nothing), is a usage error."""
    if args.roll is None:
        return None
    from ..errors import UsageError

    for flag, given in (("--force", args.force), ("--one-offs", args.one_offs)):
        if given:
            raise UsageError(f"--roll with {flag}: {flag} rolls no die; give one of the two")
    one_in = config[TWEET_ONE_IN]
    if not 0 <= args.roll < one_in:
        raise UsageError(
            f"--roll {args.roll}: the die of TWEET_ONE_IN={one_in} has the faces 0 to {one_in - 1} (0 posts)"
        )
    return args.roll


def _add_run(parser: Parser) -> None:
    """The plain scheduled run: its flags are the top-level parser's."""
    parser.add_global_flags(
        "dry_run",
        "json",
        dry_run="show the decision; post nothing, need no keys",
        json="print one JSON object describing the run",
    )
    parser.add_shared("--force", action="store_true", help="skip the 1-in-N roll (the daily cap still applies)")
    parser.add_setting(
        "--one-in", setting="TWEET_ONE_IN", shared=True, metavar="N", help="post on 1 run in N (TWEET_ONE_IN)"
    )
    parser.add_setting(
        "--tweets", setting="TWEETS_FILE", path=True, shared=True, metavar="PATH", help="the tweets file (TWEETS_FILE)"
    )
    parser.add_shared("--seed", type=int, metavar="N", help="seed the roll and the pick, to reproduce a run")
    parser.add_shared(
        "--roll",
        type=int,
        metavar="N",
        help="take N as the die's roll, 0 to TWEET_ONE_IN-1 (0 posts; the gap and the cap still apply)",
    )
    parser.add_shared(
        "--at",
        metavar="'YYYY-MM-DD HH:MM'",
        help="with --dry-run: what a run at that time (the bot's zone) would do; nothing is recorded",
    )
    parser.add_shared(
        "--one-offs",
        action="store_true",
        help="post a one-off line whose time has come, or nothing: no roll, no other line (the one-offs' runs)",
    )
    parser.add_shared(
        "--trust-clock",
        action="store_true",
        help="believe the clock against the history (off over a year; records a clock that was ahead dated later are dated now)",
    )
    parser.add_shared(
        "--jitter",
        action="store_true",
        help="first wait a random 0..TWEET_JITTER, as the timer and the daemon do (the cron lines use it)",
    )
    parser.set_defaults(handler=_run, command_name="run", brief=True)


def _add_check(commands: Commands) -> None:
    check = add_command(commands, "check", _check, help="check settings, keys, tweets file and state folder")
    check.add_argument(
        "--online", action="store_true", help="also log in to each network in POST_TO and name the account"
    )


def _account(args: argparse.Namespace, config: Config) -> int:
    """Mark each account of POST_TO as a bot, where its network's API can; say where it cannot."""
    from ..errors import PostError, UsageError
    from ..settings.secrets import scrub

    if not args.mark_bot:
        raise UsageError("account: say what to do: `bot.py account --mark-bot`")
    check_keys(config)
    status = ExitStatus.OK
    for network, poster in posters_for(config).items():
        label = network.label
        try:
            marked = poster.mark_bot()
        except PostError as exc:
            log.error("%s: could not mark the account as a bot: %s", label, scrub(str(exc), config.secrets()))
            status = status or exc.exit_status
            continue
        if marked:
            log.info("%s: the account is marked as a bot", label)
        else:
            log.info('%s: set the "Automated" label on the account\'s settings page (docs/left-alone.md)', label)
    return int(status)


def _add_account(commands: Commands) -> None:
    account = add_command(commands, "account", _account, help="change the accounts of POST_TO (--mark-bot)")
    account.add_argument(
        "--mark-bot",
        action="store_true",
        help="mark each account as a bot: Bluesky's bot self-label, Mastodon's bot flag (X: the docs say where)",
    )


def _add_history(commands: Commands) -> None:
    history = add_command(
        commands,
        "history",
        _history,
        takes=("json",),
        json_help="print a JSON list",
        help="show what recent runs and jobs posted",
    )
    history.add_argument(
        "-n", dest="limit", type=positive_int, default=20, metavar="N", help="how many entries (default 20)"
    )
