"""Features degrade, never break: an X-only install (`pip install .`, no extra) posts text, and
`check` lists each feature as available or not with the command that adds it, failing only for
the ones the settings use. The packages are hidden from bot.py by an import blocker in
sitecustomize, as if they were never installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Iterable

import pytest
from conftest import REPO, BotHome

from twitterbot.capability import arm32
from twitterbot.cli import built_in
from twitterbot.errors import ExitStatus

# Every package beyond the core (tweepy, python-dotenv, schedule, twitter-text-parser, requests, urllib3).
EXTRAS = ("PIL", "numpy", "atproto", "atproto_client", "httpx", "mastodon", "flask", "waitress", "dask", "distributed")

BLOCKER = '''
import sys

class _NotInstalled:
    """Finds each hidden module as missing, as on a machine that never installed it."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
'''


def hide(folder: Path, modules: Iterable[str]) -> dict:
    """The environment for bot.py with `modules` hidden."""
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER.format(hidden=set(modules)))
    return {"PYTHONPATH": str(folder)}


def test_an_x_only_install_posts_text_and_check_lists_what_it_lacks(home: BotHome, tmp_path: Path) -> None:
    hidden = hide(tmp_path / "x-only", EXTRAS)
    home.write_tweets("a plain line of text\n")
    posted = home.run_process("--force", env=hidden)
    assert posted.returncode == 0, posted.stderr
    assert [post.text for post in home.emulator.posts] == ["a plain line of text"]

    check = home.run_process("check", env=hidden)
    assert check.returncode == 0, check.stdout + check.stderr  # POST_TO=x uses nothing missing
    lines = check.stdout.splitlines()
    for feature, extra in [
        ("pictures", "pictures"),
        ("posting to Mastodon", "mastodon"),
        ("posting to Bluesky", "bluesky"),
        ("the status page (serve)", "web"),
        ("the pegs job", "jobs"),
        ("the monkey job", "jobs"),
        ("the jobs on a Dask cluster (--cluster)", "cluster"),
    ]:
        said = [line for line in lines if line.startswith(f"note     {feature}: not available")]
        assert said and f'pip install ".[{extra}]"' in said[0], check.stdout
    assert "sudo apt install python3-pil" in check.stdout
    assert "all good" in check.stdout


def test_check_fails_for_a_feature_the_settings_use(home: BotHome, tmp_path: Path) -> None:
    hidden = hide(tmp_path / "no-mastodon", ["mastodon"])
    home.write_env(POST_TO="x,mastodon", MASTODON_INSTANCE="https://mastodon.example", MASTODON_ACCESS_TOKEN="t")
    check = home.run_process("check", env=hidden)
    assert check.returncode == ExitStatus.UNAVAILABLE == 69, check.stdout + check.stderr
    assert "PROBLEM  posting to Mastodon: not available (mastodon not installed)" in check.stdout
    assert "ok       pictures: available" in check.stdout


def test_a_job_without_numpy_says_which_feature_and_how_to_add_it(home: BotHome, tmp_path: Path) -> None:
    hidden = hide(tmp_path / "no-numpy", ["numpy"])
    result = home.run_process("pegs", "solve", "english", "--no-post", env=hidden)
    assert result.returncode == 69, result.stderr
    assert (
        "the package numpy is missing" in result.stderr and "needed by the pegs job and the monkey job" in result.stderr
    )
    assert "sudo apt install python3-numpy" in result.stderr and 'pip install ".[jobs]"' in result.stderr


def test_without_freetype_the_boards_are_drawn_with_pillows_own_font(tmp_path: Path) -> None:
    """A Pillow that pip built without libfreetype-dev has no `_imagingft`: text is still drawn."""
    hidden = hide(tmp_path / "no-freetype", [])
    (tmp_path / "no-freetype" / "sitecustomize.py").write_text(
        BLOCKER.replace('name.split(".")[0] in {hidden!r}', 'name == "PIL._imagingft"')
    )
    probe = (
        "from PIL import Image, ImageDraw, features\n"
        "from twitterbot.pictures.draw import font, text_width\n"
        "assert not features.check('freetype2')\n"
        "image = Image.new('L', (200, 40))\n"
        "draw = ImageDraw.Draw(image)\n"
        "draw.text((2, 2), 'english: 31 moves', font=font(24), fill=255)\n"
        "print(text_width(draw, 'english', font(24, mono=True)), image.getbbox() is not None)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env={**hidden, "PYTHONPATH": f"{hidden['PYTHONPATH']}:{REPO}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    width, drawn = result.stdout.split()
    assert int(width) > 0 and drawn == "True"


def test_without_dejavu_a_pillow_before_10_1_draws_with_its_bitmap_font(tmp_path: Path) -> None:
    """Debian's python3-pil up to Bookworm (9.4) has no `load_default(size=)`; a system without
    DejaVu then gets Pillow's bitmap font, as a Pillow without FreeType does."""
    probe = (
        "from PIL import Image, ImageDraw, ImageFont\n"
        "bitmap, truetype = ImageFont.load_default, ImageFont.truetype\n"
        "def no_file(font, *args, **kwargs):  # no DejaVu on this system; Pillow's own bytes still load\n"
        "    if isinstance(font, str):\n"
        "        raise OSError('cannot open resource')\n"
        "    return truetype(font, *args, **kwargs)\n"
        "ImageFont.truetype = no_file\n"
        "ImageFont.load_default = lambda: bitmap()  # Pillow 9.4's signature: no size\n"
        "from twitterbot.pictures.draw import font, text_width\n"
        "image = Image.new('L', (200, 40))\n"
        "draw = ImageDraw.Draw(image)\n"
        "draw.text((2, 2), 'english: 31 moves', font=font(24), fill=255)\n"
        "print(text_width(draw, 'english', font(24, mono=True)), image.getbbox() is not None)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    width, drawn = result.stdout.split()
    assert int(width) > 0 and drawn == "True"


def test_posting_to_bluesky_needs_neither_zstandard_nor_websockets_nor_dnspython(tmp_path: Path) -> None:
    """A 32-bit Pi installs atproto without them (PyPI has no armv7 wheel of zstandard): every
    atproto import of the Bluesky package works with them missing."""
    import ast

    imports = []
    for module in sorted((REPO / "twitterbot" / "networks" / "bluesky").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0].startswith("atproto"):
                imports.append(ast.unparse(node))
    assert imports
    hidden = hide(tmp_path / "no-firehose", ["zstandard", "websockets", "dns"])
    probe = (
        "\n".join(sorted(set(imports)))
        + "\nimport sys\nprint(sorted(m for m in ('zstandard', 'websockets', 'dns') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env={**hidden}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_check_notes_a_pillow_without_freetype_with_the_reinstall_that_works(home: BotHome, tmp_path: Path) -> None:
    """pip reuses the wheel it built without FreeType unless told --no-cache-dir."""
    from importlib import metadata

    hidden = hide(tmp_path / "no-freetype", [])
    (tmp_path / "no-freetype" / "sitecustomize.py").write_text(
        BLOCKER.replace('name.split(".")[0] in {hidden!r}', 'name == "PIL._imagingft"')
    )
    check = home.run_process("check", env=hidden)
    assert check.returncode == 0, check.stdout + check.stderr
    (said,) = [line for line in check.stdout.splitlines() if "no FreeType" in line]
    assert said.startswith("note     pictures: this Pillow has no FreeType"), said
    assert "sudo apt install libfreetype-dev" in said
    assert f"--force-reinstall --no-deps --no-cache-dir Pillow=={metadata.version('Pillow')}" in said


def readme_pi_section() -> str:
    """The README's "32-bit Raspberry Pi OS" section, to its next heading."""
    text = (REPO / "README.md").read_text()
    start = text.index("## 32-bit Raspberry Pi OS")
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.parametrize(
    "machine, pointer_bytes, pi32",
    [
        ("armv7l", 4, True),  # 32-bit Raspberry Pi OS on a Pi 2 to 5
        ("armv6l", 4, True),  # on a Pi 1, Zero, Zero W
        ("aarch64", 4, True),  # 32-bit Raspberry Pi OS under its 64-bit kernel (a Pi 4 or 5)
        ("aarch64", 8, False),  # 64-bit Raspberry Pi OS: PyPI's wheels
        ("arm64", 8, False),
        ("x86_64", 8, False),
        ("i686", 4, False),
    ],
)
def test_a_32_bit_arm_system_is_told_by_its_machine_and_pointer_size(
    machine: str, pointer_bytes: int, pi32: bool
) -> None:
    assert arm32(machine, pointer_bytes) is pi32


def test_on_a_32_bit_pi_every_hint_installs_from_apt_into_a_venv_that_sees_it() -> None:
    """pip would build numpy, Pillow and cffi there (no armv7 wheel): each hint takes Raspberry Pi
    OS's build, and the Bluesky one the README's commands, never `pip install ".[bluesky]"`."""
    registry = built_in()
    hints = {
        feature.name: feature.install_on(True)
        for capability in registry.capabilities
        for feature in capability.features
    }
    for name in ("pictures", "the pegs job", "posting to Bluesky"):
        assert hints[name].startswith("sudo apt install -y python3-"), hints[name]
        assert "python3 -m venv --system-site-packages .venv && " in hints[name]
    bluesky = hints["posting to Bluesky"]
    assert '".[bluesky]"' not in bluesky
    pip = bluesky.split("--system-site-packages .venv && ", 1)[1].split(" (README", 1)[0]
    section = readme_pi_section()
    for command in pip.split(" && "):  # the README's lines, as a new user pastes them
        assert f"\n{command}\n" in section, command
    assert "python3-cffi" in section and "--system-site-packages .venv" in section
    assert hints["posting to Mastodon"] == '.venv/bin/python -m pip install ".[mastodon]"'  # pure Python: safe


def test_check_on_a_32_bit_pi_points_bluesky_to_the_readmes_commands(home: BotHome, tmp_path: Path) -> None:
    """`check` on armv7l without the Bluesky client: the hint a 32-bit Pi can follow without a compiler."""
    hidden = hide(tmp_path / "armhf", ["atproto", "atproto_client"])
    sitecustomize = tmp_path / "armhf" / "sitecustomize.py"
    sitecustomize.write_text(sitecustomize.read_text() + "import platform\nplatform.machine = lambda: 'armv7l'\n")
    home.write_env(POST_TO="x,bluesky", BLUESKY_HANDLE="bot.example.com", BLUESKY_APP_PASSWORD="abcd-efgh-ijkl-mnop")
    check = home.run_process("check", env=hidden)
    assert check.returncode == ExitStatus.UNAVAILABLE == 69, check.stdout + check.stderr
    (said,) = [line for line in check.stdout.splitlines() if "posting to Bluesky" in line]
    assert said.startswith("PROBLEM  posting to Bluesky: not available (atproto_client not installed)"), said
    assert "sudo apt install -y python3-cffi && python3 -m venv --system-site-packages .venv && " in said
    assert ".venv/bin/pip install -r requirements-pi.txt && .venv/bin/pip install -q --no-deps atproto==" in said
    assert '".[bluesky]"' not in said and 'README: "32-bit Raspberry Pi OS"' in said


def test_check_notes_a_missing_svg_renderer_with_its_apt_package(home: BotHome, tmp_path: Path) -> None:
    """rsvg-convert is a program, not a module: `check` looks for it on PATH and names the apt
    package; it is a note (the tweets file draws no SVG) and the other checks still run."""
    check = home.run("check", env={"PATH": str(tmp_path)})
    assert check.returncode == 0, check.stdout + check.stderr
    assert (
        "note     SVG pictures ({svg ...} in a grammar): not available (rsvg-convert not installed); "
        "to add it: sudo apt install librsvg2-bin"
    ) in check.stdout


def test_check_fails_when_the_chosen_svg_renderer_is_missing(home: BotHome, tmp_path: Path) -> None:
    home.write_env(SVG_RENDERER="chromium")
    check = home.run("check", env={"PATH": str(tmp_path)})
    assert check.returncode != 0, check.stdout
    assert "PROBLEM  chromium is not installed, and SVG_RENDERER=chromium draws the SVG pictures" in check.stdout
    assert "sudo apt install chromium bubblewrap, or set SVG_RENDERER=auto" in check.stdout


def test_a_program_feature_installs_with_apt_on_every_pi() -> None:
    from twitterbot.capability import Feature

    feature = Feature("SVG", (), "", "librsvg2-bin", programs=("no-such-program-here",))
    assert feature.missing() == ("no-such-program-here",) and feature.missing_modules() == ()
    assert feature.install_on(True) == feature.install_on(False) == "sudo apt install librsvg2-bin"
