"""What one daemon for a flock costs against the same bots run by cron, in one run with its
baselines: 50 bots (lines files and grammars, some with reply rules, on X, Mastodon and Bluesky)::

    .venv/bin/python benchmarks/flock.py              # 50 bots, about two minutes on a Pi 4
    .venv/bin/python benchmarks/flock.py --bots 20

It prints:

- **memory**: the peak RSS of the flock's daemon holding every bot's schedule, beside one bot's
  own daemon (`bot.py daemon` of a checkout, its network's client made) measured here (issue 58's
  target: at most 2x);
- **a tick**: the CPU the flock's daemon spends on a tick in which no bot is due (it decides in its
  own process), beside `python -c "import tweepy"` (the target: at most that);
- **a tick in which every bot is due and skips**: the CPU of the daemon's tick, which rolls each
  bot's die and counts each skip in that bot's history, starting no process (the target: at most
  one `import tweepy`); and of the daemon as a process over such a tick, beside the same runs
  started one by one as cron starts them.

Every run points at 127.0.0.1:9, where nothing answers: a run that skips asks no network anything
(a bot with reply rules tries to read its mentions, and is refused at once).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from x_emulator import KEYS  # noqa: E402

BOT_PY = REPO / "bot.py"
NOWHERE = "http://127.0.0.1:9"
TARGET_RSS_RATIO, TARGET_TICK_RATIO = 2.0, 1.0
GRAMMAR = '{"origin": ["#greeting#, #thing#"], "greeting": ["hello", "good morning"], "thing": ["moon", "sea"]}'


def settings_of(number: int, times: str) -> Dict[str, str]:
    """Bot `number`'s settings: its network by turns, keys of its own, its times, a 1-in-a-million
    roll (every run skips)."""
    network = ("x", "mastodon", "bluesky")[number % 3]
    common = {"POST_TO": network, "TWEET_TIMES": times, "TWEET_TIMEZONE": "UTC", "TWEET_ONE_IN": "1000000"}
    if network == "x":
        keys = {
            "TWITTER_API_KEY": f"{KEYS['consumer_key']}{number}",
            "TWITTER_API_SECRET": f"{KEYS['consumer_secret']}{number}",
            "TWITTER_ACCESS_TOKEN": f"{1000 + number}-emuAccessToken{number}",
            "TWITTER_ACCESS_TOKEN_SECRET": f"{KEYS['access_token_secret']}{number}",
            "X_API_BASE_URL": NOWHERE,
        }
    elif network == "mastodon":
        keys = {"MASTODON_INSTANCE": NOWHERE, "MASTODON_ACCESS_TOKEN": f"token-of-bot-{number:04d}-abcdefgh"}
    else:
        keys = {
            "BLUESKY_HANDLE": f"bot{number}.test",
            "BLUESKY_APP_PASSWORD": "abcd-efgh-ijkl-mnop",
            "BLUESKY_SERVICE": NOWHERE,
        }
    return {**common, **keys}


def make_flock(folder: Path, count: int, times: str) -> None:
    for number in range(count):
        bot = folder / f"bot{number:02d}"
        bot.mkdir(parents=True, exist_ok=True)
        settings = settings_of(number, times)
        if number % 2:
            (bot / "bot.json").write_text(GRAMMAR)
            settings["TWEETS_FILE"] = "bot.json"
        else:
            (bot / "tweets.txt").write_text("".join(f"line {line} of bot {number}\n" for line in range(40)))
        if number % 5 == 0:
            (bot / "replies.json").write_text('{"hello": "hi there"}')
            settings["REPLY_RULES"] = "replies.json"
        env = bot / ".env"
        env.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        env.chmod(0o600)


def far_time() -> str:
    return (datetime.now(timezone.utc) + timedelta(hours=12)).strftime("%H:%M")


def environ() -> Dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/")}


def cpu_of(process: subprocess.Popen) -> Tuple[float, int]:
    """CPU seconds of `process` and the children it waited for, and its exit status (wait4)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, process.returncode


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def daemon(argv: Sequence[str], settle: float) -> Tuple[float, float]:
    """Start a daemon, let it run `settle` seconds, stop it: its peak RSS (MiB) and CPU seconds."""
    process = subprocess.Popen([sys.executable, str(BOT_PY), *argv], env=environ(), stderr=subprocess.DEVNULL)
    time.sleep(settle)
    rss = peak_rss_mib(process.pid)
    process.send_signal(signal.SIGTERM)
    cpu, _ = cpu_of(process)
    return rss, cpu


def run_cpu(argv: Sequence[str]) -> float:
    process = subprocess.Popen(argv, env=environ(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cpu_of(process)[0]


def tick_cpu(folder: Path, ticks: int = 200) -> float:
    """CPU seconds of one tick of the flock daemon in which no bot is due, in this process."""
    from twitterbot.cli import built_in
    from twitterbot.flock.botconfig import bot_config
    from twitterbot.flock.daemon import FlockDaemon
    from twitterbot.flock.folder import Flock

    registry = built_in()
    flock = FlockDaemon(
        lambda: Flock.find(folder, {}, project_dir=None),
        lambda bot: bot_config(bot, registry, environ={}, overrides={}, named=False),
        lambda bot, kind, rolled: ["false"],
        notify=lambda message: None,
    )
    flock.load()
    started = time.process_time()
    for _ in range(ticks):
        flock.tick()
    return (time.process_time() - started) / ticks


def skipping_tick_cpu(folder: Path, times: Sequence[datetime]) -> Tuple[float, float, float, int]:
    """CPU seconds of the flock daemon's start (reading every bot's settings) and of its ticks in
    which every bot is due and its roll skips, in this process, under a clock set to each of `times`
    (the bots' TWEET_TIMES) in turn: the first and the next; and how many runs it started."""
    from twitterbot.cli import built_in
    from twitterbot.flock.botconfig import bot_config
    from twitterbot.flock.daemon import FlockDaemon
    from twitterbot.flock.folder import Flock

    registry, started, now = built_in(), [], [times[0] - timedelta(seconds=5)]
    flock = FlockDaemon(
        lambda: Flock.find(folder, {}, project_dir=None),
        lambda bot: bot_config(bot, registry, environ={}, overrides={}, named=False),
        lambda bot, kind, rolled: started.append(bot.name) or ["true"],
        clock=lambda: now[0],
        notify=lambda message: None,
    )
    began = time.process_time()
    flock.load()
    spent = [time.process_time() - began]
    for at in times:
        now[0] = at + timedelta(seconds=1)
        began = time.process_time()
        flock.tick()
        spent.append(time.process_time() - began)
    return spent[0], spent[1], spent[2], len(started)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=50, help="bots in the flock (default 50)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        idle, busy, one = root / "idle" / "bots", root / "busy" / "bots", root / "one" / "bots"
        make_flock(idle, args.bots, far_time())
        make_flock(one, 1, far_time())
        tweepy = min(run_cpu([sys.executable, "-c", "import tweepy"]) for _ in range(3))
        flock_rss, _ = daemon(["--bots", str(idle), "daemon"], settle=8)
        one_rss, _ = daemon(["--env-file", str(one / "bot00" / ".env"), "daemon"], settle=8)
        tick = tick_cpu(idle)
        make_flock(busy, args.bots, far_time())
        # Cron's runs first: each bot then has a history, as every bot after its first run has.
        cron = sum(
            run_cpu([sys.executable, str(BOT_PY), "--bots", str(busy), "--bot", f"bot{number:02d}"])
            for number in range(args.bots)
        )
        first = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(minutes=2)
        shared = (first, first + timedelta(minutes=1))
        make_flock(busy, args.bots, ",".join(f"{at:%H:%M:%S}" for at in shared))
        load, cold, warm, started = skipping_tick_cpu(busy, shared)
    print(f"{args.bots} bots: lines files and grammars, every fifth with reply rules, on X, Mastodon and Bluesky")
    verdict = "met" if flock_rss <= TARGET_RSS_RATIO * one_rss else "NOT met"
    print(
        f"memory: the flock's daemon peaks at {flock_rss:.1f} MiB; one bot's daemon at {one_rss:.1f} MiB"
        f" ({flock_rss / one_rss:.2f}x; target at most {TARGET_RSS_RATIO:.0f}x: {verdict})"
    )
    verdict = "met" if tick <= TARGET_TICK_RATIO * tweepy else "NOT met"
    print(
        f"a tick with no bot due: {tick * 1e6:.0f} µs of CPU in the daemon;"
        f' python -c "import tweepy": {tweepy * 1000:.0f} ms ({tick / tweepy:.4f}x; target at most 1x: {verdict})'
    )
    verdict = "met" if warm <= TARGET_TICK_RATIO * tweepy else "NOT met"
    print(
        f"a tick in which every bot is due and skips: {warm * 1000:.0f} ms of CPU in the daemon (its first such"
        f" tick: {cold * 1000:.0f} ms; {started} runs started);"
        f' python -c "import tweepy": {tweepy * 1000:.0f} ms ({warm / tweepy:.2f}x; target at most 1x: {verdict})'
    )
    print(
        f"the same {args.bots} bots run by cron at such a time: {cron:.2f} s of CPU ({cron / tweepy:.0f}x import tweepy)"
    )
    print(f"the daemon's start (and each SIGHUP), reading {args.bots} bots' settings: {load * 1000:.0f} ms of CPU")
    return 0


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main(sys.argv[1:]))
