"""How long a Bluesky link card can hold up a post: `fetch_card` with its default limits (10 s in
all) against pages served on 127.0.0.1 that misbehave in each way the limits are for, and one that
behaves (a page with a 3,000x2,000 photo to fit into 1,000,000 bytes)::

    .venv/bin/python benchmarks/linkcards.py          # about 35 s: three pages wait out the limit

Each row is the wall time `fetch_card` took (what the post waits), and what it returned.
"""

from __future__ import annotations

import io
import socket
import sys
import time
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from page_server import Page, PageServer  # noqa: E402

from twitterbot.networks.bluesky.linkcard import fetch_card  # noqa: E402


def _photo() -> bytes:
    import numpy
    from PIL import Image

    rng = numpy.random.default_rng(7)
    pixels = rng.integers(0, 255, (2000, 3000, 3), dtype=numpy.uint8) // 4 + 100
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "JPEG", quality=90)
    return out.getvalue()


def _trickle() -> Iterator[bytes]:
    yield b"<html><head><!--"
    while True:
        yield b" "


def _huge() -> Iterator[bytes]:
    yield b"<html><head><!--"
    for _ in range(50 * 16):
        yield b"x" * 65536


def main() -> int:
    photo = _photo()
    good = b'<head><meta property="og:title" content="Good"><meta property="og:image" content="/p.jpg"></head>'
    slow_picture = (
        b'<head><meta property="og:title" content="Slow picture"><meta property="og:image" content="/never"></head>'
    )
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    with PageServer(
        {
            "/good": Page(good),
            "/p.jpg": Page(photo, headers={"Content-Type": "image/jpeg"}),
            "/never": Page(hang=True),
            "/trickle": Page(_trickle, pause=0.2),
            "/slow-picture": Page(slow_picture),
            "/huge": Page(_huge, length=50 * 2**20),
            "/loop": Page(status=302, headers={"Location": "/loop"}),
            "/pdf": Page(b"%PDF-1.4", headers={"Content-Type": "application/pdf"}),
        }
    ) as server:
        cases = [
            (f"a good page, 3000x2000 photo ({len(photo):,} bytes)", server.url + "/good"),
            ("never answers", server.url + "/never"),
            ("trickles a byte every 0.2 s", server.url + "/trickle"),
            ("page fine, picture never answers", server.url + "/slow-picture"),
            ("50 MB page, no title in its first MB", server.url + "/huge"),
            ("redirect loop", server.url + "/loop"),
            ("not HTML (a PDF)", server.url + "/pdf"),
            ("connection refused", f"http://127.0.0.1:{closed_port}/"),
        ]
        print(f"{'page':<45} {'seconds':>8}  result")
        for name, url in cases:
            started = time.monotonic()
            found = fetch_card(url)
            took = time.monotonic() - started
            what = "card" + (" with thumbnail" if found.card and found.card.thumb else "") if found.card else "no card"
            print(f"{name:<45} {took:8.2f}  {what}: {found.reason or 'ok'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
