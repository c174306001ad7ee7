"""pictures/svg.py: the SVGs real CBDQ grammars post, drawn as PNGs of their own size, transparent
where they draw nothing; what cannot be drawn here is refused naming the element and the fix.

The drawings need rsvg-convert (Debian's librsvg2-bin): without it those tests are skipped, loudly,
unless TWITTERBOT_REQUIRE_RSVG=1 (CI sets it) makes them fail. The browser renderer's need chromium
(TWITTERBOT_REQUIRE_BROWSER=1, as the status page's browser tests)."""

from __future__ import annotations

import io
import os
import shutil
import struct
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from page_server import Page, PageServer
from PIL import Image

from twitterbot.networks.fetch import fetch_picture
from twitterbot.pictures import svg
from twitterbot.pictures.sandbox import sandbox_problem
from twitterbot.pictures.svg import DrawnSvg, RendererMissing, SvgError, draw_svg, font_problem, svg_problems

RSVG = shutil.which("rsvg-convert")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def chromium() -> None:
    """Skipped, LOUDLY, without chromium; failed instead with TWITTERBOT_REQUIRE_BROWSER=1."""
    if not CHROMIUM or shutil.which("bwrap") is None:
        (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_BROWSER") == "1" else pytest.skip)(
            "NO CHROMIUM OR BUBBLEWRAP ON PATH: SVG_RENDERER=chromium is NOT tested here "
            "(apt-get install chromium bubblewrap)"
        )
    if sandbox_problem():  # the kernel or container refuses user namespaces: this machine's limit
        pytest.skip(
            f"BUBBLEWRAP CANNOT MAKE ITS SANDBOX HERE: SVG_RENDERER=chromium is NOT tested ({sandbox_problem()})"
        )


# -- what real grammars post ---------------------------------------------------------------------

# A text card: a rounded card (so its corners are transparent), a title in a font the Pi lacks
# (drawn in DejaVu instead), lines in tspans, an HTML entity a browser knew.
TEXT_CARD = """<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630">
<style>.small { font: italic 36px serif; fill: #ffd54f; }</style>
<rect x="0" y="0" width="1200" height="630" rx="60" fill="#1a237e"/>
<text x="600" y="200" font-family="Comic Sans MS, cursive" font-size="96" fill="#ffffff" text-anchor="middle">A&nbsp;fine day</text>
<text x="600" y="330" font-family="DejaVu Sans" font-size="48" fill="#ffffff" text-anchor="middle">
  <tspan x="600" dy="0">for the <tspan font-weight="bold" fill="#ff5252">frogs</tspan> of</tspan>
  <tspan x="600" dy="60">the old mill pond</tspan>
</text>
<text x="600" y="560" class="small" text-anchor="middle">- a bot</text>
</svg>"""

# Shape art: an XML declaration, a doctype and a comment before <svg> (dropped, as CBDQ drops
# them), the size from the width and the viewBox's ratio, and no xmlns (CBDQ read it as HTML).
SHAPES = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- made by a grammar -->
<svg width="800" viewBox="0 0 400 300">
<circle cx="100" cy="100" r="60" fill="#e53935" opacity="0.8"/>
<path d="M 200 50 L 350 50 L 275 180 Z" fill="#43a047" stroke="#1b5e20" stroke-width="4"/>
<polyline points="20,280 80,220 140,280 200,220 260,280" fill="none" stroke="#1e88e5" stroke-width="6" stroke-dasharray="12 6"/>
<rect x="290" y="200" width="90" height="80" rx="15" ry="15" fill="#fdd835" fill-opacity="0.5" stroke="#000"/>
</svg>"""

# Noughts and crosses: the grid and each mark placed by <g transform>.
BOARD = """<svg width="300" height="300" xmlns="http://www.w3.org/2000/svg">
<g stroke="#222" stroke-width="6" stroke-linecap="round">
  <line x1="100" y1="10" x2="100" y2="290"/><line x1="200" y1="10" x2="200" y2="290"/>
  <line x1="10" y1="100" x2="290" y2="100"/><line x1="10" y1="200" x2="290" y2="200"/>
</g>
<g transform="translate(0 0)"><path d="M20 20 L80 80 M80 20 L20 80" stroke="#c62828" stroke-width="10"/></g>
<g transform="translate(100 100)"><circle cx="50" cy="50" r="32" fill="none" stroke="#1565c0" stroke-width="10"/></g>
<g transform="translate(200 200) rotate(90 50 50)"><path d="M20 20 L80 80 M80 20 L20 80" stroke="#c62828" stroke-width="10"/></g>
</svg>"""


def _image(drawn: DrawnSvg) -> Image.Image:
    picture = Image.open(io.BytesIO(drawn.png))
    picture.load()
    return picture.convert("RGBA")


def _chunks(png: bytes) -> List[bytes]:
    kinds, at = [], 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kinds.append(png[at + 4 : at + 8])
        at += 12 + length
    return kinds


def _near(pixel: Tuple[int, ...], colour: Tuple[int, int, int], slack: int = 40) -> bool:
    return pixel[3] > 200 and all(abs(a - b) <= slack for a, b in zip(pixel[:3], colour))


def _count(picture: Image.Image, box: Tuple[int, int, int, int], colour: Tuple[int, int, int]) -> int:
    region = picture.crop(box)
    return sum(1 for pixel in region.getdata() if _near(pixel, colour))


@pytest.mark.usefixtures("rsvg")
def test_a_text_card_is_drawn_at_its_size_with_its_text_and_transparent_corners() -> None:
    drawn = draw_svg(TEXT_CARD)
    picture = _image(drawn)
    assert (drawn.width, drawn.height) == picture.size == (1200, 630)
    assert picture.getpixel((0, 0))[3] == 0 and picture.getpixel((1199, 629))[3] == 0  # outside the rounded card
    assert _near(picture.getpixel((600, 20)), (0x1A, 0x23, 0x7E))  # the card itself
    assert _count(picture, (200, 100, 1000, 220), (255, 255, 255)) > 2000  # the title's letters
    assert _count(picture, (300, 280, 900, 420), (0xFF, 0x52, 0x52)) > 300  # the bold red tspan
    assert _count(picture, (400, 500, 800, 580), (0xFF, 0xD5, 0x4F)) > 200  # the styled class
    assert set(_chunks(drawn.png)) <= {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND", b"gAMA", b"sRGB"}


@pytest.mark.usefixtures("rsvg")
def test_shape_art_after_an_xml_declaration_takes_its_height_from_the_viewbox() -> None:
    drawn = draw_svg(SHAPES)
    picture = _image(drawn)
    assert picture.size == (800, 600)  # width 800, the viewBox 4:3, drawn at twice its units
    assert picture.getpixel((0, 0))[3] == 0 and picture.getpixel((799, 0))[3] == 0
    red = picture.getpixel((200, 200))
    assert red[0] > 200 and red[1] < 120 and 150 < red[3] < 230  # opacity 0.8
    assert _near(picture.getpixel((550, 200)), (0x43, 0xA0, 0x47))  # the triangle
    assert _near(picture.getpixel((2 * 50, 2 * 250)), (0x1E, 0x88, 0xE5))  # on the dashed zigzag
    yellow = picture.getpixel((670, 480))
    assert 100 < yellow[3] < 160  # fill-opacity 0.5


@pytest.mark.usefixtures("rsvg")
def test_a_dash_array_leaves_gaps() -> None:
    drawn = draw_svg(
        '<svg width="200" height="20"><line x1="0" y1="10" x2="200" y2="10" stroke="black" stroke-width="8" '
        'stroke-dasharray="20 20"/></svg>'
    )
    row = [_image(drawn).getpixel((x, 10))[3] for x in range(200)]
    assert row[10] == 255 and row[30] == 0 and row[50] == 255


@pytest.mark.usefixtures("rsvg")
def test_a_noughts_and_crosses_board_puts_each_mark_where_its_transform_says() -> None:
    picture = _image(draw_svg(BOARD))
    assert picture.size == (300, 300)
    assert _near(picture.getpixel((50, 50)), (0xC6, 0x28, 0x28))  # the cross at the top left
    assert _near(picture.getpixel((250, 250)), (0xC6, 0x28, 0x28))  # the turned cross at the bottom right
    assert _near(picture.getpixel((150, 118)), (0x15, 0x65, 0xC0))  # the nought's ring, moved to the middle
    assert picture.getpixel((150, 150))[3] == 0  # its empty middle
    assert picture.getpixel((250, 50))[3] == 0  # an empty square
    assert _near(picture.getpixel((100, 50)), (0x22, 0x22, 0x22))  # the grid


def _red_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 40), (255, 0, 0)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def pictures() -> Iterator[PageServer]:
    with PageServer({"/red.png": Page(_red_png(), headers={"Content-Type": "image/png"})}) as server:
        yield server


def _fetcher(server: PageServer):  # noqa: ANN202
    return lambda url: fetch_picture(url, allow_local=True, max_bytes=1_000_000, timeout=5)


@pytest.mark.usefixtures("rsvg")
@pytest.mark.parametrize("attribute", ["href", "xlink:href"])
def test_a_picture_embedded_by_url_is_fetched_once_and_drawn(pictures: PageServer, attribute: str) -> None:
    url = pictures.url + "/red.png"
    markup = (
        f'<svg width="200" height="100"><image {attribute}="{url}" x="10" y="10" width="80" height="80"/>'
        f'<image {attribute}="{url}" x="110" y="10" width="80" height="80"/></svg>'
    )
    picture = _image(draw_svg(markup, fetch=_fetcher(pictures)))
    assert _near(picture.getpixel((50, 50)), (255, 0, 0)) and _near(picture.getpixel((150, 50)), (255, 0, 0))
    assert picture.getpixel((5, 5))[3] == 0
    assert [path for path, _ in pictures.requests] == ["/red.png"]  # one fetch for both


@pytest.mark.usefixtures("rsvg")
def test_a_picture_on_this_machine_is_refused_unless_allowed(pictures: PageServer) -> None:
    markup = f'<svg width="100" height="100"><image href="{pictures.url}/red.png" width="100" height="100"/></svg>'
    with pytest.raises(ValueError, match="loopback address.*LINK_CARDS_LOCAL=yes"):
        draw_svg(markup, fetch=lambda url: fetch_picture(url, allow_local=False, max_bytes=10_000, timeout=5))
    with pytest.raises(SvgError, match="no picture may be fetched here"):
        draw_svg(markup)


@pytest.mark.parametrize(
    "href", ["file:///etc/passwd", "cat.png", "../pictures/cat.png", "/home/pi/cat.png", "ftp://example.com/a.png"]
)
def test_a_picture_named_by_a_file_or_a_relative_path_is_refused(href: str) -> None:
    markup = f'<svg width="100" height="100"><image href="{href}" width="100" height="100"/></svg>'
    fetched: List[str] = []
    with pytest.raises(SvgError, match="not an http or https URL.*files on the Pi are never read"):
        draw_svg(markup, fetch=lambda url: fetched.append(url) or b"")  # type: ignore[func-returns-value]
    assert fetched == []
    assert any("not an http or https URL" in problem for problem in svg_problems(markup))


@pytest.mark.usefixtures("rsvg")
def test_foreign_object_is_refused_by_rsvg_naming_it_and_the_fix() -> None:
    markup = (
        '<svg width="300" height="100"><foreignObject width="300" height="100">'
        '<div xmlns="http://www.w3.org/1999/xhtml" style="background:#00ff00;height:100px">hi</div>'
        "</foreignObject></svg>"
    )
    unsafe = sandbox_problem()  # the browser is named with its cost, or, where it cannot be shut in, why not
    advice = (
        f"a browser would draw it only in a sandbox, and {unsafe}"
        if unsafe
        else "a browser draws it, SVG_RENDERER=chromium in bubblewrap's sandbox, but with about 420 MiB, more than"
        " a Pi Zero 2 W has: docs/pictures.md"
    )
    said = f"<foreignObject> (HTML inside an SVG) cannot be drawn by rsvg: remove it ({advice})"
    with pytest.raises(SvgError) as refused:
        draw_svg(markup)
    assert str(refused.value) == said
    assert svg_problems(markup, "rsvg") == [said]


@pytest.mark.usefixtures("chromium")
def test_foreign_object_and_a_script_are_drawn_by_chromium_transparent_where_nothing_is() -> None:
    markup = (
        '<?xml version="1.0"?><svg width="300" height="200"><foreignObject x="0" y="0" width="300" height="100">'
        '<div xmlns="http://www.w3.org/1999/xhtml" style="background:#00ff00;height:100px">hi</div>'
        '</foreignObject><circle id="dot" cx="250" cy="150" r="30" fill="black"/>'
        "<script>document.getElementById('dot').setAttribute('fill', '#0000ff')</script></svg>"
    )
    assert svg_problems(markup, "chromium") == []
    drawn = draw_svg(markup, renderer="chromium")
    picture = _image(drawn)
    assert picture.size == (300, 200)
    assert _near(picture.getpixel((150, 50)), (0, 255, 0))  # the HTML inside
    assert _near(picture.getpixel((250, 150)), (0, 0, 255))  # coloured by the script
    assert picture.getpixel((10, 190))[3] == 0  # transparent where the SVG draws nothing
    assert b"tEXt" not in _chunks(drawn.png) and b"iTXt" not in _chunks(drawn.png)


@pytest.mark.usefixtures("chromium")
def test_chromium_reaches_no_network(pictures: PageServer) -> None:
    """A picture the SVG names by URL is fetched by the bot (the rules above), never by the browser:
    one named in a style (which the bot does not fetch) is never requested."""
    markup = (
        f'<svg width="100" height="100"><rect width="100" height="100" fill="black"/>'
        f'<rect width="50" height="50" style="fill: url({pictures.url}/red.png)"/>'
        f"<style>@import url({pictures.url}/style.css);</style></svg>"
    )
    draw_svg(markup, renderer="chromium")
    assert pictures.requests == []


# -- what is refused, and said by check --------------------------------------------------------------


@pytest.mark.parametrize(
    ("markup", "said"),
    [
        ("just some text", "there is no <svg in it"),
        ('<svg viewBox="0 0 100 100"><circle r="5"/></svg>', "only a viewBox"),
        ('<svg width="100%" height="100%"><circle r="5"/></svg>', "no width and height"),
        ('<svg width="100" height="100"><circle r=5></svg>', "not well-formed XML"),
        ('<svg width="100" height="100"><text>Tom & Jerry</text></svg>', "write & as &amp;"),
        ('<svg width="100000" height="100000"><circle r="5"/></svg>', "100,000x100,000 pixels, too big"),
        ('<svg width="20000" height="10"><circle r="5"/></svg>', "too big"),
        ('<svg xmlns="http://example.com/not-svg" width="10" height="10"/>', "is not an SVG <svg>"),
        ('<svg width="10" height="10">' + "<g>" * 5000 + "</g>" * 5000 + "</svg>", "nests elements more than 200"),
        ("<svg" + " a" * 400_000, "not well-formed XML"),
        ('<svg width="10" height="10">' + " " * 1_000_000 + "</svg>", "characters, over 1,000,000"),
    ],
)
def test_what_cannot_be_drawn_says_what_and_the_fix(markup: str, said: str) -> None:
    with pytest.raises(SvgError) as caught:
        draw_svg(markup)
    assert said in str(caught.value) and caught.value.exit_status == 65
    assert said in svg_problems(markup)[0]


@given(st.text(max_size=300), st.sampled_from(["auto", "rsvg", "chromium"]))
@settings(max_examples=300, deadline=None)
def test_any_text_gives_a_list_of_problems_never_an_exception(markup: str, renderer: str) -> None:
    problems = svg_problems(markup, renderer)
    assert isinstance(problems, list) and all(isinstance(problem, str) and problem for problem in problems)


@given(
    st.from_regex(
        r'<svg( width="[0-9.]{0,6}(px|%)?")?( height="[0-9.]{0,6}")?( viewBox="[0-9 .,-]{0,20}")?>', fullmatch=True
    )
)
@settings(max_examples=300, deadline=None)
def test_any_size_is_within_the_pixel_budget_or_refused(start: str) -> None:
    problems = svg_problems(start + "</svg>", "chromium")
    if not problems:
        read = svg._read(start + "</svg>")
        assert 1 <= read.width <= svg.MAX_SIDE and 1 <= read.height <= svg.MAX_SIDE
        assert read.width * read.height <= svg.MAX_SVG_PIXELS


def test_an_svg_that_can_be_drawn_has_no_problems() -> None:
    problems = svg_problems(SHAPES)
    assert problems == ([] if RSVG else [svg.renderer_problem()])


def test_an_unknown_renderer_names_the_choices() -> None:
    with pytest.raises(SvgError, match="SVG_RENDERER='inkscape' is not one of auto, rsvg, chromium"):
        draw_svg(BOARD, renderer="inkscape")


@pytest.mark.usefixtures("rsvg")
def test_an_svg_that_draws_nothing_visible_is_refused_never_posted_blank() -> None:
    with pytest.raises(SvgError, match="draws nothing visible"):
        draw_svg('<svg width="100" height="100"><circle cx="50" cy="50" r="40" fill="none"/></svg>')


def test_a_missing_renderer_names_its_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RendererMissing, match="sudo apt install librsvg2-bin") as caught:
        draw_svg(BOARD)
    assert caught.value.exit_status == 69
    assert "sudo apt install librsvg2-bin" in svg_problems(BOARD)[-1]
    with pytest.raises(RendererMissing, match="sudo apt install chromium bubblewrap, or set SVG_RENDERER=auto"):
        draw_svg(BOARD, renderer="chromium")


def _fake_rsvg(folder: Path, script: str) -> None:
    fake = folder / "rsvg-convert"
    fake.write_text("#!/bin/sh\n" + script + "\n")
    fake.chmod(0o755)


def test_a_renderer_that_hangs_is_stopped_at_the_time_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_rsvg(tmp_path, "exec sleep 60")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(svg, "RENDER_SECONDS", 0.5)
    with pytest.raises(SvgError, match="took over 0.5 s to draw the SVG"):
        draw_svg(BOARD)


def test_a_renderer_that_fails_says_what_it_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_rsvg(tmp_path, "echo 'Error reading SVG: something odd' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with pytest.raises(SvgError, match="rsvg-convert could not draw the SVG \\(Error reading SVG: something odd\\)"):
        draw_svg(BOARD)


def test_a_png_of_another_size_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    small = tmp_path / "small.png"
    Image.new("RGBA", (10, 10), (0, 0, 0, 255)).save(small)
    _fake_rsvg(tmp_path, f'for a; do case "$a" in --output=*) cp {small} "${{a#--output=}}";; esac; done')
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with pytest.raises(SvgError, match="drew 10x10 pixels, not the SVG's 300x300"):
        draw_svg(BOARD)


def test_an_embedded_picture_of_too_many_pixels_is_refused_from_its_header() -> None:
    out = io.BytesIO()
    Image.new("1", (5000, 3000)).save(out, "PNG")  # 15 megapixels in a few kilobytes
    markup = '<svg width="100" height="100"><image href="https://example.com/big.png" width="100" height="100"/></svg>'
    with pytest.raises(SvgError, match="5,000x3,000 pixels, more than a Pi decodes inside an SVG"):
        draw_svg(markup, fetch=lambda url: out.getvalue())


def test_an_embedded_file_that_is_not_a_picture_is_refused() -> None:
    markup = '<svg width="100" height="100"><image href="https://example.com/a.png" width="100" height="100"/></svg>'
    with pytest.raises(SvgError, match="is not a PNG, JPEG or GIF picture"):
        draw_svg(markup, fetch=lambda url: b"<html>hello</html>")
    with pytest.raises(SvgError, match="cannot be read"):
        draw_svg(markup, fetch=lambda url: b"\x89PNG\r\n\x1a\n broken")


@pytest.mark.usefixtures("rsvg")
def test_a_drawing_over_the_renderers_memory_is_refused_not_left_to_the_pi() -> None:
    """A blur over 4000x3000 pixels would take rsvg about 345 MiB: the child's limit stops it."""
    markup = (
        '<svg width="4000" height="3000"><filter id="b"><feGaussianBlur stdDeviation="20"/></filter>'
        '<rect width="4000" height="3000" fill="red" filter="url(#b)"/></svg>'
    )
    with pytest.raises(SvgError, match="ran out of the memory it may use"):
        draw_svg(markup)


@pytest.mark.usefixtures("chromium")
@pytest.mark.parametrize("height", [1, 10, 20, 100, 120])
def test_chromium_draws_a_short_picture_whole(height: int) -> None:
    """A headless chromium window about 90 to 150 pixels high showed only its top 13 pixels or so:
    a 300x100 card drawn with SVG_RENDERER=chromium was a red strip over a transparent picture; and
    an SVG shorter than a line of text sat on the text's baseline, its top rows cut (10 high: 5 lost)."""
    drawn = draw_svg(
        f'<svg width="300" height="{height}"><rect width="300" height="{height}" fill="red"/></svg>',
        renderer="chromium",
    )
    picture = _image(drawn).convert("RGBA")
    assert picture.size == (300, height)
    assert picture.getchannel("A").getbbox() == (0, 0, 300, height)
    assert _near(picture.getpixel((150, height - 1)), (255, 0, 0))


@pytest.mark.usefixtures("chromium")
def test_html_inside_a_foreign_object_needs_no_namespace_as_in_cbdq_s_browser() -> None:
    """CBDQ's browser read the SVG as HTML, so ``<foreignObject><div>`` was HTML without saying so;
    read as XML it was an SVG element chromium does not draw, and the picture was refused as blank."""
    markup = (
        '<svg width="200" height="200"><foreignObject width="200" height="200">'
        '<svg width="200" height="50" style="display:block"><rect width="200" height="50" fill="#0000ff"/></svg>'
        '<div style="background:#00ff00;width:200px;height:100px">hi <b>there</b></div>'
        "</foreignObject></svg>"
    )
    picture = _image(draw_svg(markup, renderer="chromium")).convert("RGBA")
    assert _near(picture.getpixel((100, 25)), (0, 0, 255))  # an SVG inside it stays SVG
    assert _near(picture.getpixel((100, 120)), (0, 255, 0))  # the HTML


@pytest.mark.parametrize(
    "markup",
    [
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<svg width="100" height="100"><text y="20">&x;</text></svg>',
        '<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<svg width="9" height="9"><text>&b;&b;&b;</text></svg>',
    ],
)
def test_an_external_entity_or_a_billion_laughs_is_refused_naming_the_entity(markup: str) -> None:
    """The DOCTYPE before <svg is left out, so its entities are never expanded (no file is read, no
    text multiplied); the refusal names the entity rather than advising to write & as &amp;."""
    problems = svg_problems(markup)
    assert len(problems) == 1 and "which it does not define" in problems[0]
    assert "&x;" in problems[0] or "&b;" in problems[0]
    with pytest.raises(SvgError, match="a DOCTYPE's entities are never read here"):
        draw_svg(markup)


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig's fc-list is not installed")
def test_check_names_text_no_font_of_the_machine_draws() -> None:
    """An SVG card's text in characters no installed font has was drawn as empty boxes, and posted;
    `check` names them and the package (a private-use character: no font has it)."""
    assert font_problem(['<svg width="9" height="9"><text>caf&#233; \u00e9</text></svg>']) is None
    said = font_problem(['<svg width="9" height="9"><text>mark \uf8e0</text></svg>'])
    assert said is not None and "\uf8e0" in said and "empty boxes: sudo apt install fonts-noto-core" in said
    assert font_problem(['<svg width="9" height="9"><text>\uf8e0</text></svg>'], "chromium") is None


def _screenshot(width: int, height: int, painted: int, sentinel: bool) -> bytes:
    """A screenshot as chromium takes it: the picture's top `painted` rows red, and below the
    picture the drawing page's own row (the sentinel) when the paint was done."""
    shot = Image.new("RGBA", (width, height + 100), (0, 0, 0, 0))
    shot.paste((255, 0, 0, 255), (0, 0, width, painted))
    if sentinel:
        shot.paste((255, 0, 255, 255), (0, height, width, height + 1))
    out = io.BytesIO()
    shot.save(out, format="PNG")
    return out.getvalue()


def test_a_screenshot_taken_before_the_paint_was_done_is_drawn_again(monkeypatch) -> None:
    """Under load chromium's screenshot showed 75 of a picture's 100 rows: the drawing page's row
    below the picture (painted after it) was missing too, so the picture is drawn again."""
    shots = [_screenshot(300, 100, 75, sentinel=False), _screenshot(300, 100, 100, sentinel=True)]
    monkeypatch.setattr(svg, "_drawn_by_chromium", lambda read, seconds: shots.pop(0))
    read = svg._read('<svg width="300" height="100"><rect width="300" height="100" fill="red"/></svg>')
    picture = Image.open(io.BytesIO(svg._chromium(read, 10.0)))
    assert shots == [] and picture.size == (300, 100)
    assert picture.convert("RGBA").getchannel("A").getbbox() == (0, 0, 300, 100)


def test_a_paint_never_done_is_refused_not_posted_half_drawn(monkeypatch) -> None:
    tries: List[float] = []

    def unfinished(read, seconds: float) -> bytes:
        tries.append(seconds)
        return _screenshot(300, 100, 75, sentinel=False)

    monkeypatch.setattr(svg, "_drawn_by_chromium", unfinished)
    read = svg._read('<svg width="300" height="100"><rect width="300" height="100" fill="red"/></svg>')
    with pytest.raises(SvgError, match="did not finish painting the picture in 3 tries"):
        svg._chromium(read, 10.0)
    assert len(tries) == 3
