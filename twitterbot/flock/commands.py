"""The flock's own commands: `bots` (every bot: its networks, last post, next run, any problem)
and `new NAME` (a bot's folder, from config.example.env, or a grammar moved in)."""

from __future__ import annotations

import argparse
import os

from ..arguments import Commands, Parser, absolute, add_command, print_json
from ..errors import ExitStatus
from ..settings.loading import Config
from ..state.clock import utc_now

__all__ = ["register"]


def register(parser: Parser, commands: Commands) -> None:
    add_command(
        commands,
        "bots",
        _bots,
        takes=("json",),
        help="list every bot of the flock: its networks, last post, next run and any problem",
        json_help="print one JSON object: the flock folder and its bots",
    )
    new = add_command(commands, "new", _new, help="make a bot's folder in the flock, its .env from config.example.env")
    new.add_argument("name", metavar="NAME", help="the bot's name: lower-case letters, digits, - and _")
    new.add_argument(
        "--from",
        dest="grammar",
        metavar="FILE",
        help="a grammar exported from CBDQ, CBTS or BBDQ (JSON): copied in as bot.json, TWEETS_FILE",
    )
    new.add_argument("--replies", metavar="FILE", help="its reply rules (JSON): copied in as replies.json, REPLY_RULES")


def _bots(args: argparse.Namespace, config: Config) -> int:
    """Every bot with its networks, last post, next run and any problem; exit 78 if any has one."""
    from .listing import flock_states

    flock = args.flock
    states = list(flock_states(flock, config.registry, environ=os.environ, now=utc_now()))
    worst = int(ExitStatus.CONFIG_ERROR) if flock.problems or any(s.problem for s in states) else 0
    if args.json:
        folder = str(flock.folder) if flock.folder else None
        bots = [state.as_dict() for state in states]
        print_json({"folder": folder, "bots": bots, "problems": list(flock.problems)})
        return worst
    if not states:
        print(f"no bots yet: `bot.py new NAME` makes one in {flock.home or 'a flock folder (--bots DIR)'}")
    width = max((len(state.name) for state in states), default=0)
    for state in states:
        if state.problem and not state.networks:
            print(f"{state.name:<{width}}  PROBLEM  {state.problem}")
            continue
        last = f"last post {_when(state.last_post)}" if state.last_post else "no post yet"
        upcoming = f"next run {_when(state.next_run)}" if state.next_run else "no run to come"
        print(f"{state.name:<{width}}  {', '.join(state.networks)}; {last}; {upcoming}")
        if state.problem:
            print(f"{'':<{width}}  PROBLEM  {state.problem}")
    for problem in flock.problems:
        print(f"PROBLEM  {problem}")
    return worst


def _when(moment: object) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")  # type: ignore[attr-defined]


def _new(args: argparse.Namespace, config: Config) -> int:
    """Make the bot's folder and say what to do next."""
    from .new import make_bot

    bot = make_bot(args.flock, args.name, grammar=absolute(args.grammar), replies=absolute(args.replies))
    print(f"made {bot.folder} with its settings in {bot.env_file} (only you can read it)")
    if args.grammar:
        print(
            f"its grammar is {bot.folder / 'bot.json'}: set POST_TO (x for CBDQ, mastodon for CBTS, bluesky for BBDQ)"
        )
    else:
        print(f"next: write its lines in {bot.folder / 'tweets.txt'} and set POST_TO")
    print(f"then fill in its keys in {bot.env_file} and run: bot.py --bot {bot.name} check")
    return 0
