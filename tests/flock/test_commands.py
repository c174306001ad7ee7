"""`bot.py bots` lists the flock, `bot.py new NAME` makes a bot's folder (a grammar moved in)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from .conftest import Flock

GRAMMAR = '{"origin": ["the #animal# sleeps"], "animal": ["cat"]}'
RULES = '{"hello": "hi there"}'


def test_bots_lists_each_bot_with_its_networks_last_post_next_run_and_problem(flock: Flock) -> None:
    assert flock.run("--bot", "bot2", "--force").returncode == 0
    (flock.bots / "bot3" / ".env").write_text("TWEET_ONE_IN=often\n")
    result = flock.run("bots")
    assert result.returncode == 78  # a bot has a problem
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["bot1", "bot2", "bot3"]
    assert "X; no post yet; next run" in lines[0]
    assert "X; last post 20" in lines[1]
    assert "PROBLEM" in lines[2] and "TWEET_ONE_IN" in lines[2]
    document = json.loads(flock.run("bots", "--json").stdout)
    assert [bot["name"] for bot in document["bots"]] == ["bot1", "bot2", "bot3"]
    assert document["bots"][1]["last_post"] is not None and document["bots"][0]["last_post"] is None
    assert document["bots"][0]["networks"] == ["X"] and document["bots"][0]["next_run"]
    assert flock.accounts[0].seen == flock.accounts[2].seen == []  # listing asks no network anything


def test_bots_says_what_a_bot_without_keys_lacks(flock: Flock) -> None:
    (flock.bots / "bot1" / ".env").write_text("TWEET_ONE_IN=1\n")
    result = flock.run("bots")
    assert result.returncode == 78
    first, problem = result.stdout.splitlines()[:2]
    assert first.startswith("bot1  X; no post yet")
    assert "PROBLEM  not set: TWITTER_API_KEY" in problem


def test_bots_is_for_the_whole_flock(flock: Flock) -> None:
    result = flock.run("bots", "--bot", "bot1")
    assert result.returncode == 64 and "leave out --bot" in result.stderr


def test_new_makes_a_private_env_from_the_example(flock: Flock) -> None:
    result = flock.run("new", "moon-poems")
    assert result.returncode == 0, result.stderr
    env = flock.bots / "moon-poems" / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert env.read_text() == (Path(__file__).resolve().parents[2] / "config.example.env").read_text()
    assert "bot.py --bot moon-poems check" in result.stdout
    listed = flock.run("bots").stdout
    assert "moon-poems" in listed
    again = flock.run("new", "moon-poems")
    assert again.returncode == 64 and "already exists" in again.stderr


def test_new_from_a_grammar_and_its_reply_rules_posts_from_the_grammar(flock: Flock, tmp_path: Path) -> None:
    (tmp_path / "export.json").write_text(GRAMMAR)
    (tmp_path / "rules.json").write_text(RULES)
    result = flock.run(
        "new", "cats", "--from", str(tmp_path / "export.json"), "--replies", str(tmp_path / "rules.json")
    )
    assert result.returncode == 0, result.stderr
    folder = flock.bots / "cats"
    assert (folder / "bot.json").read_text() == GRAMMAR and (folder / "replies.json").read_text() == RULES
    env = (folder / ".env").read_text()
    assert "\nTWEETS_FILE=bot.json\n" in env and "\nREPLY_RULES=replies.json\n" in env
    dry = flock.run("--bot", "cats", "--dry-run", "--force")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.strip() == "the cat sleeps"


def test_new_refuses_a_bad_name_and_a_file_that_is_no_grammar(flock: Flock, tmp_path: Path) -> None:
    bad = flock.run("new", "Moon Poems")
    assert bad.returncode == 64 and "cannot name a bot" in bad.stderr
    (tmp_path / "list.json").write_text('["a", "b"]')
    not_object = flock.run("new", "listy", "--from", str(tmp_path / "list.json"))
    assert not_object.returncode == 65 and "not an object" in not_object.stderr
    assert not (flock.bots / "listy").exists()
    missing = flock.run("new", "ghost", "--from", str(tmp_path / "nowhere.json"))
    assert missing.returncode == 64 and not (flock.bots / "ghost").exists()


def test_new_makes_the_flock_folder_beside_bot_py_when_there_is_none(tmp_path: Path, monkeypatch) -> None:
    from in_process import run_in_process

    from twitterbot.settings import loading

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.setattr(loading, "PROJECT_DIR", checkout)
    result = run_in_process(["new", "first"], environ={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (checkout / "bots" / "first" / ".env").is_file()


def test_cron_writes_one_line_for_the_whole_flock(flock: Flock) -> None:
    result = flock.run("cron")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith("@reboot ")
    assert f"--bots {flock.bots} daemon" in lines[0] and "logger -t twitterbot-flock" in lines[0]


def test_systemd_writes_one_unit_for_the_whole_flock_each_bot_s_state_writable(flock: Flock) -> None:
    result = flock.run("systemd", "--system", "--run-as", "pi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("# ---- ") == 1 and "# ---- twitterbot-flock.service ----" in result.stdout
    assert f"--bots {flock.bots} daemon" in result.stdout and "ExecReload=/bin/kill -HUP $MAINPID" in result.stdout
    writable = next(line for line in result.stdout.splitlines() if line.startswith("ReadWritePaths="))
    assert writable.split("=", 1)[1].split() == [str(flock.bots / f"bot{n}" / "state") for n in (1, 2, 3)]
    one = flock.run("--bot", "bot1", "systemd")  # one bot's units, as before
    assert "twitterbot-daemon.service" in one.stdout and "twitterbot-flock.service" not in one.stdout
