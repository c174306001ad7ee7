"""One list of dependencies: pyproject.toml's ranges, and the pinned requirements files CI installs.

`pip install .` installs what pyproject.toml lists; `pip install -r requirements.txt` installs the
pins. A pin outside its range, or a dependency with no pin, means a user gets what CI never ran.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import REPO
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.9 and 3.10 (Raspberry Pi OS Bullseye) have no tomllib: tomli is the same parser
    import tomli as tomllib

PYPROJECT = REPO / "pyproject.toml"
# The extras that are features of the bot (the rest: cluster, dev, docs have files of their own).
FEATURE_EXTRAS = ("pictures", "mastodon", "bluesky", "web", "jobs", "replies")
# Every Python the project claims to run on (requires-python >=3.9): each must get exactly one pin.
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def read_pins(path: Path) -> List[Requirement]:
    """The requirements in a pip requirements file, following `-r` includes."""
    pins: List[Requirement] = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            pins += read_pins(path.parent / line[3:].strip())
            continue
        pins.append(Requirement(line))
    return pins


def project_table() -> dict:
    return tomllib.loads(PYPROJECT.read_text())["project"]


def is_standard_library(module: str) -> bool:
    """Whether `module` comes with Python: sys.stdlib_module_names from 3.10, before that where its
    file lies (built in, or in Python's own folder rather than in site-packages)."""
    if hasattr(sys, "stdlib_module_names"):
        return module in sys.stdlib_module_names
    import importlib.util
    import sysconfig

    spec = importlib.util.find_spec(module)
    if spec is None:
        return False
    if spec.origin in ("built-in", "frozen"):
        return True
    origin = Path(spec.origin or next(iter(spec.submodule_search_locations or []), ""))
    standard = Path(sysconfig.get_paths()["stdlib"]).resolve()
    return (
        standard in origin.resolve().parents
        and "site-packages" not in origin.parts
        and "dist-packages" not in origin.parts
    )


def ranges(specs: List[str]) -> Dict[str, Requirement]:
    return {canonicalize_name(req.name): req for req in map(Requirement, specs)}


def applies(req: Requirement, python: str) -> bool:
    if req.marker is None:
        return True
    return req.marker.evaluate(
        {**default_environment(), "python_version": python, "python_full_version": python + ".0"}
    )


def exact_version(req: Requirement) -> str:
    (spec,) = req.specifier
    assert spec.operator == "==", f"{req} is not pinned with =="
    return spec.version


def declared_dependencies(name: str) -> set:
    """The names a distribution installed here says it depends on (its wheel's metadata)."""
    try:
        requires = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return set()
    return {canonicalize_name(Requirement(spec).name) for spec in requires}


@pytest.mark.parametrize(
    ("pins_file", "extra"),
    [
        ("requirements.txt", None),
        ("requirements-dev.txt", "dev"),
        ("requirements-docs.txt", "docs"),
        ("requirements-cluster.txt", "cluster"),
    ],
    ids=["runtime", "dev", "docs", "cluster"],
)
def test_every_dependency_is_pinned_within_its_range_and_every_pin_is_needed(pins_file: str, extra) -> None:
    project = project_table()
    # The docs' venv builds the site alone: it needs the "docs" extra, not the bot's dependencies.
    # Every other file pins the core and every feature's extra (requirements.txt installs them all).
    wanted = ranges(project["dependencies"]) if extra != "docs" else {}
    if extra != "docs":
        for feature in FEATURE_EXTRAS:
            wanted.update(ranges(project["optional-dependencies"][feature]))
    if extra:
        wanted.update(ranges(project["optional-dependencies"][extra]))
    pins = read_pins(REPO / pins_file)
    pinned_names = {canonicalize_name(pin.name) for pin in pins}

    problems = []
    for name, want in wanted.items():
        for python in (python for python in PYTHONS if applies(want, python)):
            chosen = [pin for pin in pins if canonicalize_name(pin.name) == name and applies(pin, python)]
            if len(chosen) != 1:
                problems.append(f"{want} has {len(chosen)} pins in {pins_file} for Python {python}")
            elif not want.specifier.contains(exact_version(chosen[0]), prereleases=True):
                problems.append(f"{pins_file} pins {chosen[0]} outside pyproject's {want}")
    # A pin that is not a dependency must be one of a dependency's own (pinned so a Pi gets what CI ran).
    needed_by_pins = set().union(*(declared_dependencies(pin.name) for pin in pins))
    for name in sorted(pinned_names - set(wanted)):
        if name not in needed_by_pins:
            problems.append(f"{pins_file} pins {name}, which neither pyproject.toml nor any pinned package needs")
    assert problems == []


def test_every_third_party_import_of_the_package_is_a_declared_dependency() -> None:
    """`pip install .` must bring everything `twitterbot` imports (it once forgot numpy)."""
    import ast

    project = project_table()
    declared = {canonicalize_name(name) for name in ranges(project["dependencies"])}
    for feature in FEATURE_EXTRAS:
        declared |= {canonicalize_name(name) for name in ranges(project["optional-dependencies"][feature])}
    # The cluster extra's imports live in its own code path (jobs/cluster.py and what it runs).
    declared |= {canonicalize_name(name) for name in ranges(project["optional-dependencies"]["cluster"])}
    # Import names that differ from their distribution's name.
    distribution = {
        "dotenv": "python-dotenv",
        "twitter_text": "twitter-text-parser",
        "mastodon": "Mastodon.py",
        "PIL": "Pillow",
        "atproto_client": "atproto",
    }
    missing = set()
    for source in sorted((REPO / "twitterbot").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "twitterbot" or is_standard_library(top):
                    continue
                if canonicalize_name(distribution.get(top, top)) not in declared:
                    missing.add(f"{source.name}: {top}")
    assert missing == set()


def test_the_32_bit_pi_file_pins_what_ci_tested_and_leaves_out_only_what_apt_or_no_deps_brings() -> None:
    """requirements-pi.txt (README "32-bit Raspberry Pi OS") installs every feature without a
    build: numpy, Pillow and regex come from apt, atproto is installed with --no-deps after it. Its pins
    are requirements.txt's, so a Pi runs what CI ran."""
    project = project_table()
    wanted = ranges(project["dependencies"])
    for feature in FEATURE_EXTRAS:
        wanted.update(ranges(project["optional-dependencies"][feature]))
    text = (REPO / "requirements-pi.txt").read_text()
    assert "--only-binary=:all:" in [line.split(" #", 1)[0].strip() for line in text.splitlines()]  # never a build
    pi = [
        Requirement(line.split(" #", 1)[0].strip())
        for line in text.splitlines()
        if line.strip() and line[0] not in "#-"
    ]
    ci = read_pins(REPO / "requirements.txt")
    problems = []
    for python in PYTHONS:
        pi_here = {canonicalize_name(req.name): req for req in pi if applies(req, python)}
        for pin in (pin for pin in ci if applies(pin, python)):
            name = canonicalize_name(pin.name)
            if name in pi_here and str(pi_here[name].specifier) != str(pin.specifier):
                problems.append(f"Python {python}: requirements-pi.txt has {pi_here[name]}, requirements.txt {pin}")
        left_out = {name for name in wanted if name not in pi_here}
        if left_out != {"numpy", "pillow", "regex", "atproto"}:
            problems.append(f"Python {python}: requirements-pi.txt leaves out {sorted(left_out)}")
    assert problems == []
