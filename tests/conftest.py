"""Shared fixtures: the X API emulator, the Mastodon servers (mastodon_server.py), and a throw-away bot home for running bot.py like cron does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest

from twitterbot.cli import built_in
from twitterbot.networks.x.api import Credentials
from twitterbot.networks.x.poster import XPoster

sys.path.insert(0, str(Path(__file__).parent))
from in_process import run_in_process  # noqa: E402
from mastodon_server import mastodon_emulator, mastodon_mock, mastodon_mock_started  # noqa: E402, F401
from pds.harness import bluesky_pds  # noqa: E402,F401  (the real Bluesky PDS, session-scoped)
from pds.network import bluesky_network  # noqa: E402,F401  (PDS + AppView on PostgreSQL and Redis)
from x_emulator import XEmulator  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BOT_PY = REPO / "bot.py"

# The registry the command line builds: the built-in capabilities (tests/networks adds a fake network).
REGISTRY = built_in()
X_ONLY = (REGISTRY.network("x"),)  # what a run posting to X alone measures its lines for


def by_network(*posters: object, registry: object = None) -> Dict[object, object]:
    """A test's posters as a run takes them: {network: poster}, each poster named for its network
    (a dry-run poster for the dry run's network)."""
    from twitterbot.networks.dryrun import DRY_RUN

    known = {network.name: network for network in (*(registry or REGISTRY).networks, DRY_RUN)}  # type: ignore[attr-defined]
    return {known[poster.name]: poster for poster in posters}  # type: ignore[attr-defined]


SAMPLE_TWEETS = "First post\nSecond post\nThird post\n"


@pytest.fixture
def emulator() -> Iterator[XEmulator]:
    with XEmulator() as emu:
        yield emu


@pytest.fixture
def poster(emulator: XEmulator) -> XPoster:
    """The real tweepy-based poster, talking to the emulator, never sleeping between retries."""
    return XPoster(credentials_for(emulator), timeout=2, retries=1, base_url=emulator.url, sleep=lambda seconds: None)


def credentials_for(emulator: XEmulator) -> Credentials:
    keys = emulator.keys
    return Credentials(keys["consumer_key"], keys["consumer_secret"], keys["access_token"], keys["access_token_secret"])


@dataclass
class BotHome:
    """A folder with .env and tweets.txt, and a way to run bot.py the way cron runs it."""

    path: Path
    emulator: Optional[XEmulator]
    settings: Dict[str, str] = field(default_factory=dict)

    @property
    def env_file(self) -> Path:
        return self.path / ".env"

    def write_env(self, **settings: str) -> None:
        self.settings.update(settings)
        lines = [f"{name}={value}" for name, value in self.settings.items()]
        self.env_file.write_text("\n".join(lines) + "\n")
        self.env_file.chmod(0o600)

    def write_tweets(self, text: str) -> Path:
        path = self.path / "tweets.txt"
        path.write_text(text, encoding="utf-8")
        return path

    @property
    def elsewhere(self) -> Path:
        """The unrelated folder a run starts in, as cron's runs start in the user's home."""
        cwd = self.path / "elsewhere"
        cwd.mkdir(exist_ok=True)
        return cwd

    def environ(self, env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """Cron's bare environment, plus what the test gives."""
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.elsewhere), "LANG": "C.UTF-8", **(env or {})}

    def run(self, *args: str, env: Optional[Dict[str, str]] = None, timeout: float = 60) -> subprocess.CompletedProcess:
        """bot.py's command line run in this process through `cli.main`, from the unrelated cwd with
        cron's bare environment, as `run_process` runs it: its exit status and what it printed."""
        return run_in_process(["--env-file", str(self.env_file), *args], environ=self.environ(env), cwd=self.elsewhere)

    def start(self, *args: str, env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
        """Start bot.py as a process from an unrelated cwd with a bare environment, as cron does:
        for what only a process shows (signals, kills, a pipe's reader going away, imports)."""
        return subprocess.Popen(
            [sys.executable, str(BOT_PY), "--env-file", str(self.env_file), *args],
            cwd=self.elsewhere,
            env=self.environ(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_process(
        self, *args: str, env: Optional[Dict[str, str]] = None, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        """bot.py run as a process, as cron runs it, to its end."""
        process = self.start(*args, env=env)
        stdout, stderr = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.fixture
def home(tmp_path: Path, emulator: XEmulator) -> BotHome:
    """A bot home wired to the emulator: keys, X_API_BASE_URL, no retry delays worth waiting for."""
    bot_home = BotHome(tmp_path / "bot", emulator)
    bot_home.path.mkdir()
    bot_home.write_env(**emulator.env(), TWEET_ONE_IN="1", API_RETRIES="0", API_TIMEOUT="3")
    bot_home.write_tweets(SAMPLE_TWEETS)
    return bot_home


# `bot.py serve` says where the next run comes from, and a `bot.py daemon` of this checkout running
# anywhere on the machine is where (web/nextrun.py reads /proc). The tests that start one, and the
# one that needs none running, share one pytest-xdist group: one worker, one at a time (addopts'
# --dist loadgroup).
A_DAEMON_OF_THIS_CHECKOUT = pytest.mark.xdist_group("a bot.py daemon of this checkout")


def pytest_configure(config: pytest.Config) -> None:
    os.environ.pop("X_API_BASE_URL", None)  # never let a developer's shell point tests elsewhere


def pytest_xdist_auto_num_workers(config: pytest.Config) -> Optional[int]:
    """`-n auto` (pyproject's addopts): two workers a core, at most 8. The suite waits more than it
    computes (local servers, time limits, bot.py processes, Dask workers): on the 2-core development
    machine the full run took 296 s with 2 workers and 201 s with 4. PYTEST_XDIST_AUTO_NUM_WORKERS
    still decides where it is set (pytest-xdist reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(2 * cores, 8)


# The fixtures that make a test slow (seconds each, or a long start once per worker): the quick loop,
# `pytest -m "not slow" -n auto`, leaves out the tests that use them (docs/development.md).
SLOW_FIXTURES = {
    "bluesky_pds": "the real Bluesky PDS (tests/pds): about ten seconds to start, once per worker",
    "bluesky_network": "Bluesky's network with its AppView (tests/pds/network.py): PostgreSQL, Redis and Node, once per worker",
    "browser": "headless chromium (tests/web/test_web_browser.py)",
    "chromium": "headless chromium drawing an SVG (tests/pictures/test_svg.py): about a second each",
    "two_workers": "a Dask LocalCluster of two worker processes (tests/jobs/test_cluster.py)",
}


# The test functions measured at a second or more each (tests/slow_tests.txt says how).
SLOW_TESTS = frozenset(
    line.strip() for line in (Path(__file__).parent / "slow_tests.txt").read_text().splitlines() if line[:1] not in "#"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Mark slow what uses a slow fixture, the fault-injection runs (they kill processes) and the
    tests listed in slow_tests.txt."""
    slow = pytest.mark.slow
    for item in items:
        if (
            SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ()))
            or item.get_closest_marker("faults")
            or item.nodeid.split("[", 1)[0].split("@", 1)[0] in SLOW_TESTS  # @: an xdist_group
        ):
            item.add_marker(slow)


@pytest.fixture
def rsvg() -> None:
    """Skipped, LOUDLY, without rsvg-convert (Debian's librsvg2-bin, which draws a grammar's {svg}
    pictures); failed instead with TWITTERBOT_REQUIRE_RSVG=1 (CI sets it). A fresh Raspberry Pi OS
    without it passes the README's test command."""
    if not shutil.which("rsvg-convert"):
        (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_RSVG") == "1" else pytest.skip)(
            "NO rsvg-convert ON PATH: SVG pictures are NOT drawn in this test (apt-get install librsvg2-bin)"
        )


@pytest.fixture(scope="session")
def pegs_kernel(tmp_path_factory: pytest.TempPathFactory):  # -> twitterbot.jobs.pegs.kernel.Kernel
    """The peg job's compiled kernel, built once for the whole run; skipped, loudly, without cc."""
    import shutil

    from twitterbot.jobs.pegs.kernel import load

    if shutil.which("cc") is None:
        pytest.skip("NO C COMPILER (cc) ON PATH: the peg job's compiled kernel is NOT tested here")
    built = load(tmp_path_factory.mktemp("pegs-cache"), environ={"PATH": os.environ.get("PATH", "")})
    assert built is not None, "cc is on PATH, so the peg kernel must build"
    return built


@pytest.fixture(params=["python", "compiled"])
def search_kernel(request: pytest.FixtureRequest):  # -> Optional[Kernel]
    """The peg solver's two paths: its depth-first searches in Python (None) and in C."""
    return None if request.param == "python" else request.getfixturevalue("pegs_kernel")
