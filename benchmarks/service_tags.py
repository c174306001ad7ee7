"""What a run of a grammar made for CBDQ, CBTS or BBDQ costs: time and peak memory of a whole
`bot.py --dry-run --force` process that draws its `{svg}` picture and fits it to Mastodon::

    .venv/bin/python benchmarks/service_tags.py            # 5 rounds of each grammar, ~10 s
    .venv/bin/python benchmarks/service_tags.py -n 9

The grammars are the tests' (tests/fixtures/grammars): a 1600x1200 text card with fonts, shape art
with an XML declaration, a noughts-and-crosses board drawn with transforms, beside a grammar
without tags. Each measurement is a fresh process started by a small wrapper that reports the
largest resident set of what it waited for (ru_maxrss of its children: the bot's Python, or the
renderer it runs, whichever is larger). The goal (issue 48): a run that draws the 1600x1200 text
card stays under 160 MiB and 5 s. Figures are medians over rounds, the grammars interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
GRAMMARS = REPO / "tests" / "fixtures" / "grammars"
CASES = {
    "a 1600x1200 text card (cbdq_text_card.json)": "cbdq_text_card.json",
    "shape art with an XML declaration (cbdq_shapes.json)": "cbdq_shapes.json",
    "a noughts-and-crosses board (cbdq_noughts.json)": "cbdq_noughts.json",
    "no tags (modifiers.json, the baseline)": "modifiers.json",
}
TARGET_MIB, TARGET_SECONDS = 160.0, 5.0

_WRAPPER = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
took = time.perf_counter() - start
print(done.returncode, took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(grammar: Path, folder: Path) -> Tuple[int, float, float]:
    """One dry run of `grammar`: its exit status, seconds and peak MiB."""
    env = folder / f"{grammar.stem}.env"
    env.write_text(
        f"TWEETS_FILE={grammar}\nBOT_STATE_DIR={folder / grammar.stem}\nPOST_TO=mastodon\n"
        "MASTODON_INSTANCE=https://example.social\nMASTODON_ACCESS_TOKEN=" + "x" * 43 + "\n"
    )
    command = [sys.executable, str(REPO / "bot.py"), "--env-file", str(env), "--dry-run", "--force", "-q"]
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *command], capture_output=True, text=True, check=True)
    status, seconds, kib = out.stdout.split()
    return int(status), float(seconds), int(kib) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--rounds", type=int, default=5)
    args = parser.parse_args()
    figures: Dict[str, List[Tuple[int, float, float]]] = {name: [] for name in CASES}
    with tempfile.TemporaryDirectory(prefix="service-tags-") as tmp:
        for _ in range(args.rounds):
            for name, file in CASES.items():
                figures[name].append(measure(GRAMMARS / file, Path(tmp)))
    print(f"| grammar ({args.rounds} rounds, medians) | exit | time | peak memory |")
    print("| --- | --- | --- | --- |")
    failed = False
    for name, runs in figures.items():
        statuses = sorted({status for status, _, _ in runs})
        seconds = statistics.median(took for _, took, _ in runs)
        mib = statistics.median(peak for _, _, peak in runs)
        print(f"| {name} | {', '.join(map(str, statuses))} | {seconds:.2f} s | {mib:.1f} MiB |")
        failed = failed or statuses != [0]
        if "1600x1200" in name and (mib > TARGET_MIB or seconds > TARGET_SECONDS):
            print(f"over the goal: {TARGET_MIB:.0f} MiB and {TARGET_SECONDS:.0f} s")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
