"""bot.py as cron runs it: another cwd, a bare environment, the emulator as X. In the test's process
(`BotHome.run`), and as a process of its own where the process is what is tested: a plain run and
`check` end to end, a relative path against the cwd, two runs at once, a kill, a reader that goes
away, a package that cannot be imported."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import A_DAEMON_OF_THIS_CHECKOUT, REPO, BotHome
from x_emulator import KEYS, XEmulator

from twitterbot import __version__


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
    result = home.run_process()  # end to end: bot.py as cron starts it
    assert result.returncode == 0, result.stderr
    (post,) = emulator.posts
    assert post.text in ("First post", "Second post", "Third post")
    assert "posted line" in result.stderr and f"https://x.com/i/status/{post.id}" in result.stderr
    assert history(home)[0]["post_id"] == post.id
    assert_no_secrets(result.stdout, result.stderr)


def test_json_prints_exactly_one_object(home: BotHome, emulator: XEmulator) -> None:
    result = home.run("--json", "--seed", "3")
    report = json.loads(result.stdout)
    assert report["action"] == "posted" and report["post_id"] == emulator.posts[0].id
    assert report["tweet_id"] == report["post_id"]  # the deprecated alias, for one release
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
    home.write_env(API_RETRIES="2")
    emulator.fail_next(fault)
    result = home.run("--json")
    assert result.returncode == 75, result.stderr
    assert "may or may not have posted it" in result.stderr and "will not be sent again unless" in result.stderr
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
    home.write_env(API_TIMEOUT="0.5")
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
    home.write_env(API_TIMEOUT="30", TWEET_ONE_IN="1")  # MIN_POST_GAP 1 h: the second run finds the first's post
    emulator.slow_seconds = 25  # held until the second run waits, however slow the machine
    emulator.fail_next("slow")
    first = home.start("--force")
    assert emulator.received.wait(20)
    second = home.start()  # waits for the first's lock, then decides with its post in the history
    time.sleep(1)
    emulator.release.set()
    first_out, first_err = first.communicate(timeout=30)
    second_out, second_err = second.communicate(timeout=60)
    assert first.returncode == 0, first_err
    assert second.returncode == 0, second_err
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
    runs = history(home)
    # The interrupted post was there: the next run found it (LOOK_UP_UNCERTAIN) and settled it.
    assert [run["action"] for run in runs] == ["posted", "posted"]
    assert "interrupted → posted" in runs[1]["reason"]
    assert first in ("alpha", "beta")


def test_check_reports_all_good(home: BotHome) -> None:
    result = home.run_process("check", "--online")  # end to end: bot.py as a person starts it
    assert result.returncode == 0, result.stdout + result.stderr
    assert "posting as @pi_bot" in result.stdout and "all good" in result.stdout
    assert result.stdout.startswith(f"twitterbot {__version__} (Python 3.")  # what a bug report needs


def test_a_bug_asks_for_a_report_naming_the_version(monkeypatch, capsys, tmp_path: Path) -> None:
    """Exit 1 is a bug: its one line says to report it, and with which version."""
    from twitterbot import cli
    from twitterbot.settings import loading

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(loading, "load_config", broken)  # cli imports it inside its error boundary
    assert cli.main(["history"], environ={}, project_dir=tmp_path) == 1
    said = capsys.readouterr().err
    assert "unexpected error (RuntimeError: a bug)" in said and f"twitterbot {__version__}, Python 3." in said


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
    result = home.run_process("--tweets", "other.txt")  # the process's own cwd
    assert result.returncode == 0, result.stderr
    assert emulator.texts == ["from the other file"]
    (elsewhere / "other.txt").write_text("in process too\n")
    result = home.run("--tweets", "other.txt", "--force")
    assert result.returncode == 0, result.stderr
    assert emulator.texts == ["from the other file", "in process too"]


# -- bad values: a flag is a usage error (64), a setting a config error (78) ---------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--one-in", "0"), "--one-in"),
        (("watch", "--every", "5", "--", "true"), "--every"),
        (("watch", "--milestone-every", "soon", "--", "true"), "--milestone-every"),
        (("watch", "--template", "{nope", "--", "true"), "--template"),
        (("watch", "--template", "{nope}", "--", "true"), "--template"),
        (("watch", "--done-template", "{0}", "--", "true"), "--done-template"),
        (("pegs", "solve", "englsh"), "did you mean english?"),
        (("pegs", "count", "--every", "often"), "--every"),
        (("monkey", "--every", "5"), "--every"),
        (("pegs", "solve", "english", "--file", "board.txt"), "not both"),
    ],
)
def test_a_bad_command_line_value_is_a_usage_error(home: BotHome, args: tuple, named: str) -> None:
    result = home.run(*args)
    assert result.returncode == 64, result.stderr
    assert named in result.stderr
    assert home.emulator.seen == []


@pytest.mark.parametrize(
    ("setting", "value", "args"),
    [
        ("TWEET_ONE_IN", "0", ()),
        ("PROGRESS_EVERY", "5", ("watch", "--", "true")),
        ("PROGRESS_TEMPLATE", "{nope", ("watch", "--", "true")),
    ],
)
def test_the_same_bad_value_in_the_env_file_is_a_config_error(home: BotHome, setting: str, value: str, args) -> None:
    home.write_env(**{setting: value})
    result = home.run(*args)
    assert result.returncode == 78, result.stderr
    assert setting in result.stderr and home.emulator.seen == []


# -- --json: one object with the documented keys, whatever fails ----------------------------------

RUN_RESULT_KEYS = {
    "action",
    "reason",
    "text",
    "line",
    "weighted_length",
    "has_url",
    "post_id",
    "tweet_id",  # deprecated alias of post_id
    "url",
    "check_url",
    "one_in",
    "roll",
    "error",
    "exit_status",
    "networks",
    "caught_up",
    "settled",
}


@pytest.mark.parametrize(
    ("args", "settings", "kind", "code"),
    [
        (("--json",), {"TWEET_ONE_IN": "abc"}, "config", 78),
        (("history", "--json"), {"TWEET_ONE_IN": "abc"}, "config", 78),
        (("--json", "history"), {"TWEET_ONE_IN": "abc"}, "config", 78),
        (("--json", "--one-in", "0"), {}, "usage", 64),
        (("--json", "--bogus"), {}, "usage", 64),
        (("--json", "watch", "--", "true"), {}, "usage", 64),
        (("--json", "--tweets", "missing.txt"), {}, "tweets_file", 65),
    ],
)
def test_every_json_failure_is_one_object_with_the_documented_keys(
    home: BotHome, args: tuple, settings: dict, kind: str, code: int
) -> None:
    home.write_env(**settings)
    result = home.run(*args)
    assert result.returncode == code, result.stderr
    report = json.loads(result.stdout)  # exactly one JSON document
    assert set(report) == RUN_RESULT_KEYS
    assert report["action"] == "failed" and report["error"] == kind and report["exit_status"] == code
    assert report["reason"]
    assert_no_secrets(result.stdout, result.stderr)


def test_a_run_s_json_and_a_failure_s_json_have_the_same_keys(home: BotHome) -> None:
    assert set(json.loads(home.run("--json", "--dry-run").stdout)) == RUN_RESULT_KEYS


# -- a reader that goes away (| head) ------------------------------------------------------------


@pytest.mark.parametrize("args", [("history",), ("check",), ("history", "--json"), ("--dry-run", "--force")])
def test_a_closed_pipe_ends_quietly(home: BotHome, args: tuple) -> None:
    for _ in range(3):
        home.run("--dry-run", "--force")
    process = home.start(*args)
    process.stdout.close()  # the reader is gone before the bot writes a byte, as with `| head -0`
    stderr = process.stderr.read()
    process.wait(timeout=60)
    assert process.returncode == 141, stderr  # 128 + SIGPIPE, as git log | head leaves it
    assert "BrokenPipe" not in stderr and "Exception ignored" not in stderr and "unexpected" not in stderr


@pytest.mark.parametrize("args", [("pegs", "count", "english"), ("pegs", "boards"), ("cron",)])
def test_a_job_whose_reader_goes_away_is_stopped_not_failed(home: BotHome, args: tuple) -> None:
    """A job that prints a lot, into a reader that has gone: 141 and nothing posted (before, the
    reporter posted "failed: BrokenPipeError")."""
    process = home.start(*args)
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=120)
    assert process.returncode == 141, stderr
    assert "BrokenPipe" not in stderr and "Exception ignored" not in stderr and "failed" not in stderr
    assert home.emulator.posts == []


# -- jitter: cron's --jitter waits like the timer and the daemon ----------------------------------


def test_jitter_makes_the_run_wait_a_random_time_first(home: BotHome) -> None:
    home.write_env(TWEET_JITTER="1s")
    waited = home.run("--jitter", "--dry-run", "--force")
    assert waited.returncode == 0, waited.stderr
    assert re.search(r"this run: waiting a random \ds first \(TWEET_JITTER\)", waited.stderr)
    assert "dry run: would post" in waited.stderr
    plain = home.run("--dry-run", "--force")
    assert "waiting a random" not in plain.stderr


# -- -v shows the detail behind a decision --------------------------------------------------------

VERBOSE_DETAIL = (
    "the roll: 0 of 0..0",
    "the bag: 3 of the 3 lines not posted yet in this round",
    "POST /2/tweets: 201 Created in ",
    "left in the 15-minute window",
)


def test_verbose_logs_the_roll_the_bag_the_request_and_the_rate_limits(home: BotHome, emulator: XEmulator) -> None:
    verbose = home.run("-v")
    assert verbose.returncode == 0, verbose.stderr
    for detail in VERBOSE_DETAIL:
        assert detail in verbose.stderr, detail
    assert_no_secrets(verbose.stdout, verbose.stderr)
    plain = home.run("--force")
    assert plain.returncode == 0, plain.stderr
    assert "DEBUG" not in plain.stderr
    assert not any(detail in plain.stderr for detail in VERBOSE_DETAIL)


@pytest.mark.parametrize("compiler", [True, False], ids=["PATH as cron has it", "no cc on PATH"])
def test_check_counts_in_good_english(home: BotHome, tmp_path: Path, compiler: bool) -> None:
    """Without a C compiler (Raspberry Pi OS Lite has none) check adds notes that the jobs' kernels
    cannot be built: their words are held to the same rule."""
    home.write_tweets("only one\n")
    home.env_file.chmod(0o644)
    empty = tmp_path / "no-compiler"
    empty.mkdir()
    result = home.run("check", env=None if compiler else {"PATH": str(empty)})
    assert "1 line ready to post" in result.stdout and "1 lines" not in result.stdout
    assert "1 problem found" in result.stdout
    if not compiler:
        assert "note     " in result.stdout
    columns = ("ok       ", "note     ", "PROBLEM  ")
    said = [next((line[len(c) :] for c in columns if line.startswith(c)), line) for line in result.stdout.splitlines()]
    assert not [line for line in said if "  " in line]  # no double spaces past the status column


def test_bot_py_turns_the_garbage_collector_off_before_it_imports_the_bot() -> None:
    """A scheduled run lives for a second: collecting cycles while its modules (tweepy's above all)
    are imported costs about a tenth of its CPU and frees next to nothing."""
    probe = (
        "import gc, importlib.util, sys; sys.path.insert(0, sys.argv[1]);"
        "spec = importlib.util.spec_from_file_location('bot', sys.argv[1] + '/bot.py');"
        "bot = importlib.util.module_from_spec(spec); spec.loader.exec_module(bot);"
        "print(gc.isenabled(), 'twitterbot.cli' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(REPO)], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_every_command_but_the_plain_run_and_replies_turns_the_garbage_collector_back_on(home: BotHome) -> None:
    import gc

    from twitterbot.cli import main

    environ = {"PATH": "/usr/bin:/bin", "HOME": str(home.path), "LANG": "C.UTF-8"}
    gc.disable()
    try:
        assert main(["--env-file", str(home.env_file), "--dry-run", "--force"], environ=environ) == 0
        assert not gc.isenabled()  # the plain run is over in a second: it does without
        (home.path / "replies.json").write_text('{"hello": "hi"}')
        home.write_env(REPLY_RULES="replies.json")
        assert main(["replies", "--dry-run", "--env-file", str(home.env_file)], environ=environ) == 0
        assert not gc.isenabled()  # nor does a round of replies, every 5 minutes from its timer
        assert main(["history", "--env-file", str(home.env_file)], environ=environ) == 0
        assert gc.isenabled()  # the daemon, watch and the jobs run for hours
    finally:
        gc.enable()


# -- a missing or broken package: one sentence and exit 69, even for --help ------------------------
#
# The import is made to fail in a child Python: sys.modules[name] = None is what Python itself
# answers "No module named" from; a folder first on sys.path stands in for a broken package.

_WITHOUT = (
    "import os, runpy, sys\n"
    "bot, missing, shadow = sys.argv[1:4]\n"
    "for name in filter(None, missing.split(',')):\n"
    "    sys.modules[name] = None\n"
    "sys.path[:0] = [path for path in (shadow, os.path.dirname(bot)) if path]\n"
    "sys.argv = [bot, *sys.argv[4:]]\n"
    "runpy.run_path(bot, run_name='__main__')\n"
)


X_KEY_NAMES = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")


def run_without(tmp_path: Path, missing: str, *args: str, shadow: str = "") -> subprocess.CompletedProcess:
    """bot.py with the modules `missing` (comma-separated) unimportable, and `shadow`, a folder of
    broken packages, first on sys.path."""
    # Keys (never used: nothing listens at that address), so that a real run gets as far as
    # making its X client: the one place tweepy is imported.
    keys = "".join(f"{name}=fakeKey{number}1234567890\n" for number, name in enumerate(X_KEY_NAMES))
    (tmp_path / ".env").write_text(keys + "X_API_BASE_URL=http://127.0.0.1:9\n")
    (tmp_path / ".env").chmod(0o600)
    (tmp_path / "tweets.txt").write_text("A post\nAnother post\n")
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _WITHOUT,
            str(REPO / "bot.py"),
            missing,
            shadow,
            "--env-file",
            str(tmp_path / ".env"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8"},
    )


@pytest.mark.parametrize(
    "module, package, args",
    [
        ("schedule", "schedule", ("pegs", "--help")),
        ("schedule", "schedule", ("--help",)),
        ("schedule", "schedule", ("daemon", "--dry-run")),
        ("dotenv", "python-dotenv", ("--help",)),
        ("dotenv", "python-dotenv", ("check",)),
        ("dotenv", "python-dotenv", ("--dry-run", "--force")),
        ("tweepy", "tweepy", ("--force",)),  # a real run, once it has a line to post
        ("numpy", "numpy", ("pegs", "count", "english", "--no-post")),  # imported by the job itself
        ("twitter_text", "twitter-text-parser", ("--dry-run", "--force")),
    ],
)
@A_DAEMON_OF_THIS_CHECKOUT  # some start `bot.py daemon`, for a moment
def test_a_missing_package_is_named_with_the_command_that_installs_it(
    tmp_path: Path, module: str, package: str, args: tuple
) -> None:
    result = run_without(tmp_path, module, *args)
    assert result.returncode == 69, result.stderr
    assert "Traceback" not in result.stderr and "Error:" not in result.stderr.replace("ModuleNotFoundError", "")
    assert f"the package {package} is missing" in result.stderr
    if module == "numpy":  # a feature's package: its extra, and Raspberry Pi OS's build of it
        assert 'pip install ".[jobs]"' in result.stderr and "sudo apt install python3-numpy" in result.stderr
    else:  # the core's: every package at its tested version
        assert f"-m pip install -r {REPO / 'requirements.txt'}" in result.stderr
    assert result.stdout == ""


def test_a_missing_package_with_json_prints_one_failure_document(tmp_path: Path) -> None:
    result = run_without(tmp_path, "dotenv", "--dry-run", "--json")
    assert result.returncode == 69
    report = json.loads(result.stdout)
    assert report["error"] == "missing_dependency" and report["exit_status"] == 69
    assert "python-dotenv" in report["reason"]


@A_DAEMON_OF_THIS_CHECKOUT  # it starts `bot.py daemon`, for a moment
def test_a_broken_package_is_named_with_the_command_that_reinstalls_its_version(tmp_path: Path) -> None:
    from importlib import metadata

    shadow = tmp_path / "broken"
    (shadow / "schedule").mkdir(parents=True)
    (shadow / "schedule" / "__init__.py").write_text(
        "raise ImportError('libsched.so.1: cannot open shared object file: No such file or directory')\n"
    )
    result = run_without(tmp_path, "", "daemon", "--dry-run", shadow=str(shadow))
    assert result.returncode == 69, result.stderr
    assert "the package schedule is installed but cannot be imported (ImportError: libsched.so.1" in result.stderr
    assert (
        f"-m pip install --force-reinstall --no-deps --no-cache-dir schedule=={metadata.version('schedule')}"
        in result.stderr
    )
    assert "Traceback" not in result.stderr
    debug = run_without(tmp_path, "", "daemon", "--dry-run", "--debug", shadow=str(shadow))
    assert debug.returncode == 69 and "Traceback" in debug.stderr  # --debug shows where


def test_a_missing_module_of_python_itself_says_to_install_a_complete_python(tmp_path: Path) -> None:
    result = run_without(tmp_path, "sqlite3,_sqlite3", "history")
    assert result.returncode == 69, result.stderr
    assert "Python's own module sqlite3 is missing" in result.stderr and "apt install python3-full" in result.stderr


def test_a_missing_module_of_the_bot_itself_is_a_bug_not_an_install(tmp_path: Path) -> None:
    result = run_without(tmp_path, "twitterbot.jobs.pegs.command", "pegs", "boards")
    assert result.returncode == 1, result.stderr
    assert "unexpected error (ModuleNotFoundError" in result.stderr and "pip" not in result.stderr


def test_a_missing_module_is_named_by_the_requirement_that_installs_it(tmp_path: Path) -> None:
    """Not installed, so no metadata says which distribution it is: the bot's requirements do."""
    from twitterbot.errors import MissingDependency

    (tmp_path / "requirements.txt").write_text(
        "# pins\npython-fuzzbuzz==1.0  # a comment\nfizz-text-parser==3.0; python_version >= '3.9'\n-r other.txt\n"
    )
    for module, package in (("fuzzbuzz", "python-fuzzbuzz"), ("fizz_text", "fizz-text-parser"), ("nothing", "nothing")):
        error = MissingDependency.from_import_error(
            ModuleNotFoundError(f"No module named {module!r}", name=module), checkout=tmp_path
        )
        assert error is not None and f"the package {package} is missing" in str(error)
        assert f"-m pip install -r {tmp_path / 'requirements.txt'}" in str(error) and error.exit_status == 69


def test_each_capability_declares_the_commands_its_module_registers() -> None:
    """A command line naming a command imports only its module: each capability's
    `command_names` must be what its `commands` module adds, or a command would be lost."""
    from twitterbot.arguments import command_parser
    from twitterbot.cli import built_in

    plain = set(command_parser([]).commands)
    for capability in built_in().capabilities:
        if capability.commands:
            registered = set(command_parser([capability.commands]).commands) - plain
            assert registered == set(capability.command_names), capability.name


def test_a_command_imports_its_own_module_and_not_the_others() -> None:
    """`bot.py replies` (a timer's, every 5 minutes) and `bot.py check` build their command line
    without the other commands' modules (the long jobs', the status page's)."""
    script = (
        "import sys\n"
        "from twitterbot import cli\n"
        "args = cli.parse_args(sys.argv[1:], cli.built_in())\n"
        "print(args.command_name, sorted(m for m in sys.modules if m.startswith('twitterbot.') and "
        "m.endswith(('command', 'commands'))))\n"
    )
    for argv, own in ((["-q", "replies", "--dry-run"], "twitterbot.replies.command"), (["check"], None)):
        done = subprocess.run([sys.executable, "-c", script, *argv], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        name, modules = done.stdout.split(" ", 1)
        assert name == argv[-1].lstrip("-") or name == argv[-2]
        expected = ["twitterbot.posting.commands"] + ([own] if own else [])
        assert eval(modules) == sorted(expected), modules  # noqa: S307 (our own printed list)
