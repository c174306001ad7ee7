"""The parser every command is built with: global flags, sysexits' 64, flags that set settings.

Each capability names the module that registers its commands (`Capability.commands`); they all build their
parsers with `add_command` and these helpers, so a flag means the same wherever it is typed, or it
is refused with exit 64; it is never ignored::

    def register(parser: Parser, commands: Commands) -> None:
        watch = add_command(commands, "watch", run_watch, takes=("dry_run",), help="...")
        watch.add_setting("--every", setting="PROGRESS_EVERY", metavar="DURATION", help="...")

A flag added with `add_setting` overrides its setting (checked by the setting's own rule, but a
bad flag is a usage error where a bad env file is a config error); `settings_from` collects them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple

from .errors import ConfigError, ExitStatus
from .settings.parsers import did_you_mean
from .settings.secrets import MASK, Scrubber

__all__ = [
    "BadCommandLine",
    "command_parser",
    "parse_command_line",
    "Commands",
    "Parser",
    "absolute",
    "add_command",
    "one_of",
    "positive_int",
    "print_json",
]

# The global flags. The plain run's own flags (--force, --one-in, --tweets, --seed, --jitter) go
# with a command only if it takes them too.
# dest: (flags, argparse options). Every command takes the first six; "dry_run" only the commands
# that can post, "json" only those that print JSON (see each command's block).
_GLOBAL_FLAGS: Dict[str, Tuple[Tuple[str, ...], Dict[str, Any]]] = {
    "env_file": (("--env-file",), {"metavar": "PATH", "help": "settings file (default: .env beside bot.py)"}),
    "bot": (("--bot",), {"metavar": "NAME", "help": "the bot of the flock this is for (docs/flock.md)"}),
    "bots": (
        ("--bots",),
        {
            "metavar": "DIR",
            "help": "the flock folder, one folder per bot (default: BOTS_DIR, else bots/ beside bot.py)",
        },
    ),
    "verbose": (("-v", "--verbose"), {"action": "store_true", "help": "log more detail (LOG_LEVEL=DEBUG)"}),
    "quiet": (("-q", "--quiet"), {"action": "store_true", "help": "log only warnings and errors"}),
    "debug": (("--debug",), {"action": "store_true", "help": "show tracebacks"}),
    "dry_run": (("--dry-run",), {"action": "store_true", "help": "post nothing; show what would be posted"}),
    "json": (("--json",), {"action": "store_true", "help": "print the result as JSON"}),
}
_EVERY_COMMAND = ("env_file", "bot", "bots", "verbose", "quiet", "debug")

Commands = Any  # argparse's subparsers action: what `register` functions add their commands to


class BadCommandLine(SystemExit):
    """A usage error (exit 64) that argparse has printed; keeps its message for --json."""

    def __init__(self, message: str) -> None:
        super().__init__(int(ExitStatus.USAGE))
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse with sysexits' 64 for a usage error (not 2), options that may also be typed
    before the command's name, and flags that set settings."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.late_defaults: Dict[str, object] = {}
        self.commands: Dict[str, Parser] = {}
        # dest -> (setting, the value a store_true flag stands for, whether the value is a path, its flags)
        self._setting_flags: Dict[str, Tuple[str, Optional[str], bool, str]] = {}

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise BadCommandLine(f"{self.prog}: {message}")

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

    def add_setting(
        self,
        *flags: str,
        setting: str,
        value: Optional[str] = None,
        path: bool = False,
        shared: bool = False,
        **options: Any,
    ) -> argparse.Action:
        """A flag that overrides `setting`: its value (checked as the setting's is, by
        `check_settings`), `value` for a flag that takes none, or a path made absolute from the
        cwd, where the user typed it."""
        if value is not None:
            options.setdefault("action", "store_true")
        action = (self.add_shared if shared else self.add_argument)(*flags, **options)
        self._setting_flags[action.dest] = (setting, value, path, "/".join(action.option_strings))
        return action

    def settings_from(self, args: argparse.Namespace) -> Dict[str, str]:
        """The settings the flags of this parser set in `args`."""
        settings = {}
        for dest, (setting, value, path, _) in self._setting_flags.items():
            given = getattr(args, dest, None)
            if given is None or given is False or given == "":
                continue
            settings[setting] = value if value is not None else str(absolute(given)) if path else str(given)
        return settings

    def check_settings(self, args: argparse.Namespace, check: Callable[[str, str, str], None]) -> None:
        """Check each value a flag of this parser gave a setting by that setting's own rule
        (`check(setting, text, where)` raises ConfigError): a bad flag is a usage error (64) where
        the same value in the env file is a config error (78)."""
        for dest, (setting, value, path, flags) in self._setting_flags.items():
            given = getattr(args, dest, None)
            if value is not None or path or given is None or given is False:
                continue
            try:
                check(setting, str(given), "the command line")
            except ConfigError as exc:
                self.error(f"argument {flags}: {exc}")

    def parse_known_args(  # type: ignore[override]
        self, args: Optional[Sequence[str]] = None, namespace: Optional[argparse.Namespace] = None
    ) -> Tuple[argparse.Namespace, List[str]]:
        """argparse's, with one meaning on every Python: a command's optional word (`pegs solve
        german`) goes before its options. Python 3.13's argparse (gh-59317) also takes it after
        one (`pegs solve --no-post german`), older ones leave it over; it is left over on every
        Python, so the command line says where it goes."""
        words = list(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(words, namespace)
        for action in _late_optional_words(self._actions, parsed, words):
            extras.append(str(getattr(parsed, action.dest)))
            setattr(parsed, action.dest, action.default)
        return parsed, extras

    def flags(self) -> Dict[str, str]:
        """Every option string this parser takes, with its dest."""
        return {flag: action.dest for action in self._actions for flag in action.option_strings}


def _late_optional_words(
    actions: Sequence[argparse.Action], parsed: argparse.Namespace, words: Sequence[str]
) -> List[argparse.Action]:
    """The optional positionals (nargs="?") whose word came after an option that follows the
    positional before them (`solve --no-post german`): Python 3.13's argparse takes that word,
    older ones fill such a positional only from the words right after the one before it."""
    positionals = [action for action in actions if not action.option_strings]
    late = []
    for before, action in zip(positionals, positionals[1:]):
        value = getattr(parsed, action.dest, action.default)
        if action.nargs != "?" or value == action.default:
            continue
        try:
            start = list(words).index(str(getattr(parsed, before.dest, None)))
            end = list(words).index(str(value), start + 1)
        except ValueError:
            continue  # not typed as read (a type turned it into something else): leave it be
        if any(word.startswith("-") and word != "-" for word in words[start + 1 : end]):
            late.append(action)
    return late


def add_command(
    commands: Commands,
    name: str,
    handler: Callable[..., int],
    *,
    takes: Sequence[str] = (),
    brief: bool = False,
    **kwargs: Any,
) -> Parser:
    """A command's parser with the global flags it takes (`takes`: "dry_run", "json"); keyword
    arguments `<flag>_help` reword a global flag's help for this command. `handler(args, config)`
    runs the command and returns its exit status. `brief`: the command is over in a second, as a
    plain run is (its process runs without the cyclic garbage collector, `cli.main`)."""
    helps = {dest: kwargs.pop(f"{dest}_help") for dest in takes if f"{dest}_help" in kwargs}
    parser: Parser = commands.add_parser(name, **kwargs)
    parser.add_global_flags(*takes, **helps)
    parser.set_defaults(handler=handler, command_name=name, brief=brief)
    return parser


def global_settings(args: argparse.Namespace) -> Dict[str, str]:
    """The settings the global flags set: -v and -q."""
    if args.verbose:
        return {"LOG_LEVEL": "DEBUG"}
    if args.quiet:
        return {"LOG_LEVEL": "WARNING"}
    return {}


def one_of(names: Sequence[str], what: str, otherwise: str = "") -> Callable[[str], str]:
    """An argparse type for a word from `names` (a board, a kind): a misspelt one is refused with
    the nearest name ("did you mean english?"), else the list."""

    def check(text: str) -> str:
        if text not in names:
            hint = did_you_mean(text, names) or f"use one of {', '.join(names)}{otherwise}"
            raise argparse.ArgumentTypeError(f"there is no {what} {text!r}: {hint}")
        return text

    return check


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def absolute(path: Optional[str]) -> Optional[Path]:
    """A path typed on the command line, relative to the cwd where it was typed."""
    return Path(path).expanduser().absolute() if path else None


def print_json(value: object, *, secrets: Sequence[str] = ()) -> None:
    """Print `value` as one JSON object with every secret masked, string by string: masking the
    printed text could break the JSON itself (a key "FALS" matches the `false` of a field)."""
    print(json.dumps(_masked(value, Scrubber(secrets)), ensure_ascii=False))


def _masked(value: object, scrub: Scrubber) -> object:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(key)): _masked(item, scrub) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(item, scrub) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and scrub.contains(str(value)):
        return MASK  # a number that spells a secret (a short numeric key) is no number to print
    return value


# -- the whole command line ------------------------------------------------------------------------


def parse_command_line(
    argv: Sequence[str],
    modules: Sequence[str],
    check_setting: Callable[[str, str, str], None],
    *,
    module_of: Callable[[str], Optional[str]] = lambda name: None,
) -> argparse.Namespace:
    """The command line as one namespace, whatever the order of the flags and the command's name
    (`modules`: those that register the commands, the plain run's first; `check_setting` checks a
    setting's flag by its setting's rule; `module_of`: the module that registers a command, by its
    name). A flag the command does not take, or a setting's flag with a bad value, is a usage error
    (exit 64), already printed, never ignored."""
    # A plain run (cron's) needs only its own flags, and a command (a timer's `replies`) only its
    # module's beside them: the other commands' modules are not imported. Anything else (help, a
    # typo, no command at all) gets the whole parser.
    parser = command_parser(modules[:1])
    named = _command_word(parser, argv)
    if named is not None:
        module = module_of(named)
        parser = command_parser(list(dict.fromkeys([*modules[:1], module])) if module else modules)
        if named not in parser.commands:
            parser = command_parser(modules)
    elif not _plain_run(parser, argv):
        parser = command_parser(modules)
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
    parser.check_settings(args, check_setting)
    if command is not parser:
        command.check_settings(args, check_setting)
    args.settings = {**parser.settings_from(args), **command.settings_from(args)}
    return args


def _not_taken(flag: str, dest: str, command: str) -> str:
    if dest == "dry_run":
        return f"{flag} means nothing to `{command}`, which never posts: leave it out"
    if dest == "json":
        return f"`{command}` has no JSON output: leave out {flag}"
    return f"{flag} belongs to the plain scheduled run (bot.py {flag} ...), not to `{command}`: leave it out"


def _command_word(parser: Parser, argv: Sequence[str]) -> Optional[str]:
    """The command `argv` names, when what comes before it is the plain run's options (`parser`'s)
    and their values, and no help is asked for anywhere; None otherwise."""
    if any(word in ("-h", "--help", "--version") for word in argv):
        return None
    takes_value = False
    for word in argv:
        if takes_value:
            takes_value = False
            continue
        if not word.startswith("-"):
            return word
        action = parser._option_string_actions.get(word.split("=", 1)[0])
        if action is None or action.nargs not in (0, None):
            return None
        takes_value = action.nargs is None and "=" not in word
    return None


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


def command_parser(modules: Sequence[str]) -> Parser:
    """The parser of every command the `modules` register (each module's `register`)."""
    import importlib

    from . import __version__

    parser = Parser(
        description="Post a random line of tweets.txt to the networks in POST_TO, on 1 run in N. Without a command: one scheduled run.",
    )
    parser.add_argument("--version", action="version", version=f"twitterbot {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for module in modules:
        importlib.import_module(module).register(parser, commands)
    parser.commands = dict(commands.choices)
    return parser
