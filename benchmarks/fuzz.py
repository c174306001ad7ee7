"""A fuzz run a person can repeat: generated tweets files and env files through the real CLI entry.

    .venv/bin/python benchmarks/fuzz.py --count 10000                 # 10,000 of each kind
    .venv/bin/python benchmarks/fuzz.py --kind env --count 500 --seed 7
    .venv/bin/python benchmarks/fuzz.py --kind tweets --case 4711     # one case again, verbosely
    .venv/bin/python benchmarks/fuzz.py --kind pictures --count 5000  # damaged PNG, JPEG, GIF, WebP
    .venv/bin/python benchmarks/fuzz.py --kind grammars --count 2000  # Tracery grammars, some hostile
    .venv/bin/python benchmarks/fuzz.py --kind monitors --count 500   # hostile HEALTHCHECK_URL, NOTIFY_URL
    .venv/bin/python benchmarks/fuzz.py --kind answers --count 2000   # hostile answers to a look-up
    .venv/bin/python benchmarks/fuzz.py --kind tags --count 500       # CBDQ/CBTS/BBDQ tags, hostile SVGs

Every case is made by `random.Random(f"{seed}/{kind}/{number}")`, so a case number and the seed
say exactly which file it was: a failure is repeated by `--case`. Each case is a fresh bot home
in a temporary folder (never a path outside it: the fuzzed path settings are plain names), run
in-process through `twitterbot.cli.main` as bot.py runs it:

- tweets files (encodings and byte-order marks, NULs and control characters, invalid UTF-8,
  CRLF and lone CR, huge lines, many lines, Markdown image syntax `![alt](path)`, URLs, emoji,
  escapes): a real run posting to the X emulator (tests/x_emulator.py, on 127.0.0.1), then
  `check`, then `--dry-run --force --json`;
- env files (known settings with near-valid and hostile values, unknown names, quotes left open,
  `export`, interpolation, BOMs, NULs, CRLF, invalid UTF-8, values that look like keys): `check`,
  `--dry-run --force`, `history`;
- pictures (a small PNG, JPEG, animated GIF or WebP, damaged: bytes flipped, cut short, inserted
  or repeated, sizes in the header made huge): prepared for each network's limits, where anything
  but a picture or a `PictureError` is the finding, and every tenth case named by a tweets file
  in `--dry-run --force` and `check`, which must exit 0 or 65 (78 for check, whose keys are unset);
- monitors (HEALTHCHECK_URL and NOTIFY_URL on a hostile server on 127.0.0.1, tests/monitor_server.py,
  their URLs with and without a login): each request answered with a 500, a broken status line,
  101 headers, a 70 KB header, a closed connection, a redirect to ftp:, file:, another port, in a
  loop ...: a real run whose post goes through or whose keys are refused, then `check`. The run
  must keep the exit status its post gives, whatever the monitor does, and no output may hold
  the login's password, its user-info or the check's key, in any encoding;
- answers to a look-up of an uncertain post (X's timeline, Mastodon's statuses or the account,
  Bluesky's listRecords or getRecord: the real shape mutated, a node replaced by another type,
  keys dropped, nesting thousands deep, not JSON at all, error statuses, now and then past the 8 MB
  any answer is read to), from each network's emulator on 127.0.0.1 to its own poster's
  `look_up`, which may only answer (never "found": the post is not in the answer) or raise a
  `PostError`; every fifth X case through a real run that has that post uncertain, which must
  exit 0 and leave the post uncertain; and, as often, to each network's reader (what a round of
  replies reads with) reading the account's mentions (X's mentions, Mastodon's and Bluesky's
  notifications, Bluesky's with a saved session),
  which may only give well-formed mentions or raise a `PostError`;
- Tracery grammars (`bot.json`: rules of words, tags, modifiers and actions, broken syntax, and
  now and then an attack: a rule doubled by actions, chained `.replace`, JSON or brackets nested
  100,000 deep, a lone surrogate, 3,000 rules, a long text used thousands of times, 6,400 tags or
  16,000 actions a draw): a real run, `check` and `--dry-run --force --json` as for tweets files,
  then the status page (`/` and `/status.json`, which must answer 200); a command that takes more
  than `SLOW` seconds is a finding;
- the services' tags (grammars in the style of CBDQ, CBTS and BBDQ: `{svg}` with an XML
  declaration, escaped CSS braces and alt text, `{img}` at addresses of this machine or a private
  network, warnings, visibilities, labels, languages, BBDQ's codes and `{item}` inside alt text,
  mistakes, and now and then a hostile SVG: an external entity, a billion laughs, a picture named
  by a file, a size past the budget, a `<use>` of a file): a real run, `check` and a dry run, where
  a tag left in the post's text, a hostile SVG not refused, or a command over `SLOW` seconds is a
  finding.

Each run must end with a documented exit code other than 1 (1 is a bug), print no traceback, and a
run that refuses the tweets file (65) or the settings (78, 64) must leave no run, attempt or job
in the history. The figures (cases, time, exit codes per command) are printed at the end; a
failing case's files and output go to --failures (default: a temporary folder it names).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import functools
import io
import json
import logging
import os
import random
import re
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from twitterbot.cli import built_in, main  # noqa: E402
from twitterbot.errors import ExitStatus  # noqa: E402

if TYPE_CHECKING:
    from monitor_server import MonitorServer  # tests/monitor_server.py
    from x_emulator import XEmulator

SETTINGS = built_in().settings

DOCUMENTED = {int(status) for status in ExitStatus} - {int(ExitStatus.UNEXPECTED)} | {130}
REFUSED = {int(ExitStatus.DATA_ERROR), int(ExitStatus.CONFIG_ERROR), int(ExitStatus.USAGE)}
KINDS = ("tweets", "env", "pictures", "monitors", "answers", "grammars", "calendar", "tags")
SLOW = 30.0  # seconds: a grammar case's command that takes longer is a finding (each bound ends in well under one)

# -- tweets files ------------------------------------------------------------------------------

_WORDS = [
    "hello",
    "world",
    "Raspberry",
    "Pi",
    "bot",
    "posting",
    "#hashtag",
    "@mention",
    "café",
    "naïve",
    "日本語のテキスト",
    "中文",
    "한국어",
    "العربية",
    "עברית",
    "Ελληνικά",
    "русский",
    "🙂",
    "👩‍👩‍👧‍👦",
    "🏳️‍🌈",
    "e\u0301",
    "x" * 40,
    "https://example.com/a?b=c",
    "example.com",
    "bot.py",
    "www.example.org",
    "$TSLA",
    "100%",
    "{name}",
    "{{",
    "}}",
    "\\n",
    "\\#tag",
    "\\\\",
    "\\",
    "\t",
    "  ",
    "&amp;",
    "<b>",
    "'",
    '"',
    "`code`",
    "*bold*",
    "_it_",
    "~~s~~",
    "[link](https://x.org)",
]
# Characters X refuses or that confuse parsers (direction overrides, BOMs, separators): now and then.
_ODD = ["\u200d", "\u200b", "\ufeff", "\u2028", "\u2029", "\u202e", "\ufffe", "\U000e0001", "\ud800"]
_IMAGES = [
    "![a photo](photo.jpg)",
    "![](pic.png)",
    "![alt text with spaces](images/my pic.jpeg)",
    "![alt](https://example.com/i.png)",
    "![alt](../outside.png)",
    "![alt](/etc/passwd)",
    "![broken](x.png",
    "![[nested]](a.png)",
    "![alt](a.png)![b](b.png)",
    "!\\[not an image](a.png)",
    "![🙂](emoji.gif)",
    "![alt](" + "p" * 300 + ".png)",
    "![alt]()",
    '![alt](a.png "title")',
    "text before ![alt](a.png) text after",
]
_CONTROLS = [chr(code) for code in range(0, 32)] + ["\x7f"] + [chr(code) for code in range(0x80, 0xA0)]
_INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc3\x28", b"\xc0\xaf", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"]
_ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252", "shift_jis"]
_ENDINGS = ["\n", "\r\n", "\r", "\n\n", "\u2028", "\x0b", "\x0c", "\x85"]


def tweet_line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.06:
        return ""
    if roll < 0.10:
        return "# a comment " + rng.choice(_WORDS)
    if roll < 0.22:
        return rng.choice(_IMAGES) + (" " + rng.choice(_WORDS) if rng.random() < 0.5 else "")
    if roll < 0.26:  # a huge line
        return rng.choice(_WORDS) * rng.choice([10, 100, 1000, 20000])
    length = rng.randint(1, 12) if rng.random() < 0.9 else rng.randint(13, 60)
    words = [rng.choice(_WORDS) if rng.random() < 0.995 else rng.choice(_ODD) for _ in range(length)]
    for _ in range(rng.choice([0, 0, 0, 0, 0, 0, 0, 1, 3])):
        words.insert(rng.randint(0, len(words)), rng.choice(_CONTROLS))
    if rng.random() < 0.05:
        words.append(chr(rng.randint(0x20, 0x10FFFF)).encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    return " ".join(words)


def tweets_file(rng: random.Random) -> bytes:
    """The bytes of a tweets file someone might save (or a cat might walk over)."""
    count = rng.choice([0, 1, 1, 2, 3, 5, 10, 40, 300] if rng.random() < 0.99 else [3000])
    lines = [tweet_line(rng) for _ in range(count)]
    if lines and rng.random() < 0.15:
        lines += rng.sample(lines, min(len(lines), 3))  # repeats
    ending = rng.choice(_ENDINGS) if rng.random() < 0.3 else "\n"
    text = ending.join(lines) + (ending if rng.random() < 0.7 else "")
    encoding = rng.choice(_ENCODINGS) if rng.random() < 0.15 else "utf-8"
    data = (
        text.encode(encoding, "replace")
        if encoding not in ("utf-8", "utf-8-sig")
        else text.encode(encoding, "surrogatepass")
    )
    if rng.random() < 0.08:
        data = codecs.BOM_UTF8 + data
    for _ in range(rng.choice([1, 2]) if rng.random() < 0.12 else 0):  # invalid UTF-8 or a NUL somewhere
        at = rng.randint(0, len(data))
        data = data[:at] + rng.choice([*_INVALID_UTF8, b"\x00"]) + data[at:]
    if rng.random() < 0.03:  # cut in the middle of a character
        data = data[: rng.randint(0, len(data))]
    return data


# -- env files ---------------------------------------------------------------------------------

_PATH_KINDS = ("path", "optional_path")
_VALUES = [
    "",
    " ",
    "0",
    "1",
    "-1",
    "4",
    "99999999999999999999",
    "1e9",
    "nan",
    "inf",
    "yes",
    "no",
    "maybe",
    "6h",
    "3h30m",
    "0.5",
    "10m",
    "366d",
    "367d",
    "1.5d",
    "x",
    "x,mastodon,bluesky",
    "bluesky",
    "fediverse",
    "DEBUG",
    "info",
    "Europe/London",
    "Mars/Olympus",
    "../../etc",
    "https://example.com",
    "http://[::1",
    "ftp://x",
    "00:00,06:00",
    "25:00",
    "12:60",
    "{name} {message}",
    "{",
    "}",
    "{0}",
    "{name!r:>{width}}",
    "alice.bsky.social",
    "@bob",
    "abcd-efgh-ijkl-mnop",
    "AbCdEf0123456789GhIjKlMnOpQrStUv",
    "12345-AbCdEfGhIjKlMnOp",
    "public",
    "auto",
    "numpy",
    "c",
    "\x00",
    "\u00b2",
    "\u0663",
    "\ufeff",
    "日本",
    "🙂",
    "'quoted'",
    '"double"',
    "'open",
    '"open',
    "a b c",
    "${HOME}",
    "$HOME",
    "\\n",
    "x" * 5000,
    "# not a comment",
    "value # comment",
]
_SAFE_NAMES = ["tweets.txt", "state", "other.txt", "log.txt", "state2", "sub/dir", "a b.txt", "日本.txt", "-", "."]


def env_line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(["", "# a comment", "   ", "#", "export"])
    if roll < 0.16:  # not a setting
        return rng.choice(
            [
                "TWITTER_KEY=abc",
                "tweet_one_in=4",
                "=value",
                "NO_EQUALS",
                "FOO BAR=1",
                "ÄÖÜ=1",
                "X==1",
                "export=1",
                "TWEET_ONE_IN",
                "TWEET ONE IN=2",
                "\x00=\x00",
                "[section]",
                "key: value",
                "TWEETS_FILE:=x",
            ]
        )
    name = rng.choice(list(SETTINGS))
    if rng.random() < 0.5 and SETTINGS[name].kind.name not in _PATH_KINDS:
        return f"{name}={SETTINGS[name].default}"  # a valid line, among the others
    if SETTINGS[name].kind.name in _PATH_KINDS:
        value = rng.choice(_SAFE_NAMES)  # never a path outside the case's folder
    else:
        value = rng.choice(_VALUES)
        if rng.random() < 0.3:  # near a valid value: one character changed
            at = rng.randint(0, len(value))
            value = value[:at] + rng.choice(_CONTROLS + ["'", '"', "\\", "=", "#", " ", "é"]) + value[at + 1 :]
    if SETTINGS[name].kind.name in _PATH_KINDS and any(mark in value for mark in "/\\~"):
        value = "state"
    quote = rng.choice(["", "", "", "'", '"'])
    close = quote if rng.random() < 0.9 else ""
    prefix = "export " if rng.random() < 0.1 else ""
    space = rng.choice(["", "", " "])
    return f"{prefix}{name}{space}={space}{quote}{value}{close}"


def env_file(rng: random.Random) -> bytes:
    lines = [env_line(rng) for _ in range(rng.choice([0, 1, 2, 4, 8, 20]))]
    ending = rng.choice(_ENDINGS[:3]) if rng.random() < 0.3 else "\n"
    data = ending.join(lines).encode("utf-8", "surrogatepass") + ending.encode()
    if rng.random() < 0.1:
        data = codecs.BOM_UTF8 + data
    if rng.random() < 0.05:
        data = "\n".join(lines).encode("utf-16")
    for _ in range(rng.choice([0, 0, 0, 0, 1])):
        at = rng.randint(0, len(data))
        data = data[:at] + rng.choice([*_INVALID_UTF8, b"\x00"]) + data[at:]
    return data


# -- pictures ------------------------------------------------------------------------------------

_PICTURES: Dict[str, bytes] = {}


def base_pictures() -> Dict[str, bytes]:
    """The undamaged pictures the cases start from, made once: small, with metadata to trip on."""
    if _PICTURES:
        return _PICTURES
    from PIL import Image, ImageDraw, PngImagePlugin

    picture = Image.new("RGBA", (64, 48), (30, 120, 200, 255))
    ImageDraw.Draw(picture).ellipse((10, 8, 50, 40), fill=(220, 40, 40, 128))
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "a garden " * 40, zip=True)
    exif = Image.Exif()
    exif[0x0112] = 6
    made: Dict[str, io.BytesIO] = {name: io.BytesIO() for name in ("png", "jpg", "gif", "webp")}
    picture.save(made["png"], "PNG", pnginfo=info, exif=exif.tobytes())
    picture.convert("RGB").save(made["jpg"], "JPEG", quality=80, exif=exif.tobytes(), icc_profile=b"\0" * 200)
    frames = [picture.convert("RGB").rotate(angle) for angle in (0, 30, 60)]
    frames[0].save(
        made["gif"], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0, comment=b"a comment"
    )
    picture.save(made["webp"], "WEBP", quality=70, exif=exif.tobytes())
    _PICTURES.update({name: buffer.getvalue() for name, buffer in made.items()})
    return _PICTURES


def damaged_picture(rng: random.Random) -> Tuple[str, bytes]:
    """One of the base pictures with one to three kinds of damage; its extension and bytes."""
    extension, data = rng.choice(sorted(base_pictures().items()))
    damaged = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        damage = rng.choice(("flip", "flip", "cut", "insert", "repeat", "huge"))
        at = rng.randrange(6, max(7, len(damaged)))
        if damage == "flip":
            for _ in range(rng.randint(1, 12)):
                damaged[rng.randrange(6, len(damaged))] = rng.randrange(256)
        elif damage == "cut":
            del damaged[at:]
        elif damage == "insert":
            damaged[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        elif damage == "repeat":
            end = min(len(damaged), at + rng.randint(1, 400))
            damaged[at:at] = damaged[at:end] * rng.randint(1, 20)
        else:
            damaged[:] = _huge(bytes(damaged), extension, rng)
    return extension, bytes(damaged)


def _huge(data: bytes, extension: str, rng: random.Random) -> bytes:
    """The picture's header made to announce a size up to 65,535 pixels a side (a bomb's header)."""
    side = rng.choice((4097, 12000, 30000, 65535)).to_bytes(4, "big")
    spots = {"png": [(16, 4), (20, 4)], "gif": [(6, 2), (8, 2)], "jpg": [], "webp": [(26, 2), (28, 2)]}[extension]
    start = data.find(b"\xff\xc0")
    if extension == "jpg" and start > 0:
        spots = [(start + 5, 2), (start + 7, 2)]
    out = bytearray(data)
    for offset, width in spots:
        if offset + width <= len(out):
            value = side[-width:] if extension in ("png", "jpg") else side[-width:][::-1]
            out[offset : offset + width] = value
    return bytes(out)


def _unsafe_path(data: bytes) -> bool:
    """A path setting that escaped the generator's care would write outside the case's folder."""
    for line in data.replace(b"\r", b"\n").split(b"\n"):
        name = line.split(b"=", 1)[0].strip().removeprefix(b"export").strip()
        if name in (b"TWEETS_FILE", b"BOT_STATE_DIR", b"LOG_FILE") and any(
            mark in line for mark in (b"/", b"~", b"..", b"$")
        ):
            return True
    return False


# -- Tracery grammars ---------------------------------------------------------------------------

_MODIFIERS = ["", "", "", "", "", ".s", ".a", ".ed", ".capitalize", ".capitalizeAll", ".replace(o,0)", ".shout", "."]
_PLAIN_WORDS = [word for word in _WORDS if not any(mark in word for mark in "#[]\\")]
_SYNTAX = ["#", "[", "]", "##", "[]", "\\", "\\#", "[x:POP]", "#[x:y]#", "![a #r0#](r0.png)", "{cw: hi}", ":", ","]


def _rule_text(rng: random.Random, names: Sequence[str], careful: bool) -> str:
    """One text of a rule: words, tags with modifiers, actions, and (unless `careful`) mistakes:
    stray bits of Tracery syntax, a modifier or a rule that is not there."""
    parts = []
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.4:  # some words hold Tracery's own syntax (#hashtag, [link](...), \\)
            parts.append(rng.choice(_PLAIN_WORDS if careful else _WORDS))
        elif roll < 0.7:
            name = "missing" if not careful and rng.random() < 0.05 else rng.choice(names)
            parts.append("#" + name + rng.choice(_MODIFIERS[: -2 if careful else None]) + "#")
        elif roll < 0.85:
            parts.append(f"[{rng.choice(names)}:{rng.choice([*_PLAIN_WORDS, '#r0#', 'POP', 'a,b'])}]")
        elif not careful:
            parts.append(rng.choice(_SYNTAX))
    return " ".join(parts)


def _attack(rng: random.Random) -> Tuple[str, Optional[str]]:
    """A hostile rule, as (its text) or as (None, the whole file's JSON text)."""
    kind = rng.choice(["double", "replace", "json", "surrogate", "brackets", "rules", "long", "self", "wide", "steps"])
    times = rng.choice([10, 30, 40])
    if kind == "double":  # [x:#x##x#] repeated: x doubles each time
        return "[x:ab]" + "[x:#x##x#]" * times + "#x#", None
    if kind == "replace":  # each .replace lengthens the text tenfold
        return "#r0" + ".replace(a,aaaaaaaaaa)" * rng.randint(2, 12) + "#", None
    if kind == "json":  # lists in lists, beyond Python's stack
        depth = rng.choice([50, 1_000, 100_000])
        return "", '{"origin": ' + "[" * depth + '"a"' + "]" * depth + "}"
    if kind == "surrogate":  # half of a UTF-16 pair, as JSON can write it
        return "", '{"origin": ["a \\ud800 b", "#r0#"], "r0": ["\\udfff"]}'
    if kind == "brackets":
        depth = rng.choice([30, 100, 100_000])
        return rng.choice(["[", "[#", "#[x:"]) * depth + "y" + rng.choice(["]", "#]", "]#"]) * depth, None
    if kind == "rules":  # many rules: reading them once took a time in the square of their number
        rules = {"origin": ["#r0# #r2999#"], **{f"r{i}": [f"text {i} #r{i + 1}#", "end"] for i in range(3000)}}
        return "", json.dumps(rules, indent=rng.choice([None, 1]))
    if kind == "long":  # a long text used thousands of times
        return "#r0#" * 4000, None
    if kind == "wide":  # 6,400 tags a draw: every draw is dropped, and there were 200 of them
        return "", json.dumps({"origin": ["#a#" * 80], "a": ["#b#" * 80], "b": ["x"]})
    if kind == "steps":  # sixteen thousand actions in a text
        return "", json.dumps({"origin": ["#a#" * 9], "a": ["[b:c][b:POP]" * 8000]})
    return "#origin##origin#", None  # a rule that uses itself twice, with nothing else


def grammar_file(rng: random.Random) -> bytes:
    """The bytes of a Tracery grammar someone might save, or someone might send to break the bot."""
    names = [f"r{index}" for index in range(rng.choice([1, 2, 5, 20]))]
    careful = rng.random() < 0.5  # half of them free of mistakes, so that their runs post
    rules: Dict[str, object] = {"origin": [_rule_text(rng, names, careful) for _ in range(rng.randint(1, 4))]}
    for name in names:
        texts = [_rule_text(rng, names, careful) for _ in range(rng.choice([1, 2, 5] if careful else [0, 1, 2, 5]))]
        rules[name] = texts[0] if len(texts) == 1 and rng.random() < 0.3 else texts
    if not careful and rng.random() < 0.1:
        del rules["origin"]
    text = None
    if rng.random() < 0.35:
        rule, text = _attack(rng)
        if text is None:
            rules["origin"] = [rule]
            rules.setdefault("r0", ["a" * rng.choice([1, 100, 1000])])
    if text is None:
        text = json.dumps(rules, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1, 2]))
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        data = data[: rng.randint(0, len(data))]  # cut short
    if rng.random() < 0.05:
        data = codecs.BOM_UTF8 + data
    return data


# -- running a case ------------------------------------------------------------------------------


@dataclass
class Outcome:
    command: str
    status: int
    output: str
    seconds: float = 0.0


@dataclass
class Failure:
    kind: str
    number: int
    why: str
    outcomes: List[Outcome] = field(default_factory=list)


def run_cli(args: Sequence[str], environ: Dict[str, str], project: Path) -> Outcome:
    """bot.py's main, in-process, with its output captured."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    saved_hook = threading.excepthook  # a thread's exception is printed to stderr, whoever ran it (pytest too)
    threading.excepthook = lambda hook: traceback.print_exception(
        hook.exc_type, hook.exc_value, hook.exc_traceback, file=err
    )
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args), environ=environ, project_dir=project)
        except SystemExit as exc:  # main never exits itself: a failure of the driver's own
            status = exc.code if isinstance(exc.code, int) else 1
            err.write(f"Traceback (most recent call last): SystemExit({exc.code!r}) escaped main\n")
        except BaseException as exc:  # noqa: BLE001 - anything escaping main is the finding
            status = 1
            err.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        finally:
            threading.excepthook = saved_hook
    logging.getLogger().handlers.clear()  # main's handler wrote to the captured stream
    return Outcome(" ".join(args), status, out.getvalue() + err.getvalue(), time.monotonic() - started)


def history_rows(state: Path) -> int:
    """Runs, attempts and jobs the history holds (0 without one)."""
    path = state / "history.sqlite3"
    if not path.exists():
        return 0
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        total = 0
        for table in ("runs", "attempts", "jobs"):
            with contextlib.suppress(sqlite3.Error):  # a table this version does not have
                total += connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        return total
    finally:
        connection.close()


def check(outcome: Outcome) -> Optional[str]:
    if outcome.status == 1:
        return f"`{outcome.command}` exited 1 (a bug)"
    if outcome.status not in DOCUMENTED:
        return f"`{outcome.command}` exited {outcome.status}, which is not a documented exit code"
    if "Traceback (most recent call last)" in outcome.output:
        return f"`{outcome.command}` printed a traceback"
    return None


def tweets_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    data = tweets_file(rng)
    (home / "tweets.txt").write_bytes(data)
    settings = dict(emulator_env, TWEET_ONE_IN="1", X_API_RETRIES="0", X_API_TIMEOUT="5", MIN_POST_GAP="0")
    (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    (home / ".env").chmod(0o600)  # it holds keys: check would (rightly) say so otherwise
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    outcomes = []
    real = run_cli(["--force", "--seed", "1"], environ, home)
    outcomes.append(real)
    if real.status in REFUSED and history_rows(home / "state"):
        return outcomes, f"the run refused the file ({real.status}) but wrote to the history"
    outcomes.append(run_cli(["check"], environ, home))
    outcomes.append(run_cli(["--dry-run", "--force", "--json", "--seed", "2"], environ, home))
    return outcomes, None


def env_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    data = env_file(rng)
    if _unsafe_path(data):
        return [], None  # cannot happen by construction; never run it
    (home / ".env").write_bytes(data)
    (home / "tweets.txt").write_text("A post\nAnother post\n")
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    outcomes = []
    dry = run_cli(["--dry-run", "--force"], environ, home)
    outcomes.append(dry)
    if dry.status in REFUSED and history_rows(home / "state"):
        return outcomes, f"the run refused the settings ({dry.status}) but wrote to the history"
    outcomes.append(run_cli(["check"], environ, home))
    outcomes.append(run_cli(["history", "-n", "3"], environ, home))
    return outcomes, None


def pictures_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    """A damaged picture prepared for each network's limits; every tenth also through the CLI."""
    from twitterbot.pictures.prepare import PictureError, prepare

    extension, data = damaged_picture(rng)
    outcomes: List[Outcome] = []
    for network in built_in().names():
        try:
            prepared = prepare(
                io.BytesIO(data), "A damaged picture", built_in().network(network).image_limits(), name="picture"
            )
        except PictureError as exc:
            outcomes.append(Outcome(f"prepare:{network}", int(exc.exit_status), str(exc)))
        except BaseException as exc:  # noqa: BLE001 - anything else escaping prepare is the finding
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            return outcomes + [
                Outcome(f"prepare:{network}", 1, trace)
            ], f"prepare for {network} raised {type(exc).__name__}"
        else:
            outcomes.append(Outcome(f"prepare:{network}", 0, prepared.describe()))
    if rng.randrange(10) == 0:
        (home / f"picture.{extension}").write_bytes(data)
        (home / "tweets.txt").write_text(f"A picture ![A damaged picture](picture.{extension})\n")
        (home / ".env").write_text("POST_TO=x,mastodon,bluesky\nBOT_STATE_DIR=state\n")
        environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
        dry = run_cli(["--dry-run", "--force"], environ, home)
        outcomes.append(dry)
        outcomes.append(run_cli(["check"], environ, home))
        if dry.status not in (0, 65):
            return outcomes, f"the dry run of a damaged picture exited {dry.status}"
    return outcomes, None


# -- monitors --------------------------------------------------------------------------------------

_PASSWORD = "Fz/p@ss:w0rd-Q7"
_CHECK = "3c9e1f0a-7b42-4d8e-9a61-5f2b8c0d7e14"


def _monitor_answer(rng: random.Random) -> Tuple[str, object]:
    """What the monitor answers one request: a name (for the case's description) and the answer."""
    from monitor_server import BROKEN, FAILED, OK, redirect

    roll = rng.random()
    if roll < 0.3:
        return "200", OK
    if roll < 0.4:
        return "500", FAILED
    if roll < 0.7:
        name = rng.choice(sorted(BROKEN))
        return name, BROKEN[name]
    status = rng.choice([301, 302, 303, 307, 308])
    where = rng.choice(
        [
            "ftp://127.0.0.1/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://[::1",
            "/again",
            "",
            "http://127.0.0.1:9/closed",
            "http://127.0.0.2:9/elsewhere",
            "http://mallory:stolen@127.0.0.1:9/",
            "https://127.0.0.1:9/tls",
            "/" + "x" * 5000,
            "//\x00/",
        ]
    )
    return f"{status} to {where[:40]!r}", redirect(status, where)


def monitor_plan(rng: random.Random) -> Tuple[str, str, List[Tuple[str, object]], bool]:
    """One case: the login part of the URLs (may be empty), a description, the answers in order
    (the last again for every later request), and whether X refuses the keys."""
    login = rng.choice(["", f"alice:{quote(_PASSWORD, safe='')}@", f":{quote(_PASSWORD, safe='')}@", "bob@"])
    answers = [_monitor_answer(rng) for _ in range(rng.choice([1, 2, 3, 4]))]
    refused = rng.random() < 0.5
    described = f"login {login!r}, answers {[name for name, _ in answers]}, X {'refuses' if refused else 'posts'}"
    return login, described, answers, refused


def _secret_forms() -> List[str]:
    import base64

    forms = []
    for secret in (_PASSWORD, f"alice:{_PASSWORD}", _CHECK):
        forms += [secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode().rstrip("=")]
    return forms


def monitors_case(
    rng: random.Random, home: Path, emulator_env: Dict[str, str], *, emulator: XEmulator, monitor: MonitorServer
) -> Tuple[List[Outcome], Optional[str]]:
    login, described, answers, refused = monitor_plan(rng)
    monitor.heard.clear()
    monitor.answers = [answer for _, answer in answers]
    base = monitor.url.replace("://", f"://{login}")
    (home / "tweets.txt").write_text("A post\nAnother post\n")
    settings = dict(
        emulator_env,
        TWEET_ONE_IN="1",
        X_API_RETRIES="0",
        X_API_TIMEOUT="5",
        MIN_POST_GAP="0",
        HEALTHCHECK_URL=f"{base}/ping/{_CHECK}",
        NOTIFY_URL=f"{base}/topic-{_CHECK[:8]}",
    )
    (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    (home / ".env").chmod(0o600)
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    if refused:
        emulator.fail_next("unauthorized")
    run = run_cli(["--force", "--seed", "1"], environ, home)
    run = Outcome(f"{run.command} ({described})", run.status, run.output)
    outcomes = [run, run_cli(["check"], environ, home)]
    expected = int(ExitStatus.PERMISSION_DENIED) if refused else 0  # the post's, whatever the monitor does
    if run.status != expected:
        return outcomes, f"the run exited {run.status}, not {expected}: the monitor changed it"
    for outcome in outcomes:
        leaked = next((form for form in _secret_forms() if form in outcome.output), None)
        if leaked:
            return outcomes, f"`{outcome.command}` printed a secret part of a monitor URL ({leaked[:4]}...)"
    return outcomes, None


# -- answers to a look-up --------------------------------------------------------------------------

_JSON_VALUES: List[object] = [None, True, 0, -1, 2**70, 1.5e308, "", "x", "12345", "😀" * 3, [], {}, [None], {"": None}]


def hostile_value(rng: random.Random, depth: int = 0) -> object:
    """Any JSON value, now and then a deep or wide one."""
    roll = rng.random()
    if roll < 0.5 or depth > 3:
        return rng.choice(_JSON_VALUES)
    if roll < 0.7:
        return [hostile_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if roll < 0.9:
        return {rng.choice(["id", "text", "data", "uri", "value", "x"]): hostile_value(rng, depth + 1)}
    return "x" * rng.randrange(100_000)


def _mutate(value: object, rng: random.Random, words: str) -> object:
    """`value` with one node somewhere replaced, dropped, repeated or given the post's words."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(sorted(value))
        changed = dict(value)
        roll = rng.random()
        if roll < 0.25:
            del changed[key]
        elif roll < 0.4 and isinstance(value[key], str):
            changed[key] = words + rng.choice(["", "!", " https://t.co/abcdefghij", " https://example.com/other"])
        elif roll < 0.7:
            changed[key] = hostile_value(rng)
        else:
            changed[key] = _mutate(value[key], rng, words)
        return changed
    if isinstance(value, list) and value and rng.random() < 0.7:
        changed_list = list(value)
        index = rng.randrange(len(value))
        roll = rng.random()
        if roll < 0.2:
            changed_list.append(changed_list[index])
        elif roll < 0.4:
            changed_list[index] = hostile_value(rng)
        else:
            changed_list[index] = _mutate(value[index], rng, words)
        return changed_list
    return hostile_value(rng)


def _real_answer(network: str, route: str, number: int) -> object:
    """A well-formed answer of the kind the network gives, holding other posts than the one sought."""
    made = "2030-01-01T00:00:00.000Z"
    if route == "mentions":  # X's GET /2/users/:id/mentions
        posts = [
            {
                "id": str(1456012973835788293 + item),
                "text": f"@pi_bot mention {item} &amp; more",
                "author_id": str(900000001 + item),
                "created_at": made,
                "conversation_id": "1456012973835788293",
                "in_reply_to_user_id": "12345",
                "referenced_tweets": [{"type": "replied_to", "id": "1456012973835788293"}],
                "edit_history_tweet_ids": [str(1456012973835788293 + item)],
            }
            for item in range(3)
        ]
        users = [{"id": str(900000001 + item), "username": f"user{item}", "description": "#nobot"} for item in range(3)]
        meta = {"result_count": 3, "newest_id": posts[-1]["id"], "oldest_id": posts[0]["id"]}
        return {"data": posts[::-1], "includes": {"users": users}, "meta": meta}
    if route == "notifications":  # Mastodon's GET /api/v1/notifications?types[]=mention
        return [
            {
                "id": str(3000 + item),
                "type": "mention",
                "created_at": made,
                "account": {
                    "id": str(5 + item),
                    "acct": f"user{item}@elsewhere.example",
                    "bot": item == 1,
                    "note": "<p>hi</p>",
                },
                "status": {
                    "id": str(113456789012345678 + item),
                    "created_at": made,
                    "content": f"<p>@pibot mention {item}<br/>&amp; more</p>",
                    "visibility": "direct",
                    "in_reply_to_account_id": "109876543210987654",
                },
            }
            for item in range(3)
        ][::-1]
    if network == "x":
        posts = [
            {
                "id": str(1456012973835788293 + item),
                "text": f"another post {item} https://t.co/abcdefgh{item:02d}",
                "edit_history_tweet_ids": [str(1456012973835788293 + item)],
                "entities": {
                    "urls": [
                        {
                            "start": 15,
                            "end": 38,
                            "url": f"https://t.co/abcdefgh{item:02d}",
                            "expanded_url": f"https://example.com/{item}",
                            "display_url": f"example.com/{item}",
                        }
                    ]
                },
            }
            for item in range(3)
        ]
        return {"data": posts, "meta": {"result_count": 3, "newest_id": posts[0]["id"], "oldest_id": posts[-1]["id"]}}
    if network == "mastodon":
        if route == "me":
            return {
                "id": "109876543210987654",
                "username": "pibot",
                "acct": "pibot",
                "url": "https://example.social/@pibot",
            }
        return [
            {
                "id": str(113456789012345678 + item),
                "created_at": made,
                "content": f"<p>another post {item}</p>",
                "url": "u",
            }
            for item in range(3)
        ]
    did = "did:plc:emulatoraliceaaaaaaaaaaa"
    if route == "listNotifications":  # Bluesky's app.bsky.notification.listNotifications
        ada = "did:plc:adaaaaaaaaaaaaaaaaaaaaaa"
        parent = {"uri": f"at://{did}/app.bsky.feed.post/3kaaaaaaaaaaa", "cid": "bafyreiaaaa"}  # the bot's post
        return {
            "notifications": [
                {
                    "uri": f"at://{ada}/app.bsky.feed.post/3kbbbbbbbbb{item:02d}",
                    "cid": "bafyreibbbb",
                    "author": {
                        "did": ada,
                        "handle": "ada.test",
                        "description": "#nobot",
                        "labels": [{"src": ada, "uri": f"at://{ada}/app.bsky.actor.profile/self", "val": "bot"}],
                    },
                    "reason": ("mention", "reply", "quote")[item],
                    "record": {
                        "$type": "app.bsky.feed.post",
                        "text": f"@alice.test mention {item}",
                        "createdAt": made,
                        **({"reply": {"root": parent, "parent": parent}} if item == 1 else {}),
                    },
                    "isRead": False,
                    "indexedAt": made,
                }
                for item in range(3)
            ][::-1],
            "cursor": "3kbbbbbbbbb00",
        }
    record = {"$type": "app.bsky.feed.post", "text": f"another post {number}", "createdAt": made}
    if route == "getRecord":
        return {"uri": f"at://{did}/app.bsky.feed.post/3kaaaaaaaaaaa", "cid": "bafyreiaaaa", "value": record}
    return {
        "records": [
            {"uri": f"at://{did}/app.bsky.feed.post/3kaaaaaaaaa{item:02d}", "cid": "bafyreiaaaa", "value": record}
            for item in range(3)
        ],
        "cursor": "3kaaaaaaaaa00",
    }


def hostile_answer(rng: random.Random, network: str, route: str, words: str) -> object:
    """An `Answer` (tests/loopback.py) for one read of `route`: the real shape mutated, or worse."""
    from loopback import Answer

    roll = rng.random()
    if roll < 0.02:
        return Answer(size=9 * 1024 * 1024, gzip=rng.random() < 0.5)  # past the bound on any answer
    if roll < 0.1:
        raw = rng.choice([b"", b"<html>Bad Gateway</html>", b'{"data": [', b"\xff\xfe\x00", b"[" * 100_000, b"null"])
        return Answer(raw, status=rng.choice([200, 200, 400, 429, 500, 502]))
    answer = _real_answer(network, route, rng.randrange(1000))
    for _ in range(rng.randrange(1, 5)):
        answer = _mutate(answer, rng, words)
    return Answer(answer, status=rng.choice([200] * 8 + [400, 401, 404, 429, 500, 503]))


def answers_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    """A hostile answer to one network's look-up, in-process; every fifth X case through runs too."""
    network = rng.choice(["x", "mastodon", "bluesky"])
    words = f"uncertain post {rng.randrange(10**6)}"
    if rng.random() < 0.3:
        return [_mentions_once(rng, network, words)], None
    text = words + " https://example.com/sent"
    outcome = _look_up_once(rng, network, text, words, home)
    if network != "x" or rng.randrange(5):
        return [outcome], None
    outcomes, why = _run_with_an_uncertain_post(rng, home, text, words)
    return [outcome] + outcomes, why


def _look_up_once(rng: random.Random, network: str, text: str, words: str, home: Path) -> Outcome:
    """The network's own poster looks `text` up against its emulator answering a hostile answer."""
    from datetime import datetime, timedelta, timezone

    from twitterbot.errors import PostError

    sent_at = datetime.now(timezone.utc) - timedelta(hours=2)
    key: Optional[str] = None
    with contextlib.ExitStack() as stack:
        if network == "x":
            from x_emulator import XEmulator

            from twitterbot.networks.x.api import Credentials
            from twitterbot.networks.x.poster import XPoster

            emulator = stack.enter_context(XEmulator())
            emulator.answer_next("timeline", hostile_answer(rng, network, "timeline", words))
            keys = emulator.keys
            poster: object = XPoster(
                Credentials(
                    keys["consumer_key"], keys["consumer_secret"], keys["access_token"], keys["access_token_secret"]
                ),
                timeout=5,
                retries=0,
                base_url=emulator.url,
            )
        elif network == "mastodon":
            from mastodon_server import TOKEN, MastodonEmulator

            from twitterbot.networks.mastodon.poster import MastodonPoster

            server = stack.enter_context(MastodonEmulator())
            route = rng.choice(["statuses", "statuses", "me"])
            server.answer_next(route, hostile_answer(rng, network, route, words))
            poster = MastodonPoster(
                instance=server.url, access_token=TOKEN, visibility="unlisted", timeout=5, retries=0
            )
        else:
            from bluesky_emulator import BlueskyEmulator, Fault

            from twitterbot.networks.bluesky.poster import BlueskyPoster, Login

            pds = stack.enter_context(BlueskyEmulator())
            route = rng.choice(["listRecords", "getRecord"])
            key = "3kaaaaaaaaaaa" if route == "getRecord" else None
            pds.fail(f"com.atproto.repo.{route}", Fault(answer=hostile_answer(rng, network, route, words)))
            poster = BlueskyPoster(
                Login(pds.handle, pds.password, pds.url, home / "session.json"), timeout=5, retries=0
            )
        try:
            answer = poster.look_up(text, sent_at, key)  # type: ignore[attr-defined]
        except PostError as exc:  # what settling expects: it logs it, and the next run asks again
            return Outcome(f"look_up:{network}", int(ExitStatus.TEMPORARY_FAILURE), f"{exc.kind}: {exc.summary}")
        except BaseException as exc:  # noqa: BLE001 - anything else escaping a look-up is the finding
            import traceback

            return Outcome(
                f"look_up:{network}", 1, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            )
    if answer.found:
        return Outcome(f"look_up:{network}", 1, f"found a post the answer does not hold: {answer}")
    return Outcome(f"look_up:{network}", 0, answer.how)


def _mentions_once(rng: random.Random, network: str, words: str) -> Outcome:
    """The network's reader (what a round of replies reads with, `Network.reader`) reads the
    account's mentions from its emulator answering a hostile answer: it gives well-formed mentions
    or raises a PostError, nothing else."""
    from datetime import datetime, timedelta, timezone

    from twitterbot.errors import PostError
    from twitterbot.networks.mentions import MentionPage

    not_before = datetime.now(timezone.utc) - timedelta(days=1)
    with contextlib.ExitStack() as stack:
        if network == "x":
            from x_emulator import USER_ID, XEmulator

            from twitterbot.networks.x.api import Credentials
            from twitterbot.networks.x.reader import XReader

            emulator = stack.enter_context(XEmulator())
            emulator.answer_next("mentions", hostile_answer(rng, network, "mentions", words))
            keys = emulator.keys
            reader: object = XReader(
                Credentials(
                    keys["consumer_key"], keys["consumer_secret"], keys["access_token"], keys["access_token_secret"]
                ),
                timeout=5,
                base_url=emulator.url,
            )
            cursor = json.dumps({"me": USER_ID, "since": "1"})
        elif network == "bluesky":  # its reader, with the session an earlier run saved
            from bluesky_emulator import BlueskyEmulator, Fault

            from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
            from twitterbot.networks.bluesky.reader import BlueskyReader

            pds = stack.enter_context(BlueskyEmulator())
            login = Login(
                pds.handle, pds.password, pds.url, Path(stack.enter_context(tempfile.TemporaryDirectory())) / "s"
            )
            BlueskyPoster(login, timeout=5, retries=0).account()
            list_ = "app.bsky.notification.listNotifications"
            pds.canned[list_] = {"notifications": []}  # what a read through the poster gets, after a refusal
            pds.fail(list_, Fault(answer=hostile_answer(rng, network, "listNotifications", words)))
            reader = BlueskyReader(
                login.handle,
                login.service,
                login.session_file,
                timeout=5,
                poster=lambda: BlueskyPoster(login, timeout=5, retries=0),
            )
            cursor = None
        else:
            from mastodon_server import ACCOUNT_ID, TOKEN, MastodonEmulator

            from twitterbot.networks.mastodon.reader import MastodonReader

            server = stack.enter_context(MastodonEmulator())
            server.answer_next("notifications", hostile_answer(rng, network, "notifications", words))
            reader = MastodonReader(instance=server.url, access_token=TOKEN, timeout=5)
            cursor = json.dumps({"me": ACCOUNT_ID, "since": "1"})
        try:
            page = reader.mentions(cursor, not_before=not_before, limit=10)  # type: ignore[attr-defined]
        except PostError as exc:  # what a replies run expects: it says so, and the next run reads again
            return Outcome(f"mentions:{network}", int(ExitStatus.TEMPORARY_FAILURE), f"{exc.kind}: {exc.summary}")
        except BaseException as exc:  # noqa: BLE001 - anything else escaping a read is the finding
            return Outcome(
                f"mentions:{network}", 1, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            )
    problem = _malformed_page(page) if isinstance(page, MentionPage) else f"not a MentionPage: {page!r}"
    return Outcome(f"mentions:{network}", 1 if problem else 0, problem or f"{len(page.mentions)} mentions")


def _malformed_page(page: object) -> str:
    """What is wrong with a page of mentions a reader gave, or '' (every field of the type it says)."""
    from datetime import datetime

    for mention in page.mentions:  # type: ignore[attr-defined]
        fields = (
            mention.id,
            mention.reply_to,
            mention.text,
            mention.author.id,
            mention.author.handle,
            mention.author.bio,
        )
        if not all(isinstance(value, str) for value in fields) or not mention.id:
            return f"a mention with a field of the wrong type: {mention!r}"
        if not isinstance(mention.created_at, datetime) or mention.created_at.tzinfo is None:
            return f"a mention without an aware time: {mention!r}"
        if not isinstance(mention.author.bot, bool) or not isinstance(mention.answers_bot, bool):
            return f"a mention whose flags are not booleans: {mention!r}"
    cursor = page.cursor  # type: ignore[attr-defined]
    return "" if cursor is None or isinstance(cursor, str) else f"a cursor that is not a string: {cursor!r}"


def _run_with_an_uncertain_post(
    rng: random.Random, home: Path, text: str, words: str
) -> Tuple[List[Outcome], Optional[str]]:
    """A real run whose post's answer was lost, then a run the die skips that looks it up and meets
    a hostile timeline: it must exit 0 (the post stays uncertain, or is settled)."""
    from x_emulator import XEmulator

    with XEmulator() as emulator:
        (home / "tweets.txt").write_text(text + "\n")
        settings = dict(emulator.env(), TWEET_ONE_IN="1000", X_API_RETRIES="0", X_API_TIMEOUT="5", MIN_POST_GAP="0")
        (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        (home / ".env").chmod(0o600)
        environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
        emulator.fail_next("posted_then_drop")
        posted = run_cli(["--force"], environ, home)
        emulator.answer_next("timeline", hostile_answer(rng, "x", "timeline", words))
        skip = next(seed for seed in range(100) if random.Random(seed).randrange(1000) != 0)
        looked = run_cli(["--seed", str(skip)], environ, home)
    if posted.status != 75 or looked.status != 0:
        return [
            posted,
            looked,
        ], f"the lost post's run exited {posted.status} (75 expected), the look-up's {looked.status} (0 expected)"
    return [posted, looked], None


def grammars_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    """A grammar as the tweets file: a real run, check and a dry run, then the status page."""
    (home / "bot.json").write_bytes(grammar_file(rng))
    (home / "r0.png").write_bytes(b"not a picture")
    settings = dict(
        emulator_env, TWEETS_FILE="bot.json", TWEET_ONE_IN="1", X_API_RETRIES="0", X_API_TIMEOUT="5", MIN_POST_GAP="0"
    )
    (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    (home / ".env").chmod(0o600)
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    outcomes = [run_cli(["--force", "--seed", "1"], environ, home)]
    if outcomes[0].status in REFUSED and history_rows(home / "state"):
        return outcomes, f"the run refused the grammar ({outcomes[0].status}) but wrote to the history"
    outcomes.append(run_cli(["check"], environ, home))
    outcomes.append(run_cli(["--dry-run", "--force", "--json", "--seed", "2"], environ, home))
    outcomes += status_page(home, environ)
    slow = next((outcome for outcome in outcomes if outcome.seconds > SLOW), None)
    return outcomes, f"`{slow.command}` took {slow.seconds:.0f} s" if slow else None


def status_page(home: Path, environ: Dict[str, str]) -> List[Outcome]:
    """The status page's two views, through its WSGI app: 200 is 0 here, anything else 1 (a bug)."""
    from twitterbot.cli import read_config
    from twitterbot.web.app import create_app

    config = read_config(env_file=home / ".env", environ=environ, project_dir=home)
    client = create_app(config).test_client()
    outcomes = []
    for path in ("/", "/status.json"):
        started = time.monotonic()
        response = client.get(path)
        text = response.get_data(as_text=True)
        outcomes.append(
            Outcome(f"page:{path}", 0 if response.status_code == 200 else 1, text[:2000], time.monotonic() - started)
        )
    return outcomes


# While the cases run, PATH holds no compiler: `check` would build the jobs' kernels in every
# case's fresh state folder (a second or two); without cc it says so in a line (the switches are
# still read and checked). The kernels look for cc on the process's own PATH.

# -- the calendar: time options, some of them dates that cannot come ------------------------------

# Values that read (any day they hold) and values that cannot come, by option; a line's options
# are drawn from both, and the case knows which lines `check` must refuse.
_TIME_GOOD = {
    "on": ["12-25", "02-29", "1-1", "2026-12-25", "2028-02-29", "07-04"],
    "days": ["sat sun", "mon-fri", "Friday", "fri-mon", "sun,wed"],
    "hours": ["7-10", "0", "23", "22-2", "9 18-20"],
    "season": ["12-24; until: 01-06", "01-01; until: 12-31", "2026-06-01; until: 2026-06-30", "03-01; until: 03-01"],
    "at": ["2026-12-31 23:59", "2030-01-01 00:00", "2020-02-29 12:00", "2026-6-1 9:05"],
}
_TIME_BAD = {
    "on": ["02-30", "13-01", "00-10", "04-31", "2027-02-29", "christmas", "12/25", "12-25-2026", ""],
    "days": ["funday", "mon-", "-", "moon", "weekend"],
    "hours": ["24", "7-25", "-1", "morning", "7--10"],
    "season": ["2026-12-24; until: 2026-12-01", "12-01", "12-01; until: 2027-01-06", "11-31; until: 12-24"],
    "at": ["2026-12-31", "2026-02-30 10:00", "2026-12-31 24:00", "tomorrow", "2026-12-31 23:59; on: 12-25"],
}


def calendar_file(rng: random.Random) -> Tuple[bytes, List[int]]:
    """A tweets file of plain and timed lines, and the numbers of the lines whose time cannot come."""
    lines: List[str] = []
    impossible: List[int] = []
    for number in range(1, rng.randint(2, 40)):
        if rng.random() < 0.3:
            lines.append(f"plain line {number}")
            continue
        kinds = rng.sample(["on", "days", "hours", "season"], rng.randint(1, 3)) if rng.random() < 0.8 else ["at"]
        if "on" in kinds and "season" in kinds:
            kinds.remove("season")
        bad = rng.random() < 0.25
        wrong = rng.choice(kinds) if bad else None
        options = []
        for kind in kinds:
            value = rng.choice((_TIME_BAD if kind == wrong else _TIME_GOOD)[kind])
            options.append(f"from: {value}" if kind == "season" else f"{kind}: {value}")
        lines.append("{" + "; ".join(options) + "} timed line " + str(number))
        if bad:
            impossible.append(number)
    return ("\n".join(lines) + "\n").encode(), impossible


def calendar_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    """`check` names every line whose time cannot come, with exit 65 and no traceback; a dry run
    at a drawn time decides without one."""
    data, impossible = calendar_file(rng)
    (home / "tweets.txt").write_bytes(data)
    settings = dict(emulator_env, TWEET_TIMEZONE=rng.choice(["UTC", "Europe/London", "Pacific/Kiritimati"]))
    (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    (home / ".env").chmod(0o600)
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    checked = run_cli(["check"], environ, home)
    at = f"{rng.randint(2025, 2029)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    dry = run_cli(["--dry-run", "--force", "--at", at, "--seed", "3"], environ, home)
    outcomes = [checked, dry]
    missed = [number for number in impossible if f"tweets.txt line {number} " not in checked.output]
    if impossible and (checked.status != int(ExitStatus.DATA_ERROR) or missed):
        return outcomes, f"check exited {checked.status} and did not name line(s) {missed or impossible}"
    if not impossible and "line" in checked.output and checked.status == int(ExitStatus.DATA_ERROR):
        return outcomes, "check refused a file whose every time can come"
    if dry.status != (int(ExitStatus.DATA_ERROR) if impossible else int(ExitStatus.OK)):
        return outcomes, f"the dry run --at {at} exited {dry.status}"
    return outcomes, None


# -- the services' tags: CBDQ, CBTS and BBDQ grammars, some hostile ----------------------------------

_TAG_WORDS = ("svg", "img", "alt", "cut", "hide", "show", "public", "unlisted", "private", "direct", "lang", "label")
# A tag left in a post's text: one of the words after a brace not written \{ (posting/tags.py).
_TAG_LEFT = re.compile(r"(?<!\\)\{(?:" + "|".join(_TAG_WORDS) + r")[ }]")
_SHAPES = [
    '<rect width="40" height="20" rx="4" fill="\\#c33"/>',
    '<circle cx="20" cy="20" r="15" fill="none" stroke="black" stroke-dasharray="4 2"/>',
    '<g transform="translate(10 10) rotate(#r1#)"><path d="M0,0 L20,20" stroke="blue"/></g>',
    '<polyline points="0,0 10,20 20,0" fill="none" stroke="green" opacity="0.5"/>',
    '<text x="5" y="20" font-family="sans-serif" font-size="16">#r1# <tspan fill="red">#r2#</tspan></text>',
    '<style>text \\\\{ fill: #r1#; \\\\}</style><text y="15">hi</text>',
]
# SVGs that must be refused (exit 65), whatever else the post holds: entities from a DOCTYPE (an
# external one, a billion laughs), a picture named by a file, no size, a size past the budget, too
# much markup, nesting too deep; and SVGs that must be harmless (an external <use>, @import, a
# fill from a file: the renderer reads no file).
_SVG_REFUSED = [
    '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg width="50" height="50"><text>&x;</text></svg>',
    '<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg width="9" height="9">'
    "<text>&b;&b;&b;&b;&b;&b;&b;&b;</text></svg>",
    '<svg width="50" height="50"><image href="file:///etc/passwd" width="50" height="50"/></svg>',
    '<svg width="50" height="50"><image xlink:href="../.env" width="50" height="50"/></svg>',
    '<svg viewBox="0 0 10 10"><rect width="5" height="5"/></svg>',
    '<svg width="100000" height="100000"><rect width="5" height="5"/></svg>',
    '<svg width="50" height="50">' + "<g>" * 300 + "</g>" * 300 + "</svg>",
    '<svg width="50" height="50"><text>' + "a" * 1_100_000 + "</text></svg>",
]
_SVG_HARMLESS = [
    '<svg width="50" height="50"><rect width="50" height="50"/><use href="file:///etc/passwd#a"/></svg>',
    '<svg width="50" height="50"><style>@import url(/etc/passwd);</style><rect width="50" height="50"/></svg>',
    '<svg width="50" height="50"><rect width="50" height="50" fill="url(/etc/x.svg#g) black"/></svg>',
]


def _tag_piece(rng: random.Random, careful: bool) -> str:
    """One piece of a tagged post: words, a tag of the three services, a BBDQ code, or (unless
    `careful`) a mistake: an unknown word, a lone brace, a tag cut by a line break."""
    roll = rng.random()
    if roll < 0.25:
        return rng.choice([word for word in _PLAIN_WORDS if "{" not in word and "}" not in word])
    if roll < 0.45:
        start = rng.choice(["", '<?xml version="1.0" encoding="UTF-8"?>'])
        size = rng.choice([(40, 20), (400, 200), (120, 100), (1024, 512)])
        shapes = "".join(rng.choice(_SHAPES) for _ in range(rng.randint(1, 3)))
        alt = rng.choice(["", " A picture of #r2#", " {item #r2# {n}}"])
        return f'{{svg {start}<svg width="{size[0]}" height="{size[1]}" viewBox="0 0 40 40">{shapes}</svg>{alt}}}'
    if roll < 0.52:
        host = rng.choice(["127.0.0.1", "10.1.2.3", "[::1]", "169.254.169.254", "localhost"])
        return f"{{img http://{host}/#r1#.png{rng.choice(['', ' a #r2#', ' {item #r2# {n mod 3}}'])}}}"
    if roll < 0.8:
        return rng.choice(
            [
                "{alt #r1# and #r2#}",
                "{cut spoilers for #r1#}",
                "{hide}",
                "{show}",
                "{public}",
                "{unlisted}",
                "{private}",
                "{direct}",
                "{lang en}",
                "{lang pt-BR}",
                "{label graphic-media}",
                "{label nudity}",
            ]
        )
    if roll < 0.9 or careful:
        return rng.choice(
            ["{hour}", "{weekdayName}", "{monthName}", "{date jS F Y}", "{date jS \\o\\f l}", "{n}", "{n mod 3}"]
            + ["{n % 7}", "{item #r1# 2}", "{item #r2# {weekday}}"]
        )
    return rng.choice(
        ["{imgg http://a.test/x}", "{", "}", "{svg <svg width='5'\n height='5'></svg>}", "{lang english!}"]
        + ["{label spicy}", "{vid http://a.test/v.mp4}", "{cut}", "{svg <rect/>}", "{img not-a-url}", "{date}"]
        + ["\\\\{ literal \\\\}", "{cw: options} ", "{item #missing# 1}", "{n mod 0}", "{alt}"]
    )


def tags_file(rng: random.Random) -> Tuple[bytes, Optional[str]]:
    """A grammar (`bot.json`) in the style of CBDQ, CBTS or BBDQ, and whether its every post must be
    refused ("refused": a hostile SVG the post cannot go without) or drawn harmlessly ("harmless")."""
    careful = rng.random() < 0.5
    texts = []
    for _ in range(rng.randint(1, 3)):
        pieces = [_tag_piece(rng, careful) for _ in range(rng.randint(1, 5))]
        texts.append(" ".join(pieces))
    hostile = None
    if rng.random() < 0.2:
        hostile = rng.choice(["refused", "harmless"])
        markup = rng.choice(_SVG_REFUSED if hostile == "refused" else _SVG_HARMLESS)
        texts = [text + " {svg " + markup + "}" for text in texts]
    rules = {
        "origin": texts,
        "r1": ["red", "blue", "45", "Tuesday"],
        "r2": ["a cat", "a moth", "the sea", "#r1# things"],
    }
    return json.dumps(rules, ensure_ascii=rng.random() < 0.5).encode(), hostile


def tags_case(rng: random.Random, home: Path, emulator_env: Dict[str, str]) -> Tuple[List[Outcome], Optional[str]]:
    """A grammar of the services' tags: a real run, check and a dry run end with a documented code
    in seconds; no tag is left in a post's text; a hostile SVG is refused (65) or drawn harmlessly."""
    data, hostile = tags_file(rng)
    (home / "bot.json").write_bytes(data)
    settings = dict(
        emulator_env, TWEETS_FILE="bot.json", TWEET_ONE_IN="1", X_API_RETRIES="0", X_API_TIMEOUT="5", MIN_POST_GAP="0"
    )
    (home / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    (home / ".env").chmod(0o600)
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}
    outcomes = [run_cli(["--force", "--seed", "1"], environ, home)]
    if outcomes[0].status in REFUSED and history_rows(home / "state"):
        return outcomes, f"the run refused the grammar ({outcomes[0].status}) but wrote to the history"
    outcomes.append(run_cli(["check"], environ, home))
    dry = run_cli(["--dry-run", "--force", "--json", "--seed", "2"], environ, home)
    outcomes.append(dry)
    slow = next((outcome for outcome in outcomes if outcome.seconds > SLOW), None)
    if slow:
        return outcomes, f"`{slow.command}` took {slow.seconds:.0f} s"
    said = next((line for line in dry.output.splitlines() if line.startswith('{"action"')), None)
    text = (json.loads(said).get("text") or "") if said else ""
    if _TAG_LEFT.search(text):
        return outcomes, f"a tag is left in the post's text: {text[:200]!r}"
    if hostile == "refused" and any(outcome.status == 0 for outcome in outcomes[::2]):
        return outcomes, "a post with a hostile SVG was not refused"
    return outcomes, None


CASES: Dict[str, Callable[[random.Random, Path, Dict[str, str]], Tuple[List[Outcome], Optional[str]]]] = {
    "tweets": tweets_case,
    "env": env_case,
    "pictures": pictures_case,
    "grammars": grammars_case,
    "answers": answers_case,
    "calendar": calendar_case,
    "tags": tags_case,
}


@dataclass
class Figures:
    cases: Counter = field(default_factory=Counter)
    statuses: Dict[str, Counter] = field(default_factory=dict)
    seconds: Dict[str, float] = field(default_factory=dict)
    failures: List[Failure] = field(default_factory=list)
    stopped: bool = False  # ended early (Ctrl-C, SIGTERM): the figures cover the cases run


def fuzz(
    kinds: Sequence[str],
    count: int,
    seed: int,
    *,
    first: int = 0,
    only: Optional[int] = None,
    on_failure: Optional[Callable[[Failure, Path], None]] = None,
    progress: Optional[Callable[[str, int, Counter], None]] = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Figures:
    """Run `count` cases of each kind, numbered from `first` (or case `only`), and gather the
    figures. Ctrl-C or SIGTERM ends the run early with the figures so far (`Figures.stopped`)."""
    from monitor_server import MonitorServer  # tests/monitor_server.py: a monitor that answers anything
    from x_emulator import XEmulator  # tests/x_emulator.py: the X API on 127.0.0.1

    figures = Figures()
    # Every case posts its own file: no duplicate check, no rate limit across cases.
    emulator = XEmulator(duplicate_check=False, posts_per_window=10**9, posts_per_day=10**9)
    with contextlib.ExitStack() as stack:
        stack.enter_context(emulator)
        monitor = stack.enter_context(MonitorServer())
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="twitterbot-fuzz-"))
        stack.enter_context(_no_compiler(Path(scratch)))
        emulator_env = emulator.env()
        cases = {**CASES, "monitors": functools.partial(monitors_case, emulator=emulator, monitor=monitor)}
        for kind in kinds:
            statuses = figures.statuses.setdefault(kind, Counter())
            started = time.monotonic()
            numbers = [only] if only is not None else range(first, first + count)
            for number in numbers:
                if should_stop():
                    figures.stopped = True
                    break
                rng = random.Random(f"{seed}/{kind}/{number}")
                home = Path(scratch) / f"{kind}-{number}"
                home.mkdir()
                emulator.posts.clear()
                emulator.seen.clear()
                outcomes, why = cases[kind](rng, home, emulator_env)
                figures.cases[kind] += 1
                for outcome in outcomes:
                    statuses[f"{outcome.command.split(' ')[0].split(':')[0] or 'run'}:{outcome.status}"] += 1
                    why = why or check(outcome)
                if why:
                    failure = Failure(kind, number, why, outcomes)
                    figures.failures.append(failure)
                    if on_failure:
                        on_failure(failure, home)
                shutil.rmtree(home, ignore_errors=True)
                if progress and figures.cases[kind] % 500 == 0:
                    progress(kind, number + 1, statuses)
            figures.seconds[kind] = time.monotonic() - started
    return figures


@contextlib.contextmanager
def _no_compiler(scratch: Path) -> Iterator[None]:
    """PATH without a compiler, holding only the programs the SVG pictures are drawn with (the tags'
    cases draw them: rsvg-convert, and the shell that sets its limits)."""
    saved = os.environ["PATH"]
    (scratch / "no-cc").mkdir()
    for program in ("sh", "rsvg-convert"):
        found = shutil.which(program, path=saved)
        if found:
            (scratch / "no-cc" / program).symlink_to(found)
    os.environ["PATH"] = str(scratch / "no-cc")
    try:
        yield
    finally:
        os.environ["PATH"] = saved


def _save(folder: Path) -> Callable[[Failure, Path], None]:
    def save(failure: Failure, home: Path) -> None:
        target = folder / f"{failure.kind}-{failure.number}"
        shutil.copytree(home, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.so"))
        (target / "why.txt").write_text(
            failure.why
            + "\n\n"
            + "\n\n".join(f"$ bot.py {o.command}  -> {o.status}\n{o.output}" for o in failure.outcomes)
        )

    return save


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="cases of each kind (default 1000)")
    parser.add_argument("--kind", choices=KINDS, action="append", help="only this kind (default: all)")
    parser.add_argument("--seed", type=int, default=29, help="the run's seed (default 29)")
    parser.add_argument("--case", type=int, help="run this one case and print its output")
    parser.add_argument("--first", type=int, default=0, help="the first case's number (default 0)")
    parser.add_argument("--failures", type=Path, help="where failing cases are saved (default: a temporary folder)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    kinds = args.kind or list(KINDS)
    folder = args.failures or Path(tempfile.mkdtemp(prefix="twitterbot-fuzz-failures-"))
    folder.mkdir(parents=True, exist_ok=True)

    def progress(kind: str, done: int, statuses: Counter) -> None:
        codes = ", ".join(f"{key} {number}" for key, number in sorted(statuses.items()))
        print(f"  {kind}: up to case {done - 1:,}: {codes}", file=sys.stderr, flush=True)

    asked: List[int] = []  # Ctrl-C or SIGTERM: finish the case at hand, then report (the CLI
    # under test catches KeyboardInterrupt itself, so it is a flag, not an exception)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda number, frame: asked.append(number))
    if args.case is not None:
        figures = fuzz(kinds, 1, args.seed, only=args.case, on_failure=_save(folder))
    else:
        figures = fuzz(
            kinds,
            args.count,
            args.seed,
            first=args.first,
            on_failure=_save(folder),
            progress=progress,
            should_stop=lambda: bool(asked),
        )
    report = {
        kind: {
            "cases": figures.cases[kind],
            "seconds": round(figures.seconds[kind], 1),
            "exit_codes": dict(sorted(figures.statuses[kind].items())),
            "failures": [f.number for f in figures.failures if f.kind == kind],
        }
        for kind in kinds
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for kind, figures_ in report.items():
            early = " (stopped early)" if figures.stopped else ""
            print(
                f"{kind}: {figures_['cases']:,} cases in {figures_['seconds']} s (seed {args.seed}, from case {args.first}){early}"
            )
            for key, number in figures_["exit_codes"].items():
                print(f"    {key:>14}: {number:,}")
            print(f"    failures: {len(figures_['failures'])} {figures_['failures'][:20]}")
    if figures.failures:
        print(f"failing cases saved in {folder}", file=sys.stderr)
        for failure in figures.failures[:10]:
            print(f"  {failure.kind} case {failure.number}: {failure.why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main_())
