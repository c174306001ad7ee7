"""What a huge answer costs a look-up: each network's look-up of an uncertain post, in a process of
its own, against its emulator on 127.0.0.1 answering with a document of `--megabytes` (plain, and
gzip-compressed: a small answer that unpacks to that size). Every answer the bot reads goes through
one bounded reader (`twitterbot/networks/http.py`), so the look-up stops at 8 MB::

    .venv/bin/python benchmarks/answers.py                      # 300 MB answers, this checkout
    .venv/bin/python benchmarks/answers.py --repo ../old-tree   # the same against another checkout

Each row is the child process's peak resident memory (ru_maxrss) before and after the look-up,
the look-up's wall time, and how it ended. Pass `--repo` a checkout from before the bound to see
what it was (the emulators come from this checkout either way).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from bluesky_emulator import BlueskyEmulator, Fault  # noqa: E402
from loopback import Answer  # noqa: E402
from mastodon_server import TOKEN, MastodonEmulator  # noqa: E402
from x_emulator import KEYS, XEmulator  # noqa: E402

# The child: one look-up with the bot's own poster, its peak memory before and after, as JSON.
_CHILD = """
import json, resource, sys, time
repo, network, url, folder = sys.argv[1:5]
sys.path.insert(0, repo)
from datetime import datetime, timedelta, timezone
from pathlib import Path
if network == "x":
    from twitterbot.networks.x.api import Credentials
    from twitterbot.networks.x.poster import XPoster
    keys = json.loads(sys.argv[5])
    poster = XPoster(Credentials(*keys), timeout=60, retries=0, base_url=url)
elif network == "mastodon":
    from twitterbot.networks.mastodon.poster import MastodonPoster
    poster = MastodonPoster(instance=url, access_token=sys.argv[5], visibility="unlisted", timeout=60, retries=0)
else:
    from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
    handle, password = json.loads(sys.argv[5])
    poster = BlueskyPoster(Login(handle, password, url, Path(folder) / "session.json"), timeout=60, retries=0)
poster.bot_label() if network == "bluesky" else poster.account()  # the client library loaded, logged in
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    outcome = repr(poster.look_up("hello", datetime.now(timezone.utc) - timedelta(hours=2), None))
except Exception as exc:
    outcome = f"{type(exc).__name__}: {getattr(exc, 'summary', exc)}"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before": before, "peak": peak, "seconds": time.monotonic() - started, "outcome": outcome}))
"""


def measure(repo: Path, network: str, megabytes: int, gzip: bool) -> Dict[str, object]:
    """One look-up of `network` against an answer of `megabytes`, in a child process."""
    answer = Answer(size=megabytes * 1024 * 1024, gzip=gzip)
    with tempfile.TemporaryDirectory() as folder:
        if network == "x":
            server, extra = (
                XEmulator(),
                json.dumps(
                    [KEYS[k] for k in ("consumer_key", "consumer_secret", "access_token", "access_token_secret")]
                ),
            )
            server.answer_next("timeline", answer)
        elif network == "mastodon":
            server, extra = MastodonEmulator(), TOKEN
            server.answer_next("statuses", answer)
        else:
            server = BlueskyEmulator()
            extra = json.dumps([server.handle, server.password])
            server.fail("com.atproto.repo.listRecords", Fault(answer=answer))
        with server:
            child = subprocess.run(
                [sys.executable, "-c", _CHILD, str(repo), network, server.url, folder, extra],
                capture_output=True,
                text=True,
                timeout=600,
            )
    if child.returncode != 0:
        return {"outcome": f"the child failed: {child.stderr.strip().splitlines()[-1:]}"}
    return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=300, help="the answer's size (default 300)")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose bot looks up (default: this one)")
    parser.add_argument("--network", action="append", choices=("x", "mastodon", "bluesky"), help="only this one")
    args = parser.parse_args()
    for network in args.network or ["x", "mastodon", "bluesky"]:
        for gzip in (False, True):
            figures = measure(args.repo.resolve(), network, args.megabytes, gzip)
            how = "gzip" if gzip else "plain"
            if "peak" in figures:
                print(
                    f"{network:9} {how:5}  peak {int(figures['peak']) // 1024:5} MB "
                    f"(before {int(figures['before']) // 1024} MB)  {float(figures['seconds']):6.1f} s  "
                    f"{str(figures['outcome']).splitlines()[0][:110]}",
                    flush=True,
                )
            else:
                print(f"{network:9} {how:5}  {figures['outcome']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
