"""What drawing a grammar's SVG card costs a run: wall time and peak memory of the whole process
(the bot's Python and the renderer it runs) for a 1600x1200 text card, beside a baseline measured
in the same run::

    .venv/bin/python benchmarks/svg_card.py              # 5 rounds of each, about 10 s
    .venv/bin/python benchmarks/svg_card.py -n 9 --chromium

Each measurement is a fresh Python process that imports what a run drawing the card imports,
draws it (`pictures.svg.draw_svg`) and prepares the PNG for Bluesky (`pictures.prepare`, as a
run prepares every picture). Its peak memory is its own peak (ru_maxrss) plus its children's
(RUSAGE_CHILDREN: rsvg-convert, or chromium's largest process): both are counted as if at their
peaks together, an upper bound (the bot waits, holding its memory, while the renderer draws).
The baseline is the same process drawing nothing: Pillow writing a blank 1600x1200 PNG and
preparing it alike. Targets (issue 48): under 160 MiB and under 5 s with rsvg.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
TARGET_MIB = 160.0
TARGET_SECONDS = 5.0

CARD = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="1200" viewBox="0 0 1600 1200">
<rect width="1600" height="1200" rx="80" fill="#0d1b2a"/>
<circle cx="1400" cy="200" r="120" fill="#ffd166" opacity="0.9"/>
<path d="M 0 1000 C 400 850, 800 1150, 1600 950 L 1600 1200 L 0 1200 Z" fill="#1b998b"/>
<rect x="120" y="140" width="1000" height="12" rx="6" fill="#ef476f"/>
<text font-family="DejaVu Serif" fill="#ffffff">
  <tspan x="120" y="300" font-size="110" font-weight="bold">The heron at dawn</tspan>
  <tspan x="120" y="460" font-size="64">stands in the reeds and waits,</tspan>
  <tspan x="120" y="560" font-size="64">a grey thought on one leg,</tspan>
  <tspan x="120" y="660" font-size="64">until the <tspan fill="#ffd166" font-style="italic">river</tspan> speaks.</tspan>
</text>
<text x="1480" y="1120" font-family="DejaVu Sans" font-size="40" fill="#ffffff" text-anchor="end">a bot, #4127</text>
</svg>"""

_CHILD = r"""
import io, json, resource, sys, time
sys.path.insert(0, {repo!r})
what, renderer = sys.argv[1], sys.argv[2]
start = time.perf_counter()
from twitterbot.cli import built_in
from twitterbot.pictures.prepare import prepare
limits = built_in().network("bluesky").image_limits()
if what == "card":
    from twitterbot.pictures.svg import draw_svg
    png = draw_svg({card!r}, renderer=renderer).png
else:
    from PIL import Image
    out = io.BytesIO()
    Image.new("RGBA", (1600, 1200), (0, 0, 0, 0)).save(out, "PNG")
    png = out.getvalue()
prepared = prepare(io.BytesIO(png), "a card", limits)
seconds = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "own": own, "children": children, "png": len(png), "sent": len(prepared.data)}}))
"""


def measure(what: str, renderer: str) -> Dict[str, float]:
    """One fresh process drawing (or not) and preparing the card: its figures."""
    code = _CHILD.format(repo=str(REPO), card=CARD)
    done = subprocess.run(
        [sys.executable, "-c", code, what, renderer], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--rounds", type=int, default=5)
    parser.add_argument("--chromium", action="store_true", help="also measure SVG_RENDERER=chromium")
    arguments = parser.parse_args(argv)
    kinds = [("baseline (blank PNG, no renderer)", "blank", "auto"), ("rsvg-convert", "card", "rsvg")]
    if arguments.chromium:
        kinds.append(("chromium", "card", "chromium"))
    runs: Dict[str, List[Dict[str, float]]] = {label: [] for label, _, _ in kinds}
    for _ in range(arguments.rounds):  # interleaved, so drift hits every kind alike
        for label, what, renderer in kinds:
            runs[label].append(measure(what, renderer))
    print(f"1600x1200 text card, drawn and prepared for Bluesky; median of {arguments.rounds} fresh processes")
    print(f"{'':36} {'wall s':>7} {'bot MiB':>8} {'child MiB':>9} {'whole MiB':>9} {'PNG bytes':>10}")
    within = True
    for label, _, renderer in kinds:
        figures = runs[label]
        seconds = statistics.median(run["seconds"] for run in figures)
        own = statistics.median(run["own"] for run in figures)
        child = statistics.median(run["children"] for run in figures)
        whole = statistics.median(run["own"] + run["children"] for run in figures)
        png = int(statistics.median(run["png"] for run in figures))
        print(f"{label:36} {seconds:7.2f} {own:8.1f} {child:9.1f} {whole:9.1f} {png:10,}")
        if renderer == "rsvg":
            within = whole < TARGET_MIB and seconds < TARGET_SECONDS
    print(
        f"targets with rsvg: under {TARGET_MIB:g} MiB whole and {TARGET_SECONDS:g} s: {'met' if within else 'MISSED'}"
    )
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
