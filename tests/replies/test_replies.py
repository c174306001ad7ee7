"""Replies end to end through the command line, against a test-only network that listens
(chat_network.py): a mention matching a rule gets exactly one reply threaded under it; a second
round answers nothing and reads once; the loop rules, the cap, the cursor, "stop", the budget and
a scheduled run's round before its roll."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from chat_network import Chat, World
from in_process import run_in_process

from twitterbot.cli import built_in

REGISTRY = built_in([Chat()])

RULES = {
    "(?<=\\s|^)hello\\b": "hi there!",
    "🐸": "ribbit {unlisted}",
    "quiet": "",
    "zero": "0",
    "weather": "#weather#",
    ".": "I only know hello.",
}


class Bot:
    """A bot's folder: its .env (POST_TO=chat), rules and world; `run` runs bot.py in this process."""

    def __init__(self, path: Path, world: World, account: str = "pibot", **settings: str) -> None:
        self.path, self.world = path, world
        path.mkdir(exist_ok=True)
        (path / "replies.json").write_text(json.dumps(RULES, ensure_ascii=False), encoding="utf-8")
        (path / "tweets.txt").write_text("a scheduled line\n")
        self.settings: Dict[str, str] = {
            "POST_TO": "chat",
            "CHAT_WORLD": str(world.path),
            "CHAT_ACCOUNT": account,
            "REPLY_RULES": "replies.json",
            "TWEET_ONE_IN": "1",
            "MIN_POST_GAP": "0",
            **settings,
        }
        self.write()

    def write(self, **settings: str) -> None:
        self.settings.update(settings)
        env = self.path / ".env"
        env.write_text("".join(f"{name}={value}\n" for name, value in self.settings.items()))
        env.chmod(0o600)

    def run(self, *args: str) -> subprocess.CompletedProcess:
        environ = {"PATH": "/usr/bin:/bin", "HOME": str(self.path), "LANG": "C.UTF-8"}
        return run_in_process(
            ["--env-file", str(self.path / ".env"), *args], environ=environ, cwd=self.path, registry=REGISTRY
        )

    def mentions(self) -> List[tuple]:
        with closing(sqlite3.connect(self.path / "state" / "history.sqlite3")) as conn:
            return conn.execute("SELECT mention_id, status, reason, rule FROM mentions ORDER BY id").fetchall()

    def later(self, minutes: float) -> None:
        """`minutes` pass for what the history keeps: its tries and readings are that much older."""
        from twitterbot.state.database import iso, parse_iso

        def earlier(text: object) -> object:
            return iso(parse_iso(text) - timedelta(minutes=minutes)) if isinstance(text, str) else text

        with closing(sqlite3.connect(self.path / "state" / "history.sqlite3")) as conn, conn:
            for table, columns in (("attempts", ("sent_at", "finished_at")), ("mentions", ("seen_at",))):
                for row in conn.execute(f"SELECT id, {', '.join(columns)} FROM {table}").fetchall():
                    sets = ", ".join(f"{column} = ?" for column in columns)
                    conn.execute(f"UPDATE {table} SET {sets} WHERE id = ?", (*map(earlier, row[1:]), row[0]))


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path / "world.json")


@pytest.fixture
def bot(tmp_path: Path, world: World) -> Bot:
    return Bot(tmp_path / "bot", world)


def _recent(world: World, author: str, text: str, **options: object) -> str:
    return world.say(author, text, at=datetime.now(timezone.utc) - timedelta(minutes=5), **options)  # type: ignore[arg-type]


def test_a_mention_matching_a_rule_gets_one_reply_threaded_under_it_and_a_second_round_reads_once(
    bot: Bot, world: World
) -> None:
    asked = _recent(world, "ada", "@pibot hello, bot")
    first = bot.run("replies")
    assert first.returncode == 0, first.stderr
    replies = world.posts_by("pibot")
    assert [(post["text"], post["reply_to"]) for post in replies] == [("@ada hi there!", asked)]
    assert world.reads() == 1
    second = bot.run("replies")
    assert second.returncode == 0, second.stderr
    assert len(world.posts_by("pibot")) == 1 and world.reads() == 2  # one read, nothing answered
    assert bot.mentions() == [(asked, "answered", None, "(?<=\\s|^)hello\\b")]


def test_the_first_rule_in_the_file_s_order_wins_and_empty_or_zero_responses_answer_nothing(
    bot: Bot, world: World
) -> None:
    for author, text in (("ada", "@pibot quiet hello"), ("bo", "@pibot quiet please"), ("cy", "@pibot zero")):
        _recent(world, author, text)
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!"]
    statuses = {row[0]: (row[1], row[3]) for row in bot.mentions()}
    assert statuses["2"] == ("skipped", "quiet") and statuses["3"] == ("skipped", "zero")


def test_a_reply_is_never_more_public_than_its_mention_nor_than_its_visibility_word(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot 🐸", visibility="direct")
    _recent(world, "bo", "@pibot 🐸", visibility="public")
    assert bot.run("replies").returncode == 0
    assert [(post["text"], post["visibility"]) for post in world.posts_by("pibot")] == [
        ("@ada ribbit", "direct"),
        ("@bo ribbit", "unlisted"),
    ]


def test_a_limited_or_unnamed_visibility_is_answered_as_privately_as_can_be(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot 🐸", visibility="limited")
    _recent(world, "bo", "@pibot 🐸")  # the network said none
    assert bot.run("replies").returncode == 0
    assert [(post["text"], post["visibility"]) for post in world.posts_by("pibot")] == [
        ("@ada ribbit", "direct"),
        ("@bo ribbit", "direct"),
    ]


def test_an_escape_in_an_author_s_handle_reaches_neither_the_terminal_nor_the_reply(bot: Bot, world: World) -> None:
    _recent(world, "ada\x1b]0;owned\x07\x1b[31m", "@pibot hello")
    dry = bot.run("replies", "--dry-run")
    assert dry.returncode == 0 and "\x1b" not in dry.stdout + dry.stderr and "@ada]0;owned[31m" in dry.stdout
    assert bot.run("replies").returncode == 0
    [reply] = world.posts_by("pibot")
    assert reply["text"] == "@ada]0;owned[31m hi there!"


def test_a_response_expands_with_the_bot_s_grammar(bot: Bot, world: World) -> None:
    (bot.path / "tweets.json").write_text(
        json.dumps({"origin": ["#weather#"], "weather": ["rain, #mood#"], "mood": ["sadly"]})
    )
    bot.write(TWEETS_FILE="tweets.json")
    _recent(world, "ada", "@pibot weather?")
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada rain, sadly"]


def test_bots_nobot_profiles_and_the_cooldown_are_left_alone(bot: Bot, world: World) -> None:
    world.mark_bot("robo")
    world.set_bio("shy", "please, #NoBot")
    _recent(world, "robo", "@pibot hello")
    _recent(world, "shy", "@pibot hello")
    _recent(world, "ada", "@pibot hello")
    _recent(world, "ada", "@pibot hello again")
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!"]
    reasons = [row[2] or "" for row in bot.mentions()]
    assert "REPLY_TO_BOTS=no" in reasons[0] and "#nobot" in reasons[1] and "REPLY_COOLDOWN=1h" in reasons[3]
    bot.write(REPLY_TO_BOTS="yes")
    _recent(world, "robo", "@pibot hello once more")
    assert bot.run("replies").returncode == 0
    assert world.posts_by("pibot")[-1]["text"] == "@robo hi there!"


def test_stop_stops_the_bot_answering_that_account_for_good_and_check_lists_it(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot STOP.")
    assert bot.run("replies").returncode == 0
    bot.write(REPLY_COOLDOWN="0")
    _recent(world, "ada", "@pibot hello")
    assert bot.run("replies").returncode == 0
    assert world.posts_by("pibot") == []  # no acknowledgement, no later reply
    check = bot.run("check")
    assert "@ada on chat said stop" in check.stderr + check.stdout


def test_at_most_max_replies_per_run_oldest_first_and_the_rest_in_the_next_round(bot: Bot, world: World) -> None:
    bot.write(MAX_REPLIES_PER_RUN="2")
    for number in range(5):
        _recent(world, f"person{number}", f"@pibot hello {number}")
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@person0 hi there!", "@person1 hi there!"]
    assert bot.run("replies").returncode == 0
    assert bot.run("replies").returncode == 0
    assert [post["reply_to"] for post in world.posts_by("pibot")] == ["1", "2", "3", "4", "5"]


def test_a_first_round_answers_only_the_last_day(bot: Bot, world: World) -> None:
    world.say("ada", "@pibot hello from last week", at=datetime.now(timezone.utc) - timedelta(days=7))
    _recent(world, "bo", "@pibot hello from today")
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@bo hi there!"]


def test_a_network_that_cannot_be_read_is_a_warning_and_nothing_is_lost(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot hello")
    world.fault("fail_read")
    failed = bot.run("replies")
    assert failed.returncode == 75 and "could not read the mentions" in failed.stderr
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!"]


def test_a_failed_reply_is_answered_by_a_later_round_and_a_lost_answer_is_never_sent_again(
    bot: Bot, world: World
) -> None:
    _recent(world, "ada", "@pibot hello")
    world.fault("fail_post")
    assert bot.run("replies").returncode == 75
    assert world.posts_by("pibot") == []
    assert bot.run("replies").returncode == 0  # it waits out its back-off
    assert world.posts_by("pibot") == []
    bot.later(6)
    assert bot.run("replies").returncode == 0
    assert len(world.posts_by("pibot")) == 1
    _recent(world, "bo", "@pibot hello")
    world.fault("lose_answer")
    bot.run("replies")
    bot.write(LOOK_UP_UNCERTAIN="yes")
    for _ in range(2):
        assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!", "@bo hi there!"]


def test_two_copies_of_the_bot_mentioning_each_other_stop_within_one_reply_each(tmp_path: Path, world: World) -> None:
    """Neither can tell the other is a bot (as on X); the cooldown is 0: the conversation rule stops them."""
    one = Bot(tmp_path / "one", world, "one", REPLY_COOLDOWN="0")
    two = Bot(tmp_path / "two", world, "two", REPLY_COOLDOWN="0")
    _recent(world, "one", "@two hello, other bot")  # one's own post starts it
    for _ in range(4):
        assert two.run("replies").returncode == 0
        assert one.run("replies").returncode == 0
    assert len(world.posts_by("two")) == 1 and len(world.posts_by("one")) == 2  # its first post and one reply


def test_reads_and_replies_count_in_the_monthly_budget_and_a_reply_over_it_is_refused(bot: Bot, world: World) -> None:
    bot.write(CHAT_MONTHLY_BUDGET="0.0115")  # one read (0.001) and one reply (0.01)
    _recent(world, "ada", "@pibot hello")
    _recent(world, "bo", "@pibot hello")
    assert bot.run("replies").returncode == 0
    assert len(world.posts_by("pibot")) == 1
    assert "would pass CHAT_MONTHLY_BUDGET" in (bot.mentions()[1][2] or "")
    spent = bot.run("replies")  # the next read would pass the budget: not made
    assert world.reads() == 1, spent.stderr


def test_dry_run_lists_each_mention_and_its_reply_and_sends_and_records_nothing(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot hello")
    _recent(world, "bo", "@pibot quiet")
    shown = bot.run("replies", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "reply (" in shown.stdout and "@ada hi there!" in shown.stdout and "no reply" in shown.stdout
    assert world.posts_by("pibot") == [] and not (bot.path / "state" / "history.sqlite3").exists()
    bot.write(CHAT_ACCOUNT="")
    keyless = bot.run("replies", "--dry-run")
    assert keyless.returncode == 0 and "cannot be read" in keyless.stderr


def test_dry_run_asks_the_delivery_s_plan_and_says_a_reply_too_long_for_its_network_would_not_go(
    bot: Bot, world: World
) -> None:
    """The dry run is the Delivery's (`Delivery.plan`): what a round would skip as too long, it lists
    with no reply, and the round then skips it for the same reason."""
    rules = {"long": "x" * 120, **RULES}  # the chat network takes 100 characters
    (bot.path / "replies.json").write_text(json.dumps(rules, ensure_ascii=False), encoding="utf-8")
    _recent(world, "ada", "@pibot long please")
    _recent(world, "bo", "@pibot hello")
    shown = bot.run("replies", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "@pibot long please\n  no reply: the reply is too long for Chat" in shown.stdout
    assert "@pibot hello\n  reply (" in shown.stdout and world.posts_by("pibot") == []
    assert bot.run("replies").returncode == 0
    assert [post["text"] for post in world.posts_by("pibot")] == ["@bo hi there!"]
    assert bot.mentions()[0][1:3] == ("skipped", "the reply is too long for Chat")


def test_a_scheduled_run_answers_before_its_roll(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot hello")
    ran = bot.run()
    assert ran.returncode == 0, ran.stderr
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!", "a scheduled line"]


def test_check_names_a_rule_that_does_not_compile_and_a_round_that_reaches_it_stops_there(
    bot: Bot, world: World
) -> None:
    (bot.path / "replies.json").write_text(json.dumps({"fine": "ok", "(broken": "never"}))
    check = bot.run("check")
    assert check.returncode == 65 and '"(broken"' in check.stdout + check.stderr
    assert bot.run("replies").returncode == 0  # no mention reaches it: a round compiles no rule it needs not
    _recent(world, "ada", "@pibot hi")
    replies = bot.run("replies")
    assert replies.returncode == 65 and '"(broken"' in replies.stderr and "replies.json" in replies.stderr
    (bot.path / "replies.json").write_text(json.dumps({"fine": "ok", "hi": "hello"}))
    assert bot.run("replies").returncode == 0  # the mention waited for the fix
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hello"]


def test_failing_mentions_never_starve_the_round_wait_out_a_back_off_and_are_counted(bot: Bot, world: World) -> None:
    rules = {"broken": "{imgg https://example.org/x.png} never", "hello": "hi there!"}
    (bot.path / "replies.json").write_text(json.dumps(rules))
    bot.write(MAX_REPLIES_PER_RUN="3", REPLY_COOLDOWN="0")
    for number in range(3):
        _recent(world, f"troll{number}", "@pibot broken")
    _recent(world, "ada", "@pibot hello")
    first = bot.run("replies")
    assert first.returncode == 65 and "0 answered" not in first.stderr
    assert "1 answered, 0 skipped, 3 failed" in first.stderr
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!"]
    _recent(world, "bo", "@pibot hello")
    second = bot.run("replies")  # the three wait out their back-off: the round is not theirs
    assert second.returncode == 0 and "3 failed before, tried again later" in second.stderr
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!", "@bo hi there!"]
    bot.later(6)
    assert bot.run("replies").returncode == 65  # tried again, and failed again: they wait longer
    assert "3 failed before" in bot.run("replies").stderr
    rules["broken"] = "fixed"
    (bot.path / "replies.json").write_text(json.dumps(rules))
    assert bot.run("replies").returncode == 0  # the rules changed: they are tried at once
    assert sorted(post["text"] for post in world.posts_by("pibot"))[-3:] == [f"@troll{n} fixed" for n in range(3)]
    statuses = [row[1] for row in bot.mentions()]
    assert statuses == ["answered"] * 5


def test_a_missing_picture_names_the_rules_folder_and_the_mention_waits_for_it(bot: Bot, world: World) -> None:
    from images import photo

    (bot.path / "rules").mkdir()
    (bot.path / "rules" / "replies.json").write_text(json.dumps({"cat": "look ![a cat](cat.jpg)"}))
    bot.write(REPLY_RULES="rules/replies.json")
    _recent(world, "ada", "@pibot cat")
    first = bot.run("replies")
    assert first.returncode == 65 and str(bot.path / "rules") in first.stderr and "tweets file" not in first.stderr
    assert [row[1] for row in bot.mentions()] == ["pending"] and world.posts_by("pibot") == []
    dry = bot.run("replies", "--dry-run")
    assert "cat.jpg does not exist in" in dry.stdout and "tweets file" not in dry.stdout
    photo(bot.path / "rules" / "cat.jpg", size=(40, 30))
    assert bot.run("replies").returncode == 0  # the picture is there now: tried at once
    [reply] = world.posts_by("pibot")
    assert reply["text"] == "@ada look" and [row[1] for row in bot.mentions()] == ["answered"]


def test_a_round_of_slow_rules_ends_within_its_match_budget_naming_them(bot: Bot, world: World) -> None:
    import time

    from twitterbot.replies.rules import MATCH_TIMEOUT, ROUND_MATCH_BUDGET

    slow = {f"(?:(?:a|a)+)+b{number}": "never" for number in range(60)}  # more than the budget holds, loaded or not
    (bot.path / "replies.json").write_text(json.dumps({**slow, "hello": "hi"}))
    bot.write(REPLY_COOLDOWN="0")
    _recent(world, "troll", "@pibot " + "a" * 5000)
    _recent(world, "ada", "@pibot " + "a" * 5000 + " hello")
    started = time.monotonic()
    ran = bot.run("replies")
    took = time.monotonic() - started
    assert took < ROUND_MATCH_BUDGET + MATCH_TIMEOUT + 1.5, took  # was 73 s
    assert ran.returncode == 65 and "(?:(?:a|a)+)+b" in ran.stderr and "simplify" in ran.stderr
    assert [row[1] for row in bot.mentions()] == ["pending", "pending"]  # one failed, one left for the next round


def test_replies_do_not_count_in_max_posts_per_day(bot: Bot, world: World) -> None:
    bot.write(MAX_POSTS_PER_DAY="1", REPLY_COOLDOWN="0")
    for number in range(3):
        _recent(world, f"person{number}", f"@pibot hello {number}")
    ran = bot.run()
    assert ran.returncode == 0, ran.stderr
    assert [post["text"] for post in world.posts_by("pibot")][-1] == "a scheduled line"
    assert len(world.posts_by("pibot")) == 4


def test_history_shows_recent_replies_with_the_rule_the_link_or_why_none(bot: Bot, world: World) -> None:
    _recent(world, "ada", "@pibot hello")
    world.mark_bot("robo")
    _recent(world, "robo", "@pibot hello")
    assert bot.run("replies").returncode == 0
    shown = bot.run("history")
    assert shown.returncode == 0, shown.stderr
    assert "replied     [reply to @ada on Chat]" in shown.stdout and "chat://pibot/" in shown.stdout
    assert "skipped     [reply to @robo on Chat]" in shown.stdout and "REPLY_TO_BOTS=no" in shown.stdout
    listed = json.loads(bot.run("history", "--json").stdout)
    replies = [entry for entry in listed if entry["source"] == "reply"]
    assert {entry["author"]: entry["action"] for entry in replies} == {"@ada": "answered", "@robo": "skipped"}
    assert next(entry for entry in replies if entry["author"] == "@ada")["rule"] == "(?<=\\s|^)hello\\b"


def test_the_status_page_shows_recent_replies(bot: Bot, world: World) -> None:
    from twitterbot.settings.loading import load_config
    from twitterbot.web.app import create_app
    from twitterbot.web.nextrun import NextRun

    _recent(world, "ada", "@pibot hello")
    _recent(world, "bo", "@pibot quiet")
    assert bot.run("replies").returncode == 0
    config = load_config(REGISTRY, project_dir=bot.path, env_file=bot.path / ".env", environ={})

    def fixed(config: object, *, now: datetime) -> NextRun:
        return NextRun(None, "settings", "fixed")

    html = create_app(config, probe=fixed).test_client().get("/").get_data(as_text=True)
    assert 'id="replies"' in html and "@ada" in html  # (a chat:// link is no web link: the page shows none)
    assert "the rule &#34;quiet&#34; matched: its response is empty (no reply)" in html


def test_while_a_job_runs_a_mention_saying_status_gets_its_latest_progress_line(bot: Bot, world: World) -> None:
    from twitterbot.progress.session import open_reporter
    from twitterbot.settings.loading import load_config

    _recent(world, "ada", "@pibot what is your status?")
    _recent(world, "bo", "@pibot hello")
    config = load_config(REGISTRY, project_dir=bot.path, env_file=bot.path / ".env", environ={})
    with open_reporter("hamlet", config=config) as report:
        report.update("42 of 100 boards counted")  # the round runs beside the job: wait for its replies
        _wait_for(lambda: len(world.posts_by("pibot")) == 2)
        _recent(world, "cy", "@pibot status")
        report.update("43 of 100 boards counted")  # within the 5 minutes: no second round
        report.done("all counted")
    replies = [(post["reply_to"], post["text"]) for post in world.posts_by("pibot") if post["reply_to"]]
    assert ("1", "@ada hamlet: 42 of 100 boards counted") in replies and ("2", "@bo hi there!") in replies
    assert all(reply_to != "3" for reply_to, _ in replies)  # read by the next round, not this one


def _wait_for(done: Callable[[], bool], seconds: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.02)


def test_a_job_s_round_skips_at_once_when_a_run_holds_the_lock(
    bot: Bot, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """A scheduled run or a replies round waits up to a minute for bot.lock; a long job's round
    does not: its progress reports are never held up, and the next report tries again."""
    from twitterbot.lock import run_lock
    from twitterbot.replies.command import status_rounds
    from twitterbot.settings.loading import load_config

    _recent(world, "ada", "@pibot hello")
    config = load_config(REGISTRY, project_dir=bot.path, env_file=bot.path / ".env", environ={})
    (bot.path / "state").mkdir(exist_ok=True)
    clock = iter([0.0, 1000.0])
    heard = status_rounds(config, seconds=lambda: next(clock))
    with run_lock(config.state.lock):  # another open file: flock refuses it as it would another process
        heard("a line")  # no wait: the round is skipped with a warning
        assert heard.join()
    assert world.posts_by("pibot") == []
    [said] = [record.getMessage() for record in caplog.records if "the job goes on" in record.getMessage()]
    assert "another run is in progress" in said and "waited" not in said
    heard("another line")  # past STATUS_EVERY: the next report's round answers
    assert heard.join()
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hi there!"]


def test_a_job_s_round_waiting_on_a_slow_mentions_server_never_holds_up_its_reports(bot: Bot, world: World) -> None:
    import time

    from twitterbot.replies.command import status_rounds
    from twitterbot.settings.loading import load_config

    _recent(world, "ada", "@pibot status")
    world.fault("slow_read")  # the read takes 2 s
    config = load_config(REGISTRY, project_dir=bot.path, env_file=bot.path / ".env", environ={})
    clock = iter([0.0, 1000.0, 2000.0])
    heard = status_rounds(config, seconds=lambda: next(clock))
    started = time.monotonic()
    heard("hamlet: 1 of 3")
    heard("hamlet: 2 of 3")  # a round still runs: none more, and no wait
    assert time.monotonic() - started < 0.5 and heard.running
    assert heard.join(10)
    assert [post["text"] for post in world.posts_by("pibot")] == ["@ada hamlet: 1 of 3"]
    assert world.reads() == 1


def test_a_bug_in_the_replies_before_a_scheduled_run_never_costs_its_post(
    bot: Bot, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from twitterbot.replies.rules import ReplyRules

    def broken(self: ReplyRules, text: str, budget: object = None) -> None:
        raise RuntimeError("the rules step broke")

    monkeypatch.setattr(ReplyRules, "match", broken)
    _recent(world, "ada", "@pibot hello")
    ran = bot.run()
    assert ran.returncode == 1, ran.stderr  # a bug happened, after the post
    assert [post["text"] for post in world.posts_by("pibot")] == ["a scheduled line"]
    said = [line for line in ran.stderr.splitlines() if "the rules step broke" in line]
    assert len(said) == 1 and "ERROR" in said[0] and "--debug" in said[0] and "Traceback" not in ran.stderr
    bot.write(MIN_POST_GAP="0")
    debug = bot.run("--debug")
    assert (
        debug.returncode == 1 and "Traceback" in debug.stderr and 'raise RuntimeError("the rules step' in debug.stderr
    )
    monkeypatch.undo()
    assert bot.run("replies").returncode == 0  # the mention waited: nothing was recorded for it
    assert [post["text"] for post in world.posts_by("pibot")][-1] == "@ada hi there!"


def test_a_round_with_a_clock_not_set_yet_answers_nothing(bot: Bot, world: World) -> None:
    import random

    from twitterbot.networks.lazy import LazyPosters
    from twitterbot.replies.run import answer_mentions
    from twitterbot.settings.loading import load_config
    from twitterbot.state.floor import ClockNotSet

    assert bot.run("replies").returncode == 0  # a history, dated now
    asked = _recent(world, "ada", "@pibot hello, bot")
    config = load_config(REGISTRY, project_dir=bot.path, env_file=bot.path / ".env", environ={})
    at_1970 = datetime(1970, 1, 1, 0, 1, tzinfo=timezone.utc)  # a Pi without a real-time clock
    with pytest.raises(ClockNotSet, match="the clock is not set yet") as raised:
        answer_mentions(config, outlets=LazyPosters.of(config), rng=random.Random(), clock=lambda: at_1970)
    assert raised.value.exit_status == 75 and world.posts_by("pibot") == []
    assert bot.run("replies").returncode == 0  # set right: answered then
    assert [post["reply_to"] for post in world.posts_by("pibot")] == [asked]
