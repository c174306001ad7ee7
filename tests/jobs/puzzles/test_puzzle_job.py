"""The puzzle job: events become output, JSON, checkpoints and posts (through the X emulator)."""

from __future__ import annotations

import functools
import io
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import List

import pytest
from conftest import REGISTRY, by_network
from reporters import make_reporter

from twitterbot.jobs.puzzles import hidoku, jodici
from twitterbot.jobs.puzzles.job import (
    Options,
    challenge_key,
    checkpoint_path,
    make_challenge,
    post_challenge,
    reveal_challenge,
    run_puzzle,
    save_challenge,
)
from twitterbot.progress.reporter import Reporter
from twitterbot.progress.reports import NullReporter, Templates
from twitterbot.state.store import HistoryStore

MANY = "1,_,_,_\n_,_,_,_\n_,_,_,_\n"  # a Hidoku with thousands of solutions


def chatty(module, **options):
    """The kind module, its search reporting progress as often as it can (the edge we fake)."""
    names = {name: getattr(module, name) for name in dir(module) if not name.startswith("__")}
    return SimpleNamespace(**{**names, "solve": functools.partial(module.solve, **options)})


def reporter_for(store: HistoryStore, poster, name: str = "puzzle", **options) -> Reporter:
    settings = dict(every=0, milestone_every=0, first_after=0, max_posts_per_day=50)
    settings.update(options)
    return make_reporter(name, posters=by_network(poster), store=store, **settings, registry=REGISTRY)


def test_progress_and_the_result_are_posted_as_a_thread(tmp_path: Path, poster, emulator) -> None:
    puzzle = hidoku.parse(MANY)
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        reporter = reporter_for(store, poster, every=86400, milestone_every=86400)
        result = run_puzzle(hidoku, puzzle, reporter, Options("many.txt", all_solutions=True), out=io.StringIO())
    assert result.complete and result.solutions == hidoku.count_solutions(puzzle)
    assert len(emulator.posts) == 2, emulator.texts  # the first news at once, then only the result
    assert emulator.texts[0].startswith("puzzle: 1 solution so far, after ")
    assert re.match(rf"puzzle finished in \d+s: hidoku many.txt: {result.solutions:,} solutions", emulator.texts[1])
    assert emulator.texts[1].endswith("searched to the end after " + emulator.texts[1].split("after ", 1)[1])
    assert emulator.posts[1].reply_to == emulator.posts[0].id


def test_search_progress_reaches_the_reporter() -> None:
    ticks = iter(range(10**9))
    module = chatty(hidoku, clock=lambda: float(next(ticks)), progress_every=0)
    messages: List[str] = []

    class Recorder(NullReporter):
        def update(self, message: str, *, milestone: bool = False, **fields: object):
            messages.append(message)
            return super().update(message)

        def done(self, message: str = "", **fields: object):
            messages.append("done: " + message)
            return super().done(message)

    run_puzzle(module, hidoku.parse(MANY), Recorder(), Options("m", all_solutions=True), out=io.StringIO())
    progress = [m for m in messages if "nodes searched" in m]
    assert progress and all(
        "/s), " in m and "solutions so far, about " in m and "% of the search done" in m for m in progress
    )
    assert messages[-1].startswith("done: hidoku m: ") and "solutions, searched to the end" in messages[-1]


def test_json_output_and_the_output_file(tmp_path: Path) -> None:
    out = io.StringIO()
    target = tmp_path / "answer.json"
    puzzle = jodici.parse(jodici.EXAMPLE)
    run_puzzle(
        jodici, puzzle, NullReporter(), Options("example", all_solutions=True, output=target, as_json=True), out=out
    )
    printed = json.loads(out.getvalue())
    assert printed["puzzle"] == "example" and printed["solutions"] == 1 and printed["complete"] is True
    assert printed["solution"] == [[3, 7, 5, 8, 4, 3], [6, 1, 1, 5, 9, 8], [6, 7, 9, 2, 2, 4]]
    assert json.loads(target.read_text()) == printed
    text = io.StringIO()
    run_puzzle(jodici, puzzle, NullReporter(), Options("example", all_solutions=True, output=target), out=text)
    assert target.read_text() == text.getvalue() and text.getvalue().startswith("solution 1:\n3,7,5,8,4,3\n")


def test_a_stopped_job_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    puzzle = hidoku.parse(MANY)
    total = hidoku.count_solutions(puzzle)
    checkpoint = checkpoint_path(tmp_path, "hidoku", MANY, True)
    ticks = iter(range(10**9))
    module = chatty(hidoku, clock=lambda: float(next(ticks)), progress_every=0)

    class Stop(Exception):
        pass

    seen: List[str] = []

    class StopAfterProgress(NullReporter):
        def update(self, message: str, *, milestone: bool = False, **fields: object):
            seen.append(message)
            if "solutions so far" in message and "nodes searched" in message and len(seen) > 30:
                raise Stop
            return super().update(message)

    with pytest.raises(Stop):
        run_puzzle(
            module,
            puzzle,
            StopAfterProgress(),
            Options("m", all_solutions=True, checkpoint=checkpoint),
            out=io.StringIO(),
        )
    saved = json.loads(checkpoint.read_text())
    assert saved["kind"] == "hidoku" and saved["first"] is not None and 0 < saved["solutions"] < total
    out = io.StringIO()
    result = run_puzzle(
        hidoku, puzzle, NullReporter(), Options("m", all_solutions=True, checkpoint=checkpoint), out=out
    )
    assert result.resumed and result.solutions == total and result.first == saved["first"]
    assert out.getvalue().startswith(f"resuming an earlier search: {saved['solutions']} solutions found before\n")
    assert not checkpoint.exists()


def test_the_challenge_is_posted_then_revealed_once_as_a_reply(tmp_path: Path, poster, emulator) -> None:
    challenge = make_challenge("Hidoku 2026-11-23", 6, 6, random.Random(4), REGISTRY.default())
    save_challenge(tmp_path, challenge)
    templates = Templates(progress="{message}", done="{name}: {message}")
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        for _ in range(2):  # the second reporter run finds the first's thread
            with reporter_for(
                store, poster, challenge.name, run_key=challenge_key(challenge.name), templates=templates
            ) as reporter:
                if not emulator.posts:
                    post_challenge(reporter, challenge, out=io.StringIO())
                else:
                    reveal_challenge(reporter, challenge, out=io.StringIO())
        with reporter_for(
            store, poster, challenge.name, run_key=challenge_key(challenge.name), templates=templates
        ) as again:
            reveal_challenge(again, challenge, out=io.StringIO())  # already revealed: nothing is posted
    assert len(emulator.posts) == 2
    assert emulator.texts[0] == challenge.post and emulator.texts[0].startswith("Hidoku 2026-11-23: place 1-36")
    assert emulator.texts[1].startswith("Hidoku 2026-11-23: the solution: ")
    assert emulator.posts[1].reply_to == emulator.posts[0].id
    numbers = [int(word) for word in emulator.texts[1].split(": ", 2)[2].replace("/", " ").split()]
    assert sorted(numbers) == list(range(1, 37))
