"""The package's folders are its architecture, and imports only go down: this test reads every
import in `twitterbot/` (at module level or inside a function) and fails on one that goes up.

From the top down:

    cli                        assembles the commands, the one error boundary
    web                        the status page: reads what every part below left behind
    jobs.<job>, unattended     a job uses progress mode; running unattended uses the scheduled post
    progress                   the reporter, watch, the status line
    posting                    the tweets file, choosing, the one send step, one scheduled run
    networks                   one package per network, found through one registry
    foundation                 settings/, state/, errors, lock, files, arguments, wording

A job never imports another job, and nothing below `cli` imports `cli`. One edge goes up, on
purpose: `settings` asks the network registry (`twitterbot.networks`, never a network's module)
which settings each network needs, so that a network's settings live in its module.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Tuple

import pytest
from conftest import REPO

PACKAGE = REPO / "twitterbot"
FOUNDATION = {
    "errors",
    "lock",
    "files",
    "arguments",
    "wording",
    "__init__",
}
# Foundation folders: every part may use them, as the modules above.
FOUNDATION_PARTS = {"foundation", "settings", "state"}

# What each part may import, besides itself and the foundation.
ALLOWED = {
    "foundation": set(),
    "settings": {"networks"},  # the registry only (test_settings_ask_only_the_registry)
    "state": set(),
    "pictures": set(),
    "networks": {"pictures"},
    "posting": {"networks", "pictures"},
    "progress": {"posting", "networks", "pictures"},
    "unattended": {"posting", "networks", "pictures"},
    "jobs": {"progress", "posting", "networks", "pictures"},
    "web": {"unattended", "progress", "posting", "networks", "pictures"},
    "cli": {"jobs", "unattended", "progress", "posting", "networks", "web", "pictures"},
}


def part_of(module: str) -> str:
    """'twitterbot.jobs.pegs.board' -> 'jobs'; 'twitterbot.errors' -> 'foundation'."""
    parts = module.split(".")[1:] or ["__init__"]
    if parts[0] == "__main__":  # `python -m twitterbot` is the command line
        return "cli"
    if parts[0] in FOUNDATION:
        return "foundation"
    return parts[0]


def job_of(module: str) -> str:
    """'twitterbot.jobs.pegs.board' -> 'pegs'; '' outside a job's folder, such as
    'twitterbot.jobs.native', which every job may share."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "jobs" and (PACKAGE / "jobs" / parts[2]).is_dir():
        return parts[2]
    return ""


def modules() -> Iterator[Tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(REPO).with_suffix("")
        name = ".".join(relative.parts)
        yield (name[: -len(".__init__")] if name.endswith(".__init__") else name), path


def imports_of(module: str, path: Path) -> Iterator[Tuple[int, str]]:
    """Every twitterbot module `module` imports, with the line, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "twitterbot":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "twitterbot":
                continue
            if target == "twitterbot" or not node.module:  # `from twitterbot import history, __version__`
                folder = PACKAGE.joinpath(*target.split(".")[1:])
                for alias in node.names:
                    is_module = (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir()
                    yield node.lineno, f"{target}.{alias.name}" if is_module else target
            else:
                yield node.lineno, target


def test_every_module_belongs_to_a_known_part() -> None:
    unknown = sorted(module for module, _ in modules() if part_of(module) not in ALLOWED)
    assert unknown == [], "add the new folder to ALLOWED (and to README's map of the tree)"


def why_not(module: str, target: str) -> str:
    """Why `module` may not import `target`, or '' if it may."""
    mine, theirs = part_of(module), part_of(target)
    if theirs == mine:
        if mine == "jobs" and job_of(target) and job_of(target) != job_of(module):
            return "another job"
        return ""
    if theirs not in FOUNDATION_PARTS and theirs not in ALLOWED[mine]:
        return f"{mine} may not use {theirs}"
    return ""


def test_imports_only_go_down() -> None:
    upward = []
    for module, path in modules():
        for line, target in imports_of(module, path):
            reason = why_not(module, target)
            if reason:
                upward.append(f"{path.relative_to(REPO)}:{line} imports {target} ({reason})")
    assert upward == []


@pytest.mark.parametrize(
    ("module", "source", "allowed"),
    [
        ("twitterbot.errors", "from .posting import scheduled\n", False),
        ("twitterbot.state.store", "from ..networks import x\n", False),
        ("twitterbot.networks.x", "from ..posting.send import send\n", False),
        ("twitterbot.networks.x", "from ..settings.table import Setting\n", True),
        ("twitterbot.networks.x", "from ..posting.tweets import measure\n", False),
        ("twitterbot.jobs.pegs.job", "from ...jobs.monkey import job\n", False),
        ("twitterbot.jobs.pegs.job", "def f():\n    from twitterbot.cli import main\n", False),
        ("twitterbot.jobs.pegs.job", "from ...progress import open_reporter\n", True),
        ("twitterbot.jobs.pegs.count", "from .. import native\n", True),
        ("twitterbot.posting.scheduled", "from ..networks import Poster\n", True),
    ],
)
def test_the_rule_catches_an_upward_import(tmp_path: Path, module: str, source: str, allowed: bool) -> None:
    """The checker itself: an upward import, even inside a function, is found."""
    path = tmp_path / "module.py"
    path.write_text(source)
    verdicts = [not why_not(module, target) for _, target in imports_of(module, path)]
    assert verdicts and all(verdicts) is allowed


def _targets(prefix: str) -> Iterator[Tuple[str, str]]:
    for module, path in modules():
        if module == prefix or module.startswith(prefix + "."):
            for _, target in imports_of(module, path):
                yield module, target


def test_networks_know_nothing_of_posting() -> None:
    above = ("posting", "progress", "unattended", "jobs", "cli")
    assert [(m, t) for m, t in _targets("twitterbot.networks") if part_of(t) in above] == []


def test_state_imports_no_network() -> None:
    found = [(m, t) for m, t in _targets("twitterbot.state") if part_of(t) == "networks"]
    assert found == []


def test_settings_ask_only_the_registry() -> None:
    """The one edge up: the settings table asks `twitterbot.networks`, never a network's module."""
    found = [(m, t) for m, t in _targets("twitterbot.settings") if part_of(t) == "networks"]
    assert found and all(target == "twitterbot.networks" for _, target in found)


def test_posting_and_progress_share_the_send_function() -> None:
    """A scheduled post and a progress post go through the same send step."""

    def send_imports(module: str) -> set:
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        tree = ast.parse(path.read_text())
        return {
            node.module.lstrip(".").split(".")[-1]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and any(a.name == "send" for a in node.names)
        }

    assert send_imports("twitterbot.posting.scheduled") == {"send"}
    assert send_imports("twitterbot.progress.reporter") == {"send"}
    for module in ("twitterbot.posting.scheduled", "twitterbot.progress.reporter"):
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert ("twitterbot.posting.send" in {t for _, t in imports_of(module, path)}), module


def test_no_module_decides_by_a_network_s_name() -> None:
    """Outside `networks/`, nothing names a network: the registry answers for each."""
    import re

    names = re.compile(r"""["'](x|mastodon|bluesky)["']|bsky\.|twitter\.com""")
    found = []
    for module, path in modules():
        if part_of(module) in ("networks", "state", "jobs"):
            continue  # the history keeps the rows of the network older rows were made on; jobs' "x" is a letter
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if names.search(line) and not line.lstrip().startswith("#"):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []


def test_at_most_eight_modules_at_the_top() -> None:
    top = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top
