"""What preparing a phone photo costs: peak memory and time of `prepare` for each network, beside
a naive preparation (full decode, exif_transpose, resize, save) measured in the same run::

    .venv/bin/python benchmarks/pictures.py            # 5 rounds, a 12-megapixel photo, ~1 min
    .venv/bin/python benchmarks/pictures.py -n 9 --megapixels 24
    .venv/bin/python benchmarks/pictures.py --bombs        # only the bombs: whole dry runs, ~1 min

Each measurement is a fresh process (peak memory is the process's own: ru_maxrss), so the
figures include Python and Pillow themselves; `import PIL.Image` alone is measured too. The photo
is generated: 4000x3000 (at 12 MP), stored sideways with EXIF orientation 6 and a GPS position,
textured so that it compresses like a real photo (about 5-7 MB at quality 92). The goal
(issue 26): every network's preparation peaks under 150 MiB, as a Pi Zero 2 W has 512 MB.
Figures are medians over rounds; commands are interleaved so drift hits them alike.

The bombs (issue 36) are small files of huge pixel counts: a 12000x12000 PNG and WebP, a 9400x9400
RGBA PNG. Each is measured as a whole `bot.py --dry-run --force` process (peak RSS, exit status)
whose tweets file names it, beside the same run on a plain line and on the phone photo: a bomb
must be refused from its header (exit 65) at about the plain line's memory.
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


def make_bomb(path: Path, kind: str) -> None:
    """A file of many pixels in few bytes (flat colour): what a run must refuse, not decode."""
    from PIL import Image

    side, mode = {"png": (12000, "RGB"), "webp": (12000, "RGB"), "rgba": (9400, "RGBA")}[kind]
    Image.new(mode, (side, side), (40, 120, 30, 200)[: len(mode)]).save(path, "WEBP" if kind == "webp" else "PNG")


_DRY_RUN = r"""
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, done.returncode)
"""


def dry_run(home: Path, line: str) -> Tuple[float, int]:
    """Peak RSS (MiB) and exit status of a whole `bot.py --dry-run --force` on a tweets file of `line`."""
    (home / "tweets.txt").write_text(line + "\n")
    command = [sys.executable, str(REPO / "bot.py"), "--env-file", str(home / ".env"), "--dry-run", "--force"]
    out = subprocess.run(
        [sys.executable, "-c", _DRY_RUN, *command], check=True, capture_output=True, text=True, cwd=home
    )
    mib, status = out.stdout.split()
    return float(mib), int(status)


def bombs(rounds: int) -> None:
    """The bombs' table: each file as a whole dry run, beside a plain line and a phone photo."""
    cases = {
        "a plain line": None,
        "a 12-MP phone photo": "photo",
        "12000x12000 PNG": "png",
        "12000x12000 WebP": "webp",
        "9400x9400 RGBA PNG": "rgba",
    }
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        (home / ".env").write_text(f"POST_TO=x,mastodon,bluesky\nBOT_STATE_DIR={home / 'state'}\n")
        lines = {}
        for label, kind in cases.items():
            if kind is None:
                lines[label] = "A plain line"
                continue
            name = {"photo": "photo.jpg", "png": "bomb.png", "webp": "bomb.webp", "rgba": "rgba.png"}[kind]
            maker = "--make" if kind == "photo" else "--make-bomb"
            extra = ["--megapixels", "12"] if kind == "photo" else ["--bomb-kind", kind]
            subprocess.run([sys.executable, __file__, maker, str(home / name), *extra], check=True, capture_output=True)
            lines[label] = f"A picture ![A picture]({name})"
        peaks: Dict[str, List[float]] = {label: [] for label in cases}
        statuses: Dict[str, int] = {}
        for _ in range(rounds):
            for label, line in lines.items():
                mib, statuses[label] = dry_run(home, line)
                peaks[label].append(mib)
        sizes = {
            label: (home / line.split("(")[-1].rstrip(")")).stat().st_size if "(" in line else 0
            for label, line in lines.items()
        }
    print(f"{'a whole dry run on':<30}{'bytes':>12}{'peak MiB':>10}{'exit':>6}")
    for label in cases:
        print(f"{label:<30}{sizes[label]:>12,}{statistics.median(peaks[label]):>10.1f}{statuses[label]:>6}")


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
    parser.add_argument("--bombs", action="store_true", help="only the bombs, as whole dry runs")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)  # the child that draws the photo
    parser.add_argument("--make-bomb", type=Path, help=argparse.SUPPRESS)  # ... or a bomb
    parser.add_argument("--bomb-kind", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.make:
        print(json.dumps(make_photo(options.make, options.megapixels)))
        return
    if options.make_bomb:
        make_bomb(options.make_bomb, options.bomb_kind)
        return
    if options.bombs:
        bombs(options.n)
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
    print()
    bombs(max(1, options.n // 2))


if __name__ == "__main__":
    main()
