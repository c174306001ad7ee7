"""The package's folders are its architecture, and imports only go down: this test reads every
import in `twitterbot/` (at module level or inside a function) and fails on one that goes up.

From the top down:

    cli                        assembles the commands, the one error boundary
    jobs.<job>, unattended     a job uses progress mode; running unattended uses the scheduled post
    progress                   the reporter, watch, the status line
    posting                    the tweets file, choosing, one scheduled run
    networks                   one module per network behind one interface
    foundation                 config, errors, state, lock, secrets, files, arguments, wording, twittertext

A job never imports another job, and nothing below `cli` imports `cli`.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Tuple

import pytest
from conftest import REPO

PACKAGE = REPO / "twitterbot"
FOUNDATION = {
    "config",
    "errors",
    "state",
    "lock",
    "secrets",
    "files",
    "arguments",
    "wording",
    "twittertext",
    "__init__",
}

# What each part may import, besides itself and the foundation.
ALLOWED = {
    "foundation": set(),
    "networks": set(),
    "posting": {"networks"},
    "progress": {"posting", "networks"},
    "unattended": {"posting", "networks"},
    "jobs": {"progress", "posting", "networks"},
    "cli": {"jobs", "unattended", "progress", "posting", "networks"},
}


def part_of(module: str) -> str:
    """'twitterbot.jobs.pegs.board' -> 'jobs'; 'twitterbot.config' -> 'foundation'."""
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
    if theirs != "foundation" and theirs not in ALLOWED[mine]:
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
        ("twitterbot.config", "from .posting import scheduled\n", False),
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
