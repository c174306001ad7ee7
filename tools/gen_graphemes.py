"""Writes twitterbot/networks/grapheme_table.py from the Unicode Character Database.

The grapheme count (twitterbot/networks/graphemes.py) needs three properties of every code point:
Grapheme_Cluster_Break, Extended_Pictographic and Indic_Conjunct_Break. This script reads them
from the UCD's own files and writes them as one table of code point ranges, so the table is
never edited by hand and a new Unicode version is one run:

    python tools/gen_graphemes.py tests/fixtures/unicode

The folder holds GraphemeBreakProperty.txt, emoji-data.txt and DerivedCoreProperties.txt, flat
(as tests/fixtures/unicode keeps them) or laid out as Debian's unicode-data package does
(/usr/share/unicode: auxiliary/, emoji/). Pick the version Bluesky's server counts with (its
lexicon validation uses unicode-segmenter; 0.14 is Unicode 16.0.0), never a newer one: a
character a newer version joins to the one before would count one less here than there. Update
tests/fixtures/unicode/GraphemeBreakTest.txt from the same version; tests/networks/test_graphemes.py
checks the table is what this script makes of the fixtures.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

# The classes graphemes.py names; the order is the table's numbering (graphemes.py checks it).
GCB_CLASSES = (
    "Other",
    "CR",
    "LF",
    "Control",
    "Extend",
    "ZWJ",
    "Regional_Indicator",
    "Prepend",
    "SpacingMark",
    "L",
    "V",
    "T",
    "LV",
    "LVT",
    "Extended_Pictographic",
)
INCB_VALUES = ("None", "Consonant", "Extend", "Linker")
INCB_SHIFT = 4  # a range's value: its class | its InCB value << INCB_SHIFT
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)  # LV and LVT: computed by graphemes.py, left out here

_LINE = re.compile(r"^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*([\w ]+?)\s*(?:;\s*(\w+)\s*)?(?:#.*)?$")
_OUT = Path(__file__).resolve().parents[1] / "twitterbot" / "networks" / "grapheme_table.py"


def _find(folder: Path, name: str) -> Path:
    for candidate in (folder / name, folder / "auxiliary" / name, folder / "emoji" / name):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"{name} is not in {folder} (nor its auxiliary/ or emoji/ folder)")


def _entries(path: Path) -> Iterator[Tuple[int, int, str, str]]:
    """(first, last, property, value) for each data line of a UCD file."""
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if match:
            first, last, prop, value = match.groups()
            yield int(first, 16), int(last or first, 16), prop, value or ""


def _version(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.search(r"-(\d+\.\d+\.\d+)\.txt", first)
    if not match:
        raise SystemExit(f"{path}'s first line names no version: {first!r}")
    return match.group(1)


def properties(folder: Path) -> Tuple[str, Dict[int, int]]:
    """The Unicode version, and each code point's table value (class | InCB << INCB_SHIFT)."""
    breaks = _find(folder, "GraphemeBreakProperty.txt")
    values: Dict[int, int] = {}
    for first, last, prop, _ in _entries(breaks):
        for cp in range(first, last + 1):
            if cp not in HANGUL_SYLLABLES:
                values[cp] = GCB_CLASSES.index(prop)
    for first, last, prop, _ in _entries(_find(folder, "emoji-data.txt")):
        if prop != "Extended_Pictographic":
            continue
        for cp in range(first, last + 1):
            if values.get(cp, 0) != 0:
                raise SystemExit(f"U+{cp:04X} is Extended_Pictographic and {GCB_CLASSES[values[cp]]}: not handled")
            values[cp] = GCB_CLASSES.index("Extended_Pictographic")
    for first, last, prop, value in _entries(_find(folder, "DerivedCoreProperties.txt")):
        if prop == "InCB":
            for cp in range(first, last + 1):
                values[cp] = values.get(cp, 0) | INCB_VALUES.index(value) << INCB_SHIFT
    return _version(breaks), values


def ranges(values: Dict[int, int]) -> List[Tuple[int, int, int]]:
    """The code points with a value other than 0 as (first, last, value) runs, in order."""
    runs: List[Tuple[int, int, int]] = []
    for cp in sorted(values):
        if values[cp] == 0:
            continue
        if runs and runs[-1][1] == cp - 1 and runs[-1][2] == values[cp]:
            runs[-1] = (runs[-1][0], cp, values[cp])
        else:
            runs.append((cp, cp, values[cp]))
    return runs


def module(version: str, runs: List[Tuple[int, int, int]]) -> str:
    """The text of grapheme_table.py."""
    rows = [", ".join(f"0x{a:X}, 0x{b:X}, {v}" for a, b, v in runs[i : i + 6]) + "," for i in range(0, len(runs), 6)]
    body = "\n".join(f"    {row}" for row in rows)
    return f'''"""The Unicode {version} properties the grapheme count needs (generated: do not edit).

Made by tools/gen_graphemes.py from the Unicode Character Database {version}
(auxiliary/GraphemeBreakProperty.txt, emoji/emoji-data.txt's Extended_Pictographic and
DerivedCoreProperties.txt's Indic_Conjunct_Break). Each range is (first code point, last code
point, value): the value is a class of networks/graphemes.py (Grapheme_Cluster_Break, or
Extended_Pictographic) with the Indic_Conjunct_Break value shifted left by {INCB_SHIFT}. Code points in
no range are Other with no InCB value; the Hangul syllables AC00..D7A3 are left out, computed.
"""

# fmt: off
UNICODE_VERSION = "{version}"
CLASSES = {_tuple(GCB_CLASSES)}
INCB_VALUES = {_tuple(INCB_VALUES)}
INCB_SHIFT = {INCB_SHIFT}

RANGES = (
{body}
)
# fmt: on
'''


def _tuple(names: Tuple[str, ...]) -> str:
    return "(" + ", ".join(f'"{name}"' for name in names) + ")"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the folder holding the UCD files")
    parser.add_argument("--output", type=Path, default=_OUT, help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    version, values = properties(args.folder)
    args.output.write_text(module(version, ranges(values)), encoding="utf-8")
    print(f"{args.output}: Unicode {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
