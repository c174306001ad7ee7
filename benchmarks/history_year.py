"""A year of a bot on an SD card: a scheduled run every ten minutes for a simulated year (52,560
runs, posting on 1 in 6: TWEET_ONE_IN=6, MAX_POSTS_PER_DAY=48) under a faked clock, in this
process, against one history folder, and what the history looks like after it::

    .venv/bin/python benchmarks/history_year.py               # 365 days, about 5 minutes
    .venv/bin/python benchmarks/history_year.py --days 30     # a quick look

It prints the history's size (the database and the day's skipped-runs file) at the end of each
simulated month, and how long the queries the status page, `history`, the round and the cap make
take on day one and on the last day, measured the same way (median of 50). The target (issue
50): under 10 MB after a year, and the queries answering as they did on day one. The runs are
the real decision and delivery (`decide_and_post`) with a stand-in network that answers every
post at once: what is measured is the history, not a network.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Dict, Mapping

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from twitterbot.networks import Network, Poster, PostResult  # noqa: E402
from twitterbot.networks.x import NETWORK as X  # noqa: E402
from twitterbot.posting.scheduled import Run, RunRules, decide_and_post  # noqa: E402
from twitterbot.posting.tweets import load_tweets  # noqa: E402
from twitterbot.state.reader import read_history  # noqa: E402
from twitterbot.state.skips import SKIPS_FILE  # noqa: E402
from twitterbot.state.store import HistoryStore  # noqa: E402

START = datetime(2027, 1, 1, tzinfo=timezone.utc)
EVERY = timedelta(minutes=10)


class Answering:
    """A network that takes every post at once, with a new id each time."""

    def __init__(self) -> None:
        self.count = 0

    def post(self, text: str, reply_to: object = None, **extra: object) -> PostResult:
        self.count += 1
        return PostResult(text, str(self.count))


def queries(folder: Path, now: datetime) -> float:
    """The median seconds of what the page, `history`, the round and the cap ask of the history."""
    timings = []
    for _ in range(50):
        started = time.perf_counter()
        with HistoryStore(folder / "history.sqlite3") as store:
            store.recent_runs(20)
            store.posts_since(now - timedelta(hours=24), now)
            store.used_texts()
            store.last_posted_text()
        with read_history(folder / "history.sqlite3") as history:
            history.recent_runs(15)
            history.maybe_posted(now - timedelta(days=7), 10)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def size_of(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.name.startswith(("history", SKIPS_FILE)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=365, help="simulated days (default 365)")
    parser.add_argument("--history-days", type=int, default=400, help="HISTORY_DAYS (default 400)")
    args = parser.parse_args()
    rng = random.Random(2027)
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        tweets_file = folder / "tweets.txt"
        tweets_file.write_text(
            "".join(f"Line {number} of a bot that posts about its garden.\n" for number in range(300))
        )
        network = Answering()
        outlets: Callable[[], Mapping[Network, Poster]] = lambda: {X: network}  # noqa: E731
        rules = RunRules(
            one_in=6,
            max_posts_per_day=48,
            min_post_gap=timedelta(0),
            networks=(X,),
            known=("x", "mastodon", "bluesky"),
            history_days=args.history_days,
        )
        runs = args.days * 24 * 6
        first_day = last_day = 0.0
        started = time.perf_counter()
        months: Dict[int, int] = {}
        for number in range(runs):
            now = START + number * EVERY
            with HistoryStore(folder / "history.sqlite3") as store:
                tweets = load_tweets(tweets_file, (X,), cache=store)
                decide_and_post(tweets, Run(store, outlets, rng, lambda now=now: now), rules)
            if number == 24 * 6:
                first_day = queries(folder, now)
            if (number + 1) % (30 * 24 * 6) == 0:
                months[(number + 1) // (30 * 24 * 6)] = size_of(folder)
        last_day = queries(folder, START + runs * EVERY)
        took = time.perf_counter() - started
        size = size_of(folder)
        with HistoryStore(folder / "history.sqlite3") as store:
            kept = store.size()
    print(f"{runs:,} runs every 10 minutes over {args.days} simulated days ({took:.0f} s), {network.count:,} posts")
    for month, bytes_ in months.items():
        print(f"  after {month * 30:>3} days: history {bytes_ / 1024 / 1024:.2f} MB")
    print(f"history at the end: {size / 1024 / 1024:.2f} MB (target: under 10 MB); {kept.runs:,} runs kept as rows,")
    print(f"  {kept.folded_days} days folded into daily counts (HISTORY_DAYS={args.history_days})")
    print(f"the page's, history's, the round's and the cap's queries: day one {first_day * 1000:.1f} ms,")
    print(f"  the last day {last_day * 1000:.1f} ms ({last_day / first_day:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
