"""`--bot NAME` says which bot of the flock a command is for; a checkout with its .env beside
bot.py (0.3's layout) is a flock of one and runs as it did, history and all."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import BotHome
from in_process import run_in_process
from x_emulator import XEmulator

from twitterbot.settings import loading

from .conftest import Flock, write_bot

HISTORY_03 = Path(__file__).resolve().parents[1] / "fixtures" / "state" / "history-schema3.sqlite"


def test_each_bot_posts_its_own_line_to_its_own_account_once(flock: Flock) -> None:
    for number in (1, 2, 3):
        result = flock.run("--bot", f"bot{number}", "--force")
        assert result.returncode == 0, result.stderr
        assert f"bot{number}: " in result.stderr  # every log line names its bot
    assert [account.texts for account in flock.accounts] == [["line of bot1"], ["line of bot2"], ["line of bot3"]]
    for number in (1, 2, 3):  # each its own history, in its own folder
        history = flock.run("--bot", f"bot{number}", "history")
        assert f"line of bot{number}" in history.stdout
        assert all(f"line of bot{other}" not in history.stdout for other in (1, 2, 3) if other != number)
        assert (flock.bots / f"bot{number}" / "state" / "history.sqlite3").is_file()


def test_a_bot_s_dry_run_reads_its_own_lines_and_keys(flock: Flock) -> None:
    result = flock.run("--bot", "bot2", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "line of bot2"
    assert all(account.texts == [] for account in flock.accounts)


def test_an_unknown_bot_is_a_usage_error_naming_the_bots(flock: Flock) -> None:
    result = flock.run("--bot", "bot4", "history")
    assert result.returncode == 64
    assert "no bot 'bot4'" in result.stderr and "bot1, bot2, bot3" in result.stderr
    misspelt = flock.run("history", "--bot", "bto2")
    assert misspelt.returncode == 64 and "did you mean bot2?" in misspelt.stderr


def test_a_command_of_one_bot_needs_its_name_in_a_flock_of_several(flock: Flock) -> None:
    result = flock.run("--dry-run")
    assert result.returncode == 64
    assert "say which with --bot NAME" in result.stderr
    assert all(account.texts == [] for account in flock.accounts)


def test_the_flag_means_the_same_before_and_after_the_command(flock: Flock) -> None:
    before = flock.run("--bot", "bot1", "history")
    after = flock.run("history", "--bot", "bot1")
    assert before.returncode == after.returncode == 0
    assert before.stdout == after.stdout


def test_bot_and_env_file_together_are_refused(flock: Flock) -> None:
    result = flock.run("--bot", "bot1", "--env-file", str(flock.bots / "bot1" / ".env"), "history")
    assert result.returncode == 64 and "use one of them" in result.stderr


def test_a_flock_bot_reads_no_setting_from_the_environment(flock: Flock) -> None:
    """Keys or a state folder in the process's environment never become a flock bot's."""
    shared = flock.root / "shared-state"
    environ = {**flock.environ(), "BOT_STATE_DIR": str(shared), "TWEET_ONE_IN": "not a number"}
    result = run_in_process(["--bots", str(flock.bots), "--bot", "bot1", "--force"], environ=environ, cwd=flock.cwd)
    assert result.returncode == 0, result.stderr
    assert not shared.exists() and flock.accounts[0].texts == ["line of bot1"]


def test_the_bots_folder_may_come_from_bots_dir(flock: Flock) -> None:
    environ = {**flock.environ(), "BOTS_DIR": str(flock.bots)}
    result = run_in_process(["--bot", "bot3", "--dry-run"], environ=environ, cwd=flock.cwd)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "line of bot3"
    relative = run_in_process(["--bot", "bot3", "--dry-run"], environ={**environ, "BOTS_DIR": "bots"}, cwd=flock.cwd)
    assert relative.returncode == 78 and "not an absolute path" in relative.stderr


def test_a_missing_bots_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = run_in_process(["--bots", str(tmp_path / "nowhere"), "history"], environ={}, cwd=tmp_path)
    assert result.returncode == 64 and "no such folder" in result.stderr


def test_a_bot_folder_without_its_env_file_says_how_to_make_it(flock: Flock) -> None:
    (flock.bots / "empty").mkdir()
    result = flock.run("--bot", "empty", "history")
    assert result.returncode == 78
    assert "bot empty has no settings" in result.stderr and "bot.py new empty" in result.stderr


def test_a_folder_that_cannot_name_a_bot_is_not_one(flock: Flock) -> None:
    (flock.bots / "Has Space").mkdir()
    (flock.bots / ".hidden").mkdir()
    result = flock.run("--bot", "Has Space", "history")
    assert result.returncode == 64


@pytest.fixture
def checkout_03(tmp_path: Path, emulator: XEmulator, monkeypatch: pytest.MonkeyPatch) -> BotHome:
    """A 0.3 checkout: .env and tweets.txt beside bot.py, its history in state/, no flock folder."""
    home = BotHome(tmp_path / "twitterbot", emulator)
    home.path.mkdir()
    home.write_env(**emulator.env(), TWEET_ONE_IN="1", API_RETRIES="0", API_TIMEOUT="3")
    home.write_tweets("A new line from the Pi\n")
    (home.path / "state").mkdir()
    shutil.copyfile(HISTORY_03, home.path / "state" / "history.sqlite3")
    monkeypatch.setattr(loading, "PROJECT_DIR", home.path)  # bot.py's folder: this checkout
    return home


def test_a_03_checkout_is_a_flock_of_one_and_runs_unchanged_with_its_history(checkout_03: BotHome) -> None:
    environ = checkout_03.environ()
    before = run_in_process(["history"], environ=environ, cwd=checkout_03.elsewhere)
    assert before.returncode == 0 and "Hello from my Pi" in before.stdout
    posted = run_in_process(["--force", "--trust-clock"], environ=environ, cwd=checkout_03.elsewhere)
    assert posted.returncode == 0, posted.stderr
    assert "main: " not in posted.stderr  # a bot of one: its log lines as they were
    assert checkout_03.emulator.texts == ["A new line from the Pi"]
    after = run_in_process(["history"], environ=environ, cwd=checkout_03.elsewhere)
    assert "Hello from my Pi" in after.stdout and "A new line from the Pi" in after.stdout
    named = run_in_process(["--bot", "main", "history"], environ=environ, cwd=checkout_03.elsewhere)
    assert named.stdout == after.stdout


def test_a_checkout_s_bot_and_a_flock_folder_together(checkout_03: BotHome, tmp_path: Path) -> None:
    """Bots added beside a checkout's own: a plain run is still the checkout's, --bot the others'."""
    write_bot(checkout_03.path / "bots" / "poems", {"TWEET_ONE_IN": "1"}, "a poem\n")
    environ = checkout_03.environ()
    plain = run_in_process(["--dry-run"], environ=environ, cwd=checkout_03.elsewhere)
    assert plain.returncode == 0 and plain.stdout.strip() == "A new line from the Pi"
    poems = run_in_process(["--bot", "poems", "--dry-run"], environ=environ, cwd=checkout_03.elsewhere)
    assert poems.returncode == 0 and poems.stdout.strip() == "a poem"
    assert "poems: " in poems.stderr


def test_check_without_bot_checks_every_bot_naming_each_and_exits_with_the_worst(flock: Flock) -> None:
    (flock.bots / "bot2" / ".env").write_text("TWEET_ONE_IN=often\n")
    result = flock.run("check")
    assert result.returncode == 78, result.stdout
    names = [line for line in result.stdout.splitlines() if line.startswith("bot ")]
    assert [line.split()[1] for line in names] == ["bot1", "bot2", "bot3"]
    bot2 = result.stdout.split("bot bot2")[1].split("bot bot3")[0]
    assert "problem:" in bot2 and "TWEET_ONE_IN" in bot2
    assert result.stdout.count("all good") == 2  # bot1 and bot3, with their own keys
    one = flock.run("--bot", "bot3", "check")
    assert one.returncode == 0 and "bot bot1" not in one.stdout


def test_the_flock_s_x_budget_holds_every_bot_on_top_of_its_own(flock: Flock) -> None:
    """Posts cost $0.015 on X: a flock budget of $0.04 takes two bots' posts, not a third."""
    (flock.bots / "flock.env").write_text("FLOCK_X_MONTHLY_BUDGET=0.04\n")
    assert flock.run("--bot", "bot1", "--force").returncode == 0
    assert flock.run("--bot", "bot2", "--force").returncode == 0
    third = flock.run("--bot", "bot3", "--force")
    assert "would pass X_MONTHLY_BUDGET" in third.stderr, third.stderr
    assert [account.texts for account in flock.accounts] == [["line of bot1"], ["line of bot2"], []]
    (flock.bots / "flock.env").write_text("FLOCK_X_MONTHLY_BUDGET=lots\n")
    bad = flock.run("--bot", "bot3", "--force")
    assert bad.returncode == 78 and "FLOCK_X_MONTHLY_BUDGET" in bad.stderr and flock.accounts[2].texts == []


def test_bots_on_all_three_networks_each_post_on_their_own_account(flock: Flock) -> None:
    from bluesky_emulator import BlueskyEmulator
    from mastodon_server import MastodonEmulator

    with MastodonEmulator(token="token-of-the-toot-bot") as mastodon, BlueskyEmulator(handle="sky.test") as bluesky:
        write_bot(flock.bots / "toots", {**mastodon.env(), "POST_TO": "mastodon", "TWEET_ONE_IN": "1"}, "a toot\n")
        sky = {
            "POST_TO": "bluesky",
            "BLUESKY_HANDLE": bluesky.handle,
            "BLUESKY_APP_PASSWORD": bluesky.password,
            "BLUESKY_SERVICE": bluesky.url,
            "TWEET_ONE_IN": "1",
        }
        write_bot(flock.bots / "skeets", sky, "a skeet\n")
        for name in ("bot1", "toots", "skeets"):
            result = flock.run("--bot", name, "--force")
            assert result.returncode == 0, result.stderr
        assert [status.text for status in mastodon.statuses] == ["a toot"]
        assert [post["value"]["text"] for post in bluesky.posts()] == ["a skeet"]
    assert [account.texts for account in flock.accounts] == [["line of bot1"], [], []]


def test_a_bot_posts_no_picture_from_another_bots_folder(flock: Flock) -> None:
    """Nothing crosses between bots (issue 58): a line of bot1 naming a picture in bot2's folder
    (by a path that climbs out of its own) is refused, naming it; its own picture goes."""
    from PIL import Image

    for number in (1, 2):
        Image.new("RGB", (40, 30), (200, 40, 40)).save(flock.bots / f"bot{number}" / "mine.png")
    (flock.bots / "bot1" / "tweets.txt").write_text("Borrowed ![a red card](../bot2/mine.png)\n", encoding="utf-8")
    result = flock.run("--bot", "bot1", "--force")
    assert result.returncode == 65
    assert "names a picture in another bot's folder" in result.stderr and "bot2/mine.png" in result.stderr
    assert flock.accounts[0].posts == [] and flock.accounts[1].posts == []
    (flock.bots / "bot1" / "tweets.txt").write_text("Mine ![a red card](mine.png)\n", encoding="utf-8")
    result = flock.run("--bot", "bot1", "--force")
    assert result.returncode == 0, result.stderr
    assert [post.text for post in flock.accounts[0].posts] == ["Mine"]
