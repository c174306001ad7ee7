"""What the status page costs: the resident memory of `bot.py serve` at rest, and the requests per
second it answers, beside a bare waitress "hello world" measured in the same run::

    .venv/bin/python benchmarks/web.py                  # 5 rounds of 200 requests each, ~1 min
    .venv/bin/python benchmarks/web.py -n 9 --requests 500 --runs 2000

The server is the real command (`bot.py serve --port 0`) over a history of `--runs` scheduled runs
(one in four posted) across 30 days, a finished job and a 500-line tweets file, on a quiet
loopback. Memory is VmRSS from /proc: once the server is listening (before any request), and at
rest after every round's requests (the figure that matters on a Pi Zero 2 W's 512 MB; the goal is
under 60 MiB). Requests per second are from one client, one request at a time over a kept-alive
connection, as a phone or a dashboard reads the page; rounds alternate between the servers so that
drift hits both alike, and the figures are medians.
"""

from __future__ import annotations

import argparse
import http.client
import random
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, List, Tuple

from twitterbot.state.outcomes import Ending

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_MIB = 60.0

HELLO = """
import sys
from waitress import create_server
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"hello"]
server = create_server(app, host="127.0.0.1", port=0, threads=2)
print(f"serving on http://127.0.0.1:{server.effective_port}/", file=sys.stderr, flush=True)
server.run()
"""


def make_home(folder: Path, runs: int) -> Path:
    """A bot home with a lived-in history, made with the history's own API; returns its env file."""
    from twitterbot.state.store import HistoryStore

    folder.mkdir(parents=True, exist_ok=True)
    tweets = folder / "tweets.txt"
    tweets.write_text("".join(f"Line number {index} of the benchmark, with a few words\n" for index in range(500)))
    env = folder / ".env"
    env.write_text(f"TWEETS_FILE={tweets}\nBOT_STATE_DIR={folder / 'state'}\nMAX_POSTS_PER_DAY=4\n")
    (folder / "state").mkdir(exist_ok=True)
    rng = random.Random(1)
    start = datetime.now(timezone.utc) - timedelta(days=30)
    with HistoryStore(folder / "state" / "history.sqlite3") as store:
        for index in range(runs):
            at = start + timedelta(days=30) * index / runs
            roll = rng.randrange(4)
            run_id = store.begin_run(at=at, one_in=4, roll=roll, forced=False, dry_run=False)
            if roll:
                store.finish_run(run_id, at=at, action="skipped", reason=f"rolled {roll} (posts on 0 of 1-in-4)")
                continue
            text = f"Line number {index % 500} of the benchmark, with a few words"
            attempt = store.begin_attempt(text, run_id=run_id, at=at, network="x")
            post_id = str(1456012973835788293 + index)
            url = f"https://x.com/i/status/{post_id}"
            store.finish_attempt(attempt, Ending("posted", at, post_id=post_id, mark_used=True, url=url))
            store.finish_run(
                run_id, at=at, action="posted", reason="rolled 0 of 1-in-4", text=text, post_id=post_id, url=url
            )
        job = store.open_job("pegs english", at=start)
        attempt = store.begin_job_attempt(job.id, "pegs english: 12 pegs left", at=start, final=False, network="x")
        store.record_job_post(
            job.id, attempt, Ending("posted", start, post_id="99", detail=None, url="https://x.com/i/status/99"), "12"
        )
        store.finish_job(job.id, "done", at=start)
    return env


def start(argv: List[str]) -> Tuple[subprocess.Popen, int]:
    """Start a server and read its port from the line it logs."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd="/")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 1)
        if ready:
            found = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stderr.readline())
            if found:
                return process, int(found.group(1))
        if process.poll() is not None:
            break
    process.kill()
    raise SystemExit(f"{' '.join(argv)} did not start: {process.stderr.read()}")


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def requests_per_second(port: int, path: str, count: int) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    began = time.perf_counter()
    for _ in range(count):
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or not body:
            raise SystemExit(f"GET {path} answered {response.status}")
    elapsed = time.perf_counter() - began
    connection.close()
    return count / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="requests per endpoint per round")
    parser.add_argument("--runs", type=int, default=1000, help="scheduled runs in the history")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        env = make_home(Path(scratch) / "bot", args.runs)
        page, page_port = start([sys.executable, str(REPO / "bot.py"), "--env-file", str(env), "serve", "--port", "0"])
        hello, hello_port = start([sys.executable, "-c", HELLO])
        try:
            time.sleep(1)
            listening = {"page": rss_mib(page.pid), "hello": rss_mib(hello.pid)}
            rates: Dict[str, List[float]] = {"page /": [], "page /status.json": [], "hello /": []}
            rest: Dict[str, List[float]] = {"page": [], "hello": []}
            for _ in range(args.rounds):
                rates["hello /"].append(requests_per_second(hello_port, "/", args.requests))
                rates["page /"].append(requests_per_second(page_port, "/", args.requests))
                rates["page /status.json"].append(requests_per_second(page_port, "/status.json", args.requests))
                time.sleep(0.5)
                rest["page"].append(rss_mib(page.pid))
                rest["hello"].append(rss_mib(hello.pid))
        finally:
            for process in (page, hello):
                process.terminate()
                process.communicate(timeout=30)
        if page.returncode != 0:
            raise SystemExit(f"bot.py serve exited {page.returncode} on SIGTERM")

    print(
        f"{args.rounds} rounds of {args.requests} requests per endpoint; a history of {args.runs} runs; Python {sys.version.split()[0]}"
    )
    print(f"{'':28}{'listening':>12}{'at rest':>12}")
    for name, label in (("page", "bot.py serve"), ("hello", "waitress hello world")):
        print(f"{label:28}{listening[name]:>9.1f} MiB{max(rest[name]):>9.1f} MiB")
    extra = max(rest["page"]) - max(rest["hello"])
    print(f"the page's own share: {extra:.1f} MiB over a bare waitress")
    print(f"{'requests per second (median)':28}")
    for name, values in rates.items():
        print(
            f"  {name:26}{statistics.median(values):>9.0f}   (rounds: {', '.join(f'{value:.0f}' for value in values)})"
        )
    ratio = statistics.median(rates["page /"]) / statistics.median(rates["hello /"])
    print(f"the page answers at {ratio:.2f}x the hello world's rate")
    verdict = "under" if max(rest["page"]) < TARGET_MIB else "OVER"
    print(f"memory at rest {max(rest['page']):.1f} MiB: {verdict} the {TARGET_MIB:.0f} MiB goal")
    return 0 if verdict == "under" else 1


if __name__ == "__main__":
    sys.exit(main())
