"""`bot.py puzzle KIND`: run as cron runs it, against the X emulator."""

from __future__ import annotations

import json

from conftest import BotHome

from twitterbot.cli import main
from twitterbot.jobs.puzzles.job import available_kinds


def test_help_lists_every_kind(capsys) -> None:
    assert main(["puzzle", "--help"]) == 0
    shown = capsys.readouterr().out
    kinds = available_kinds()
    assert kinds and all(f"  {name} " in shown and module.ABOUT in shown for name, module in kinds.items())


def test_an_unknown_kind_is_a_usage_error_with_a_suggestion(capsys) -> None:
    assert main(["puzzle", "jodicci", "--example"]) == 64
    assert "there is no puzzle kind 'jodicci': did you mean jodici?" in capsys.readouterr().err


def test_solving_from_the_command_line(home: BotHome) -> None:
    solved = home.run_process("puzzle", "equation", "--example", "--no-post", "--json")
    assert solved.returncode == 0, solved.stderr
    result = json.loads(solved.stdout)
    assert {"puzzle", "solutions", "complete", "solution"} <= set(result)
    assert result["solution"] == [[26, 19, 16], [25, 8, 16], [15, 0, 11]] and result["solutions"] == 1
    (home.path / "bad.csv").write_text("3,7,_,_,_,_\n_,_,1,5,9\n6,_,_,_,_,_\n")
    bad = home.run_process("puzzle", "jodici", str(home.path / "bad.csv"), "--no-post")
    assert bad.returncode == 65 and "bad.csv line 2 has 5 cells" in bad.stderr
    both = home.run_process("puzzle", "jodici", str(home.path / "bad.csv"), "--example")
    assert both.returncode == 64 and "give one of them" in both.stderr
    unwritable = home.run_process(
        "puzzle", "jodici", "--example", "--no-post", "--output", str(home.path / "no" / "such.txt")
    )
    assert unwritable.returncode == 73 and "such.txt" in unwritable.stderr
    posted = home.run_process("puzzle", "jodici", "--example")
    assert posted.returncode == 0, posted.stderr
    assert home.emulator.texts[-1].startswith("puzzle jodici example finished in")
    assert "3 7 5 8 4 3 / 6 1 1 5 9 8 / 6 7 9 2 2 4" in home.emulator.texts[-1]


def test_the_daily_challenge_and_its_solution(home: BotHome) -> None:
    made = home.run("puzzle", "hidoku", "--generate", "--size", "6x6", "--seed", "2", "--name", "Hidoku #1")
    assert made.returncode == 0, made.stderr
    again = home.run("puzzle", "hidoku", "--generate", "--name", "Hidoku #1")
    assert again.returncode == 0 and "already posted" in again.stderr
    revealed = home.run("puzzle", "hidoku", "--reveal", "Hidoku #1")
    assert revealed.returncode == 0, revealed.stderr
    assert len(home.emulator.posts) == 2
    assert home.emulator.texts[0].startswith("Hidoku #1: place 1-36 so each number touches the next")
    assert home.emulator.texts[1].startswith("Hidoku #1: the solution: ")
    assert home.emulator.posts[1].reply_to == home.emulator.posts[0].id
    unknown = home.run("puzzle", "hidoku", "--reveal", "Hidoku #2")
    assert unknown.returncode == 64 and "no challenge named 'Hidoku #2'" in unknown.stderr
    assert len(home.emulator.posts) == 2
