"""Each puzzle kind's solution as a picture (jobs/puzzles/picture.py), on the seed's own examples."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from twitterbot.jobs.puzzles.job import Options, load_kind, run_puzzle
from twitterbot.jobs.puzzles.picture import solved_picture
from twitterbot.progress.reports import NullReporter


@pytest.mark.parametrize("kind", ["hidoku", "checkerboard", "jodici", "equation", "panguru"])
def test_each_kind_draws_its_solution(kind: str) -> None:
    module = load_kind(kind)
    result = run_puzzle(
        module,
        module.parse(module.EXAMPLE, "example"),
        NullReporter(),
        Options("example", all_solutions=False),
        out=io.StringIO(),
    )
    picture = solved_picture(kind, "example", result.first, result.first_text)
    with Image.open(io.BytesIO(picture.png)) as image:
        assert image.format == "PNG" and image.width >= 800 and image.height >= 300
    assert picture.alt.startswith(f"{kind.capitalize()} example: solved")
    if kind == "hidoku":  # the grid is read out row by row
        first_row = " ".join(str(value) for value in result.first[0])
        assert f"Row by row: {first_row};" in picture.alt and "from 1 to 100" in picture.alt
    elif kind == "checkerboard":
        assert f"cut into {len(result.first)} pieces" in picture.alt and "stone 1: a1" in picture.alt
    else:  # the text read out, without a grid's rules
        first = next(line for line in result.first_text.split("\n") if line.strip(" -+=|"))
        assert " ".join(first.replace("|", " ").split()) in picture.alt and "---" not in picture.alt
