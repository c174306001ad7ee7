"""The package's folders are its architecture: imports only go down, and never in a circle. This
test reads every import in `twitterbot/` (at module level, inside a function or under
TYPE_CHECKING) and fails on one that goes up or closes a circle.

From the top down:

    cli                        the composition root: builds the registry, the commands, the one error boundary
    flock                      which bot a command is for, the flock's own commands, its daemon and page
    web                        the status page: reads what every part below left behind
    jobs.<job>, unattended     a job uses progress mode; running unattended uses the scheduled post
    progress                   the reporter, watch, the status line
    posting                    the tweets file, choosing, one scheduled run, a line's attempts
    delivery                   the kernel: Post, Delivery, attempts, the one send step, threads, budget, settling
    registry                   every capability the command line is built from, and what follows from them
    networks                   one package per network, each a capability
    pictures                   reading, checking and preparing pictures
    foundation                 capability, settings/, state/, errors, lock, files, arguments, wording

A job never imports another job, and nothing below `cli` imports `cli`. A module is split by
concern, never by its length: two modules that import each other are one concern cut in two.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from conftest import REPO

PACKAGE = REPO / "twitterbot"
FOUNDATION = {
    "capability",
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
    "settings": set(),
    "state": set(),
    "pictures": set(),
    # Pings and alerts: told by the runs and jobs, knowing nothing of them; their redirects are held
    # to the link cards' address rules (networks/addresses.py).
    "monitoring": {"networks"},
    "networks": {"pictures"},
    "registry": {"networks", "pictures"},
    # The delivery kernel: how every post reaches the networks, below the features that make posts.
    "delivery": {"networks", "pictures"},
    "posting": {"registry", "delivery", "networks", "pictures", "monitoring"},
    "progress": {"registry", "delivery", "posting", "networks", "pictures", "monitoring"},
    # Replies: a round of answers is posts of the scheduled post's Delivery; progress and the
    # scheduled run reach it only through the registry's hook (`Capability.before_run`).
    "replies": {"registry", "delivery", "posting", "networks", "pictures", "monitoring"},
    "unattended": {"registry", "delivery", "posting", "networks", "pictures", "monitoring"},
    "jobs": {"registry", "delivery", "progress", "posting", "networks", "pictures", "monitoring"},
    # The flock: which bot a command is for, every bot's checks and listing, one daemon and one page for them all.
    "flock": {
        "registry",
        "web",
        "unattended",
        "progress",
        "replies",
        "posting",
        "delivery",
        "networks",
        "pictures",
        "monitoring",
    },
    "web": {"registry", "unattended", "progress", "delivery", "posting", "networks", "pictures", "monitoring"},
    "cli": {
        "registry",
        "flock",
        "jobs",
        "unattended",
        "progress",
        "replies",
        "posting",
        "delivery",
        "networks",
        "web",
        "pictures",
        "monitoring",
    },
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
        ("twitterbot.networks.x", "from ..delivery.send import send\n", False),
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


def test_settings_know_no_network() -> None:
    """The settings are read with the registry's table, handed to them: they import no network."""
    assert [(m, t) for m, t in _targets("twitterbot.settings") if part_of(t) in ("networks", "registry")] == []


def import_graph(found: Iterator[Tuple[str, Path]]) -> Dict[str, Set[str]]:
    """Each module and the modules it imports, anywhere in it; importing one's own package (its
    `__init__`, which Python runs first anyway) is no edge."""
    graph: Dict[str, Set[str]] = {}
    for module, path in found:
        graph[module] = {
            target for _, target in imports_of(module, path) if target != module and not module.startswith(target + ".")
        }
    return graph


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root] & graph.keys())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target] & graph.keys()))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    """Counting imports inside functions and under TYPE_CHECKING: untangle a circle by moving the
    code to its owner, never by hiding an import in a function."""
    assert circles(import_graph(modules())) == []


def test_the_circle_check_finds_a_circle_through_a_function(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from twitterbot.t.b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from twitterbot.t.c import g\n")
    (tmp_path / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from twitterbot.t.a import h\n"
    )
    (tmp_path / "d.py").write_text("from twitterbot.t.a import x\n")
    found = [(f"twitterbot.t.{name}", tmp_path / f"{name}.py") for name in "abcd"]
    assert circles(import_graph(iter(found))) == [["twitterbot.t.a", "twitterbot.t.b", "twitterbot.t.c"]]


def test_every_sender_hands_its_posts_to_the_delivery() -> None:
    """A scheduled line, a catch-up, a progress post and a reply are all delivered by the kernel's
    `Delivery` (delivery/deliver.py, which sends through the one send step): none of them sends a
    post itself."""
    for module in (
        "twitterbot.posting.scheduled",
        "twitterbot.posting.catchup",
        "twitterbot.progress.reporter",
        "twitterbot.replies.sending",
    ):
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert "twitterbot.delivery.deliver" in {target for _, target in imports_of(module, path)}, module
    path = PACKAGE / "delivery" / "deliver.py"
    assert "twitterbot.delivery.send" in {target for _, target in imports_of("twitterbot.delivery.deliver", path)}


# What records a post attempt in the history: before it is sent, and its outcome after.
ATTEMPT_RECORDS = {
    "begin_attempt",
    "finish_attempt",
    "begin_thread",
    "begin_part",
    "finish_thread",
    "begin_job_attempt",
    "record_job_post",
    "claim_reply",
    "finish_reply",
}


def test_post_attempts_are_recorded_by_the_kernel_and_its_attempts_kinds_alone() -> None:
    """At most once lives in one place: outside the history itself, only the delivery kernel and
    the `Attempts` kinds it calls (each beside its sender: a line's, a job's, a reply's) begin and
    finish post attempts, and the Delivery alone calls those."""
    outside = []
    for module, path in modules():
        if part_of(module) in ("state", "delivery"):
            continue
        tree = ast.parse(path.read_text())
        kinds = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and any(getattr(base, "id", "") == "Attempts" for base in node.bases)
        ]
        allowed = {id(each) for kind in kinds for each in ast.walk(kind)}
        for node in ast.walk(tree):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if called and node.func.attr in ATTEMPT_RECORDS and id(node) not in allowed:
                outside.append(f"{module}:{node.lineno} {node.func.attr}")
    assert outside == []


def test_no_function_takes_more_than_eight_parameters() -> None:
    """A function that needs more is missing a value object (`self` and `cls` are not counted)."""
    long = []
    for _, path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                names = [each.arg for each in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                count = len(names) - (names[:1] in (["self"], ["cls"])) + bool(args.vararg) + bool(args.kwarg)
                if count > 8:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({count})")
    assert long == []


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


def test_at_most_ten_modules_at_the_top() -> None:
    """The top holds the command line and the foundation's small pieces; the rest has folders."""
    top = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert len(top) <= 10, top


def test_no_function_binds_a_stream_when_its_module_is_imported() -> None:
    """`out: TextIO = sys.stdout` is the stream of whoever imported the module first: a program
    (or a test) that redirects stdout later would print elsewhere. Default to None, look it up then."""
    bound = []
    for _, path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
                if any(ast.unparse(default) in ("sys.stdout", "sys.stderr") for default in defaults):
                    bound.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert bound == []


# Functions longer than this do more than one thing: split them by what they do.
MAX_FUNCTION_LINES = 80
# None, and it stays so: a function over the limit is shortened, not listed here.
LONG_FUNCTIONS: Set[str] = set()


def test_no_function_is_longer_than_eighty_lines() -> None:
    """From its `def` to its last line, docstring included: a longer one does more than one thing."""
    long = []
    for _, path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES and node.name not in LONG_FUNCTIONS:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_no_module_imports_another_s_private_name() -> None:
    """`from .safety import _LEADING_HANDLES` reaches into another module's insides: what two
    modules share is public in the one that owns it (no leading underscore)."""
    reached = []
    for _, path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        reached.append(f"{path.relative_to(REPO)}:{node.lineno} {node.module} {alias.name}")
    assert reached == []


def test_the_command_line_stays_small() -> None:
    """cli.py puts the program together and maps errors to exit codes; a command's work lives in
    the folder that owns it."""
    lines = len((PACKAGE / "cli.py").read_text().splitlines())
    assert lines <= 300, f"cli.py has {lines} lines"
