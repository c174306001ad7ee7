"""A flag means the same wherever it is typed, or it is refused (exit 64): never silently ignored.

A misplaced `--dry-run` that was ignored posted for real, and X charges per post. So every global
flag is tried with every command, before and after the command's name, and the parsed meaning
must be the same (or both refused); then the dangerous cases are run end to end against the X
emulator.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Dict, List, Tuple

import pytest
from conftest import A_DAEMON_OF_THIS_CHECKOUT, REGISTRY, BotHome

from twitterbot.cli import parse_args

# command: (its words in groups, the words that must stay last). A flag may go before the first
# group or after any of them; "run" is the plain scheduled run, with no command word.
COMMANDS: Dict[str, Tuple[List[List[str]], List[str]]] = {
    "run": ([], []),
    "check": ([["check"]], []),
    "daemon": ([["daemon"]], []),
    "cron": ([["cron"]], []),
    "systemd": ([["systemd"]], []),
    "history": ([["history"]], []),
    "account": ([["account"], ["--mark-bot"]], []),
    "serve": ([["serve"], ["--port", "8080"]], []),
    "watch": ([["watch"], ["--name", "job"]], ["--", "true"]),
    # argparse takes no option between two positionals (`pegs solve --debug pyramid` is refused).
    "pegs": ([["pegs"], ["solve", "pyramid"]], []),
    "monkey": ([["monkey"], ["--keystrokes", "1000"]], []),
    "puzzle": ([["puzzle"], ["hidoku", "--example"]], []),
    "replies": ([["replies"]], []),
    "bots": ([["bots"]], []),
    "new": ([["new", "moon-poems"], ["--from", "/somewhere/bot.json"]], []),
}

# flag: (the words typed, what it sets)
GLOBAL_FLAGS: Dict[str, Tuple[List[str], str]] = {
    "--env-file": (["--env-file", "/somewhere/bot.env"], "env_file"),
    "-v": (["-v"], "verbose"),
    "--verbose": (["--verbose"], "verbose"),
    "-q": (["-q"], "quiet"),
    "--quiet": (["--quiet"], "quiet"),
    "--debug": (["--debug"], "debug"),
    "--bot": (["--bot", "moon-poems"], "bot"),
    "--bots": (["--bots", "/somewhere/bots"], "bots"),
    "--dry-run": (["--dry-run"], "dry_run"),
    "--json": (["--json"], "json"),
}
# The commands that take a global flag, where not every command does. --dry-run: every command
# that can post; the others never post, so it would mean nothing there. --json: those that print JSON.
TAKEN_BY = {
    "--dry-run": {"run", "daemon", "watch", "pegs", "monkey", "puzzle", "replies"},
    "--json": {"run", "history", "puzzle", "bots"},
}

RUN_FLAGS: Dict[str, List[str]] = {
    "--force": ["--force"],
    "--one-in": ["--one-in", "3"],
    "--tweets": ["--tweets", "other.txt"],
    "--seed": ["--seed", "5"],
    "--jitter": ["--jitter"],
}
# Commands that take a flag of the plain run as their own, with the same meaning.
ALSO_TAKEN_BY = {"--seed": {"daemon", "monkey", "puzzle"}}

REFUSED = "refused"


def parsed(argv: List[str], capsys: pytest.CaptureFixture) -> object:
    """The parsed namespace as a dict, or REFUSED after checking the refusal is a usage error (64)."""
    try:
        return vars(parse_args(argv, REGISTRY))
    except SystemExit as exc:
        assert exc.code == 64, argv
        return REFUSED


def placements(command: str, flag: List[str]) -> List[List[str]]:
    """The command line with `flag` before the command's name and after each of its words."""
    groups, tail = COMMANDS[command]
    words = [[word for group in groups[:at] for word in group] for at in range(len(groups) + 1)]
    return [[*words[at], *flag, *words[-1][len(words[at]) :], *tail] for at in range(len(groups) + 1)]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flag", GLOBAL_FLAGS)
def test_a_global_flag_means_the_same_before_and_after_the_command(
    command: str, flag: str, capsys: pytest.CaptureFixture
) -> None:
    words, dest = GLOBAL_FLAGS[flag]
    outcomes = [parsed(argv, capsys) for argv in placements(command, words)]
    if command in TAKEN_BY.get(flag, COMMANDS):
        first = outcomes[0]
        assert isinstance(first, dict) and first[dest] not in (None, False), outcomes
        assert all(outcome == first for outcome in outcomes), outcomes
        # ... and it changes nothing else: the namespace is the plain command's, plus this flag.
        plain = parsed(placements(command, [])[0], capsys)
        assert isinstance(plain, dict) and {**plain, dest: first[dest]} == first
    else:
        assert outcomes == [REFUSED] * len(outcomes)
        message = capsys.readouterr().err
        assert flag in message and f"`{command}`" in message


@pytest.mark.parametrize("command", [name for name in COMMANDS if name != "run"])
@pytest.mark.parametrize("flag", RUN_FLAGS)
def test_a_flag_of_the_plain_run_is_refused_by_a_command_that_does_not_take_it(
    command: str, flag: str, capsys: pytest.CaptureFixture
) -> None:
    outcomes = [parsed(argv, capsys) for argv in placements(command, RUN_FLAGS[flag])]
    if command in ALSO_TAKEN_BY.get(flag, ()):
        assert REFUSED not in outcomes and all(outcome == outcomes[0] for outcome in outcomes)
        assert outcomes[0]["seed"] == 5  # type: ignore[index]
    else:
        assert outcomes == [REFUSED] * len(outcomes)
        message = capsys.readouterr().err
        assert flag in message and f"`{command}`" in message


def test_every_registered_command_is_in_the_table() -> None:
    """A new command gets its row, so its flags are checked in every place too."""
    from twitterbot.cli import build_parser

    assert set(build_parser(REGISTRY).commands) | {"run"} == set(COMMANDS)


def test_the_plain_run_takes_its_flags() -> None:
    args = parse_args(
        ["--force", "--one-in", "3", "--tweets", "t.txt", "--seed", "5", "--jitter", "--dry-run"], REGISTRY
    )
    assert (args.force, args.one_in, args.tweets, args.seed, args.jitter, args.dry_run) == (
        True,
        "3",
        "t.txt",
        5,
        True,
        True,
    )
    plain = parse_args([], REGISTRY)
    assert (plain.force, plain.one_in, plain.seed, plain.jitter, plain.dry_run, plain.json) == (
        False,
        None,
        None,
        False,
        False,
        False,
    )


def test_the_watched_command_keeps_its_own_flags() -> None:
    args = parse_args(["watch", "--", "tool", "--dry-run", "--json", "--force"], REGISTRY)
    assert args.command == ["--", "tool", "--dry-run", "--json", "--force"] and args.dry_run is False


# -- end to end: a misplaced --dry-run posts nothing ----------------------------------------------


def test_dry_run_before_watch_posts_nothing(home: BotHome) -> None:
    result = home.run("--dry-run", "watch", "--name", "demo", "--", "sh", "-c", "echo step 1")
    assert result.returncode == 0, result.stderr
    assert "dry run, not posted" in result.stderr
    assert home.emulator.seen == [] and home.emulator.posts == []


def test_dry_run_before_pegs_posts_nothing(home: BotHome) -> None:
    result = home.run("--dry-run", "pegs", "solve", "cross")
    assert result.returncode == 0, result.stderr
    assert "dry run, not posted" in result.stdout + result.stderr
    assert home.emulator.seen == []


def test_dry_run_before_monkey_posts_nothing(home: BotHome) -> None:
    verse = home.path / "verse.txt"
    verse.write_text("to be or not to be that is the question\n", encoding="utf-8")
    result = home.run("--dry-run", "monkey", "--target", str(verse), "--keystrokes", "100000", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "dry run, not posted" in result.stdout + result.stderr
    assert home.emulator.seen == []
    assert not (home.path / "state" / "monkey-monkey.json").exists()


@A_DAEMON_OF_THIS_CHECKOUT
def test_dry_run_before_daemon_is_a_dry_run(home: BotHome) -> None:
    home.env_file.write_text("TWEET_TIMES=03:00\n")  # no keys: a real daemon would refuse to start
    process = home.start("--dry-run", "daemon")
    lines = []
    while not lines or "next run at" not in lines[-1]:  # then it waits, and SIGTERM finds it there
        lines.append(process.stderr.readline())
        assert lines[-1], "the daemon ended before it started: " + "".join(lines)
    assert "daemon started" in lines[0] and "dry run, nothing will be posted" in lines[0]
    process.send_signal(signal.SIGTERM)
    try:
        _, rest = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # say what the daemon was doing, rather than only "timed out"
        process.kill()
        _, rest = process.communicate()
        pytest.fail("SIGTERM did not stop the daemon within 30 s; its log:\n" + "".join(lines) + rest)
    assert process.returncode == 0, "".join(lines) + rest
    assert home.emulator.seen == []


def test_a_flag_the_command_does_not_take_stops_it_before_anything_runs(home: BotHome) -> None:
    marker = home.path / "ran"
    result = home.run("--force", "watch", "--", "touch", str(marker))
    assert result.returncode == 64
    assert "--force" in result.stderr and "`watch`" in result.stderr
    assert not marker.exists() and home.emulator.seen == []


@pytest.mark.parametrize(
    "argv",
    [["pegs", "solve", "--no-post", "german"], ["puzzle", "hidoku", "--first", "grid.txt"]],
    ids=["pegs", "puzzle"],
)
def test_a_word_after_an_option_is_refused_with_where_it_goes(tmp_path, capsys, argv: List[str]) -> None:
    """A command's optional word goes before its options, on every Python: Python 3.13's argparse
    (gh-59317) would take `pegs solve --no-post german`, older ones cannot; the bot refuses it
    everywhere, saying where the word goes instead of only "unrecognized arguments"."""
    from twitterbot.cli import main

    code = main(argv, environ={}, project_dir=tmp_path)
    assert code == 64
    said = capsys.readouterr().err
    assert f"a word like '{argv[-1]}' goes before the options" in said, said


@pytest.mark.parametrize(
    ("argv", "board"),
    [
        (["pegs", "solve", "german", "--no-post"], "german"),
        (["pegs", "--no-post", "solve", "german"], "german"),
        (["pegs", "solve", "--no-post"], None),
    ],
)
def test_a_word_before_the_options_is_taken_wherever_the_options_are(argv: List[str], board) -> None:
    args = parse_args(argv, REGISTRY)
    assert (args.action, args.board) == ("solve", board)
