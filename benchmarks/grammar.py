"""What a Tracery grammar can cost: hostile grammars through whole runs, and grammars of many rules
read by a run, `check` and the status page, a small one beside a large one in the same run::

    .venv/bin/python benchmarks/grammar.py                   # ~1 min: the attacks, 3,000 and 30,000 rules
    .venv/bin/python benchmarks/grammar.py --rules 3000 30000 100000 -n 5

The attacks (a rule doubled by forty actions, nine chained `.replace`, JSON or brackets nested
100,000 deep, a lone surrogate, a long text used thousands of times...) each go through a real
run (`--force`, posting to the local X emulator: it holds the run lock), a dry run and `check`, as
processes: the goal is that each is refused (exit 65) in under `TARGET_SECONDS` with a peak under
`TARGET_MIB` (peak RSS from GNU time, as benchmarks/startup.py measures it; a small grammar's
figures are the baseline). Before the
bounds, the doubling grammar grew for good (545 MB after a minute), `.replace` ended in a
MemoryError and the nested ones in a RecursionError (exit 1).

The scaling rounds read a grammar of N rules as each caller does, in this process: a run (read it,
draw one post), `check` (read it, name its problems, draw 50) and the status page (read it, name
its problems: the page keeps the answer until the file changes); each figure is the median of `-n`
rounds. Reading grew with the square of the rules (30,000: 12.7 s a run, 10 s a page); it grows
in proportion now, so 10 times the rules cost about 10 times the time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # the emulator loads twitter-text through the bot

from x_emulator import XEmulator  # noqa: E402

from twitterbot.cli import built_in  # noqa: E402
from twitterbot.posting.generated import draw_post, sample_grammar  # noqa: E402
from twitterbot.posting.grammar import read_grammar  # noqa: E402

TARGET_SECONDS, TARGET_MIB = 10.0, 200.0
GNU_TIME = Path("/usr/bin/time")  # Debian's `time` package: the child's own peak, not this process's

ATTACKS: Dict[str, str] = {
    "(baseline: a small grammar)": json.dumps({"origin": ["#greeting#, #place#"], "greeting": ["hi"], "place": ["x"]}),
    "doubling actions": json.dumps({"origin": ["[x:ab]" + "[x:#x##x#]" * 40 + "#x#"]}),
    "nine .replace": json.dumps({"origin": ["#w" + ".replace(a,aaaaaaaaaa)" * 9 + "#"], "w": ["a" * 100]}),
    "a rule used twice in itself": json.dumps({"origin": ["#origin##origin#"]}),
    "5 MB from a long text": json.dumps({"origin": ["#a#" * 4000], "a": ["word " * 250]}),
    "JSON nested 100,000 deep": '{"origin": ' + "[" * 100_000 + '"a"' + "]" * 100_000 + "}",
    "brackets nested 100,000 deep": json.dumps({"origin": ["[" * 100_000 + "x" + "]" * 100_000]}),
    "rules nested 100,000 deep": json.dumps(
        {"origin": ["#r0#"], **{f"r{index}": [f"#r{index + 1}#"] for index in range(100_000)}, "r100000": ["end"]}
    ),
    "a lone surrogate": '{"origin": ["#\\ud800#"]}',
    "10 million rules set by actions": json.dumps({"origin": ["#a#" * 5000], "a": ["[b:c]" * 2000]}),
    "16,000 actions in a text": json.dumps({"origin": ["#a#" * 9], "a": ["[b:c][b:POP]" * 8000]}),
    "6,400 tags in every draw": json.dumps({"origin": ["#a#" * 80], "a": ["#b#" * 80], "b": ["x"]}),
}


def run(argv: Sequence[str], cwd: Path) -> Tuple[int, float, float]:
    """Exit status, wall seconds and peak RSS (MiB) of one process, killed at 60 s (status -9).
    The peak is GNU time's when the machine has it: a child forked from this process is charged
    this process's memory up to its exec (wait4's figure), the command GNU time starts is not."""
    report = cwd / "time.txt"
    command = [str(GNU_TIME), "-f", "%M", "-o", str(report), *argv] if GNU_TIME.exists() else list(argv)
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > 60:
            process.kill()
            os.wait4(process.pid, 0)
            return -9, time.monotonic() - started, float("nan")
        time.sleep(0.01)
    seconds = time.monotonic() - started
    peak_kib = int(report.read_text().split()[-1]) if GNU_TIME.exists() else usage.ru_maxrss
    return os.waitstatus_to_exitcode(status), seconds, peak_kib / 1024


def attacks(folder: Path, emulator: XEmulator) -> bool:
    """Each attack through a real run, a dry run and check; True when every one met the goal."""
    print(f"{'attack':34} {'command':10} {'exit':>4} {'seconds':>8} {'peak MiB':>9}")
    all_met = True
    for name, text in ATTACKS.items():
        home = folder / name.replace(" ", "-")
        home.mkdir()
        (home / "bot.json").write_text(text, encoding="utf-8")
        settings = {**emulator.env(), "TWEETS_FILE": str(home / "bot.json"), "BOT_STATE_DIR": str(home / "state")}
        (home / ".env").write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
        (home / ".env").chmod(0o600)
        for command in (["--dry-run", "--force"], ["--force"], ["check"]):
            status, seconds, peak = run([sys.executable, str(REPO / "bot.py"), "--env-file", ".env", *command], home)
            wanted = 0 if name.startswith("(baseline") else 65
            met = status == wanted and seconds < TARGET_SECONDS and peak < TARGET_MIB
            all_met = all_met and met
            print(f"{name:34} {command[0]:10} {status:>4} {seconds:8.2f} {peak:9.1f}{'' if met else '  <- missed'}")
    return all_met


def grammar_of(rules: int) -> str:
    """A grammar of `rules` rules, each used by the one before, as a bot's vocabulary might be."""
    texts = {"origin": [f"#r{index}# and #r{index + 1}#" for index in range(0, rules - 1, max(1, rules // 100))]}
    texts.update({f"r{index}": [f"word {index}", f"another {index} #w#"] for index in range(rules)})
    texts["w"] = ["thing", "place"]
    return json.dumps(texts, indent=1)


def scaling(folder: Path, sizes: Sequence[int], rounds: int) -> None:
    """The median seconds of a run's, check's and the page's reading of N rules, for each N."""
    x = built_in().network("x")
    callers: Dict[str, Callable[[Path], object]] = {
        "run (read, draw)": lambda path: draw_post(path, (x,), rng=random.Random(0), posted=set()),
        "check (read, problems, 50 draws)": lambda path: sample_grammar(path, (x,), rng=random.Random(0)),
        "status page (read, problems)": lambda path: read_grammar(path).problems(),
    }
    paths = {}
    for size in sizes:
        paths[size] = folder / f"rules-{size}.json"
        paths[size].write_text(grammar_of(size), encoding="utf-8")
    figures: Dict[Tuple[str, int], List[float]] = {}
    for _ in range(rounds):  # each round reads every size, so drift hits them alike
        for caller, call in callers.items():
            for size in sizes:
                started = time.perf_counter()
                call(paths[size])
                figures.setdefault((caller, size), []).append(time.perf_counter() - started)
    print(f"\n{'reading a grammar of N rules':34}" + "".join(f"{size:>12,}" for size in sizes) + "   growth")
    for caller in callers:
        medians = [statistics.median(figures[caller, size]) for size in sizes]
        growth = (medians[-1] / medians[0]) / (sizes[-1] / sizes[0])
        print(
            f"{caller:34}"
            + "".join(f"{median:11.3f}s" for median in medians)
            + f"   {growth:.2f}x linear ({sizes[-1] // sizes[0]}x the rules: {medians[-1] / medians[0]:.1f}x the time)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="rounds of the scaling figures (default 5)")
    parser.add_argument(
        "--rules", type=int, nargs="+", default=[3000, 30000], help="grammar sizes (default 3000 30000)"
    )
    parser.add_argument("--skip-attacks", action="store_true", help="only the scaling figures")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="twitterbot-grammar-") as scratch, XEmulator() as emulator:
        met = True if options.skip_attacks else attacks(Path(scratch), emulator)
        scaling(Path(scratch), sorted(options.rules), options.n)
    if not options.skip_attacks:
        goal = f"every attack refused (65) in under {TARGET_SECONDS:.0f} s and {TARGET_MIB:.0f} MiB"
        print(f"\ngoal: {goal}: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
