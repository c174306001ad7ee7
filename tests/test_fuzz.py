"""The fuzz driver (benchmarks/fuzz.py), short: generated tweets files, env files, damaged pictures,
grammars and hostile monitors through the real CLI entry, and hostile answers to each network's look-up of
an uncertain post. No exit 1, no traceback, only documented exit codes, nothing in the history after
a refused file. The long run (`benchmarks/fuzz.py --count 10000`) goes before a release."""

from __future__ import annotations

import random
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import fuzz  # noqa: E402  (benchmarks/fuzz.py)


def test_a_short_fuzz_of_tweets_files_and_env_files_finds_nothing() -> None:
    # Its own seed: the long run's cases (seed 29) are another sample.
    figures = fuzz.fuzz(["tweets"], 25, seed=2026)
    figures_env = fuzz.fuzz(["env"], 120, seed=2026)
    failures = figures.failures + figures_env.failures
    assert failures == [], [(f.kind, f.number, f.why) for f in failures]
    assert figures.cases["tweets"] == 25 and figures_env.cases["env"] == 120
    # Both ways out happen, so the cases reach past the file checks: some post, some are refused.
    statuses = figures.statuses["tweets"]
    assert statuses["--force:0"] and statuses["--force:65"]
    assert figures_env.statuses["env"]["--dry-run:0"] and figures_env.statuses["env"]["--dry-run:78"]


def test_a_short_fuzz_of_damaged_pictures_finds_nothing() -> None:
    """Damaged PNG, JPEG, GIF and WebP files: a picture or a PictureError for every network, never exit 1."""
    figures = fuzz.fuzz(["pictures"], 150, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["pictures"]
    assert statuses["prepare:0"] and statuses["prepare:65"] and statuses["--dry-run:65"]


def test_a_short_fuzz_of_hostile_monitors_finds_nothing() -> None:
    """HEALTHCHECK_URL and NOTIFY_URL, with and without a login, on a server that answers 500s,
    broken status lines, 101 headers and redirects to anywhere: the run's own exit status, no
    traceback, no password or check key in any output."""
    figures = fuzz.fuzz(["monitors"], 40, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["monitors"]
    assert statuses["--force:0"] and statuses["--force:77"] and statuses["check:0"] == 40


def test_a_short_fuzz_of_hostile_answers_to_look_ups_finds_nothing() -> None:
    """Malformed, mistyped, deep, huge or not-JSON answers: each look-up answers (never "found")
    or fails with a PostError, and a run that meets one while settling exits 0; a read of the
    account's mentions gives well-formed mentions or a PostError."""
    figures = fuzz.fuzz(["answers"], 80, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["answers"]
    assert statuses["look_up:0"] and statuses["look_up:75"] and statuses["--seed:0"]
    assert statuses["mentions:0"] and statuses["mentions:75"]


def test_a_short_fuzz_of_grammars_finds_nothing() -> None:
    """Grammars, some hostile (a rule doubled forty times, JSON nested 100,000 deep, a lone
    surrogate...): the run, check, the dry run and the status page end with a documented code,
    a page, and in seconds."""
    figures = fuzz.fuzz(["grammars"], 30, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["grammars"]
    assert statuses["--force:0"] and statuses["--force:65"] and statuses["check:0"] and statuses["check:65"]
    assert statuses["page:0"] == 60


def test_a_case_is_the_same_file_every_time() -> None:
    """A failing case is repeated by its number (`--case N`): the generators depend on the seed alone."""
    for kind, make in (
        ("tweets", fuzz.tweets_file),
        ("env", fuzz.env_file),
        ("pictures", fuzz.damaged_picture),
        ("grammars", fuzz.grammar_file),
    ):
        first = [make(random.Random(f"29/{kind}/{number}")) for number in range(30)]
        again = [make(random.Random(f"29/{kind}/{number}")) for number in range(30)]
        assert first == again and len(set(first)) > 20
    plans = [fuzz.monitor_plan(random.Random(f"29/monitors/{number}"))[:2] for number in range(30)]
    assert plans == [fuzz.monitor_plan(random.Random(f"29/monitors/{number}"))[:2] for number in range(30)]
    assert len(set(plans)) > 20
    answers = [repr(fuzz.hostile_answer(random.Random(f"29/answers/{n}"), "x", "timeline", "w")) for n in range(30)]
    assert answers == [
        repr(fuzz.hostile_answer(random.Random(f"29/answers/{n}"), "x", "timeline", "w")) for n in range(30)
    ]
    assert len(set(answers)) > 20


def test_the_generators_make_what_the_issue_lists() -> None:
    """Byte-order marks, NULs, invalid UTF-8, CRLF, huge lines, Markdown images, other encodings."""
    files = b"".join(fuzz.tweets_file(random.Random(f"29/tweets/{number}")) for number in range(400))
    for needle in (b"\xef\xbb\xbf", b"\x00", b"\xed\xa0\x80", b"\r\n", b"![", b"\xff\xfe"):
        assert needle in files, needle
    assert any(len(line) > 20_000 for line in files.split(b"\n"))
    envs = b"".join(fuzz.env_file(random.Random(f"29/env/{number}")) for number in range(400))
    for needle in (b"export ", b"TWITTERBOT_PEGS_KERNEL", b"\r\n", b"'", b"\x00"):
        assert needle in envs, needle
    assert not any(fuzz._unsafe_path(fuzz.env_file(random.Random(f"7/env/{n}"))) for n in range(2000))
    answers = [fuzz.hostile_answer(random.Random(f"29/answers/{n}"), "mastodon", "statuses", "w") for n in range(400)]
    assert any(answer.size > 8 * 1024 * 1024 for answer in answers)  # past the bound on any answer
    assert any(answer.body == b"[" * 100_000 for answer in answers)  # deeper than the decoder goes
    assert any(answer.status >= 400 for answer in answers) and any(isinstance(a.body, dict) for a in answers)
    grammars = b"".join(fuzz.grammar_file(random.Random(f"29/grammars/{number}")) for number in range(400))
    for needle in (b"[x:#x##x#]" * 10, b".replace(a,aaaaaaaaaa)" * 2, b"[" * 100_000, b"\\ud800", b'"r2999"'):
        assert needle in grammars, needle[:40]
    assert b"[#" * 100 in grammars and b"#r0#" * 4000 in grammars and b"#origin##origin#" in grammars


def test_a_short_fuzz_of_the_calendar_finds_every_impossible_date() -> None:
    """Tweets files of timed lines, a quarter of them with a date that cannot come: `check` names
    each such line with exit 65 and no traceback, and a dry run --at a drawn time decides."""
    figures = fuzz.fuzz(["calendar"], 30, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["calendar"]
    assert statuses["check:65"] and statuses["check:0"]


def test_a_short_fuzz_of_the_services_tags_finds_nothing() -> None:
    """Grammars of CBDQ's, CBTS's and BBDQ's tags and codes, with mistakes and hostile SVGs (an
    external entity, a billion laughs, a file named by an <image> or a <use>, sizes past the
    budget): a documented code in seconds, no tag left in a post's text, a hostile SVG refused."""
    figures = fuzz.fuzz(["tags"], 40, seed=2026)
    assert figures.failures == [], [(f.number, f.why) for f in figures.failures]
    statuses = figures.statuses["tags"]
    assert statuses["--force:0"] and statuses["--force:65"] and statuses["check:0"] and statuses["check:65"]


def test_the_tags_generator_makes_each_service_s_tags_and_the_hostile_svgs() -> None:
    made = [fuzz.tags_file(random.Random(f"29/tags/{number}")) for number in range(400)]
    assert made == [fuzz.tags_file(random.Random(f"29/tags/{number}")) for number in range(400)]
    files = b"".join(data for data, _ in made)
    for needle in (b"{svg <?xml", b"{img http://127.0.0.1/", b"{cut ", b"{hide}", b"{private}", b"{label "):
        assert needle in files, needle
    for needle in (b"{lang en}", b"{date jS F Y}", b"{n mod 3}", b"{item #r2# {n}}", b"ENTITY x SYSTEM", b"file:///"):
        assert needle in files, needle
    assert {hostile for _, hostile in made} == {None, "refused", "harmless"}
