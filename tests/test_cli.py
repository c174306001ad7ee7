"""bot.py as cron runs it: a subprocess, another cwd, a bare environment, the emulator as X."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, BotHome
from x_emulator import KEYS, XEmulator


def history(home: BotHome) -> list:
    result = home.run("history", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_no_secrets(*outputs: str) -> None:
    for output in outputs:
        for secret in KEYS.values():
            assert secret not in output


def test_dry_run_on_a_fresh_checkout_needs_no_keys_and_no_cwd(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(REPO / "bot.py", checkout)
    shutil.copy(REPO / "tweets.txt", checkout)
    shutil.copytree(REPO / "twitterbot", checkout / "twitterbot", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [sys.executable, str(checkout / "bot.py"), "--dry-run", "--force", "--seed", "1"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "dry run: would post line" in result.stderr
    assert result.stdout.strip() in (checkout / "tweets.txt").read_text().replace("\\n", "\n").replace("\\#", "#")
    assert (checkout / "state" / "history.sqlite3").exists()  # beside bot.py, not in the cwd
    assert not (tmp_path / "state").exists()


def test_a_run_posts_logs_and_records(home: BotHome, emulator: XEmulator) -> None:
    result = home.run()
    assert result.returncode == 0, result.stderr
    (post,) = emulator.posts
    assert post.text in ("First post", "Second post", "Third post")
    assert "posted line" in result.stderr and f"https://x.com/i/status/{post.id}" in result.stderr
    assert history(home)[0]["tweet_id"] == post.id
    assert_no_secrets(result.stdout, result.stderr)


def test_json_prints_exactly_one_object(home: BotHome, emulator: XEmulator) -> None:
    result = home.run("--json", "--seed", "3")
    report = json.loads(result.stdout)
    assert report["action"] == "posted" and report["tweet_id"] == emulator.posts[0].id
    assert report["text"] == emulator.posts[0].text and report["one_in"] == 1 and report["exit_status"] == 0


def test_skipped_by_chance_exits_zero_and_says_why(home: BotHome, emulator: XEmulator) -> None:
    result = home.run("--one-in", "1000000", "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["action"] == "skipped" and "of 1-in-1000000" in report["reason"]
    assert emulator.seen == []


def test_the_daily_cap_holds_across_runs(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(MAX_POSTS_PER_DAY="2")
    codes = [home.run("--force").returncode for _ in range(3)]
    assert codes == [0, 0, 0] and len(emulator.posts) == 2
    assert "cap is reached" in history(home)[0]["reason"]


@pytest.mark.parametrize(
    ("failure", "code", "advice"),
    [
        ("unauthorized", 77, "X rejected the keys"),
        ("read_only", 77, "regenerate the Access Token"),
        ("not_in_project", 77, "Project"),
        ("credits", 77, "credits"),
        ("rate_limit", 75, "posting works again after"),
        ("server_error", 75, "server error"),
        ("too_long", 65, "too long"),
    ],
)
def test_each_x_failure_end_to_end(home: BotHome, emulator: XEmulator, failure: str, code: int, advice: str) -> None:
    emulator.fail_next(failure)
    result = home.run("-v", "--debug")
    assert result.returncode == code, result.stderr
    assert advice in result.stderr
    assert emulator.posts == []
    assert history(home)[0]["action"] == "failed"
    assert_no_secrets(result.stdout, result.stderr)


@pytest.mark.parametrize("fault", ["posted_then_drop", "drop"])
def test_a_lost_reply_is_uncertain_exits_75_and_is_never_sent_again(home: BotHome, emulator: XEmulator, fault) -> None:
    emulator.duplicate_check = False
    home.write_tweets("alpha\nbeta\n")
    home.write_env(X_API_RETRIES="2")
    emulator.fail_next(fault)
    result = home.run("--json")
    assert result.returncode == 75, result.stderr
    assert "may or may not have posted it" in result.stderr and "will not be sent again" in result.stderr
    assert "https://x.com/intent/user?user_id=12345" in result.stderr
    assert json.loads(result.stdout)["action"] == "uncertain"
    (run,) = history(home)
    assert run["action"] == "uncertain" and "counts as posted" in run["reason"]
    assert len(emulator.seen) == 1  # not retried
    again = home.run("--force")
    assert again.returncode == 0, again.stderr
    texts = emulator.texts
    assert len(texts) == len(set(texts)) and len(texts) == (2 if fault == "posted_then_drop" else 1)


def test_a_slow_x_times_out_with_a_clear_message(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(X_API_TIMEOUT="0.5")
    emulator.slow_seconds = 2
    emulator.fail_next("slow")
    result = home.run()
    assert result.returncode == 75 and "did not answer in time" in result.stderr


def test_missing_keys_are_named(home: BotHome) -> None:
    home.settings.pop("TWITTER_ACCESS_TOKEN_SECRET")
    home.write_env()
    result = home.run()
    assert result.returncode == 78
    assert "TWITTER_ACCESS_TOKEN_SECRET not set" in result.stderr and "--dry-run" in result.stderr


def test_a_malformed_setting_is_a_config_error(home: BotHome) -> None:
    home.write_env(TWEET_ONE_IN="abc")
    result = home.run("--json")
    assert result.returncode == 78 and "TWEET_ONE_IN='abc'" in result.stderr
    assert json.loads(result.stdout)["action"] == "failed"


def test_a_bad_tweets_file_is_a_data_error(home: BotHome) -> None:
    home.write_tweets("# nothing here\n")
    result = home.run()
    assert result.returncode == 65 and "has no lines to post" in result.stderr


def test_an_over_long_line_is_warned_about_and_never_posted(home: BotHome, emulator: XEmulator) -> None:
    home.write_tweets("x" * 300 + "\nshort\n")
    result = home.run()
    assert result.returncode == 0
    assert "line 1 is too long: X counts 300 of 280" in result.stderr
    assert emulator.texts == ["short"]


def test_usage_errors_exit_64(home: BotHome) -> None:
    result = home.run("--one-in", "0")
    assert result.returncode == 64 and "--one-in" in result.stderr


def test_two_runs_at_once_post_once(home: BotHome, emulator: XEmulator) -> None:
    emulator.slow_seconds = 1.5
    emulator.fail_next("slow")
    first = home.start("--force")
    assert emulator.received.wait(20)
    second = home.run("--force")
    first_out, first_err = first.communicate(timeout=30)
    assert first.returncode == 0, first_err
    assert second.returncode == 75 and "another run is in progress" in second.stderr
    assert len(emulator.posts) == 1


def test_a_run_killed_mid_post_never_leads_to_a_double_post(home: BotHome, emulator: XEmulator) -> None:
    home.write_tweets("alpha\nbeta\n")
    emulator.fail_next("posted_then_hang")
    victim = home.start("--force")
    assert emulator.received.wait(20)
    time.sleep(0.2)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=10)
    emulator.release.set()
    (first,) = emulator.texts

    result = home.run("--force")
    assert result.returncode == 0, result.stderr
    assert "previous run stopped while posting" in result.stderr
    assert sorted(emulator.texts) == ["alpha", "beta"]  # the other line, not the interrupted one again
    actions = [run["action"] for run in history(home)]
    assert actions == ["posted", "interrupted"]
    assert first in ("alpha", "beta")


def test_check_reports_all_good(home: BotHome) -> None:
    result = home.run("check", "--online")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "posting as @pi_bot" in result.stdout and "all good" in result.stdout


def test_check_names_each_problem(home: BotHome) -> None:
    home.env_file.chmod(0o644)
    home.write_tweets("fine\n" + "y" * 290 + "\n")
    result = home.run("check")
    assert result.returncode != 0
    assert "other users can read it" in result.stdout
    assert "line 2 is too long: X counts 290 of 280" in result.stdout


def test_check_online_reports_rejected_keys(home: BotHome, emulator: XEmulator) -> None:
    emulator.fail_next("unauthorized")
    result = home.run("check", "--online")
    assert result.returncode == 77 and "X rejected the keys" in result.stdout
    assert_no_secrets(result.stdout, result.stderr)


def test_history_lists_runs_newest_first(home: BotHome, emulator: XEmulator) -> None:
    home.run("--force")
    home.run("--one-in", "1000000")
    result = home.run("history", "-n", "5")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 2
    assert "skipped" in lines[0] and "posted" in lines[1] and emulator.posts[0].id in lines[1]


def test_history_before_any_run(home: BotHome) -> None:
    result = home.run("history")
    assert result.returncode == 0 and "no runs recorded yet" in result.stdout


def test_log_file_gets_the_decision_too(home: BotHome) -> None:
    home.write_env(LOG_FILE="logs/bot.log")
    home.run("--force")
    assert "posted line" in (home.path / "logs" / "bot.log").read_text()


def test_a_corrupt_history_is_an_error_not_a_reset(home: BotHome) -> None:
    state = home.path / "state"
    state.mkdir()
    (state / "history.sqlite3").write_bytes(b"garbage" * 200)
    result = home.run("--force")
    assert result.returncode == 78 and "move it aside" in result.stderr
    assert (state / "history.sqlite3").read_bytes() == b"garbage" * 200


def test_a_tweets_path_on_the_command_line_is_relative_to_the_cwd(home: BotHome, emulator: XEmulator) -> None:
    elsewhere = home.path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    (elsewhere / "other.txt").write_text("from the other file\n")
    result = home.run("--tweets", "other.txt")
    assert result.returncode == 0, result.stderr
    assert emulator.texts == ["from the other file"]
