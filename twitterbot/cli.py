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
(`twitterbot.cli.built_in`), reads the settings they declare and builds the command line from the
modules they name (`arguments.py`). It holds no command's options. It alone catches broadly: a
`BotError` or a full disk is one log line and its exit status; else a bug, in full with ``--debug``.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from . import __version__
from .errors import BotError, ExitStatus, MissingDependency, UsageError, disk_problem

if TYPE_CHECKING:
    from .arguments import Parser
    from .capability import Capability
    from .registry import Registry
    from .settings.loading import Config

__all__ = ["build_parser", "built_in", "main", "parse_args", "read_config"]

log = logging.getLogger("twitterbot")

# Imported at the top: the standard library and `errors` only. The rest (python-dotenv, schedule...)
# is imported inside `main`'s error boundary: a missing package is a sentence and exit 69.
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
    from .settings.logs import logging_as_it_is, restore_logging, setup_logging

    kept = logging_as_it_is()  # put back on the way out: main may run again in this process
    stderr_handler = setup_logging(environ)
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
        if not getattr(args, "brief", False):
            # bot.py starts with the cyclic garbage collector off: a plain run and a round of
            # replies (brief commands) are over in a second and do without (a collection while
            # requests is imported costs a round a tenth of its CPU); the daemon, watch and the
            # jobs run for hours, and every other command gets it back too.
            gc.enable()
        from .flock.select import select  # which bot (--bot), or the whole flock
        from .settings.loading import PROJECT_DIR

        checkout = PROJECT_DIR if project_dir is _CHECKOUT else project_dir
        config, handler = select(args, registry, project_dir=checkout, environ=environ)
        secrets = config.secrets()
        from .settings.logs import configure_logging

        configure_logging(config, stderr_handler, secrets=secrets, debug=args.debug)
        status = int(handler(args, config))
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
            exc, checkout=Path(__file__).resolve().parent.parent, features=registry.needed() if registry else {}
        )
        if missing is None:
            return _report_bug(exc, debug=debug, secrets=secrets)
        return _report(missing, debug=debug, json_output=json_output, secrets=secrets)
    except Exception as exc:  # the one broad catch: a bug, not a user error (a full disk is the machine's)
        return _report_unexpected(exc, debug=debug, json_output=json_output, secrets=secrets)
    finally:
        restore_logging(kept)


# -- the composition ---------------------------------------------------------------------------------


def built_in(extra: Sequence[Capability] = ()) -> Registry:
    """The registry of the capabilities that come with the bot, and `extra` ones after them (a
    test's network). A new job or network is one line here. Their order is the order of the
    settings reference and of config.example.env; the networks' order is the order runs post to
    them, the first being POST_TO's default; the scheduled post comes first among the commands (it
    owns the plain run, `bot.py` with no command). Each is declared in a light module (its
    package's ``__init__``), so this imports no client library, no numpy and no Flask; it is called
    inside `main`'s error boundary, where a missing package is a sentence and exit 69."""
    from .flock import FLOCK
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
    from .replies import REPLIES
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
            REPLIES,
            X,
            MASTODON,
            BLUESKY,
            CLUSTER,
            PEGS,
            MONKEY,
            PUZZLES,
            WEB,
            FLOCK,
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


def _report_unexpected(error: Exception, *, debug: bool, json_output: bool, secrets: Sequence[str]) -> int:
    """A full or read-only disk met anywhere is the machine's (73, with what to do); else a bug."""
    full = disk_problem(error)
    if full is None:
        return _report_bug(error, debug=debug, secrets=secrets)
    return _report(full, debug=debug, json_output=json_output, secrets=secrets)


def _report_bug(error: BaseException, *, debug: bool, secrets: Sequence[str]) -> int:
    """Log a bug, with what its report must name: this bot's version and the Python it runs on."""
    import platform

    if debug:
        sys.stderr.write(_scrub(traceback.format_exc(), secrets))
    log.error(
        "unexpected error (%s): run again with --debug to see where, and report it with the version (%s)",
        _scrub(f"{type(error).__name__}: {error}", secrets),
        f"twitterbot {__version__}, Python {platform.python_version()}",
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

        document = {"action": "failed", "reason": message, "error": error.kind, "exit_status": int(error.exit_status)}
        print(json.dumps(document))


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


# -- the command line ------------------------------------------------------------------------------
#
# A flag means the same wherever it is typed, or it is refused with exit 64; it is never ignored
# (see `arguments`).


def parse_args(argv: Sequence[str], registry: Registry) -> argparse.Namespace:
    """The command line as one namespace, its commands those of `registry`'s capabilities."""
    from .arguments import parse_command_line

    return parse_command_line(
        argv, registry.command_modules(), registry.check_setting, module_of=registry.command_module
    )


def build_parser(registry: Registry) -> Parser:
    """The whole command line's parser, every command registered: the reference page of commands
    (docs/gen_reference.py) is written by walking it."""
    from .arguments import command_parser

    return command_parser(registry.command_modules())
