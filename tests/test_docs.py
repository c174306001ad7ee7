"""The docs are part of the product: every setting documented and read, the reference pages
generated from the code and current, and the commands the README and docs/ show real."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import unicodedata
from typing import Dict, Iterator, List, Tuple

from conftest import BOT_PY, REGISTRY, REPO
from dotenv import dotenv_values

from twitterbot import __version__
from twitterbot.cli import parse_args
from twitterbot.errors import ExitStatus

README = (REPO / "README.md").read_text()
EXAMPLE = REPO / "config.example.env"
DOCS = REPO / "docs"
REFERENCE = DOCS / "reference"
# The hand-written pages (the reference is generated, the changelog is CHANGELOG.md's).
PAGES: Dict[str, str] = {
    "README.md": README,
    **{
        str(path.relative_to(REPO)): path.read_text()
        for path in sorted(DOCS.rglob("*.md"))
        if REFERENCE not in path.parents
    },
}

sys.path.insert(0, str(DOCS))
import gen_reference  # noqa: E402  (docs/gen_reference.py: a script beside the pages, not a package)

# What the reference is made from, imported where the generator imports it.
_, build_parser, EXIT_STATUS_HELP = gen_reference.sources()


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


def test_the_readme_stays_short_and_one_click_from_each_network() -> None:
    assert len(README.splitlines()) < 250
    for network in ("bluesky", "mastodon", "x"):
        assert f"(docs/networks/{network}.md)" in README.split("## Quick start", 1)[0], network


def test_every_setting_is_in_the_example_and_the_reference_and_nothing_else_is() -> None:
    example = dotenv_values(EXAMPLE)
    assert set(example) == set(REGISTRY.settings)
    page = (REFERENCE / "settings.md").read_text()
    for name in REGISTRY.settings:
        assert f"| `{name}` |" in page, name


def test_the_example_env_file_is_valid_config(tmp_path) -> None:
    from twitterbot.settings.loading import load_config

    config = load_config(REGISTRY, project_dir=tmp_path, env_file=EXAMPLE, environ={})
    assert config["TWEET_ONE_IN"] == int(REGISTRY.settings["TWEET_ONE_IN"].default)


def test_every_exit_code_is_documented() -> None:
    assert set(EXIT_STATUS_HELP) == set(ExitStatus), "give each ExitStatus its meaning in EXIT_STATUS_HELP"
    table = (REFERENCE / "exit-codes.md").read_text()
    for status in ExitStatus:
        assert f"\n| {int(status)} | `{status.name}` |" in table, status


def test_the_reference_pages_are_current() -> None:
    """docs/reference/ is generated from the code: after a new setting, flag or exit code, run
    `python docs/gen_reference.py` and commit the pages."""
    assert gen_reference.stale() == [], "run  python docs/gen_reference.py  and commit what it wrote"


def test_a_stale_or_missing_reference_page_is_found(tmp_path) -> None:
    for name, text in gen_reference.render().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert gen_reference.stale(tmp_path) == []
    settings = tmp_path / "docs/reference/settings.md"
    settings.write_text(settings.read_text().replace("`TWEET_ONE_IN`", "`TWEET_ONE_OF`"))
    (tmp_path / "docs/reference/exit-codes.md").unlink()
    (tmp_path / "crontab.example").unlink()
    assert gen_reference.stale(tmp_path) == [
        "docs/reference/settings.md",
        "docs/reference/exit-codes.md",
        "crontab.example",
    ]


def commands_of(parser: argparse.ArgumentParser, path: Tuple[str, ...] = ("bot.py",)) -> Iterator[tuple]:
    """(the command's words, its parser) for the whole tree, found without the generator's help."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands_of(child, (*path, name))


def test_every_command_and_every_flag_is_in_the_commands_reference() -> None:
    page = (REFERENCE / "commands.md").read_text()
    sections = dict(re.findall(r"\n## `([^`]+)`\n(.*?)(?=\n## |\Z)", page, flags=re.S))
    commands = list(commands_of(build_parser()))
    assert len(commands) > 5
    for path, parser in commands:
        name = " ".join(path)
        assert name in sections, f"{name} has no section"
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings:
                assert f"`{flag}`" in sections[name], f"{name} {flag}"
            if action.help and not isinstance(action, argparse._SubParsersAction):
                first_words = " ".join(action.help.split()[:3]).split("%")[0]
                assert first_words in " ".join(sections[name].split()), f"{name} {action.dest}: its help"


# A command the docs show: `bot.py ...` or an installed `twitterbot ...`, up to a pipe,
# redirection, `&&`, `;` or a comment.
_SHOWN = re.compile(r"(?:(?:^|[\s/])bot\.py|^\s*twitterbot)(?=\s|$)(?P<rest>[^\n`]*)")


def shown_commands() -> Iterator[Tuple[str, str, List[str]]]:
    for page, text in PAGES.items():
        blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
        spans = re.findall(r"`([^`\n]*bot\.py [^`\n]*)`", re.sub(r"```.*?```", "", text, flags=re.S))
        for line in [line for block in blocks for line in block.splitlines()] + spans:
            for match in _SHOWN.finditer(line):
                rest = re.split(r"\s(?:\||>>?|&&|;|#|2>)(?:\s|$)|\s2>&1", match.group("rest") + " ")[0]
                try:
                    words = shlex.split(rest)
                except ValueError:  # an unbalanced quote: a fragment inside a sentence
                    continue
                if any(word in ("...", "COMMAND", "CMD") or word.startswith("<") for word in words):
                    continue  # a pattern, not a command
                yield page, line.strip(), words


def test_every_command_the_docs_show_parses(capsys) -> None:
    """Each `bot.py ...` in the README and docs/ is a command line the bot takes: no flag that
    does not exist, none on a command that does not take it."""
    shown = list(shown_commands())
    assert len(shown) > 40, "the pattern finds too few commands"
    refused = []
    for page, line, words in shown:
        try:
            parse_args(words, REGISTRY)
        except SystemExit as exc:  # --help and --version exit 0; a usage error 64
            if exc.code not in (0, None):
                refused.append(f"{page}: {line}")
    capsys.readouterr()
    assert refused == []


def test_version_is_printed_and_released_in_the_changelog() -> None:
    import subprocess

    printed = subprocess.run([sys.executable, str(BOT_PY), "--version"], capture_output=True, text=True)
    assert printed.returncode == 0 and printed.stdout.strip() == f"twitterbot {__version__}"
    changelog = (REPO / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.M)
    assert versions[0] == "Unreleased" and __version__ in versions, versions
    assert len(versions) == len(set(versions)), "a version appears twice"
    for version in versions[1:]:
        section = changelog.split(f"## [{version}]", 1)[1].split("\n## [", 1)[0]
        headings = re.findall(r"^### (.+)$", section, flags=re.M)
        assert len(headings) == len(set(headings)), f"{version} repeats a section: {headings}"


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
    """README, docs/ and the requirement files name modules and tests by path: after a move they must follow."""
    texts = "".join(PAGES.values()) + (REPO / "requirements.txt").read_text()
    # Repository-relative only: /home/pi/twitterbot/bot.py is a checkout's path, not a module's.
    named = set(re.findall(r"(?<![\w/.-])((?:twitterbot|tests|benchmarks)/[\w/.-]+\.py)\b", texts))
    assert named, "the README names no file: the pattern is wrong"
    assert sorted(path for path in named if not (REPO / path).exists()) == []


def test_the_changelog_links_nothing_the_docs_site_cannot_follow() -> None:
    """CHANGELOG.md is shown on GitHub and inside the site (docs/changelog.md includes it), where a
    path relative to the repository breaks `mkdocs build --strict`: name pages, do not link them."""
    changelog = re.sub(r"`[^`]*`", "", (REPO / "CHANGELOG.md").read_text())  # code spans are not links
    relative = re.findall(r"\]\((?!https?://|#)([^)]+)\)", changelog)
    assert not relative, f"CHANGELOG.md links {relative}: write the path as `code` instead"


def _heading_anchors(text: str) -> set:
    """The anchors Python-Markdown's toc extension (mkdocs' default) gives a page's headings: code
    spans keep their text, anything not a word, space or hyphen is dropped, runs of either become one
    hyphen; an explicit `{#id}` wins and a repeated heading gets `_1`, `_2`."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a '#' inside a code block is no heading
    anchors: set = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M):
        explicit = re.search(r"\{\s*#([\w-]+)[^}]*\}\s*$", heading)
        if explicit:
            anchors.add(explicit.group(1))
            continue
        plain = re.sub(r"`([^`]*)`", r"\1", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading))
        plain = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode("ascii")
        slug = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", plain).strip().lower())
        unique, count = slug, 0
        while unique in anchors:
            count += 1
            unique = f"{slug}_{count}"
        anchors.add(unique)
    return anchors


def test_every_link_to_a_section_of_the_docs_finds_its_heading() -> None:
    """`mkdocs build --strict` (CI's last step) fails on a link to a missing anchor: find it here,
    in seconds, with the page and the anchor named."""
    pages = {path: path.read_text() for path in DOCS.rglob("*.md")}
    anchors = {path: _heading_anchors(text) for path, text in pages.items()}
    broken = []
    for path, text in pages.items():
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        prose = re.sub(r"`[^`]*`", "", prose)
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", prose):
            if target.startswith(("http://", "https://")):
                continue
            page = (path.parent / target).resolve() if target else path
            if page in anchors and anchor not in anchors[page]:
                broken.append(f"{path.relative_to(REPO)} links {target}#{anchor}")
    assert anchors[DOCS / "flock.md"] >= {"a-new-bot-botpy-new-name", "listing-the-flock-botpy-bots"}
    assert broken == []
