"""libfaketime (Debian's `faketime` package), for the tests and benchmarks that run `bot.py` under
a clock sped up: a process started with `sped_up(speed)` in its environment sees time pass
`speed` times faster, its sleeps and polls shortened to match::

    process = home.start("daemon", "--dry-run", env=sped_up(720, require_libfaketime()))

Without it those tests are skipped, saying so loudly; ``TWITTERBOT_REQUIRE_FAKETIME=1`` (set by
`.ci/run`, which installs it) makes that a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

import pytest

if TYPE_CHECKING:
    from conftest import BotHome

__all__ = ["FAKETIME", "libfaketime", "require_libfaketime", "run_at", "sped_up"]

# The faketime command (Debian's faketime package), which runs a command under a faked clock.
FAKETIME = shutil.which("faketime")
BOT_PY = Path(__file__).resolve().parents[1] / "bot.py"

# Where Debian puts it (one folder per architecture), and where `make install` from source does.
_PLACES = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def libfaketime() -> Optional[Path]:
    """The preloadable library on this machine, or None."""
    for pattern in _PLACES:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0])
    return None


def require_libfaketime() -> Path:
    """The library, else the test is skipped (failed with TWITTERBOT_REQUIRE_FAKETIME=1)."""
    library = libfaketime()
    if library is None:
        (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_FAKETIME") == "1" else pytest.skip)(
            "NO LIBFAKETIME: the daemon is NOT tested under a sped-up clock here (apt-get install faketime)"
        )
    return library  # type: ignore[return-value]


def sped_up(speed: int, library: Path) -> Dict[str, str]:
    """The environment that starts a process on a clock running `speed` times faster, from now.
    A whole number: libfaketime reads a fraction with the locale's decimal separator."""
    return {"LD_PRELOAD": str(library), "FAKETIME": f"+0 x{int(speed)}"}


def run_at(home: BotHome, when: str, *args: str) -> subprocess.CompletedProcess:
    """One run of bot.py with the system clock saying `when` (UTC), from another folder, as cron runs it."""
    return subprocess.run(
        [str(FAKETIME), "-f", f"@{when}", sys.executable, str(BOT_PY), "--env-file", str(home.env_file), *args],
        cwd=home.elsewhere,
        env={**home.environ(), "TZ": "UTC"},
        capture_output=True,
        text=True,
        timeout=120,
    )
