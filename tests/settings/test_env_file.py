"""The env file read as the user wrote it: a secret is never silently cut by python-dotenv's comment
rule nor changed by its ${NAME} expansion, a setting set twice is refused naming both lines, and
the file and every value have a size bound, each a config error naming the file or the setting."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from conftest import REGISTRY

from twitterbot.errors import ConfigError
from twitterbot.settings.loading import MAX_ENV_FILE_BYTES, load_config
from twitterbot.settings.table import MAX_SETTING_LENGTH


def load(tmp_path: Path, text: str, environ=None):
    env = tmp_path / ".env"
    env.write_text(text)
    env.chmod(0o600)
    return load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ=environ or {})


def problems(tmp_path: Path, text: str, environ=None) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text, environ)
    return str(caught.value)


@pytest.mark.parametrize(
    "name", [name for name, setting in REGISTRY.settings.items() if setting.secret and "URL" not in name]
)
def test_an_unquoted_space_hash_in_a_secret_is_refused_naming_the_line_and_the_fix(tmp_path: Path, name: str) -> None:
    """python-dotenv reads `WEB_PASSWORD=correct horse #battery` as 'correct horse': a password
    shorter than the user typed. The bot cannot know whether the # began a comment: it refuses."""
    message = problems(tmp_path, f"TWEET_ONE_IN=2\n{name}=correct horse #battery staple\n")
    env = tmp_path / ".env"
    assert f"{env} line 2: {name}" in message and "single quotes" in message
    assert "horse" not in message and "battery" not in message  # the secret is not repeated
    # A key that cannot hold a space, with a comment after it: refused too (one rule for secrets).
    assert f"{env} line 1: {name}" in problems(tmp_path, f"{name}=AbCd1234 # my key\n")


def test_a_quoted_secret_keeps_its_hash_and_a_comment_after_any_other_value_is_a_comment(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "WEB_PASSWORD='correct horse #battery staple'  # from the password manager\n"
        "TWITTER_API_KEY=Ab#cd1234\n"  # no space before the #: python-dotenv keeps it, so does the bot
        "TWEET_ONE_IN=2  # twice as often\n"
        'BLUESKY_HANDLE="alice.bsky.social"  # mine\n',
    )
    assert config["WEB_PASSWORD"] == "correct horse #battery staple"
    assert config["TWITTER_API_KEY"] == "Ab#cd1234"
    assert config["TWEET_ONE_IN"] == 2
    assert config["BLUESKY_HANDLE"] == "alice.bsky.social"


@pytest.mark.parametrize("written", ['"Ab\\ncd1234"', '"Ab\\\\cd1234"', '"Ab\\"cd1234"', '"Ab\\qcd1234"'])
def test_a_double_quoted_secret_with_a_backslash_is_refused_naming_the_line_and_the_fix(
    tmp_path: Path, written: str
) -> None:
    r"""python-dotenv decodes escapes in double quotes ("Ab\ncd" holds a new line, "Ab\\cd" one
    backslash) and keeps others ("Ab\qcd"): a password with a backslash would reach the bot
    changed or not by the letter after it. The bot refuses, and says to use single quotes."""
    env = tmp_path / ".env"
    message = problems(tmp_path, f"TWEET_ONE_IN=2\nWEB_PASSWORD={written}  # from the password manager\n")
    assert message.startswith(f"{env} line 2: WEB_PASSWORD's value is in double quotes and has a backslash")
    assert "single quotes instead (WEB_PASSWORD='...')" in message
    assert "cd1234" not in message  # the secret is not repeated
    assert "\n" not in message  # nor refused again for what its decoded form holds (a line break)


def test_a_single_quoted_secret_keeps_its_backslashes_and_other_settings_are_unchanged(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "WEB_PASSWORD='Ab\\ncd\\q1234'\n"  # single quotes: the backslashes are the password's
        'BLUESKY_HANDLE="alice.bsky.social"  # C:\\a comment\'s backslash is no part of it\n'
        'BLUESKY_APP_PASSWORD="abcd-efgh-ijkl-mnop"  # C:\\nor here\n'
        "MASTODON_ACCESS_TOKEN=Ab\\cd\\\\1234\n",  # unquoted: read as written too
    )
    assert config["WEB_PASSWORD"] == "Ab\\ncd\\q1234"
    assert config["BLUESKY_APP_PASSWORD"] == "abcd-efgh-ijkl-mnop"
    assert config["MASTODON_ACCESS_TOKEN"] == "Ab\\cd\\\\1234"


def test_a_secret_is_read_as_written_with_no_variable_expansion(tmp_path: Path, monkeypatch) -> None:
    """python-dotenv replaces ${NAME} with another variable's value, even in single quotes: a
    password holding '${' would silently be another. A secret is read literally; other settings
    still expand."""
    monkeypatch.setenv("SHORT", "x")
    config = load(tmp_path, "WEB_PASSWORD=pass${SHORT}word is long\nTWEETS_FILE=${SHORT}.txt\n")
    assert config["WEB_PASSWORD"] == "pass${SHORT}word is long"
    assert config["TWEETS_FILE"] == tmp_path / "x.txt"


def test_a_setting_set_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    message = problems(tmp_path, "# mine\nTWEET_ONE_IN=1\nLOG_LEVEL=INFO\n\nTWEET_ONE_IN=8\n")
    assert message == (
        f"{env} sets TWEET_ONE_IN on lines 2 and 5, and only the last would count: keep the one you mean, delete the other"
    )
    three = problems(tmp_path, "WEB_PASSWORD=first one here\nWEB_PASSWORD=second\nWEB_PASSWORD=third\n")
    assert "WEB_PASSWORD on lines 1, 2 and 3" in three and "delete the others" in three
    assert "first" not in three and "second" not in three and "third" not in three


def test_a_setting_set_twice_makes_check_and_a_run_exit_78(tmp_path: Path) -> None:
    from twitterbot.cli import main

    (tmp_path / ".env").write_text("POST_TO=x\nPOST_TO=mastodon\n")
    assert main(["check"], environ={}, project_dir=tmp_path) == 78
    assert main(["--dry-run"], environ={}, project_dir=tmp_path) == 78


@pytest.mark.parametrize("source", ["the env file", "the environment"])
def test_a_value_longer_than_any_setting_needs_is_refused_without_costing_its_size_again(
    tmp_path: Path, source: str
) -> None:
    """A megabyte pasted into a secret cost a gigabyte: every encoding of it, hidden in one pattern.
    Now it is refused unread, naming the setting and its length, and never quoted."""
    # The environment may hold a megabyte; the env file holds at most MAX_ENV_FILE_BYTES in all.
    huge = "Ab1" * (1_000_000 // 3 if source == "the environment" else MAX_ENV_FILE_BYTES // 4)
    text, environ = (
        ("", {"TWITTER_API_KEY": huge}) if source == "the environment" else (f"TWITTER_API_KEY={huge}\n", {})
    )
    tracemalloc.start()
    try:
        message = problems(tmp_path, text + "TWEET_ONE_IN=zero\n", environ)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"TWITTER_API_KEY from {source if environ else tmp_path / '.env'}" in message
    assert f"is {len(huge):,} characters long" in message and f"at most {MAX_SETTING_LENGTH:,}" in message
    assert "TWEET_ONE_IN='zero'" in message  # the other problems are still reported
    assert "Ab1Ab1Ab1" not in message
    assert peak < 50_000_000  # the value is a few MB in memory, not hundreds


def test_the_longest_value_is_still_read(tmp_path: Path) -> None:
    value = "/" + "a" * (MAX_SETTING_LENGTH - 1)
    assert load(tmp_path, "", {"TWEETS_FILE": value})["TWEETS_FILE"] == Path(value)
    assert "characters long" in problems(tmp_path, "", {"TWEETS_FILE": value + "a"})


def test_an_env_file_larger_than_settings_need_is_refused_naming_it(tmp_path: Path) -> None:
    padding = "# " + "x" * 78 + "\n"
    text = "TWEET_ONE_IN=2\n" + padding * (MAX_ENV_FILE_BYTES // len(padding))
    assert load(tmp_path, text)["TWEET_ONE_IN"] == 2  # just under the bound: read
    message = problems(tmp_path, text + padding)
    assert message.startswith(f"env file {tmp_path / '.env'} is over {MAX_ENV_FILE_BYTES // 1024} KB")


def test_a_file_that_is_no_env_file_gives_its_first_problems_and_a_count(tmp_path: Path) -> None:
    message = problems(tmp_path, "this is not a setting\n" * 5000)
    lines = message.splitlines()
    assert len(lines) == 21 and lines[0].endswith(
        "line 1 is not a NAME=value setting: fix or remove it (comments start with #)"
    )
    assert lines[-1] == f"{tmp_path / '.env'}: 4,980 more problems after these: is it the env file?"


def test_a_quoted_value_over_many_lines_is_read_in_one_pass(tmp_path: Path) -> None:
    """Each line used to be tried with every line after it (a value over 60,000 lines took hours);
    python-dotenv's own parser reads the file once, with the same statements and line numbers."""
    text = 'TWEET_ONE_IN=3\nPROGRESS_TEMPLATE="{name}\n' + "x'\n" * 60_000 + '"\nLOG_LEVEL=loud\n'
    message = problems(tmp_path, text)
    assert message.splitlines() == [
        f"PROGRESS_TEMPLATE from {tmp_path / '.env'} line 2 is 180,007 characters long, more than any setting needs"
        f" (at most {MAX_SETTING_LENGTH:,}): set it to the value you meant",
        f"LOG_LEVEL='loud' from {tmp_path / '.env'} line 60004 is not a log level: use one of DEBUG, INFO, WARNING, ERROR",
    ]
