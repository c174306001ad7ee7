"""Settings: sources and their order, path resolution, strict checking, secrets kept secret."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REGISTRY, REPO
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from twitterbot.capability import Capability
from twitterbot.errors import ConfigError
from twitterbot.networks.x import NETWORK as X_NETWORK
from twitterbot.networks.x import X_MONTHLY_BUDGET
from twitterbot.posting import TWEET_ONE_IN
from twitterbot.registry import Registry
from twitterbot.settings.core import CORE
from twitterbot.settings.keys import BOT_STATE_DIR
from twitterbot.settings.loading import env_file_warnings, load_config
from twitterbot.settings.parsers import POSITIVE_INT
from twitterbot.settings.table import POST_TO, Setting, SettingType, by_name


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_defaults_resolve_beside_bot_py_when_there_is_no_env_file(tmp_path: Path) -> None:
    config = load_config(REGISTRY, project_dir=tmp_path, environ={})
    assert config.env_file is None
    assert config["TWEETS_FILE"] == tmp_path / "tweets.txt"
    assert config["BOT_STATE_DIR"] == tmp_path / "state"
    assert config["TWEET_ONE_IN"] == 4 and config["MAX_POSTS_PER_DAY"] == 4
    assert config["LOG_FILE"] is None and config["LOG_LEVEL"] == "INFO"
    assert config["X_API_BASE_URL"] == "https://api.twitter.com"
    assert config.missing() == [
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
    config = load_config(REGISTRY, project_dir=tmp_path / "elsewhere", env_file=env, environ={})
    assert config["TWEETS_FILE"] == conf / "posts/mine.txt"
    assert config["BOT_STATE_DIR"] == conf / "../var"
    assert config["LOG_FILE"] == conf / "bot.log"
    assert config.state.history == conf / "../var/history.sqlite3"


def test_a_setting_is_the_key_its_value_is_read_by(tmp_path: Path) -> None:
    """A declared setting reads its value as its name does: typed for the type checker, the same at run time."""
    config = load_config(REGISTRY, project_dir=tmp_path, environ={"X_MONTHLY_BUDGET": "5", "TWEET_ONE_IN": "3"})
    assert config[X_MONTHLY_BUDGET] == config["X_MONTHLY_BUDGET"] == 5.0
    assert config[TWEET_ONE_IN] == 3
    assert [network.name for network in config[POST_TO]] == ["x"]
    assert REGISTRY.settings["TWEET_ONE_IN"] is TWEET_ONE_IN


def test_the_state_folder_names_every_file_from_bot_state_dir(tmp_path: Path) -> None:
    config = load_config(REGISTRY, project_dir=tmp_path, environ={"BOT_STATE_DIR": str(tmp_path / "var")})
    state = config.state
    assert state.path == config[BOT_STATE_DIR] == tmp_path / "var"
    assert (state.history, state.lock, state.pictures) == (
        tmp_path / "var/history.sqlite3",
        tmp_path / "var/bot.lock",
        tmp_path / "var/pictures",
    )
    assert state.session("bluesky") == tmp_path / "var/bluesky-session.json"
    assert state.job_lock("hamlet") == tmp_path / "var/job-hamlet.lock"
    assert not (tmp_path / "var").exists()  # naming a file makes nothing


def test_a_setting_listed_under_another_name_is_refused() -> None:
    class Misnamed(Capability):
        name = "misnamed"
        settings = {"TWEET_ONE_OF": Setting("TWEET_ONE_IN_TOO", "1", POSITIVE_INT, "a typo in a declaration")}

    assert by_name(TWEET_ONE_IN) == {"TWEET_ONE_IN": TWEET_ONE_IN}
    with pytest.raises(ValueError, match="lists TWEET_ONE_IN_TOO as TWEET_ONE_OF"):
        Registry((CORE, Misnamed(), X_NETWORK))


def test_the_default_env_file_is_the_one_beside_bot_py(tmp_path: Path) -> None:
    write(tmp_path / ".env", "TWEET_ONE_IN=7\n")
    assert load_config(REGISTRY, project_dir=tmp_path, environ={})["TWEET_ONE_IN"] == 7


def test_later_sources_win_defaults_file_environment_flags(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWEET_ONE_IN=2\nMAX_POSTS_PER_DAY=9\nLOG_LEVEL=debug\n")
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        env_file=env,
        environ={"TWEET_ONE_IN": "3", "MAX_POSTS_PER_DAY": "", "UNRELATED": "x"},
        overrides={"TWEET_ONE_IN": "5"},
    )
    assert config["TWEET_ONE_IN"] == 5  # flag beats environment beats file
    assert config["MAX_POSTS_PER_DAY"] == 9  # an empty environment value does not hide the file's
    assert config["LOG_LEVEL"] == "DEBUG"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("TWEET_ONE_IN=abc", "TWEET_ONE_IN='abc'"),
        ("TWEET_ONE_IN=0", "whole number from 1 to 1000000000"),
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
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert expected in str(caught.value)
    assert str(env) in str(caught.value)


def test_malformed_environment_value_names_the_environment(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TWEET_ONE_IN='0' from the environment"):
        load_config(REGISTRY, project_dir=tmp_path, environ={"TWEET_ONE_IN": "0"})


def test_a_named_env_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(REGISTRY, project_dir=tmp_path, env_file=tmp_path / "missing.env", environ={})


def test_env_file_must_be_utf8(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"TWEETS_FILE=caf\xe9.txt\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(REGISTRY, project_dir=tmp_path, environ={})


def test_secrets_never_appear_in_repr_or_errors(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWITTER_API_KEY=sekritKey123\nTWITTER_API_SECRET=has space\n")
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert "TWITTER_API_SECRET" in str(caught.value) and "has space" not in str(caught.value)
    write(env, "TWITTER_API_KEY=sekritKey123\n")
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert config["TWITTER_API_KEY"] == "sekritKey123"
    assert "sekritKey123" not in repr(config)


def test_quoted_values_and_comments_are_read_like_dotenv_does(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", '# my bot\nTWEETS_FILE="my tweets.txt"  # spaces are fine\nTWITTER_API_KEY=abc123\n')
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert config["TWEETS_FILE"] == tmp_path / "my tweets.txt"
    assert config["TWITTER_API_KEY"] == "abc123"


@pytest.mark.parametrize(("mode", "warned"), [(0o600, False), (0o640, True), (0o644, True), (0o400, False)])
def test_warns_when_the_env_file_with_keys_is_readable_by_others(tmp_path: Path, mode: int, warned: bool) -> None:
    env = write(tmp_path / ".env", "TWITTER_API_KEY=abc123\n", mode)
    warnings = env_file_warnings(load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={}))
    assert bool(warnings) is warned
    if warned:
        assert f"chmod 600 {env}" in warnings[0]


def test_no_permission_warning_for_an_env_file_without_keys(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", "TWEET_ONE_IN=2\n", 0o644)
    assert env_file_warnings(load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})) == []


def test_every_setting_has_a_parser_and_a_default_that_parses(tmp_path: Path) -> None:
    config = load_config(REGISTRY, project_dir=tmp_path, environ={})
    assert config is not None
    assert all(setting.help for setting in REGISTRY.settings.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_env_file_text_gives_a_config_or_a_clear_error(tmp_path: Path, text: str) -> None:
    env = tmp_path / "fuzz.env"
    env.write_text(text, encoding="utf-8")
    env.chmod(0o600)
    try:
        config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    except ConfigError as exc:
        assert str(exc)
    else:
        assert config["TWEET_ONE_IN"] >= 1 and config["MAX_POSTS_PER_DAY"] >= 1


# -- an installed command (pip install .) has no checkout to find .env, tweets.txt and state/ in ---


def run_installed_copy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the package as `pip install .` leaves it: in a site-packages folder with no bot.py beside it."""
    site = tmp_path / "site-packages"
    if not site.exists():
        shutil.copytree(REPO / "twitterbot", site / "twitterbot", ignore=shutil.ignore_patterns("__pycache__"))
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", "import sys; from twitterbot.cli import main; sys.exit(main())", *args],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": str(site), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_installed_command_without_env_file_says_to_pass_one_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "tweets.txt").write_text("a line in the current folder, never read\n")
    result = run_installed_copy(tmp_path, "--dry-run")
    assert result.returncode == 78, result.stderr
    assert "TWEETS_FILE" in result.stderr and "--env-file" in result.stderr
    assert not (tmp_path / "site-packages" / "state").exists() and not (tmp_path / "cwd" / "state").exists()


def test_an_installed_command_finds_everything_beside_its_env_file(tmp_path: Path) -> None:
    home = tmp_path / "bot"
    home.mkdir()
    (home / "tweets.txt").write_text((REPO / "tweets.txt").read_text())
    write(home / ".env", "TWEET_ONE_IN=1\n")
    result = run_installed_copy(tmp_path, "--env-file", str(home / ".env"), "--dry-run", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "would post line" in result.stderr
    assert (home / "state" / "history.sqlite3").exists()


def test_with_no_project_folder_absolute_paths_from_the_environment_are_enough(tmp_path: Path) -> None:
    environ = {"TWEETS_FILE": str(tmp_path / "t.txt"), "BOT_STATE_DIR": str(tmp_path / "s")}
    config = load_config(REGISTRY, project_dir=None, environ=environ)
    assert config["TWEETS_FILE"] == tmp_path / "t.txt" and config.env_file is None
    with pytest.raises(ConfigError, match="TWEETS_FILE.*--env-file"):
        load_config(REGISTRY, project_dir=None, environ={"BOT_STATE_DIR": str(tmp_path / "s")})


# -- every problem at once; a BOM; no value crashes the bot -----------------------------------------


def test_every_problem_in_the_env_file_is_reported_at_once_in_file_order(tmp_path: Path) -> None:
    env = write(
        tmp_path / ".env",
        "TWEET_ONE_IN=0\nLOG_LEVEL=loud\nTWEET_ONE_INN=3\nnot a setting\nX_API_TIMEOUT=soon\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={"MAX_POSTS_PER_DAY": "none"})
    problems = caught.value.problems
    assert [problem.split(" is ")[0].split(":")[0] for problem in problems] == [
        f"TWEET_ONE_IN='0' from {env} line 1",
        f"LOG_LEVEL='loud' from {env} line 2",
        f"{env} line 3",
        f"{env} line 4",
        f"X_API_TIMEOUT='soon' from {env} line 5",
        "MAX_POSTS_PER_DAY='none' from the environment",
    ]
    assert "did you mean TWEET_ONE_IN?" in problems[2] and "set it to e.g." in problems[0]
    assert str(caught.value) == "\n".join(problems)


def test_check_reports_every_bad_setting_then_exits_78(tmp_path: Path, capsys) -> None:
    from twitterbot.cli import main

    write(tmp_path / ".env", "TWEET_ONE_IN=0\nLOG_LEVEL=loud\n")
    assert main(["check"], environ={}, project_dir=tmp_path) == 78
    err = capsys.readouterr().err
    assert "TWEET_ONE_IN='0'" in err and "LOG_LEVEL='loud'" in err
    assert all("twitterbot ERROR:" in line for line in err.splitlines()), err  # one log line per problem


@pytest.mark.parametrize("bom_text", ["\ufeffLOG_LEVEL=DEBUG\n", "\ufeffLOG_LEVEL=DEBUG\r\nTWEET_ONE_IN=2\r\n"])
def test_an_env_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path, bom_text: str) -> None:
    (tmp_path / ".env").write_text(bom_text, encoding="utf-8")
    assert load_config(REGISTRY, project_dir=tmp_path, environ={})["LOG_LEVEL"] == "DEBUG"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("TWEET_TIMES=0\u00b2:00", "is not a time of day"),  # '²'.isdigit() is True; int('²') fails
        ("TWEET_TIMES=\u0661\u0662:00", "is not a time of day"),  # Arabic-Indic digits
        ("X_API_BASE_URL=http://[::1", "is not a base URL"),
        ("X_API_BASE_URL=http://localhost:99999", "is not a base URL"),
        ("X_API_BASE_URL=http://exa mple.com", "is not a base URL"),
        ("X_API_RETRIES=1000000", "from 0 to 5"),
        ("X_API_TIMEOUT=nan", "between 0 and 600"),
        ("PROGRESS_EVERY=99999999999999999999d", "is not a duration"),
        ("PROGRESS_EVERY=400d", "longer than a year"),
        ("TWEET_TIMEZONE=America", "is not a time zone"),
        ("TWEET_TIMEZONE=" + "a" * 300, "is not a time zone"),
        ("TWITTER_API_KEY=abc\u00e9def", "characters keys never have"),
    ],
)
def test_values_that_used_to_crash_are_config_errors(tmp_path: Path, line: str, expected: str) -> None:
    env = write(tmp_path / ".env", line + "\n")
    with pytest.raises(ConfigError, match=expected):
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})


@pytest.mark.parametrize(
    "name", [name for name, s in REGISTRY.settings.items() if s.kind.name in ("path", "optional_path")]
)
def test_a_nul_byte_in_a_path_setting_is_a_config_error(tmp_path: Path, name: str) -> None:
    env = write(tmp_path / ".env", f"{name}=state\x00/x\n")
    with pytest.raises(ConfigError, match=f"{name} from {env} line 1 contains a NUL byte"):
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})


# Values near valid ones find more than random text: one character inserted, replaced or deleted,
# often one that parsers trip on (a superscript digit, a bracket, a NUL byte, an Arabic digit).
_EXAMPLES = {
    "secret": ["AbCdEf0123456789GhIj", "12345-AbCdEf"],
    "passphrase": ["correct horse battery staple", "p@ss 'word' \"quoted\" 9"],
    "path": ["tweets.txt", "state", "~/bot/state"],
    "optional_path": ["bot.log"],
    "positive_int": ["4", "1", "1000000000"],
    "days": ["400", "1", "36600"],
    "grace": ["1h", "5m", "366d"],
    "count": ["2", "0"],
    "seconds": ["20", "0.5"],
    "log_level": ["INFO", "debug"],
    "url": ["https://api.twitter.com", "http://[::1]:8080", "http://127.0.0.1:5000"],
    "times": ["00:00,06:00,12:00,18:00", "07:30:15"],
    "timezone": ["Europe/London", "UTC"],
    "duration": ["10m", "3h30m", "1.5d", "0"],
    "bool": ["yes", "off"],
    "template": ["{name}: {message} ({elapsed})", "{{literal}}"],
    "networks": ["x", "mastodon,bluesky", "x, Bluesky"],
    "optional_url": ["https://mastodon.social", "http://127.0.0.1:3000"],
    "visibility": ["unlisted", "public"],
    "handle": ["alice.bsky.social", "@bob.test"],
    "app_password": ["abcd-efgh-ijkl-mnop", "2k4j-x9q0-aaaa-zzzz"],
    "scheduler": ["tls://10.0.0.2:8786", "tcp://127.0.0.1:8786", ""],
    "kernel": ["auto", "numpy", "C"],
    "language": ["en", "pt-BR", "zh-Hant-TW", ""],
    "long_lines": ["skip", "thread"],
    "svg_renderer": ["auto", "rsvg", "chromium", "Chromium", ""],
    "dollars": ["5", "12.50", "$20", ""],
    "endpoint": ["https://hc-ping.com/abc-123", "http://127.0.0.1:8080/topic", ""],
    "video_service": ["auto", "none", "NONE", "https://video.bsky.app", "http://127.0.0.1:8042"],
}
_TRICKY = st.one_of(st.sampled_from("[]:/.%@#'\"\\{}\x00\u00b2\u0663\ufeff \t"), st.characters())


@st.composite
def near_valid(draw: st.DrawFn, kind: SettingType) -> str:
    text = draw(st.sampled_from(_EXAMPLES[kind.name]))
    at = draw(st.integers(0, len(text)))
    how = draw(st.sampled_from(["insert", "replace", "delete"]))
    if how == "delete":
        return text[:at] + text[at + 1 :]
    return text[:at] + draw(_TRICKY) + text[at + (how == "replace") :]


def any_value(name: str) -> st.SearchStrategy:
    return st.one_of(st.text(max_size=60), near_valid(REGISTRY.settings[name].kind))


@pytest.mark.parametrize("name", list(REGISTRY.settings))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_setting_turns_any_text_into_a_value_or_a_config_error(tmp_path: Path, name: str, data) -> None:
    text = data.draw(any_value(name))
    try:
        config = load_config(REGISTRY, project_dir=tmp_path, environ={name: text})
    except ConfigError as exc:
        assert exc.problems and all(problem.strip() for problem in exc.problems)
        assert all(name in problem for problem in exc.problems) or name in ("TWEET_TIMES", "TWEET_JITTER")
    else:
        assert isinstance(config["TWEET_TIMES"], tuple) and config["TWEET_TIMES"]
        assert all(isinstance(path, Path) for path in (config["TWEETS_FILE"], config["BOT_STATE_DIR"]))


# An env file as a person (or a cat on the keyboard) might write it: known names with any value,
# and arbitrary lines. Path values stay inside the temp folder (the tests may run as root).
_SAFE_NAME = st.text(st.characters(blacklist_characters="/~", codec="utf-8"), min_size=1, max_size=20).filter(
    lambda name: name.strip() not in ("", ".", "..")
)


def _setting_line(name: str) -> st.SearchStrategy:
    value = _SAFE_NAME if REGISTRY.settings[name].kind.name in ("path", "optional_path") else any_value(name)
    return value.map(lambda text: f"{name}={text}")


_ENV_LINE = st.one_of(
    st.sampled_from(list(REGISTRY.settings)).flatmap(_setting_line),
    st.text(max_size=40).filter(lambda line: "/" not in line),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_ENV_LINE, max_size=6), bom=st.booleans())
@example(lines=["TWEET_TIMES=0\u00b2:00"], bom=False)  # the crashes issue 13 found, kept as regressions
@example(lines=["X_API_BASE_URL=http://[::1"], bom=False)
@example(lines=["TWEETS_FILE=tweets\x00.txt", "BOT_STATE_DIR=st\x00ate", "LOG_FILE=a\x00b"], bom=False)
@example(lines=["LOG_LEVEL=DEBUG", "TWEET_ONE_IN=0", "nonsense"], bom=True)
@example(lines=["TWITTER_API_KEY=FALS"], bom=False)  # masked in the printed text, it broke `false`
def test_no_env_file_makes_the_bot_exit_1_and_json_is_always_printed(
    tmp_path: Path, capsys, lines: list, bom: bool
) -> None:
    import json

    from twitterbot.cli import main

    (tmp_path / "tweets.txt").write_text("a line\nanother line\n")
    (tmp_path / ".env").write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")
    status = main(["--dry-run", "--force", "--json"], environ={}, project_dir=tmp_path)
    out = capsys.readouterr().out
    assert status != 1
    assert isinstance(json.loads(out), dict)  # one JSON object, whatever happened


def test_post_to_twitter_is_refused_with_the_name_to_write(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="X was called Twitter: write x"):
        load_config(REGISTRY, project_dir=tmp_path, environ={"POST_TO": "twitter,mastodon"})


def test_the_old_x_api_names_are_read_as_the_new_ones_and_check_says_to_rename_them(tmp_path: Path, capsys) -> None:
    from twitterbot.cli import main

    env = write(tmp_path / ".env", "X_API_TIMEOUT=7\nX_API_RETRIES=1\n")
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert (config["API_TIMEOUT"], config["API_RETRIES"]) == (7, 1)
    assert [(old, new) for old, new, _ in config.deprecated] == [
        ("X_API_TIMEOUT", "API_TIMEOUT"),
        ("X_API_RETRIES", "API_RETRIES"),
    ]
    main(["--env-file", str(env), "check"], environ={})
    out = capsys.readouterr().out
    assert f"X_API_TIMEOUT (from {env} line 1) is deprecated: rename it API_TIMEOUT" in out
    assert "X_API_RETRIES" in out and "rename it API_RETRIES" in out


@pytest.mark.parametrize(
    ("text", "timeout"),
    [
        ("API_TIMEOUT=5\nX_API_TIMEOUT=7\n", 5),  # in one file the new name wins, wherever it is
        ("X_API_TIMEOUT=7\nAPI_TIMEOUT=5\n", 5),
    ],
)
def test_the_new_name_wins_over_the_old_one(tmp_path: Path, text: str, timeout: float) -> None:
    env = write(tmp_path / ".env", text)
    assert load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})["API_TIMEOUT"] == timeout
    assert load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={"X_API_TIMEOUT": "9"})["API_TIMEOUT"] == 9


def test_a_quoted_value_over_several_lines_keeps_the_line_numbers_after_it(tmp_path: Path) -> None:
    env = write(tmp_path / ".env", 'PROGRESS_TEMPLATE="{name}:\n{message}"\nTWEET_ONE_IN=zero\n')
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    assert str(caught.value).startswith(f"TWEET_ONE_IN='zero' from {env} line 3 ")
    write(env, 'PROGRESS_TEMPLATE="{name}:\n{message}"\n')
    assert (
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})["PROGRESS_TEMPLATE"]
        == "{name}:\n{message}"
    )


@pytest.mark.parametrize("name", ["TWITTERBOT_PEGS_KERNEL", "TWITTERBOT_MONKEY_KERNEL"])
def test_the_kernel_switches_are_settings_like_any_other(tmp_path: Path, name: str) -> None:
    """Accepted in the env file (they were refused as unknown), overridden by the environment,
    and a value that is not auto, c or numpy is a config error naming the line."""
    env = tmp_path / ".env"
    env.write_text(f"{name}=numpy\n")
    assert load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})[name] == "numpy"
    assert load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={name: "C"})[name] == "c"
    (tmp_path / "fresh").mkdir()
    assert load_config(REGISTRY, project_dir=tmp_path / "fresh", environ={})[name] == "auto"
    env.write_text(f"{name}=fast\n")
    with pytest.raises(ConfigError, match=f"{env} line 1 is not auto, c or numpy"):
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
