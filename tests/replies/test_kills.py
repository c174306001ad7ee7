"""Once per mention, whatever happens: `bot.py replies` (and a scheduled run, which answers before
its roll) killed with SIGKILL at every step of its round (the read; each reply before the server
keeps it and after), with the server losing answers or failing posts; then rounds that are not
killed. No mention may get two replies, every reply the server has must be in the history as sent
or maybe sent, and the database must pass its integrity check. Two processes started together
take the run lock in turn; two writers without the lock are stopped by the claim.

The kill points: 6 worlds (1 to 6 mentions) x (every step of a plain round, of a round capped at
two, of a scheduled run, and of rounds whose first reply's answer is lost or whose first post
fails): 226 in all (slow); a quick sample runs with the rest of the suite.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import List, Tuple

import pytest
from chat_network import World
from test_replies import Bot

from twitterbot.state.mentions import MentionTaken
from twitterbot.state.outcomes import AttemptStart
from twitterbot.state.store import HistoryStore

CHAT = Path(__file__).with_name("chat_network.py")
REPO = Path(__file__).resolve().parents[2]

# (mentions, setting changes, fault, the command): each kill point kills one run at one step.
Scenario = Tuple[int, Tuple[Tuple[str, str], ...], str, Tuple[str, ...]]


def _scenarios() -> List[Tuple[Scenario, int]]:
    points: List[Tuple[Scenario, int]] = []
    for mentions in range(1, 7):
        for settings, fault, command in (
            ((), "", ("replies",)),
            ((("MAX_REPLIES_PER_RUN", "2"),), "", ("replies",)),
            ((), "", ()),  # the scheduled run: its round, then its line
            ((), "lose_answer", ("replies",)),
            ((), "fail_post", ("replies",)),
        ):
            cap = int(dict(settings).get("MAX_REPLIES_PER_RUN", "10"))
            steps = 1 + 2 * min(mentions, cap) + (2 if not command else 0) - (1 if fault == "fail_post" else 0)
            for step in range(1, steps + 1):
                points.append(((mentions, settings, fault, command), step))
    return points


POINTS = _scenarios()
QUICK = POINTS[::25]


def _spawn(bot: Bot, *args: str) -> subprocess.Popen:
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(bot.path), "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(CHAT), "--env-file", str(bot.path / ".env"), *args],
        cwd=bot.path,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _check_once_per_mention(bot: Bot, world: World) -> None:
    replies = [post for post in world.posts_by("pibot") if post["reply_to"]]
    twice = [mention for mention, count in Counter(post["reply_to"] for post in replies).items() if count > 1]
    assert twice == [], f"answered twice: {twice}"
    with closing(sqlite3.connect(bot.path / "state" / "history.sqlite3")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute(
            "SELECT m.mention_id, m.status, a.outcome FROM mentions m LEFT JOIN attempts a ON a.id = m.attempt_id"
        ).fetchall()
    kept = {mention: (status, outcome) for mention, status, outcome in rows}
    for post in replies:  # every reply the server has is known as sent, or maybe sent
        status, outcome = kept[post["reply_to"]]
        assert status == "answered" and outcome in ("posted", "uncertain", "interrupted", "pending"), (post, kept)


def _kill_point(tmp_path: Path, scenario: Scenario, step: int) -> str:
    mentions, settings, fault, command = scenario
    tmp_path.mkdir(parents=True, exist_ok=True)
    world = World(tmp_path / "world.json")
    bot = Bot(tmp_path / "bot", world, LOOK_UP_UNCERTAIN="no", **dict(settings))
    at = datetime.now(timezone.utc) - timedelta(minutes=30)
    for number in range(mentions):
        world.say(f"person{number}", f"@pibot hello {number}", at=at + timedelta(minutes=number))
    if fault:
        world.fault(fault)
    world.kill_at(step)
    process = _spawn(bot, *command)
    _, err = process.communicate(timeout=120)
    assert process.returncode in (-signal.SIGKILL, 0, 75), err  # 75: the failed post
    world.kill_at(None)  # the later rounds run in this process: never kill it
    for _ in range(3):  # later rounds, not killed
        later = bot.run("replies")
        assert later.returncode in (0, 75), later.stderr
    _check_once_per_mention(bot, world)
    return "killed" if process.returncode == -signal.SIGKILL else "ran"


@pytest.mark.parametrize(("scenario", "step"), QUICK)
def test_a_sample_of_kill_points_never_answers_a_mention_twice(tmp_path: Path, scenario: Scenario, step: int) -> None:
    assert _kill_point(tmp_path, scenario, step) == "killed"


@pytest.mark.slow
def test_every_kill_point_never_answers_a_mention_twice(tmp_path: Path) -> None:
    assert len(POINTS) >= 200
    killed = Counter()
    for index, (scenario, step) in enumerate(POINTS):
        killed[_kill_point(tmp_path / str(index), scenario, step)] += 1
    assert killed["killed"] == len(POINTS), killed  # every step was reached and killed


def test_two_processes_started_together_answer_each_mention_once(tmp_path: Path) -> None:
    world = World(tmp_path / "world.json")
    bot = Bot(tmp_path / "bot", world)
    at = datetime.now(timezone.utc) - timedelta(minutes=30)
    for number in range(6):
        world.say(f"person{number}", f"@pibot hello {number}", at=at)
    for _ in range(3):
        both = [_spawn(bot, "replies"), _spawn(bot, "replies")]
        statuses = [process.wait(timeout=120) for process in both]
        assert set(statuses) <= {0, 75}, [process.stderr.read() for process in both]  # type: ignore[union-attr]
    assert sorted(post["reply_to"] for post in world.posts_by("pibot")) == [str(n) for n in range(1, 7)]
    _check_once_per_mention(bot, world)


def test_without_the_lock_the_claim_stops_a_second_reply(tmp_path: Path) -> None:
    from chat_network import ChatPoster  # noqa: F401 - the mentions' shape

    from twitterbot.state.mentions import MentionRow

    path = tmp_path / "history.sqlite3"
    now = datetime.now(timezone.utc)
    row = MentionRow("chat", "7", "ada", "@ada", False, "", "@pibot hello", now, "7", None, False)
    with HistoryStore(path) as one, HistoryStore(path) as two:
        one.record_mentions("chat", [row], "7", at=now, requests=1, cost=None)
        two.record_mentions("chat", [row], "7", at=now, requests=1, cost=None)  # read by both
        assert [each.mention_id for each in two.pending_mentions(["chat"])] == ["7"]
        one.claim_reply("chat", "7", "hi", AttemptStart("chat", now), rule="hello")
        with pytest.raises(MentionTaken):
            two.claim_reply("chat", "7", "hi", AttemptStart("chat", now), rule="hello")
        assert two.pending_mentions(["chat"]) == []
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM attempts").fetchone() == (1,)  # the loser recorded nothing


def test_a_run_without_reply_rules_imports_none_of_replies(tmp_path: Path) -> None:
    world = World(tmp_path / "world.json")
    bot = Bot(tmp_path / "bot", world)
    bot.write(REPLY_RULES="")
    probe = (
        "import sys, runpy; sys.argv = [sys.argv[1], '--env-file', sys.argv[2], '--dry-run', '--force'];"
        "sys.path.insert(0, sys.argv[0] and '.' or '.');"
        "from twitterbot.cli import built_in, main; from chat_network import Chat;"
        "status = main(registry=built_in([Chat()]));"
        "print(sorted(name for name in sys.modules if name.startswith('twitterbot.replies') or name == 'regex'))"
    )
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(bot.path), "LANG": "C.UTF-8", "PYTHONPATH": f"{REPO}:{CHAT.parent}"}
    result = subprocess.run(
        [sys.executable, "-c", probe, str(CHAT), str(bot.path / ".env")],
        cwd=bot.path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1].replace("'", '"')) == ["twitterbot.replies"]
    os.environ.get("PATH")  # (nothing else to clean up)
