"""Settings: sources and their order, path resolution, strict checking, secrets kept secret."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twitterbot.config import SETTINGS, env_file_warnings, load_config
from twitterbot.errors import ConfigError


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_defaults_resolve_beside_bot_py_when_there_is_no_env_file(tmp_path: Path) -> None:
    config = load_config(project_dir=tmp_path, environ={})
    assert config.env_file is None
    assert config.tweets_file == tmp_path / "tweets.txt"
    assert config.state_dir == tmp_path / "state"
    assert config.one_in == 4 and config.max_posts_per_day == 4
    assert config.log_file is None and config.log_level == "INFO"
    assert config.api_base_url == "https://api.twitter.com"
    assert config.credentials.missing() == [
        "TWITTER_API_KEY",
        "TWITTER_API_SECRET",
        "TWITTER_ACCESS_TOKEN",
        "TWITTER_ACCESS_TOKEN_SECRET",
    ]


def test_relative_paths_resolve_from_the_env_files_folder_not_the_cwd(tmp_path: Path, monkeypatch) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    env = write(conf / "bot.env", "TWEETS_FILE=posts/mine.txt\nBOT_STATE_DIR=../var\nLOG_FILE=bot.log\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(project_dir=tmp_path / "elsewhere", env_file=env, environ={})
    assert config.tweets_file == conf / "posts/mine.txt"
    assert config.state_dir == conf / "../var"
    assert config.log_file == conf / "bot.log"
    assert config.history_file == conf / "../var/history.sqlite3"


def test_the_default_env_file_is_the_one_beside_bot_py(tmp_path: Path) -> None:
    write(tmp_path / ".env", "TWEET_ONE_IN=7\n")
    assert load_config(project_dir=tmp_path, environ={}).one_in == 7


def test_later_sources_win_defaults_file_environment_flags(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWEET_ONE_IN=2\nMAX_POSTS_PER_DAY=9\nLOG_LEVEL=debug\n")
    config = load_config(
        project_dir=tmp_path,
        env_file=env,
        environ={"TWEET_ONE_IN": "3", "MAX_POSTS_PER_DAY": "", "UNRELATED": "x"},
        overrides={"TWEET_ONE_IN": "5"},
    )
    assert config.one_in == 5  # flag beats environment beats file
    assert config.max_posts_per_day == 9  # an empty environment value does not hide the file's
    assert config.log_level == "DEBUG"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("TWEET_ONE_IN=abc", "TWEET_ONE_IN='abc'"),
        ("TWEET_ONE_IN=0", "whole number of 1 or more"),
        ("TWEET_ONE_IN=-3", "TWEET_ONE_IN='-3'"),
        ("TWEET_ONE_IN=2.5", "TWEET_ONE_IN='2.5'"),
        ("MAX_POSTS_PER_DAY=none", "MAX_POSTS_PER_DAY"),
        ("X_API_RETRIES=-1", "X_API_RETRIES"),
        ("X_API_TIMEOUT=0", "X_API_TIMEOUT"),
        ("X_API_TIMEOUT=soon", "X_API_TIMEOUT"),
        ("LOG_LEVEL=LOUD", "DEBUG, INFO, WARNING, ERROR"),
        ("X_API_BASE_URL=api.twitter.com", "not a base URL"),
        ("X_API_BASE_URL=https://api.x.com/2", "not a base URL"),
        ("TWEET_ONE_INN=3", "did you mean TWEET_ONE_IN?"),
        ("TWITTER_CONSUMER_KEY=abc", "unknown setting TWITTER_CONSUMER_KEY"),
        ("just some words", "line 1 is not a NAME=value setting"),
    ],
)
def test_malformed_or_unknown_settings_are_errors_naming_the_setting_and_where(
    tmp_path: Path, line: str, expected: str
) -> None:
    env = write(tmp_path / ".env", line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(project_dir=tmp_path, env_file=env, environ={})
    assert expected in str(caught.value)
    assert str(env) in str(caught.value)


def test_malformed_environment_value_names_the_environment(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TWEET_ONE_IN='0' from the environment"):
        load_config(project_dir=tmp_path, environ={"TWEET_ONE_IN": "0"})


def test_a_named_env_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(project_dir=tmp_path, env_file=tmp_path / "missing.env", environ={})


def test_env_file_must_be_utf8(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"TWEETS_FILE=caf\xe9.txt\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(project_dir=tmp_path, environ={})


def test_secrets_never_appear_in_repr_or_errors(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWITTER_API_KEY=sekritKey123\nTWITTER_API_SECRET=has space\n")
    with pytest.raises(ConfigError) as caught:
        load_config(project_dir=tmp_path, env_file=env, environ={})
    assert "TWITTER_API_SECRET" in str(caught.value) and "has space" not in str(caught.value)
    write(env, "TWITTER_API_KEY=sekritKey123\n")
    config = load_config(project_dir=tmp_path, env_file=env, environ={})
    assert config.credentials.api_key == "sekritKey123"
    assert "sekritKey123" not in repr(config)


def test_quoted_values_and_comments_are_read_like_dotenv_does(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", '# my bot\nTWEETS_FILE="my tweets.txt"  # spaces are fine\nTWITTER_API_KEY=abc123\n')
    config = load_config(project_dir=tmp_path, env_file=env, environ={})
    assert config.tweets_file == tmp_path / "my tweets.txt"
    assert config.credentials.api_key == "abc123"


@pytest.mark.parametrize(("mode", "warned"), [(0o600, False), (0o640, True), (0o644, True), (0o400, False)])
def test_warns_when_the_env_file_with_keys_is_readable_by_others(tmp_path: Path, mode: int, warned: bool) -> None:
    env = write(tmp_path / ".env", "TWITTER_API_KEY=abc123\n", mode)
    warnings = env_file_warnings(load_config(project_dir=tmp_path, env_file=env, environ={}))
    assert bool(warnings) is warned
    if warned:
        assert f"chmod 600 {env}" in warnings[0]


def test_no_permission_warning_for_an_env_file_without_keys(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWEET_ONE_IN=2\n", 0o644)
    assert env_file_warnings(load_config(project_dir=tmp_path, env_file=env, environ={})) == []


def test_every_setting_has_a_parser_and_a_default_that_parses(tmp_path: Path) -> None:
    config = load_config(project_dir=tmp_path, environ={})
    assert config is not None
    assert all(setting.help for setting in SETTINGS.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_env_file_text_gives_a_config_or_a_clear_error(tmp_path: Path, text: str) -> None:
    env = tmp_path / "fuzz.env"
    env.write_text(text, encoding="utf-8")
    env.chmod(0o600)
    try:
        config = load_config(project_dir=tmp_path, env_file=env, environ={})
    except ConfigError as exc:
        assert str(exc)
    else:
        assert config.one_in >= 1 and config.max_posts_per_day >= 1
