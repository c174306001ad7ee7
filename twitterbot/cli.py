"""The command line: assemble the commands, load the config, run one, map errors to exit codes.

    python bot.py [--dry-run] [--force] [--json] ...   one scheduled run
    python bot.py check [--online]                     is everything set up right?
    python bot.py history [-n N] [--json]              what recent runs and jobs posted
    python bot.py daemon [--dry-run]                   stay running, post at TWEET_TIMES
    python bot.py cron | systemd [--system] [--write]  crontab lines / systemd units for this checkout
    python bot.py watch [--every 6h] -- CMD ARGS...    run CMD, post its progress and its result
    python bot.py pegs solve|count|boards [BOARD]      the peg solitaire job
    python bot.py monkey [--mode prefix] [--workers 4] the infinite-monkey job
    python bot.py serve [--host H] [--port 8080]       a read-only status page and /status.json

This is the composition root: `main` builds the one registry from the built-in capabilities
(`twitterbot.cli.built_in`), reads the settings they declare, builds the command line from the modules
they name, and hands the registry down inside the `Config`. It holds no command's options. It is
the only place that catches broadly: a `BotError` becomes one log line and its exit status;
anything else is a bug, shown in full with ``--debug``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import __version__
from .errors import BotError, ConfigError, ExitStatus, MissingDependency, UsageError
from .wording import one_line

if TYPE_CHECKING:
    from .arguments import Parser
    from .capability import Capability
    from .registry import Registry
    from .settings.loading import Config

__all__ = ["build_parser", "built_in", "main", "parse_args", "read_config"]

log = logging.getLogger("twitterbot")

# This module imports nothing but the standard library and `errors` at its top: everything else
# (python-dotenv with the settings, schedule with the daemon's command...) is imported inside
# `main`'s error boundary, so a missing package is a sentence and exit 69, even for --help.
_CHECKOUT: Any = object()  # project_dir's default: bot.py's folder (settings.PROJECT_DIR)


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    environ: Optional[Mapping[str, str]] = None,
    project_dir: Optional[Path] = _CHECKOUT,
    registry: Optional[Registry] = None,
) -> int:
    """Run the command line and return the exit status (bot.py passes it to sys.exit). `registry`
    None: the built-in capabilities (a test passes its own, with a fake network in it)."""
    environ = os.environ if environ is None else environ
    argv = sys.argv[1:] if argv is None else list(argv)
    own = _own_words(argv)
    # What the boundary needs before the arguments are parsed (they may not be: a bad flag, a
    # missing package), then what they say.
    debug, json_output = "--debug" in own, "--json" in own
    stderr_handler = _setup_logging(environ)
    secrets: Sequence[str] = ()
    try:
        from .arguments import BadCommandLine

        registry = registry or built_in()
        try:
            args = parse_args(argv, registry)
        except BadCommandLine as exc:  # argparse printed the usage and the message
            if json_output:
                _print_failure_json(UsageError(exc.message), exc.message, ())
            return int(ExitStatus.USAGE)
        except SystemExit as exc:  # --help, --version
            return int(exc.code or 0)
        debug, json_output = args.debug, args.json
        if args.command_name != "run":
            # bot.py starts with the cyclic garbage collector off: a plain run is over in a second and
            # does without; the daemon, watch and the jobs run for hours, and every other command
            # gets it back too.
            gc.enable()
        from .arguments import absolute, global_settings
        from .settings.loading import PROJECT_DIR, load_config

        config = load_config(
            registry,
            project_dir=PROJECT_DIR if project_dir is _CHECKOUT else project_dir,
            env_file=absolute(args.env_file),
            environ=environ,
            overrides={**args.settings, **global_settings(args)},
        )
        secrets = config.secrets()
        _configure_logging(config, args, stderr_handler, secrets)
        status = int(args.handler(args, config))
        sys.stdout.flush()  # a reader that went away (`| head`) shows here, inside this boundary
        return status
    except BrokenPipeError:
        # The reader has all it wanted, as after `git log | head`: no message, no traceback.
        _detach_stdout()
        return int(ExitStatus.BROKEN_PIPE)
    except BotError as exc:
        return _report(exc, debug=debug, json_output=json_output, secrets=secrets)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except ImportError as exc:  # a package missing or broken (a partial install), or a bug of ours
        missing = MissingDependency.from_import_error(
            exc, checkout=Path(__file__).resolve().parent.parent, features=_needed_by(registry)
        )
        if missing is None:
            return _report_bug(exc, debug=debug, secrets=secrets)
        return _report(missing, debug=debug, json_output=json_output, secrets=secrets)
    except Exception as exc:  # the one broad catch: a bug, not a user error
        return _report_bug(exc, debug=debug, secrets=secrets)
    finally:
        logging.shutdown()


def _needed_by(registry: Optional[Registry]) -> Dict[str, Tuple[str, str]]:
    """Each module a feature imports: the features that need it, and the command that adds it."""
    needed: Dict[str, Tuple[str, str]] = {}
    for capability in registry.capabilities if registry else ():
        for feature in capability.features:
            for module in feature.modules:
                named = needed[module][0] + " and " if module in needed else ""
                needed[module] = (named + feature.name, feature.install)
    return needed


# -- the composition ---------------------------------------------------------------------------------


def built_in(extra: Sequence[Capability] = ()) -> Registry:
    """The registry of the capabilities that come with the bot, and `extra` ones after them (a
    test's network). A new job or network is one line here. Their order is the order of the
    settings reference and of config.example.env; the networks' order is the order runs post to
    them, the first being POST_TO's default; the scheduled post comes first among the commands (it
    owns the plain run, `bot.py` with no command). Each is declared in a light module (its
    package's ``__init__``), so this imports no client library, no numpy and no Flask; it is called
    inside `main`'s error boundary, where a missing package is a sentence and exit 69."""
    from .jobs import CLUSTER
    from .jobs.monkey import MONKEY
    from .jobs.pegs import PEGS
    from .jobs.puzzles import PUZZLES
    from .monitoring import MONITORING
    from .networks.bluesky import NETWORK as BLUESKY
    from .networks.mastodon import NETWORK as MASTODON
    from .networks.x import NETWORK as X
    from .posting import POSTING
    from .progress import PROGRESS
    from .registry import Registry
    from .settings.core import CORE
    from .unattended import SCHEDULE
    from .web import WEB

    return Registry(
        (
            CORE,
            POSTING,
            SCHEDULE,
            MONITORING,
            PROGRESS,
            X,
            MASTODON,
            BLUESKY,
            CLUSTER,
            PEGS,
            MONKEY,
            PUZZLES,
            WEB,
            *extra,
        )
    )


def read_config(
    *,
    env_file: Optional[Path] = None,
    environ: Optional[Mapping[str, str]] = None,
    project_dir: Optional[Path] = _CHECKOUT,
    registry: Optional[Registry] = None,
) -> Config:
    """The settings as the command line reads them, for a program that uses the bot as a library:
    the env file (``.env`` beside bot.py unless `env_file` names another), then the environment::

        from twitterbot.cli import read_config
        from twitterbot.progress.session import open_reporter

        with open_reporter("my job", config=read_config()) as report:
            report.done("finished")
    """
    from .settings.loading import PROJECT_DIR, load_config

    return load_config(
        registry or built_in(),
        project_dir=PROJECT_DIR if project_dir is _CHECKOUT else project_dir,
        env_file=env_file,
        environ=environ,
    )


def _report(error: BotError, *, debug: bool, json_output: bool, secrets: Sequence[str]) -> int:
    """Log a user's error, one line per problem; its exit status."""
    message = _scrub(str(error), secrets)
    for line in message.splitlines() or [message]:  # a ConfigError lists every problem, one per line
        log.error("%s", line)
    if debug:
        sys.stderr.write(_scrub(traceback.format_exc(), secrets))
    if json_output:
        _print_failure_json(error, message, secrets)
    return int(error.exit_status)


def _report_bug(error: BaseException, *, debug: bool, secrets: Sequence[str]) -> int:
    if debug:
        sys.stderr.write(_scrub(traceback.format_exc(), secrets))
    log.error(
        "unexpected error (%s): run again with --debug to see where, and report it with the version (%s)",
        _scrub(f"{type(error).__name__}: {error}", secrets),
        _version_line(),
    )
    return int(ExitStatus.UNEXPECTED)


def _scrub(text: str, secrets: Sequence[str]) -> str:
    if not secrets:
        return text  # nothing to hide yet (no settings read): needs no module that may be missing
    from .settings.secrets import scrub

    return scrub(text, secrets)


def _print_failure_json(error: BotError, message: str, secrets: Sequence[str]) -> None:
    """What --json prints for a command that failed outside a run's own result."""
    try:
        from .arguments import print_json

        print_json(_failure_json(error, message), secrets=secrets)
    except ImportError:  # the package that is missing is needed to make the usual document
        import json

        print(
            json.dumps(
                {"action": "failed", "reason": message, "error": error.kind, "exit_status": int(error.exit_status)}
            )
        )


def _version_line() -> str:
    """What a bug report must name: this bot's version and the Python it runs on."""
    import platform

    return f"twitterbot {__version__}, Python {platform.python_version()}"


def _failure_json(error: BotError, message: str) -> dict:
    """What --json prints for a command that failed outside a run's own result: the keys of a run's
    result (README, `--json`), `action` "failed" and `error` the kind of problem, never a class name."""
    from .posting.result import RunResult

    return RunResult("failed", message, one_in=None, roll=None, error=error).as_dict()


def _own_words(argv: Sequence[str]) -> Sequence[str]:
    """The bot's own words, those before a `--` (watch's command follows it): where --json and
    --debug are looked for in a command line that could not be parsed."""
    return argv[: list(argv).index("--")] if "--" in argv else argv


def _detach_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone, so that Python's last flush at exit
    does not print "Exception ignored ... BrokenPipeError"."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a file (a test's capture): nothing to silence


# -- arguments -------------------------------------------------------------------------------------
#
# A flag means the same wherever it is typed, or it is refused with exit 64; it is never ignored
# (see `arguments`).


def parse_args(argv: Sequence[str], registry: Registry) -> argparse.Namespace:
    """The command line as one namespace, whatever the order of the flags and the command's name.
    A flag the command does not take, or a setting's flag with a bad value, is a usage error (exit
    64), already printed, never ignored."""
    # A plain run (cron's) needs only its own flags: the other commands' modules are not imported.
    modules = registry.command_modules()
    parser = _build_parser(modules[:1])
    if not _plain_run(parser, argv):
        parser = _build_parser(modules)
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
        words = [word for word in extras if not word.startswith("-")]
        order = (
            f"; a word like {words[0]!r} goes before the options (bot.py {name} ... {words[0]} --option ...)"
            if words and command is not parser
            else ""
        )
        command.error(f"unrecognized arguments: {' '.join(extras)}{order} (see: {help_for})")
    for flag, dest in top_level.items():  # before the command's name
        if dest not in takes and hasattr(args, dest):
            command.error(_not_taken(flag, dest, name))
    for dest, default in {**parser.late_defaults, **command.late_defaults}.items():
        if not hasattr(args, dest):
            setattr(args, dest, default)
    # What the flags set, as settings, each checked by its setting's rule.
    parser.check_settings(args, registry.check_setting)
    if command is not parser:
        command.check_settings(args, registry.check_setting)
    args.settings = {**parser.settings_from(args), **command.settings_from(args)}
    return args


def _not_taken(flag: str, dest: str, command: str) -> str:
    if dest == "dry_run":
        return f"{flag} means nothing to `{command}`, which never posts: leave it out"
    if dest == "json":
        return f"`{command}` has no JSON output: leave out {flag}"
    return f"{flag} belongs to the plain scheduled run (bot.py {flag} ...), not to `{command}`: leave it out"


def _plain_run(parser: Parser, argv: Sequence[str]) -> bool:
    """Whether `argv` holds only options `parser` (the plain run's) knows, and their values: no
    command's name, no help. Anything else (an abbreviation, a typo) gets the whole parser."""
    takes_value = False
    for word in argv:
        if takes_value:
            takes_value = False
            continue
        action = parser._option_string_actions.get(word.split("=", 1)[0])
        if action is None or action.nargs not in (0, None) or word in ("-h", "--help", "--version"):
            return False
        takes_value = action.nargs is None and "=" not in word
    return True


def build_parser(registry: Registry) -> Parser:
    """The whole command line's parser, every command registered: the reference page of commands
    (docs/gen_reference.py) is written by walking it."""
    return _build_parser(registry.command_modules())


def _build_parser(modules: Sequence[str]) -> Parser:
    from .arguments import Parser

    parser = Parser(
        description="Post a random line of tweets.txt to the networks in POST_TO, on 1 run in N. Without a command: one scheduled run.",
    )
    parser.add_argument("--version", action="version", version=f"twitterbot {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for module in modules:
        importlib.import_module(module).register(parser, commands)
    parser.commands = dict(commands.choices)
    return parser


# -- logging ---------------------------------------------------------------------------------------


class _OneLine(logging.Formatter):
    """One log record, one line: line breaks and control characters in the message (a job's name,
    a command's output, a server's error detail) are written as escapes, so no text can forge a
    line of its own or steer the terminal. A traceback (--debug, a bug) follows on its own lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        record.message = one_line(record.message)
        return super().formatMessage(record)


def _setup_logging(environ: Mapping[str, str]) -> logging.Handler:
    """Log to stderr from the start, so even a config error is reported."""
    handler = logging.StreamHandler(sys.stderr)
    # journald stamps each line itself; cron mail and terminals get a timestamp from us.
    stamp = "" if environ.get("JOURNAL_STREAM") else "%(asctime)s "
    handler.setFormatter(_OneLine(f"{stamp}twitterbot %(levelname)s: %(message)s", "%Y-%m-%d %H:%M:%S"))
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
    root.setLevel(config["LOG_LEVEL"])
    # tweepy and urllib3 log every request body at DEBUG: only with --debug.
    library_level = logging.DEBUG if getattr(args, "debug", False) else logging.WARNING
    for name in ("tweepy", "urllib3", "requests_oauthlib", "oauthlib"):
        logging.getLogger(name).setLevel(library_level)
    handlers: List[logging.Handler] = [stderr_handler]
    if config["LOG_FILE"]:
        from logging.handlers import RotatingFileHandler  # only with LOG_FILE

        try:
            config["LOG_FILE"].parent.mkdir(parents=True, exist_ok=True)
            file_handler = RotatingFileHandler(config["LOG_FILE"], maxBytes=1_000_000, backupCount=3, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"LOG_FILE {config['LOG_FILE']} cannot be opened ({exc.strerror}): fix the path or its permissions"
            ) from None
        file_handler.setFormatter(_OneLine("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        root.addHandler(file_handler)
        handlers.append(file_handler)
    from .settings.secrets import ScrubSecrets

    scrubber = ScrubSecrets(secrets)
    for handler in handlers:
        handler.addFilter(scrubber)
