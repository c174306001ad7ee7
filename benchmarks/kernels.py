"""What the compiled kernels are worth, and what building one costs: the figures `bot.py check`
and a job's fallback WARNING quote (jobs/pegs/kernel.py, jobs/monkey/kernel.py `SPEC.slower`).

    .venv/bin/python benchmarks/kernels.py                 # both jobs, each way once, then the builds
    .venv/bin/python benchmarks/kernels.py --repeat 3 --jobs monkey

Each run is `bot.py` in its own child process with a fresh state folder (BOT_STATE_DIR), timed
by wait4 (CPU of the child and its children, peak memory), alternately with the kernel
(TWITTERBOT_<JOB>_KERNEL=auto, built beforehand so the build is not counted) and without it
(=numpy). The ratio is CPU without / CPU with, the median of the paired ratios.

First-run cost: the kernel compiled into an empty cache folder (`native.inspect`, as `bot.py
check` does: wall time of the build, and the compiler's CPU), and a first `pegs solve english`
with an empty cache against one with the kernel already built.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

JOBS: Dict[str, Sequence[str]] = {
    "pegs": ("pegs", "count", "english", "--no-post"),
    "monkey": ("monkey", "--no-post", "--keystrokes", "3e9", "--seed", "1", "--workers", "1", "--restart"),
}


def timed(
    args: Sequence[str], state: Path, environ: Dict[str, str], ok: Sequence[int] = (0,)
) -> Tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak KiB, stdout) of one `bot.py` run, by wait4."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(state), "LANG": "C.UTF-8"}
    env.update(environ, BOT_STATE_DIR=str(state))
    (state / ".env").write_text("")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, str(REPO / "bot.py"), "--env-file", str(state / ".env"), *args],
            stdout=out,
            stderr=err,
            env=env,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        if child.returncode not in ok:
            raise SystemExit(f"{' '.join(args)} failed ({child.returncode}): {err.read()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.read()


def slowdown(job: str, repeat: int) -> None:
    variable = f"TWITTERBOT_{job.upper()}_KERNEL"
    ratios: List[float] = []
    with tempfile.TemporaryDirectory(prefix="kernels-bench-") as folder:
        state = Path(folder)
        timed(("check",), state, {}, ok=(0, 78))  # builds the kernels (no keys: 78): not counted
        if job == "monkey":
            timed(("monkey", "--fetch-texts"), state, {})
        for round_ in range(repeat):
            figures = {}
            for value in ("auto", "numpy"):
                wall, cpu, peak, stdout = timed(JOBS[job], state, {variable: value})
                figures[value] = cpu
                speed = re.search(r"\(([\d.]+ \w+/s)\)", stdout)
                print(
                    f"{job} {variable}={value:5} round {round_ + 1}: {cpu:6.1f} s CPU, {wall:6.1f} s wall, "
                    f"{peak / 1024:5.0f} MiB" + (f", {speed.group(1)}" if speed else "")
                )
            ratios.append(figures["numpy"] / figures["auto"])
    print(
        f"{job}: without the kernel {statistics.median(ratios):.1f}x the CPU (ratios {', '.join(f'{r:.2f}' for r in ratios)})"
    )


def build_cost(repeat: int) -> None:
    from twitterbot.jobs.monkey import kernel as monkey
    from twitterbot.jobs.pegs import kernel as pegs

    for module in (pegs, monkey):
        walls, cpus = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="kernels-build-") as folder:
                from twitterbot.jobs import native

                native._loaded.clear()
                native._kernels.clear()
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                state = module.state(Path(folder))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                assert state.in_use and state.build_seconds is not None, state.words
                walls.append(state.build_seconds)
                cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        print(
            f"{module.SPEC.job} kernel build: {statistics.median(walls):.2f} s wall, "
            f"{statistics.median(cpus):.2f} s CPU (median of {repeat})"
        )
    with tempfile.TemporaryDirectory(prefix="kernels-first-") as folder:
        state = Path(folder)
        cold = timed(("pegs", "solve", "english", "--no-post"), state, {})
        warm = timed(("pegs", "solve", "english", "--no-post"), state, {})
        print(
            f"first pegs solve english: {cold[0]:.2f} s wall ({cold[1]:.2f} s CPU) with an empty cache, "
            f"{warm[0]:.2f} s wall ({warm[1]:.2f} s CPU) with the kernel built"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", nargs="+", choices=sorted(JOBS), default=sorted(JOBS))
    parser.add_argument("--repeat", type=int, default=1, help="rounds of each job, each way (default 1)")
    parser.add_argument("--builds", type=int, default=3, help="builds of each kernel to time (default 3)")
    args = parser.parse_args()
    for job in args.jobs:
        slowdown(job, args.repeat)
    build_cost(args.builds)


if __name__ == "__main__":
    main()
