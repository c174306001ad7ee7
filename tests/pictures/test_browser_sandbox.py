"""SVG_RENDERER=chromium under hostile SVGs (issue 60): the browser draws inside bubblewrap's
sandbox (pictures/sandbox.py), in a frame that may not navigate, and its console is read; a drawing
that reached for a file or the network, navigated, or ran out of memory is refused naming what it
did, and no file of the bot's, no key and no packet ever leaves.

These need chromium and bubblewrap: skipped, LOUDLY, without them, failed instead with
TWITTERBOT_REQUIRE_BROWSER=1 (CI sets it)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Iterator, List

import pytest

from twitterbot.pictures import sandbox
from twitterbot.pictures.sandbox import sandbox_problem, sandboxed
from twitterbot.pictures.svg import RendererMissing, SvgError, draw_svg, renderer_problem

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SECRET = "X_API_SECRET=s3cr3t-do-not-post"


def _missing(what: str) -> None:
    (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_BROWSER") == "1" else pytest.skip)(
        f"NO {what}: SVG_RENDERER=chromium's sandbox is NOT tested here (apt-get install chromium bubblewrap)"
    )


@pytest.fixture
def bubblewrap() -> None:
    """bubblewrap installed (else failed under TWITTERBOT_REQUIRE_BROWSER=1), and able to make its
    sandbox: a kernel or container that refuses user namespaces is this machine's limit, skipped
    LOUDLY even in CI, where the product itself then refuses to draw with chromium (tested above)."""
    if shutil.which("bwrap") is None:
        _missing("BUBBLEWRAP ON PATH")
    problem = sandbox_problem()
    if problem:
        pytest.skip(f"BUBBLEWRAP CANNOT MAKE ITS SANDBOX ON THIS MACHINE: the sandbox is NOT tested here ({problem})")


@pytest.fixture
def chromium(bubblewrap: None) -> None:
    """The name makes the test slow (tests/conftest.py): each drawing starts a browser."""
    if not CHROMIUM:
        _missing("CHROMIUM ON PATH")


@pytest.fixture
def bot_folder(tmp_path: Path) -> Path:
    """A bot's folder as the SVG would aim at it: its .env with a key."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / ".env").write_text(SECRET + "\n")
    return folder


def _svg(inside: str, html: str = "") -> str:
    body = f'<foreignObject width="300" height="200"><div xmlns="http://www.w3.org/1999/xhtml">{html}</div></foreignObject>'
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="#0000ff"/>'
        + (body if html else "")
        + inside
        + "</svg>"
    )


# -- the sandbox itself ---------------------------------------------------------------------------


@pytest.mark.usefixtures("bubblewrap")
def test_the_sandbox_shows_no_file_of_the_bot_and_no_key(bot_folder: Path, tmp_path: Path, monkeypatch) -> None:
    """What the browser runs in: the bot's .env is not there to read, and a key in the bot's
    environment (python-dotenv puts .env's there) is not in the sandbox's."""
    monkeypatch.setenv("X_API_SECRET", "s3cr3t-do-not-post")
    own = tmp_path / "own"
    own.mkdir()
    done = subprocess.run(
        sandboxed(["sh", "-c", f'cat "{bot_folder}/.env"; ls /; env'], own), capture_output=True, timeout=30
    )
    out = done.stdout.decode() + done.stderr.decode()
    assert "No such file" in out
    assert "s3cr3t" not in out
    assert "home" not in out.split() and "root" not in out.split()  # ls /: no home folders


@pytest.mark.usefixtures("bubblewrap")
def test_the_sandbox_has_no_network_not_even_the_pis_own(tmp_path: Path) -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        done = subprocess.run(
            sandboxed(["sh", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo reached"], tmp_path),
            capture_output=True,
            timeout=30,
        )
    assert b"reached" not in done.stdout


def test_without_bubblewrap_chromium_does_not_draw_and_check_says_so(monkeypatch, tmp_path: Path) -> None:
    """chromium is never run outside the sandbox: without bwrap it is a missing program (69), with
    the apt line, in a run and in check."""
    if not CHROMIUM:
        _missing("CHROMIUM ON PATH")
    (tmp_path / "chromium").symlink_to(CHROMIUM)
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox_problem.cache_clear()
    try:
        with pytest.raises(RendererMissing, match="sudo apt install bubblewrap") as caught:
            draw_svg(_svg(""), renderer="chromium")
        assert caught.value.exit_status == 69
        assert "draws only in a sandbox" in (renderer_problem("chromium") or "")
    finally:
        sandbox_problem.cache_clear()


def test_a_kernel_that_refuses_the_sandbox_is_named(monkeypatch, tmp_path: Path) -> None:
    """A bwrap that cannot make its namespaces (a kernel without unprivileged user namespaces)
    is said with what to do, never worked around by drawing without it."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    sandbox_problem.cache_clear()
    try:
        problem = sandbox.sandbox_problem() or ""
        assert "No permissions to creating new namespace" in problem
        assert "SVG_RENDERER=auto" in problem
    finally:
        sandbox_problem.cache_clear()


# -- hostile drawings ------------------------------------------------------------------------------

# Each way a page reaches the bot's .env, and what the refusal names.
REACHES = {
    "a refresh": ("", '<meta http-equiv="refresh" content="0;url={env}"/>', "open a file"),
    "a scripted location": ('<script>location.href = "{env}";</script>', "", "open a file"),
    "the top page": ('<script>top.location.href = "{env}";</script>', "", "navigate the page"),
    "a link clicked": (
        "",
        '<a id="go" href="{env}">go</a><script>document.getElementById("go").click()</script>',
        "open a file",
    ),
    "a form": (
        "",
        '<form id="f" action="{folder}"></form><script>document.getElementById("f").submit()</script>',
        "submit a form",
    ),
    "a frame": ("", '<iframe src="{folder}" width="300" height="200"></iframe>', "open a file"),
    "a window": ('<script>window.open("{env}");</script>', "", "open a file"),
}


@pytest.mark.usefixtures("chromium")
@pytest.mark.parametrize("way", sorted(REACHES))
def test_a_drawing_that_reaches_for_the_bots_files_is_refused_naming_it(way: str, bot_folder: Path) -> None:
    inside, html, what = REACHES[way]
    env, folder = (bot_folder / ".env").as_uri(), bot_folder.as_uri()
    with pytest.raises(SvgError, match=f"the SVG tried to {what}") as caught:
        draw_svg(_svg(inside.format(env=env, folder=folder), html.format(env=env, folder=folder)), renderer="chromium")
    assert "s3cr3t" not in str(caught.value)
    assert caught.value.exit_status == 65


@pytest.mark.usefixtures("chromium")
def test_a_scripted_fetch_is_refused_with_its_address_masked() -> None:
    with pytest.raises(SvgError, match=r"tried to reach the network \(http://127.0.0.1:9/x\?\*\*\*\)"):
        draw_svg(_svg('<script>fetch("http://127.0.0.1:9/x?token=T0KEN");</script>'), renderer="chromium")


@pytest.fixture
def stun() -> Iterator[List[bytes]]:
    """A UDP port on the Pi's own 127.0.0.1 that keeps every packet it is sent."""
    got: List[bytes] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(0.2)
        stop = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                try:
                    got.append(server.recv(2048))
                except socket.timeout:
                    continue

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        got.append(str(server.getsockname()[1]).encode())  # the port, first
        yield got
        stop.set()
        thread.join()


@pytest.mark.usefixtures("chromium")
def test_webrtc_reaches_no_address_not_even_loopback(stun: List[bytes]) -> None:
    """A page's WebRTC sends STUN to any IP literal, past a browser's proxy; run outside the
    sandbox, this page sends one packet to the port (measured: 1). Inside, none arrives."""
    port = int(stun[0])
    script = (
        f'<script>var pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:127.0.0.1:{port}"}}]}});'
        'pc.createDataChannel("x"); pc.createOffer().then(function (o) { return pc.setLocalDescription(o); });</script>'
    )
    draw_svg(_svg(script), renderer="chromium")
    assert stun[1:] == []


@pytest.mark.usefixtures("chromium")
def test_a_script_past_the_memory_limit_is_refused_as_rsvg_would_be() -> None:
    """1.3 GB asked for by a script: chromium's processes may each allocate what rsvg may map
    (384 MiB), so the drawing fails and is refused naming memory, instead of taking a Pi Zero's."""
    hog = (
        "<script>var kept = []; for (var i = 0; i &lt; 1300; i++) { var b = new Uint8Array(1048576); "
        "b.fill(1); kept.push(b); }</script>"
    )
    with pytest.raises(SvgError, match="memory a drawing may use"):
        draw_svg(_svg(hog), renderer="chromium")


@pytest.mark.usefixtures("chromium")
def test_the_browser_is_stopped_when_its_processes_together_pass_their_memory(monkeypatch) -> None:
    """Each process is held to 384 MiB by the kernel; all of them together are looked at every
    tenth of a second and stopped past BROWSER_MEMORY_KIB (here made 50 MiB: a plain drawing takes
    about 420 MiB), so no SVG takes more of a Pi than the docs say."""
    from twitterbot.pictures import svg

    monkeypatch.setattr(svg, "BROWSER_MEMORY_KIB", 50 * 1024)
    with pytest.raises(SvgError, match=r"chromium took over 50 MiB in all \(\d+ MiB\) to draw the SVG"):
        draw_svg(_svg(""), renderer="chromium")


@pytest.mark.usefixtures("chromium")
def test_a_script_that_never_lets_the_page_finish_is_refused() -> None:
    endless = "<script>var kept = []; for (var i = 0; i &lt; 100000000; i++) { kept.push({n: i}); }</script>"
    with pytest.raises(SvgError, match="did not finish"):
        draw_svg(_svg(endless), renderer="chromium", seconds=20)


@pytest.mark.usefixtures("chromium")
def test_an_honest_script_and_html_still_draw() -> None:
    """What the browser renderer is for still works inside the sandbox."""
    markup = _svg('<script>document.querySelector("rect").setAttribute("fill", "#00ff00");</script>', "<b>hi</b>")
    assert draw_svg(markup, renderer="chromium").png.startswith(b"\x89PNG")


def test_check_advises_the_browser_only_where_its_sandbox_runs(monkeypatch, tmp_path: Path) -> None:
    """For a <foreignObject>, check names the browser renderer only where bubblewrap runs; where it
    cannot, it says to remove the element and why, never to draw it unsandboxed."""
    from twitterbot.pictures.svg import svg_problems

    markup = _svg("", "<b>hi</b>")
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap
    sandbox_problem.cache_clear()
    try:
        [problem] = [said for said in svg_problems(markup, "rsvg") if "foreignObject" in said]
        assert "SVG_RENDERER=chromium" not in problem
        assert "remove it" in problem and "sudo apt install bubblewrap" in problem
    finally:
        sandbox_problem.cache_clear()
