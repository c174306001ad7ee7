"""An SVG drawn as a PNG the way Cheap Bots Done Quick drew its ``{svg ...}`` pictures, on a Pi.

CBDQ handed the SVG to a browser: everything before the first ``<svg`` is dropped (an XML
declaration is fine), the picture is as big as the SVG's width and height (or one of them and its
``viewBox``'s ratio; a ``viewBox`` alone is refused, as CBDQ refused it), and it is transparent
where the SVG draws nothing. Here the SVG is drawn by ``rsvg-convert`` (Debian's librsvg2-bin,
built for every Pi) unless the owner chose Debian's chromium (``SVG_RENDERER=chromium``) for the
few grammars that need a browser: ``<foreignObject>`` and scripts::

    drawn = draw_svg('<svg width="400" height="200">...</svg>', fetch=picture_fetcher)
    drawn.png, drawn.width, drawn.height
    svg_problems(markup)   # what `check` says, without drawing: [] when it can be drawn here

Neither renderer reaches the network or the file system: a picture the SVG embeds by URL
(``<image href="https://...">``) is fetched by the caller's `fetch` (public addresses only, a size
and time limit) and put in the SVG as a ``data:`` URI before drawing; an ``href`` to a file or a
relative one is refused (an `SvgError` naming it). Each renderer runs as a child process with a
time limit, a memory limit and a limit on what it may write.
"""

from __future__ import annotations

import base64
import contextlib
import html.entities
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple
from xml.etree import ElementTree

from ..settings.secrets import masked_url
from .sandbox import sandbox_problem, sandboxed, session_memory_kib

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

__all__ = [
    "MAX_DEPTH",
    "MAX_SVG_BYTES",
    "MAX_SVG_PIXELS",
    "RENDERERS",
    "DrawnSvg",
    "RendererMissing",
    "SvgError",
    "draw_svg",
    "font_problem",
    "renderer_problem",
    "svg_problems",
]


log = logging.getLogger(__name__)
RENDERERS = ("auto", "rsvg", "chromium")
# The longest SVG read: a grammar's card is a few kilobytes; this bounds the parser's memory.
MAX_SVG_BYTES = 1_000_000
# The most pixels drawn: what the pictures' preparation decodes within its budget (about 4000x3000,
# `prepare.DECODE_LIMIT`); the renderer's surface for it is 50 MB.
MAX_SVG_PIXELS = 12_582_912
MAX_SIDE = 16_384  # pixels: cairo's own limit is 32,767
MAX_IMAGES = 8  # distinct pictures one SVG may embed by URL
MAX_DEPTH = 200  # elements inside elements: a drawing nests a few dozen; the serializer recurses
RENDER_SECONDS = 30.0  # a renderer that takes longer is stopped
# What rsvg-convert may map (ulimit -v) and write (ulimit -f), and what each of chromium's
# processes may allocate (ulimit -d: a browser maps far more than it uses). Measured: a 1600x1200
# card needs 150 MiB mapped (28 MiB resident) in rsvg, a plain 4000x3000 one 200 MiB (66 MiB); a
# blur over 4000x3000 would take 345 MiB resident, and is refused by the limit instead of taking a
# Pi's memory; chromium's largest process draws a card in 223 MiB.
RENDER_MEMORY_KIB = 384 * 1024
# What all of chromium's processes may hold together (their proportional set sizes): a browser
# cannot be held to rsvg's 384 MiB in all. Measured for a 1600x1200 card on x86-64: 418 MiB, its
# largest process 168 MiB. More than a Pi Zero 2 W (512 MB) can give: there, draw with rsvg.
BROWSER_MEMORY_KIB = 640 * 1024
_MAX_PNG_BYTES = 64 * 1024 * 1024

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_XINCLUDE_NS = "http://www.w3.org/2001/XInclude"
_HREFS = ("href", f"{{{XLINK_NS}}}href")
# Elements rsvg skips without a word; a browser draws (or runs) them.
_BROWSER_ONLY = {
    "foreignObject": "<foreignObject> (HTML inside an SVG)",
    "script": "<script>",
}
# Elements whose href names a picture to draw; <use> and the gradients' and patterns' hrefs name
# parts of the same SVG (#id).
_PICTURE_ELEMENTS = ("image", "feImage")
_XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}
_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_START_TAG = re.compile(r"<svg(?:\s+[^\s=>/]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*\s*/?>")
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
# The PNG chunks a picture needs; every other one (text, time, ICC profile, EXIF) is dropped.
_KEPT_CHUNKS = {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND", b"gAMA", b"sRGB"}


class SvgError(ValueError):
    """An SVG that cannot be drawn here, and what to do about it: a data error (exit 65)."""

    exit_status = 65


class RendererMissing(SvgError):
    """The renderer program is not installed: the machine's doing, not the grammar's (exit 69)."""

    exit_status = 69


@dataclass(frozen=True)
class DrawnSvg:
    """An SVG drawn: a PNG without metadata, `width` x `height` pixels, transparent where the SVG is."""

    png: bytes
    width: int
    height: int


@dataclass(frozen=True)
class _Read:
    """An SVG read and checked: its root element (sized in whole pixels) and its size."""

    root: Element
    width: int
    height: int


def draw_svg(
    markup: str,
    *,
    fetch: Optional[Callable[[str], bytes]] = None,
    renderer: str = "auto",
    seconds: float = RENDER_SECONDS,
) -> DrawnSvg:
    """`markup` (everything from its first ``<svg``) drawn as a PNG by `renderer` (auto: rsvg;
    chromium: Debian's chromium, headless). Pictures it embeds by http(s) URL are fetched with
    `fetch` (None: such an SVG is refused) and inlined; the renderer is stopped after `seconds`
    (at most RENDER_SECONDS: a post's pictures share a deadline). `SvgError` says what cannot be
    drawn and the fix; `RendererMissing` names the package to install."""
    program = _renderer(renderer)
    read = _read(markup)
    problems = _unsupported(read.root, program)
    if problems:
        raise SvgError(problems[0])
    _inline_pictures(read.root, fetch, program)
    seconds = min(seconds, RENDER_SECONDS)
    png = _stripped(_chromium(read, seconds) if program == "chromium" else _rsvg(read, seconds), read)
    if not _visible(png):
        raise SvgError(
            f"the SVG ({read.width}x{read.height}) draws nothing visible with {program}: check its shapes' "
            "fill and stroke"
            + ("" if program == "chromium" else ", or what it needs from a browser (SVG_RENDERER=chromium)")
        )
    return DrawnSvg(png, read.width, read.height)


def svg_problems(markup: str, renderer: str = "auto") -> List[str]:
    """What `check` should say about an SVG without drawing it or fetching anything: why it cannot
    be drawn by `renderer` (no size, malformed, too big, an element only a browser draws, a
    picture named by a file or relative path), or why the renderer cannot run. [] when it can."""
    try:
        program = _renderer(renderer)
        read = _read(markup)
    except SvgError as exc:
        return [str(exc)]
    problems = _unsupported(read.root, program)
    for element, href in _picture_hrefs(read.root):
        if not (href.startswith(("data:", "#")) or _is_web(href)):
            problems.append(_local_href(element, href))
    missing = renderer_problem(renderer)
    if missing:
        problems.append(missing)
    return problems


def renderer_problem(renderer: str = "auto") -> Optional[str]:
    """Why `renderer`'s program cannot run here (not installed, with the apt line), or None."""
    try:
        _program_path(_renderer(renderer))
    except SvgError as exc:
        return str(exc)
    return None


def font_problem(markups: List[str], renderer: str = "auto") -> Optional[str]:
    """Which characters of the SVGs' text no font of this machine has (asked of fontconfig's
    fc-list, as rsvg finds its fonts), with the package that draws them: such text is drawn as
    empty boxes. None when every character has a font, or fontconfig cannot be asked."""
    if _renderer(renderer) == "chromium":
        return None  # chromium carries fallbacks of its own; its fonts are not fontconfig's alone
    lister = shutil.which("fc-list")
    if lister is None:
        return None
    wanted = sorted(
        {char for markup in markups for char in _text_of(markup) if ord(char) > 0x7E and not char.isspace()}
    )
    missing = [char for char in wanted[:_MOST_ASKED] if not _has_font(lister, char)]
    if not missing:
        return None
    emoji = any(ord(char) >= 0x1F000 or 0x2600 <= ord(char) < 0x2800 for char in missing)
    wide = any(0x2E80 <= ord(char) < 0xA000 or 0xAC00 <= ord(char) < 0xD7B0 for char in missing)
    packages = (
        " ".join(name for name, needed in (("fonts-noto-color-emoji", emoji), ("fonts-noto-cjk", wide)) if needed)
        or "fonts-noto-core"
    )
    return (
        f"no font on this machine draws {''.join(missing[:12])} in the SVG's text, which would be drawn as "
        f"empty boxes: sudo apt install {packages}"
    )


_MOST_ASKED = 40  # different characters asked of fontconfig (one quick process each)
_TEXT = re.compile(r">([^<]+)<")


def _text_of(markup: str) -> str:
    """The text between the SVG's tags, its character references read."""
    return html.unescape("".join(_TEXT.findall(markup)))


def _has_font(lister: str, char: str) -> bool:
    """Whether a font of this machine has `char` (fc-list names one that does)."""
    try:
        found = subprocess.run(
            [lister, f":charset={ord(char):x}", "family"], capture_output=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return True  # not known: said nothing rather than something wrong
    return bool(found.strip())


# -- reading ----------------------------------------------------------------------------------------


def _renderer(renderer: str) -> str:
    """The renderer `renderer` names: rsvg (auto) or chromium."""
    chosen = (renderer or "auto").strip().lower()
    if chosen not in RENDERERS:
        raise SvgError(
            f"SVG_RENDERER={renderer!r} is not one of {', '.join(RENDERERS)}: set it to auto (rsvg) or chromium"
        )
    return "rsvg" if chosen == "auto" else chosen


def _read(markup: str) -> _Read:
    """The SVG in `markup` parsed, as CBDQ reads it: from the first ``<svg`` to the last ``</svg>``,
    with the namespaces a browser assumes and HTML's named characters; sized from its width and
    height or one of them and its viewBox; SvgError for anything else."""
    if len(markup) > MAX_SVG_BYTES:
        raise SvgError(f"the SVG is {len(markup):,} characters, over {MAX_SVG_BYTES:,}: make it smaller")
    start = markup.find("<svg")
    if start < 0:
        raise SvgError("there is no <svg in it: an {svg ...} picture must hold an <svg ...>...</svg> element")
    svg = markup[start:]
    end = svg.rfind("</svg>")
    if end >= 0:
        svg = svg[: end + len("</svg>")]
    svg = _with_namespaces(svg)
    svg = _ENTITY.sub(_xml_character, svg)
    try:
        root = ElementTree.fromstring(svg)
    except ElementTree.ParseError as exc:
        line, column = exc.position
        entity = _ENTITY.match(svg.splitlines()[line - 1][column:]) if "undefined entity" in str(exc) else None
        if entity:
            raise SvgError(
                f"the SVG uses the entity {entity.group(0)}, which it does not define (line {line} column "
                f"{column + 1} of the SVG): a DOCTYPE's entities are never read here (what comes before <svg is "
                "left out, and no file is fetched for one): write the text itself, or a character reference "
                "such as &#233;"
            ) from None
        raise SvgError(
            f"the SVG is not well-formed XML ({_said(exc)}, line {line} column {column + 1} of the SVG): close every "
            'element (<circle ... />), quote every attribute (r="5") and write & as &amp; (a browser forgave '
            "this; a drawing program does not)"
        ) from None
    if _deepest(root) > MAX_DEPTH:
        raise SvgError(f"the SVG nests elements more than {MAX_DEPTH} deep: flatten its groups")
    if root.tag != f"{{{SVG_NS}}}svg":
        raise SvgError(f'its outer element is not an SVG <svg> ({_local(root.tag)}): give it xmlns="{SVG_NS}"')
    width, height = _size(root)
    root.set("width", str(width))
    root.set("height", str(height))
    return _Read(root, width, height)


def _deepest(root: Element) -> int:
    """How deep the elements nest (the root alone: 1), counted without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element)
    return deepest


def _with_namespaces(svg: str) -> str:
    """`svg` with the namespaces HTML gives an <svg> without saying so (CBDQ parsed it as HTML):
    the SVG one, and xlink's where ``xlink:`` is used without being declared."""
    tag = _START_TAG.match(svg)
    if tag is None:
        return svg  # the parser says what is wrong with it
    opening = tag.group(0)
    added = ""
    if not re.search(r"\sxmlns\s*=", opening):
        added += f' xmlns="{SVG_NS}"'
    if "xlink:" in svg and not re.search(r"\sxmlns:xlink\s*=", opening):
        added += f' xmlns:xlink="{XLINK_NS}"'
    if not added:
        return svg
    return "<svg" + added + svg[len("<svg") :]


def _xml_character(match: re.Match) -> str:
    """An HTML named character (&nbsp;, &eacute;) as XML's numeric one; XML's own five as they are."""
    name = match.group(1)
    if name in _XML_ENTITIES or name not in html.entities.name2codepoint:
        return match.group(0)
    return f"&#{html.entities.name2codepoint[name]};"


def _size(root: Element) -> Tuple[int, int]:
    """The picture's size in pixels as CBDQ measured it: width and height (a number's leading
    digits, as parseFloat reads "400px"; a percentage is no size), else one of them and the
    viewBox's ratio; SvgError for no size, or one too big to draw on a Pi."""
    width = _length(root.get("width"))
    height = _length(root.get("height"))
    box = _view_box(root.get("viewBox"))
    if not (width and height):
        if box and width:
            height = width * box[1] / box[0]
        elif box and height:
            width = height * box[0] / box[1]
        else:
            given = "only a viewBox" if box else "no width and height"
            raise SvgError(
                f"the SVG has {given}, so its picture has no size (CBDQ refused these too): give the <svg> a "
                'width and a height in pixels, e.g. <svg width="800" height="600" viewBox="...">'
            )
    pixels_wide, pixels_high = max(1, round(width)), max(1, round(height))
    if pixels_wide > MAX_SIDE or pixels_high > MAX_SIDE or pixels_wide * pixels_high > MAX_SVG_PIXELS:
        raise SvgError(
            f"the SVG is {pixels_wide:,}x{pixels_high:,} pixels, too big to draw on a Pi (at most "
            f"{MAX_SVG_PIXELS / 1e6:.1f} megapixels and {MAX_SIDE:,} a side, e.g. 4000x3000): make its width and "
            "height smaller (a viewBox keeps the drawing's own coordinates)"
        )
    return pixels_wide, pixels_high


def _length(text: Optional[str]) -> float:
    """A width or height as CBDQ's browser read it (parseFloat); 0 for none, a percentage or <= 0."""
    if not text or text.strip().endswith("%"):
        return 0.0
    match = _NUMBER.match(text)
    if not match:
        return 0.0
    value = float(match.group(0))
    return value if value > 0 and value == value and value != float("inf") else 0.0


def _view_box(text: Optional[str]) -> Optional[Tuple[float, float]]:
    """The viewBox's width and height, or None for none or one that is not four numbers."""
    if not text:
        return None
    parts = [part for part in re.split(r"[\s,]+", text.strip()) if part]
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        return None
    if len(numbers) != 4 or not all(0 < side < float("inf") for side in numbers[2:]):
        return None
    return numbers[2], numbers[3]


def _unsupported(root: Element, program: str) -> List[str]:
    """The elements `program` cannot draw, each named once with the fix."""
    included = [
        "the SVG has <xi:include>, which would read a file into it, and files on the Pi are never read: remove it"
    ]
    if any(isinstance(element.tag, str) and element.tag.startswith(f"{{{_XINCLUDE_NS}}}") for element in root.iter()):
        return included
    if program == "chromium":
        return []
    found = []
    for element in root.iter():
        name = _local(element.tag)
        if name in _BROWSER_ONLY and name not in found:
            found.append(name)
    return [f"{_BROWSER_ONLY[name]} cannot be drawn by rsvg: {_browser_advice()}" for name in found]


def _browser_advice() -> str:
    """What to do about an element only a browser draws: remove it. The browser is named with its
    cost, never advised: it cannot be held to rsvg's memory limit (`BROWSER_MEMORY_KIB`), and
    where its sandbox cannot run here it does not draw at all."""
    unsafe = sandbox_problem()
    if unsafe:
        return f"remove it (a browser would draw it only in a sandbox, and {unsafe})"
    return (
        "remove it (a browser draws it, SVG_RENDERER=chromium in bubblewrap's sandbox, but with about 420 MiB, "
        "more than a Pi Zero 2 W has: docs/pictures.md)"
    )


# -- pictures inside ---------------------------------------------------------------------------------


def _picture_hrefs(root: Element) -> List[Tuple[Element, str]]:
    """Each picture element with the href it names."""
    found = []
    for element in root.iter():
        if _local(element.tag) not in _PICTURE_ELEMENTS:
            continue
        for attribute in _HREFS:
            href = (element.get(attribute) or "").strip()
            if href:
                found.append((element, href))
    return found


def _inline_pictures(root: Element, fetch: Optional[Callable[[str], bytes]], program: str) -> None:
    """Each picture the SVG names by http(s) URL fetched once with `fetch` and put in as a data:
    URI, so the renderer reaches no network; a file or relative href is refused (SvgError), as
    neither renderer is let read the Pi's files."""
    fetched: Dict[str, str] = {}
    for element, href in _picture_hrefs(root):
        if href.startswith(("data:", "#")):
            continue
        if not _is_web(href):
            raise SvgError(_local_href(element, href))
        if href not in fetched:
            if fetch is None:
                raise SvgError(f"the SVG's <{_local(element.tag)}> names {href}, and no picture may be fetched here")
            if len(fetched) == MAX_IMAGES:
                raise SvgError(f"the SVG names more than {MAX_IMAGES} pictures by URL: use at most {MAX_IMAGES}")
            fetched[href] = _data_uri(href, fetch(href), program)
        for attribute in _HREFS:
            if (element.get(attribute) or "").strip() == href:
                element.set(attribute, fetched[href])


def _data_uri(url: str, data: bytes, program: str) -> str:
    """A fetched picture as a data: URI; SvgError when it is not a picture the renderer draws."""
    mime = next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)
    if mime is None and program == "chromium" and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        mime = "image/webp"
    if mime is None:
        kinds = "PNG, JPEG or GIF" + (" or WebP" if program == "chromium" else "")
        raise SvgError(f"the picture at {url} is not a {kinds} picture: link one that is")
    width, height = _picture_size(data)
    if width * height > MAX_SVG_PIXELS:
        raise SvgError(
            f"the picture at {url} is {width:,}x{height:,} pixels, more than a Pi decodes inside an SVG (at most "
            f"{MAX_SVG_PIXELS / 1e6:.1f} megapixels): link a smaller one"
        )
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _picture_size(data: bytes) -> Tuple[int, int]:
    """A fetched picture's size from its header, without decoding it (0x0 without Pillow)."""
    import io

    try:
        from .prepare import pillow, unusable

        image_module = pillow()
    except ImportError:
        return 0, 0
    try:
        with image_module.open(io.BytesIO(data)) as image:
            return image.size
    except unusable() as exc:  # Pillow's words for a damaged or hostile file
        raise SvgError(f"a picture the SVG embeds cannot be read ({type(exc).__name__}): link another") from None


def _is_web(href: str) -> bool:
    return href.lower().startswith(("http://", "https://"))


def _local_href(element: Element, href: str) -> str:
    return (
        f"the SVG's <{_local(element.tag)}> names {href!r}, not an http or https URL: a picture inside an SVG is "
        "fetched from the web (or given as a data: URI); files on the Pi are never read: give its full URL"
    )


# -- drawing ---------------------------------------------------------------------------------------


def _program_path(program: str) -> str:
    """The renderer's executable; RendererMissing with the apt line that installs it (chromium
    draws only in bubblewrap's sandbox: without one it does not draw at all)."""
    if program == "chromium":
        found = shutil.which("chromium") or shutil.which("chromium-browser")
        if not found:
            raise RendererMissing(
                "chromium is not installed, and SVG_RENDERER=chromium draws the SVG pictures with it: "
                "sudo apt install chromium bubblewrap, or set SVG_RENDERER=auto (rsvg)"
            )
        unsafe = sandbox_problem()
        if unsafe:
            raise RendererMissing(f"SVG_RENDERER=chromium draws only in a sandbox, and {unsafe}")
        return found
    found = shutil.which("rsvg-convert")
    if not found:
        raise RendererMissing(
            "rsvg-convert is not installed, and it draws the {svg ...} pictures: sudo apt install librsvg2-bin"
        )
    return found


def _serialized(root: Element) -> bytes:
    """The SVG as XML with SVG as its default namespace (what rsvg and an XHTML page read)."""
    try:
        return ElementTree.tostring(root, encoding="utf-8", default_namespace=SVG_NS)
    except ValueError:  # an element outside every namespace: written with prefixes instead
        return ElementTree.tostring(root, encoding="utf-8")


def _rsvg(read: _Read, seconds: float) -> bytes:
    """The SVG drawn by rsvg-convert, given on its standard input (so it has no folder to read
    files from), within a memory limit, a time limit and a limit on the PNG it writes."""
    program = _program_path("rsvg")
    with tempfile.TemporaryDirectory(prefix="twitterbot-svg-") as folder:
        out = Path(folder) / "drawn.png"
        command = [
            "sh",
            "-c",
            'ulimit -v "$1" && ulimit -f "$2" && shift 2 && exec "$@"',
            "sh",
            str(RENDER_MEMORY_KIB),
            str(_MAX_PNG_BYTES // 512),
            program,
            "--format=png",
            f"--output={out}",
        ]
        _run(command, _serialized(read.root), "rsvg-convert", seconds)
        return _read_png(out)


def _chromium(read: _Read, seconds: float) -> bytes:
    """`_drawn_by_chromium`, drawn again (within `seconds` in all) when the browser's screenshot
    came before its paint was done: under load, chromium has shown the top three quarters of a
    picture and nothing below. The drawing page ends with a row of its own below the picture
    (`_SENTINEL`), painted after it: a screenshot without that row is not used."""
    started = time.monotonic()
    for attempt in range(1, _PAINT_TRIES + 1):
        left = seconds - (time.monotonic() - started)
        png = _drawn_by_chromium(read, max(left, 1.0))
        whole = _whole(png, read)
        if whole is not None:
            return whole
        log.debug("chromium's screenshot came before its paint was done (try %d of %d)", attempt, _PAINT_TRIES)
    raise SvgError(
        f"chromium did not finish painting the picture in {_PAINT_TRIES} tries (the machine is very busy): "
        "nothing was posted from it; a later run draws it again"
    )


def _drawn_by_chromium(read: _Read, seconds: float) -> bytes:
    """The SVG drawn by Debian's chromium, headless, as CBDQ's browser drew it (on a page with no
    margin, a transparent background), held three ways, each enough alone to keep the bot's files
    out of the picture: bubblewrap's sandbox (pictures/sandbox.py: no file but the page's, no
    network, no key), a frame of its own with no origin (it may not open a file, navigate the
    page, submit a form or open a window) and the drawing's own policy (only what it holds:
    inline styles and scripts, data: pictures and fonts). Each process may allocate
    RENDER_MEMORY_KIB. What the browser's console then says is read (`_browser_verdict`): a
    drawing that tried any of it, or ran out of memory, is refused, naming what it did."""
    program = _program_path("chromium")
    _html_inside_foreign_objects(read.root)
    nonce = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="twitterbot-svg-") as folder:
        where = Path(folder)
        (where / "drawing.xhtml").write_bytes(_drawing_page(read))
        (where / "page.html").write_text(_frame_page(read, nonce), encoding="utf-8")
        out = where / "drawn.png"
        browser = [
            program,
            "--headless",
            "--disable-gpu",
            "--hide-scrollbars",
            "--mute-audio",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--enable-logging=stderr",
            "--v=0",
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--force-device-scale-factor=1",
            "--default-background-color=00000000",
            f"--virtual-time-budget={_PAGE_MILLISECONDS}",
            "--run-all-compositor-stages-before-draw",  # the screenshot waits for the whole paint, even on a busy Pi
            f"--window-size={read.width},{read.height + _window_margin(read.height)}",
            f"--user-data-dir={where / 'profile'}",
            f"--screenshot={out}",
            (where / "page.html").as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            browser.insert(1, "--no-sandbox")  # chromium's own sandbox will not start as root; bubblewrap's holds
        command = [
            "sh",
            "-c",
            'ulimit -d "$1" && ulimit -f "$2" && shift 2 && exec "$@"',
            "sh",
            str(RENDER_MEMORY_KIB),
            str(_MAX_PNG_BYTES // 512),
            *sandboxed(browser, where),
        ]
        said = _run(
            command,
            b"",
            "chromium",
            seconds,
            memory_kib=BROWSER_MEMORY_KIB,
            watch=lambda so_far: _overreach(so_far, nonce),
        )
        _browser_verdict(said, nonce)
        return _read_png(out)


# The page's time for scripts (virtual: a page that waits for nothing is drawn at once); the frame
# page says it is drawn a little before.
_PAGE_MILLISECONDS = 5000
_DRAWN_AT = 4500


def _drawing_page(read: _Read) -> bytes:
    """The page the SVG is drawn on: XHTML (the SVG is XML), no margin, transparent, and a policy
    that lets it load nothing it does not hold."""
    policy = "default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
    return (
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        + f'<meta http-equiv="Content-Security-Policy" content="{policy}"/>'.encode()
        + b"<style>* { margin: 0; padding: 0; } html, body { background: transparent; overflow: hidden; } body > svg { display: block; overflow: hidden; }</style>"
        + b"</head><body>"
        + _serialized(read.root)
        + f'<div style="display: block; height: 1px; width: {read.width}px; background: {_SENTINEL_CSS};"></div>'.encode()
        + b"</body></html>"
    )


def _frame_page(read: _Read, nonce: str) -> str:
    """The page the browser opens: the drawing in a sandboxed frame (scripts, nothing else), and a
    script of its own (only it knows `nonce`) that says on the console each time the frame loads
    (a second load is a navigation) and, near the end of the page's time, that it was drawn."""
    width, height = read.width, read.height + _window_margin(read.height)
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; frame-src file:; '
        f"style-src 'unsafe-inline'; script-src 'nonce-{nonce}'\">"
        "<style>html, body { margin: 0; padding: 0; background: transparent; overflow: hidden; } "
        f"iframe {{ display: block; border: 0; width: {width}px; height: {height}px; }}</style>"
        f'</head><body><script nonce="{nonce}">'
        'var frame = document.createElement("iframe"), loads = 0;'
        'frame.setAttribute("sandbox", "allow-scripts");'
        f'frame.addEventListener("load", function () {{ loads += 1; console.log("{nonce} load " + loads); }});'
        'frame.src = "drawing.xhtml";'
        "document.body.appendChild(frame);"
        f'setTimeout(function () {{ console.log("{nonce} drawn"); }}, {_DRAWN_AT});'
        "</script></body></html>"
    )


_CONSOLE = re.compile(r':CONSOLE[:(]\d*\)?\] "(.*)", source: ')
_URL_IN = re.compile(r"(?:file|https?|wss?|ftp|blob|data):[^'\"\s)]{0,200}", re.IGNORECASE)
# What the browser's console says when a drawing reaches past its page, and what that is in words.
# Chromium has said each in two ways. A style, font or picture the markup names is not among them:
# it is left out, as rsvg leaves it out.
_OVERREACH = (
    ("Not allowed to load local resource", "open a file"),
    ("Unsafe attempt to initiate navigation", "navigate the page"),
    ("permission to navigate", "navigate the page"),
    ("Blocked form submission", "submit a form"),
    ("Blocked opening", "open a window"),
    ("Connecting to", "reach the network"),
    ("Refused to connect", "reach the network"),
    ("Loading the script", "run a script from elsewhere"),
    ("Refused to load the script", "run a script from elsewhere"),
    ("Framing ", "show another page"),
    ("Refused to frame", "show another page"),
)
_OUT_OF_MEMORY = ("allocation failed", "out of memory", "invalid array length", "invalid typed array length")


def _browser_verdict(said: bytes, nonce: str) -> None:
    """SvgError when the browser's console says the drawing reached past its page (a file, the
    network, a navigation, a form, a window), ran out of memory, or was never drawn (the browser
    crashed or was stopped): naming what it did, never drawn into a post."""
    messages = _overreach(said, nonce)
    loads = [line for line in messages if line.startswith(f"{nonce} load ")]
    if len(loads) > 1:
        raise SvgError(
            "the SVG navigated away from its drawing (a refresh, a link or a script), and a drawing may only show "
            "what it holds: remove what navigates"
        )
    if not loads or f"{nonce} drawn" not in messages:
        raise SvgError(
            f"the SVG's page did not finish in its {_PAGE_MILLISECONDS / 1000:g} s (a script that runs too long, or "
            f"ran out of the {RENDER_MEMORY_KIB // 1024} MiB a drawing may use, or the browser stopped): make it simpler"
        )


def _overreach(said: bytes, nonce: str) -> List[str]:
    """The console's messages in what the browser has said so far; SvgError as soon as one says
    the drawing reached past its page or ran out of memory (looked at while the browser runs too:
    a navigation it was refused can leave it waiting out its whole time)."""
    messages = _CONSOLE.findall(said.decode("utf-8", "replace"))
    for message in messages:
        if message.startswith(nonce):
            continue
        lower = message.lower()
        if any(word in lower for word in _OUT_OF_MEMORY):
            raise SvgError(
                f"the SVG's script ran out of the memory a drawing may use ({RENDER_MEMORY_KIB // 1024} MiB): make it simpler"
            )
        for sign, what in _OVERREACH:
            if sign in message:
                raise SvgError(
                    f"the SVG tried to {what}{_named(message)}, and a drawing may only show what it holds: "
                    "remove the link, refresh, form or script that does it"
                )
    return messages


def _named(message: str) -> str:
    """The address a console message names, masked, as " (address)"; "" when it names none."""
    found = _URL_IN.search(message)
    if not found:
        return ""
    url = found.group(0).rstrip(".'\"")
    shown = url if url.lower().startswith(("file:", "data:", "blob:")) else masked_url(url)
    return f" ({shown[:120]})"


# A headless chromium window under about 150 pixels high shows a page 87 pixels shorter than the
# window (room for a browser's bars it does not draw): such a picture is drawn in a window this much
# taller, and cut to its own size.
_SHORT_WINDOW = 400
_WINDOW_MARGIN = 100


def _window_margin(height: int) -> int:
    """How much taller than the picture chromium's window is made (see `_SHORT_WINDOW`): at
    least the row of `_SENTINEL` below it."""
    return _WINDOW_MARGIN if height < _SHORT_WINDOW else 1


# The row the drawing page paints below the picture, after it: a screenshot that holds it was
# taken after the whole picture was painted (`_whole`).
_SENTINEL = (255, 0, 255)
_SENTINEL_CSS = "#ff00ff"
_PAINT_TRIES = 3


def _whole(png: bytes, read: _Read) -> Optional[bytes]:
    """Chromium's screenshot cut to the SVG's size, or None when the row below the picture is not
    the drawing page's `_SENTINEL` (the screenshot came before the paint was done). A file that is
    no PNG is left to `_read_png`'s callers to refuse."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        return png
    import io

    from .prepare import pillow

    with pillow().open(io.BytesIO(png)) as image:
        if image.height <= read.height:
            return None
        row = image.convert("RGBA").crop((0, read.height, read.width, read.height + 1))
        if any(
            pixel[:3] != _SENTINEL or pixel[3] != 255
            for pixel in (row.getpixel((0, 0)), row.getpixel((read.width - 1, 0)))
        ):
            return None
        out = io.BytesIO()
        image.crop((0, 0, read.width, read.height)).save(out, format="PNG")
        return out.getvalue()


XHTML_NS = "http://www.w3.org/1999/xhtml"


def _html_inside_foreign_objects(root: Element) -> None:
    """The elements inside each ``<foreignObject>`` that name no namespace of their own made HTML's,
    as the HTML parser of CBDQ's browser made them (``<foreignObject><div>hi</div>``): read here as
    XML, they were SVG elements the browser does not draw. An ``<svg>`` inside stays SVG."""
    for holder in root.iter(f"{{{SVG_NS}}}foreignObject"):
        stack = list(holder)
        while stack:
            element = stack.pop()
            if element.tag == f"{{{SVG_NS}}}svg":
                continue
            if isinstance(element.tag, str) and element.tag.startswith(f"{{{SVG_NS}}}"):
                element.tag = f"{{{XHTML_NS}}}" + _local(element.tag)
            stack.extend(element)


def _run(
    command: List[str],
    given: bytes,
    name: str,
    seconds: float,
    *,
    memory_kib: int = 0,
    watch: Optional[Callable[[bytes], object]] = None,
) -> bytes:
    """`command` run in a session of its own with `given` on its input; stopped (with every process
    it started) after `seconds`, or when all its processes together hold over `memory_kib` (looked
    at every tenth of a second; 0: not looked at), or when `watch`, given what it has said so far
    at each look, raises; what it said on its error output, or SvgError with it when it fails."""
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as child:
        try:
            said = _waited(child, given, name, seconds, memory_kib, watch)
        finally:
            _stop(child)
    if child.returncode != 0:
        raise SvgError(f"{name} could not draw the SVG ({_last_words(said, child.returncode)}): check the SVG")
    return said


def _waited(
    child: subprocess.Popen,
    given: bytes,
    name: str,
    seconds: float,
    memory_kib: int,
    watch: Optional[Callable[[bytes], object]] = None,
) -> bytes:
    """What `child` said on its error output once it ended, within `seconds` and `memory_kib`,
    shown to `watch` as it comes."""
    ends = time.monotonic() + seconds
    step: Optional[bytes] = given
    looking = memory_kib or watch is not None
    while True:
        left = ends - time.monotonic()
        try:
            _, said = child.communicate(step, timeout=max(0.01, min(left, _LOOK_EVERY if looking else left)))
            return said
        except subprocess.TimeoutExpired as waiting:
            step = None  # given once; a later call only reads
            if watch is not None:
                watch(waiting.stderr or b"")  # all it has said so far
        if time.monotonic() >= ends:
            raise SvgError(f"{name} took over {seconds:g} s to draw the SVG: make it simpler")
        held = session_memory_kib(child.pid) if memory_kib else 0
        if held > memory_kib:
            raise SvgError(
                f"{name} took over {memory_kib // 1024} MiB in all ({held // 1024} MiB) to draw the SVG: the memory "
                "a drawing may use; make it simpler"
            )


_LOOK_EVERY = 0.1  # seconds between looks at a browser's memory


def _stop(child: subprocess.Popen) -> None:
    """The renderer and whatever it started, stopped (a browser leaves helpers behind)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _last_words(said: bytes, code: int) -> str:
    """What a renderer that failed said: its last line that is not a browser's log noise."""
    lines = [line.strip() for line in said.decode("utf-8", "replace").splitlines() if line.strip()]
    lines = [line for line in lines if not re.match(r"\[\d+:\d+:", line)]
    if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) or any(
        word in line.lower() for line in lines for word in ("alloc", "nomemory", "out of memory")
    ):
        return "it ran out of the memory it may use: the SVG or a picture in it is too big"
    if code == -signal.SIGXFSZ:
        return f"its picture was over {_MAX_PNG_BYTES // 1024 // 1024} MB"
    return lines[-1][:300] if lines else f"exit status {code}"


def _read_png(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SvgError("the renderer wrote no picture: check the SVG") from None


# -- the picture ----------------------------------------------------------------------------------


def _stripped(png: bytes, read: _Read) -> bytes:
    """`png` with only the chunks a picture needs (no text, times or paths), checked to be the
    SVG's size; SvgError when it is not a PNG of that size."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise SvgError("the renderer's picture is not a PNG: check the SVG")
    kept = [png[:8]]
    at = 8
    size: Optional[Tuple[int, int]] = None
    while at + 8 <= len(png):
        length = int.from_bytes(png[at : at + 4], "big")
        kind = png[at + 4 : at + 8]
        chunk = png[at : at + 12 + length]
        if len(chunk) < 12 + length:
            break
        if kind == b"IHDR":
            size = (int.from_bytes(chunk[8:12], "big"), int.from_bytes(chunk[12:16], "big"))
        if kind in _KEPT_CHUNKS:
            kept.append(chunk)
        at += 12 + length
        if kind == b"IEND":
            break
    if size != (read.width, read.height):
        raise SvgError(
            f"the renderer drew {size[0]}x{size[1]} pixels, not the SVG's {read.width}x{read.height}"
            if size
            else "the renderer's picture is not a whole PNG: check the SVG"
        )
    return b"".join(kept)


def _visible(png: bytes) -> bool:
    """Whether the picture has a pixel that is not fully transparent (a blank picture is never
    posted). Read with Pillow within the pictures' budget; without Pillow, its IDAT is read."""
    import io

    try:
        from .prepare import pillow

        image = pillow().open(io.BytesIO(png))
    except ImportError:  # no pictures without Pillow: the post's preparation says so
        return True
    with image:
        if "A" not in image.getbands():
            return True
        alpha = image.getbands().index("A")
        return image.getextrema()[alpha][1] > 0


def _local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


def _said(exc: ElementTree.ParseError) -> str:
    return str(exc).split(":", 1)[0]
