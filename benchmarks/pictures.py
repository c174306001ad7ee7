"""What preparing a phone photo costs: peak memory and time of `prepare` for each network, beside
a naive preparation (full decode, exif_transpose, resize, save) measured in the same run::

    .venv/bin/python benchmarks/pictures.py            # 5 rounds, a 12-megapixel photo, ~1 min
    .venv/bin/python benchmarks/pictures.py -n 9 --megapixels 24

Each measurement is a fresh process (peak memory is the process's own: ru_maxrss), so the
figures include Python and Pillow themselves; `import PIL.Image` alone is measured too. The photo
is generated: 4000x3000 (at 12 MP), stored sideways with EXIF orientation 6 and a GPS position,
textured so that it compresses like a real photo (about 5-7 MB at quality 92). The goal
(issue 26): every network's preparation peaks under 150 MiB, as a Pi Zero 2 W has 512 MB.
Figures are medians over rounds; commands are interleaved so drift hits them alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
TARGET_MIB = 150.0

_CHILD = r"""
import io, json, resource, sys, time
sys.path.insert(0, {repo!r})
what, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
from PIL import Image
size = 0
if what == "import":
    pass
elif what == "naive":
    from PIL import ImageOps
    from twitterbot.cli import built_in
    limits = built_in().network("bluesky").image_limits()
    with Image.open(path) as image:
        image.load()
        upright = ImageOps.exif_transpose(image).convert("RGB")
    upright.thumbnail((limits.max_side, limits.max_side))
    quality = 88
    while True:
        out = io.BytesIO()
        upright.save(out, "JPEG", quality=quality)
        if out.tell() <= limits.max_bytes or quality <= 30:
            break
        quality -= 10
    size = out.tell()
else:
    from twitterbot.cli import built_in
    from twitterbot.pictures.prepare import prepare
    size = len(prepare(path, "a photo", built_in().network(what).image_limits()).data)
seconds = time.perf_counter() - start
print(json.dumps({{"mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": seconds, "bytes": size}}))
"""


def make_photo(path: Path, megapixels: float) -> Tuple[int, int]:
    """A sideways photo with GPS EXIF, textured like a real one."""
    from PIL import Image, ImageDraw

    width = int((megapixels * 1e6 * 4 / 3) ** 0.5)
    height = int(width * 3 / 4)
    sky = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    noise = Image.effect_noise((width, height), 40).convert("RGB")
    photo = Image.blend(sky, noise, 0.35)
    draw = ImageDraw.Draw(photo)
    for step in range(0, width, width // 12):
        draw.ellipse((step, height // 2, step + width // 10, height // 2 + height // 5), fill=(40, 120 + step % 90, 30))
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 12.5), 3: "W", 4: (0.0, 7.0, 39.0)}
    photo.save(path, "JPEG", quality=92, exif=exif.tobytes())
    return width, height


def run(what: str, photo: Path) -> Dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(repo=str(REPO)), what, str(photo)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--megapixels", type=float, default=12.0, help="the photo's size (default 12)")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)  # the child that draws the photo
    options = parser.parse_args()
    if options.make:
        print(json.dumps(make_photo(options.make, options.megapixels)))
        return
    commands = ["import", "naive", "x", "mastodon", "bluesky"]
    with tempfile.TemporaryDirectory() as scratch:
        photo = Path(scratch) / "photo.jpg"
        # Drawn by a child: a forked child is charged its parent's peak memory, so this process stays small.
        made = subprocess.run(
            [sys.executable, __file__, "--make", str(photo), "--megapixels", str(options.megapixels)],
            check=True,
            capture_output=True,
            text=True,
        )
        width, height = json.loads(made.stdout)
        print(f"photo: {width}x{height} JPEG, {photo.stat().st_size:,} bytes, EXIF orientation 6 and GPS")
        results: Dict[str, List[Dict[str, float]]] = {command: [] for command in commands}
        for _ in range(options.n):
            for command in commands:
                results[command].append(run(command, photo))
    print(f"{'':<28}{'peak MiB':>10}{'seconds':>10}{'bytes out':>12}")
    labels = {
        "import": "import PIL.Image",
        "naive": "naive (full decode, Bluesky)",
        "x": "prepare for X",
        "mastodon": "prepare for Mastodon",
        "bluesky": "prepare for Bluesky",
    }
    worst = 0.0
    for command in commands:
        mib = statistics.median(r["mib"] for r in results[command])
        seconds = statistics.median(r["seconds"] for r in results[command])
        size = statistics.median(r["bytes"] for r in results[command])
        if command not in ("import", "naive"):
            worst = max(worst, mib)
        print(f"{labels[command]:<28}{mib:>10.1f}{seconds:>10.2f}{int(size):>12,}")
    verdict = "under" if worst < TARGET_MIB else "OVER"
    print(f"worst preparation: {worst:.1f} MiB, {verdict} the {TARGET_MIB:.0f} MiB goal")


if __name__ == "__main__":
    main()
