"""A month of the daemon in an hour: `bot.py daemon` under a clock sped up by libfaketime, a run
every 10 simulated minutes, posting on 1 run in 6 to the local X emulator, and at the end of
each simulated day its peak and current memory, open files, threads and CPU time, beside day 1's::

    .venv/bin/python benchmarks/daemon_month.py                  # 2 simulated days at x720: ~4 min
    .venv/bin/python benchmarks/daemon_month.py --days 30        # the full month: about an hour
    .venv/bin/python benchmarks/daemon_month.py --days 3 --dry-run --speed 1440

A daemon runs for months on a Pi with 512 MB: what it holds must not grow with the runs it has
done. The goal (issue 50): through a month its peak RSS (VmHWM) stays within 2 MiB of day 1's, its
open files and threads unchanged, and it misses no run. Day 1 is the baseline, not the start: the
first run and the first post import what the daemon needs (tweepy, SQLite), once.

Needs libfaketime (`apt-get install faketime`). Under it the daemon's sleeps, polls and socket
timeouts are sped up too (API_TIMEOUT is set to its most, 10 minutes, 0.8 real seconds at x720,
so that a post to the emulator, which answers in real time, is not cut short), and the emulator accepts OAuth
timestamps from its future. Each sample is taken a moment (a quarter of the time between two runs)
after the daemon says (sd_notify STATUS) when its next run is: between runs, when nothing of a run
is open, nor the socket it said it through. Exit status 1 if a target is
missed.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # the emulator loads twitter-text through the bot

from faked_clock import libfaketime, sped_up  # noqa: E402
from x_emulator import XEmulator  # noqa: E402

DAY = 86_400
EVERY_TEN_MINUTES = ",".join(f"{hour:02d}:{minute:02d}" for hour in range(24) for minute in range(0, 60, 10))
# The goal: peak RSS within this of day 1's; open files and threads exactly day 1's.
TARGET_PEAK_GROWTH_MIB = 2.0
# A generous bound on the real seconds between two STATUS messages (10 simulated minutes apart):
# longer means the daemon is stuck, or its naps are not sped up.
STUCK_SECONDS = 60.0


@dataclass(frozen=True)
class Sample:
    """What /proc says about the daemon at the end of one simulated day."""

    day: int
    peak_mib: float  # VmHWM
    rss_mib: float  # VmRSS
    files: int  # /proc/PID/fd
    threads: int  # /proc/PID/task
    cpu_seconds: float  # user + system, since it started
    runs: int  # runs come due by then (each STATUS after the first follows one, done or missed)
    posts: int  # posts the emulator has by then
    log_lines: int  # lines it has logged by then (stderr, the journal's view)
    missed: int  # runs missed by then (the daemon's "missed ..." warnings, each of one run or several)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=2, help="simulated days (default 2; 30 for the month)")
    parser.add_argument("--speed", type=int, default=720, help="how much faster the clock runs (default 720)")
    parser.add_argument("--dry-run", action="store_true", help="the daemon's dry run: no emulator, no posts")
    parser.add_argument("--one-in", type=int, default=6, help="TWEET_ONE_IN (default 6)")
    args = parser.parse_args(argv)
    library = libfaketime()
    if library is None:
        print("libfaketime is not installed: apt-get install faketime", file=sys.stderr)
        return 69
    emulator = XEmulator(
        clock_skew_allowed=(args.days + 2) * DAY,  # the daemon's clock runs ahead of the emulator's
        posts_per_window=10**9,
        posts_per_day=10**9,
        duplicate_check=False,  # a month of posts goes round the tweets file several times
    )
    with tempfile.TemporaryDirectory(prefix="daemon-month-") as scratch, emulator:
        folder = Path(scratch)
        env_file = write_home(folder, emulator, one_in=args.one_in)
        samples = run(folder, env_file, emulator, args, library)
        warnings = [line for line in (folder / "daemon.log").read_text(errors="replace").splitlines() if _loud(line)]
    if warnings:
        print(f"\nits warnings and errors ({len(warnings)}; the first 10):", *warnings[:10], sep="\n  ")
    return report(samples, args)


def _loud(line: str) -> bool:
    return " WARNING: " in line or " ERROR: " in line or " CRITICAL: " in line


def write_home(folder: Path, emulator: XEmulator, *, one_in: int) -> Path:
    """A bot home: 200 lines to post, a run every 10 minutes, no cap or gap in the way."""
    (folder / "tweets.txt").write_text("".join(f"Line {number} of the month\n" for number in range(1, 201)))
    settings = {
        **emulator.env(),
        "TWEETS_FILE": str(folder / "tweets.txt"),
        "BOT_STATE_DIR": str(folder / "state"),
        "TWEET_TIMES": EVERY_TEN_MINUTES,
        "TWEET_TIMEZONE": "UTC",
        "TWEET_ONE_IN": str(one_in),
        "MAX_POSTS_PER_DAY": "144",
        "MIN_POST_GAP": "0",
        "API_TIMEOUT": "600",  # its most: faked seconds, 0.8 real seconds at x720
        "API_RETRIES": "0",
        "LOG_FILE": str(folder / "bot.log"),  # its handler is part of what must not grow
    }
    env_file = folder / "bot.env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    env_file.chmod(0o600)
    return env_file


def run(folder: Path, env_file: Path, emulator: XEmulator, args: argparse.Namespace, library: Path) -> List[Sample]:
    """Start the daemon, sample it at the end of each simulated day, stop it."""
    notify_path = folder / "notify"
    log_path = folder / "daemon.log"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify, log_path.open("w") as log:
        notify.bind(str(notify_path))
        notify.settimeout(1.0)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(folder),
            "LANG": "C.UTF-8",
            "NOTIFY_SOCKET": str(notify_path),
            **sped_up(args.speed, library),
        }
        command = [sys.executable, str(REPO / "bot.py"), "--env-file", str(env_file), "daemon"]
        daemon = subprocess.Popen(
            [*command, *(["--dry-run"] if args.dry_run else [])], env=env, stderr=log, stdout=log, cwd=folder
        )
        samples: List[Sample] = []
        try:
            statuses = 0
            started: Optional[float] = None
            day_seconds = DAY / args.speed
            settle = day_seconds / 144 / 4  # a quarter of the time between two runs
            print(f"{args.days} simulated days at x{args.speed}: about {args.days * day_seconds / 60:.0f} real minutes")
            print(HEADER)
            heard = time.monotonic()
            while len(samples) < args.days and daemon.poll() is None:
                try:
                    message = notify.recv(200)
                except socket.timeout:
                    if time.monotonic() - heard > STUCK_SECONDS:
                        print(f"the daemon said nothing for {STUCK_SECONDS:.0f} real seconds: stuck", file=sys.stderr)
                        break
                    continue
                heard = time.monotonic()
                if message == b"READY=1" and started is None:
                    started = heard
                if not message.startswith(b"STATUS=next run at"):
                    continue
                statuses += 1
                if started is not None and heard - started >= (len(samples) + 1) * day_seconds:
                    time.sleep(settle)  # the socket that said so is closed, the nap begun
                    samples.append(sample(daemon.pid, len(samples) + 1, statuses - 1, emulator, log_path))
                    print(row(samples[-1], samples[0], samples[-2] if len(samples) > 1 else None), flush=True)
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        if daemon.returncode != 0:
            print(f"the daemon exited with {daemon.returncode}; its log ends:", file=sys.stderr)
            print("".join(log_path.read_text().splitlines(True)[-20:]), file=sys.stderr)
    return samples


def sample(pid: int, day: int, runs: int, emulator: XEmulator, log_path: Path) -> Sample:
    status = _status(pid)
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    lines = log_path.read_text(errors="replace").splitlines()
    return Sample(
        day=day,
        peak_mib=status["VmHWM"] / 1024,
        rss_mib=status["VmRSS"] / 1024,
        files=len(os.listdir(f"/proc/{pid}/fd")),
        threads=len(os.listdir(f"/proc/{pid}/task")),
        cpu_seconds=(int(fields[11]) + int(fields[12])) / ticks,  # utime, stime (fields 14 and 15)
        runs=runs,
        posts=len(emulator.posts),
        log_lines=len(lines),
        missed=sum(_missed_runs(line) for line in lines),
    )


def _missed_runs(line: str) -> int:
    """How many runs a line of the log says were missed: "missed 3 runs, ..." or "missed the 08:30 run"."""
    several = re.search(r"WARNING: missed (\d+) runs", line)
    return int(several.group(1)) if several else int(" WARNING: missed the " in line)


def _status(pid: int) -> Dict[str, int]:
    """/proc/PID/status's memory lines, in kB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name.startswith("Vm"):
                values[name] = int(value.split()[0])
    return values


HEADER = (
    f"{'day':>3}  {'peak MiB':>8} {'Δ':>6}  {'RSS MiB':>7} {'Δ':>6}  {'files':>5} {'Δ':>3}  {'threads':>7} {'Δ':>3}"
    f"  {'CPU s/day':>9}  {'runs':>5} {'posts':>5} {'log lines':>9} {'missed':>6}"
)


def row(now: Sample, first: Sample, before: Optional[Sample]) -> str:
    """One day's line: its figures, and how far each is from day 1's (CPU: that day's own)."""
    return (
        f"{now.day:>3}  {now.peak_mib:>8.2f} {now.peak_mib - first.peak_mib:>+6.2f}"
        f"  {now.rss_mib:>7.2f} {now.rss_mib - first.rss_mib:>+6.2f}"
        f"  {now.files:>5} {now.files - first.files:>+3}  {now.threads:>7} {now.threads - first.threads:>+3}"
        f"  {now.cpu_seconds - (before.cpu_seconds if before else 0.0):>9.2f}"
        f"  {now.runs:>5} {now.posts:>5} {now.log_lines:>9} {now.missed:>6}"
    )


def report(samples: List[Sample], args: argparse.Namespace) -> int:
    if len(samples) < args.days:
        print(f"only {len(samples)} of {args.days} days were measured", file=sys.stderr)
        return 1
    first, last = samples[0], samples[-1]
    growth = max(sample.peak_mib for sample in samples) - first.peak_mib
    problems = []
    if growth > TARGET_PEAK_GROWTH_MIB:
        problems.append(f"peak RSS grew {growth:.2f} MiB after day 1 (target: at most {TARGET_PEAK_GROWTH_MIB} MiB)")
    if any(sample.files != first.files for sample in samples):
        problems.append(f"open files changed: {[sample.files for sample in samples]}")
    if any(sample.threads != first.threads for sample in samples):
        problems.append(f"threads changed: {[sample.threads for sample in samples]}")
    if last.missed:
        problems.append(f"{last.missed} of {last.runs} runs missed")
    print(
        f"\n{last.runs} runs in {args.days} simulated day{'s' * (args.days != 1)} ({last.runs / args.days:.0f} a day), "
        f"{last.posts} posts; peak RSS {first.peak_mib:.2f} MiB on day 1, {growth:+.2f} MiB since; "
        f"{first.files} open files and {first.threads} threads throughout"
        if not problems
        else "\n" + "\n".join(problems)
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
