"""The docs are part of the product: every setting documented and read, and the README's commands real."""

from __future__ import annotations

import re

from conftest import REPO
from dotenv import dotenv_values

from twitterbot.errors import ExitStatus
from twitterbot.settings import SETTINGS

README = (REPO / "README.md").read_text()
EXAMPLE = REPO / "config.example.env"


def quick_start_commands() -> list:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_is_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in command for command in commands)
    assert commands[0].endswith("bot.py --dry-run")
    assert "pytest" in commands[1]


def test_ci_runs_the_readmes_test_command() -> None:
    assert quick_start_commands()[1] in (REPO / ".ci" / "run").read_text()


def test_every_setting_is_in_the_example_and_the_readme_and_nothing_else_is() -> None:
    example = dotenv_values(EXAMPLE)
    assert set(example) == set(SETTINGS)
    for name in SETTINGS:
        assert f"| `{name}` |" in README, name


def test_the_example_env_file_is_valid_config(tmp_path) -> None:
    from twitterbot.settings import load_config

    config = load_config(project_dir=tmp_path, env_file=EXAMPLE, environ={})
    assert config.one_in == int(SETTINGS["TWEET_ONE_IN"].default)


def test_every_exit_code_is_documented() -> None:
    table = README.split("### Exit codes", 1)[1]
    for status in ExitStatus:
        assert f"\n| {int(status)} |" in table, status


# "../" + "shared", or parents[N] / "shared": spelled so that this file does not match itself.
_SIBLING = r"\.\./" + "shared" + r"|parents\[\d\]\s*/\s*[\"']" + "shared"


def test_nothing_in_the_repository_reads_outside_it() -> None:
    """A plain `git clone` must pass its tests: no file may reach for a folder beside the repository."""
    import subprocess

    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    offenders = []
    for name in tracked:
        path = REPO / name
        if (
            path.suffix not in {".py", ".toml", ".txt", ".cfg", ".ini", ".md", ".env", ".example", ""}
            or not path.is_file()
        ):
            continue
        text = path.read_text(errors="replace")
        if re.search(_SIBLING, text):
            offenders.append(name)
    assert offenders == []


def test_every_repository_path_the_docs_name_exists() -> None:
    """README and the requirement files name modules and tests by path: after a move they must follow."""
    texts = README + (REPO / "requirements.txt").read_text()
    # Repository-relative only: /home/pi/twitterbot/bot.py is a checkout's path, not a module's.
    named = set(re.findall(r"(?<![\w/.-])((?:twitterbot|tests|benchmarks)/[\w/.-]+\.py)\b", texts))
    assert named, "the README names no file: the pattern is wrong"
    assert sorted(path for path in named if not (REPO / path).exists()) == []
