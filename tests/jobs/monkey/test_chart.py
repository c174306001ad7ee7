"""The monkey's record chart (jobs/monkey/chart.py) and `monkey --chart FILE`."""

from __future__ import annotations

import io
from dataclasses import dataclass

from conftest import BotHome
from PIL import Image

from twitterbot.jobs.monkey.chart import expected_keystrokes, record_chart


@dataclass
class Record:
    keystrokes: int
    length: int
    text: str


def test_expected_keystrokes_multiply_the_factors() -> None:
    assert expected_keystrokes(lambda length: 27.0, 3) == [1.0, 27.0, 729.0, 19683.0]


def test_the_chart_says_in_words_what_it_shows() -> None:
    records = [Record(20, 1, "t"), Record(900, 2, "to"), Record(5_000, 3, "to ")]
    chart = record_chart(records, expected_keystrokes(lambda length: 27.0, 6), title="A monkey typing at Hamlet")
    with Image.open(io.BytesIO(chart.png)) as image:
        assert image.format == "PNG" and image.size == (1200, 900)
    assert "3 records as blue dots" in chart.alt and "3 letters ('to ') after 5,000" in chart.alt
    assert "about 4 times sooner than expected, above the dashed line" in chart.alt  # 27**3 / 5000


def test_monkey_chart_writes_the_runs_chart(tmp_path) -> None:
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(BOT_STATE_DIR=str(home.path / "state"))
    target = home.path / "target.txt"
    target.write_text("to be or not to be\n")
    common = ("monkey", "--mode", "prefix", "--target", str(target), "--seed", "3")
    typed = home.run(*common, "--until-length", "3", "--no-post", timeout=300)
    assert typed.returncode == 0, typed.stderr
    chart = tmp_path / "chart.png"
    made = home.run(*common, "--chart", str(chart), timeout=300)
    assert made.returncode == 0, made.stderr
    with Image.open(chart) as image:
        assert image.format == "PNG"
    assert "records; alt text: A monkey typing at" in made.stdout and "from its first letter" in made.stdout
    assert "letters ('to " in made.stdout  # the best record, at least 3 letters
    missing = home.run("monkey", "--name", "other", "--mode", "prefix", "--target", str(target), "--chart", str(chart))
    assert missing.returncode == 64 and "no monkey run to chart" in missing.stderr
