"""A grammar as the run's source (twitterbot/posting/generated.py), through the command line: the
dry run, real posts to the X emulator that never repeat within GRAMMAR_MEMORY, expansions drawn
again until they fit, `check`'s data errors, and a plain file's run importing no grammar code."""

from __future__ import annotations

import json
import logging
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REGISTRY, REPO, BotHome
from x_emulator import XEmulator

from twitterbot.errors import TweetFileError
from twitterbot.posting.generated import DRAW_CHARACTERS, DRAW_STEPS, draw_post, sample_grammar
from twitterbot.posting.grammar import MAX_CHARACTERS, MAX_DEPTH, MAX_TAGS
from twitterbot.state.outcomes import Ending

FIXTURES = Path(__file__).parent.parent / "fixtures" / "grammars"
X = (REGISTRY.network("x"),)  # tests may name a network; the package may not


def _write(home: BotHome, rules: object, name: str = "tweets.json") -> Path:
    path = home.path / name
    path.write_text(json.dumps(rules) if not isinstance(rules, str) else rules, encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path))
    return path


def test_the_dry_run_shows_an_expansion_and_force_a_new_one_each_time(home: BotHome) -> None:
    shutil.copy(FIXTURES / "modifiers.json", home.path / "bot.json")
    home.write_env(TWEETS_FILE=str(home.path / "bot.json"))
    shown = set()
    for _ in range(4):
        result = home.run("--dry-run", "--force")
        assert result.returncode == 0, result.stderr
        text = result.stdout.strip()
        assert text and "#" not in text.replace("#tinybirds", "")
        shown.add(text)
    assert len(shown) > 1
    seeded = [home.run("--dry-run", "--force", "--seed", "3").stdout for _ in range(2)]
    assert seeded[0] == seeded[1]


def test_real_runs_post_expansions_never_posted_before(home: BotHome, emulator: XEmulator) -> None:
    _write(home, {"origin": ["#n#"], "n": ["one", "two", "three"]})
    for _ in range(3):
        assert home.run("--force").returncode == 0
    assert sorted(emulator.texts) == ["one", "three", "two"]
    result = home.run("--force")  # every expansion is in the history: a data error, nothing sent
    assert result.returncode == 65
    assert "were all posted before (within GRAMMAR_MEMORY)" in result.stderr
    assert len(emulator.texts) == 3
    history = home.run("history", "--json")
    assert {"one", "two", "three"} <= set(history.stdout.replace('"', " ").split())


def test_grammar_memory_lets_old_posts_come_round_again(home: BotHome, emulator: XEmulator) -> None:
    _write(home, {"origin": ["only"]})
    home.write_env(GRAMMAR_MEMORY="0")
    assert home.run("--force").returncode == 0
    home.write_env(MIN_POST_GAP="0")
    result = home.run("--force")
    assert "only" in emulator.texts and result.returncode in (0, 65)  # X itself may refuse a duplicate


def test_an_expansion_too_long_is_drawn_again(tmp_path: Path) -> None:
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["#w#"], "w": ["x" * 400, "short"]}), encoding="utf-8")
    for seed in range(10):
        tweets = draw_post(path, X, rng=random.Random(seed), posted=set())
        assert tweets.texts == ["short"] and tweets.line(0).networks == ("x",)
    path.write_text(json.dumps({"origin": ["x" * 400]}), encoding="utf-8")
    with pytest.raises(TweetFileError, match="none of 1 new expansions of its grammar fits any network"):
        draw_post(path, X, rng=random.Random(0), posted=set())


def test_pictures_in_an_expansion_are_read_as_in_a_line(tmp_path: Path) -> None:
    picture = tmp_path / "owl.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["An owl ![a small owl](owl.png)"]}), encoding="utf-8")
    line = draw_post(path, X, rng=random.Random(0), posted=set()).line(0)
    assert line.text == "An owl" and [image.path.name for image in line.images] == ["owl.png"]
    assert line.key == "An owl ![a small owl](owl.png)"
    path.write_text(json.dumps({"origin": ["An owl ![a small owl](gone.png)"]}), encoding="utf-8")
    with pytest.raises(TweetFileError, match="gone.png"):
        draw_post(path, X, rng=random.Random(0), posted=set())


def test_check_warns_of_what_tracery_runs_through_and_names_what_it_cannot(home: BotHome) -> None:
    """A missing or empty rule is posted as Tracery writes it (a note saying so, exit 0); what no
    expansion can run through is a data error (65)."""
    _write(home, '{\n  "origin": ["#greeting#, #place#"],\n  "greeting": []\n}\n')
    result = home.run("check")
    assert result.returncode == 0, result.stdout
    assert (
        "note     " + str(home.path / "tweets.json") + ' line 3 rule "greeting" is empty: Tracery writes nothing'
        in result.stdout
    )
    said = 'line 2 rule "origin" uses #place#, which is not there: Tracery writes ((place)) in the post; add a rule "place"'
    assert said in result.stdout
    _write(home, {"origin": ["#a[x:y]b#"]})
    result = home.run("check")
    assert result.returncode == 65 and "two rule names in the tag" in result.stdout
    _write(home, '{\n  "origin": ["a",\n}\n')
    result = home.run("check")
    assert result.returncode == 65 and "line 3 column 1 is not valid JSON" in result.stdout
    _write(home, {"start": ["hello"]})
    result = home.run("check")
    assert result.returncode == 65 and 'has no "origin" rule' in result.stdout


def test_check_samples_whether_expansions_fit(home: BotHome) -> None:
    _write(home, {"origin": ["#w#"], "w": ["x" * 400, "short"]})
    result = home.run("check")
    assert "a Tracery grammar of 2 rules" in result.stdout
    assert "sampled expansions are too long for x" in result.stdout
    _write(home, {"origin": ["x" * 400]})
    result = home.run("check")
    assert result.returncode == 65 and "none of 50 sampled expansions fits any network" in result.stdout


def test_sampling_a_public_bot_shape_finds_nothing_wrong() -> None:
    report = sample_grammar(FIXTURES / "actions.json", X, rng=random.Random(0))
    assert report.problems == [] and report.distinct > 20


_IMPORTED = (
    "import sys\n"
    "seen = set()\n"
    "sys.addaudithook(lambda event, args: event == 'import' and seen.add(args[0]))\n"
    "from twitterbot.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "print('loaded:', ' '.join(sorted(name for name in seen if 'grammar' in name or 'generated' in name)))\n"
    "sys.exit(status)\n"
)


def _grammar_modules(home: BotHome, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _IMPORTED, "--env-file", str(home.env_file), *args],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home.path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


def test_a_plain_tweets_file_imports_no_grammar_code(home: BotHome) -> None:
    assert _grammar_modules(home, "--dry-run", "--force") == "loaded: "
    assert _grammar_modules(home, "check") == "loaded: "
    _write(home, {"origin": ["hello"]})
    assert (
        _grammar_modules(home, "--dry-run", "--force")
        == "loaded: twitterbot.posting.generated twitterbot.posting.grammar"
    )


def test_the_history_names_the_texts_posted_since_a_time() -> None:
    from datetime import datetime, timedelta, timezone

    from twitterbot.state.store import HistoryStore

    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    with HistoryStore(":memory:") as store:
        for text, days_ago, outcome in (
            ("old", 400, "posted"),
            ("new", 3, "posted"),
            ("lost", 2, "uncertain"),
            ("no", 1, "failed"),
        ):
            attempt = store.begin_attempt(text, run_id=None, at=now - timedelta(days=days_ago), network="x")
            store.finish_attempt(attempt, Ending(outcome, now - timedelta(days=days_ago)))
        assert store.texts_posted_since(now - timedelta(days=365)) == {"new", "lost"}


def test_the_status_page_names_a_grammars_problems(home: BotHome) -> None:
    from twitterbot.cli import read_config
    from twitterbot.web.tweetsfile import TweetsFile

    _write(home, '{\n  "origin": ["#nowhere#"]\n}\n')
    config = read_config(env_file=home.env_file, environ={})
    texts, attention = TweetsFile()(config)
    assert texts is None
    assert [(item.title, item.detail) for item in attention] == [
        (
            "tweets.json line 2",
            'rule "origin" uses #nowhere#, which is not there: Tracery writes ((nowhere)) in the post; add a rule "nowhere"',
        )
    ]


# -- hostile grammars through the command line ------------------------------------------------------

DOUBLING = {"origin": ["[x:ab]" + "[x:#x##x#]" * 40 + "#x#"]}  # 2^40 characters, once: from 638 bytes


def _bounded(home: BotHome, *args: str) -> subprocess.CompletedProcess:
    """bot.py as a process, killed after a generous minute: a grammar that hangs the run fails here."""
    process = home.start(*args)
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"bot.py {' '.join(args)} ran for a minute on a hostile grammar")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_a_grammar_that_doubles_a_rule_is_refused_and_frees_the_lock(home: BotHome, emulator: XEmulator) -> None:
    path = _write(home, DOUBLING)
    # The second run met the first one's lock (75) while it grew without end; now each is refused.
    for args in (("--force",), ("--force",), ("--dry-run", "--force"), ("check",)):
        result = _bounded(home, *args)
        assert result.returncode == 65, (args, result.stderr)
        said = result.stdout + result.stderr
        assert f'{path} line 1: an expansion of rule "x" (set by an action in rule "origin")' in said
        assert f"more than {MAX_CHARACTERS:,} characters" in said and "[x:#x##x#]" in said
    assert emulator.texts == []


@pytest.mark.parametrize(
    "text, said",
    [
        (
            '{"origin": ' + "[" * 100_000 + '"a"' + "]" * 100_000 + "}",
            "line 1 holds lists or objects inside each other",
        ),
        ('{\n"origin": ["a \\ud800 b"]}', 'line 2: rule "origin" holds a lone surrogate'),
        ('{\n"origin": ["' + "[" * 100_000 + "]" * 100_000 + '"]}', "[ nested more than 60 deep"),
    ],
    ids=["JSON lists in lists", "a lone surrogate", "actions in actions"],
)
def test_a_grammar_too_deep_or_with_a_lone_surrogate_is_a_data_error_everywhere(
    home: BotHome, text: str, said: str
) -> None:
    _write(home, text)
    for args in (("--force",), ("--dry-run", "--force"), ("check",)):
        result = home.run(*args)
        assert result.returncode == 65, (args, result.stdout, result.stderr)
        assert said in result.stdout + result.stderr
        assert "Traceback" not in result.stderr


def test_the_draws_of_a_run_share_a_bound(tmp_path: Path) -> None:
    # Each draw reads and makes some 800,000 characters, and every one was posted before.
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["#w# #w#"], "w": ["x" * 100_000]}), encoding="utf-8")
    with pytest.raises(TweetFileError) as caught:
        draw_post(path, X, rng=random.Random(0), posted={"x" * 100_000 + " " + "x" * 100_000})
    assert str(caught.value) == (
        f"{path}: 13 expansions of its grammar read and made more than {DRAW_CHARACTERS:,} characters or took "
        f"{DRAW_STEPS:,} steps without a new post: shorten its texts, or give it more texts so it repeats less"
    )
    report = sample_grammar(path, X, rng=random.Random(0))
    assert report.notes[0] == (
        f"{path}: 12 of 50 expansions sampled: together they read and made more than {DRAW_CHARACTERS:,} "
        f"characters or took {DRAW_STEPS:,} steps, as a run's draws may"
    )


def test_draws_that_each_use_too_many_tags_stop_early(tmp_path: Path) -> None:
    # 6,400 tags a draw: each is dropped at the 5,001st and drawn again; 200 of them took 15 s.
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["#a#" * 80], "a": ["#b#" * 80], "b": ["x"]}), encoding="utf-8")
    with pytest.raises(TweetFileError) as caught:
        draw_post(path, X, rng=random.Random(0), posted=set())
    dropped = DRAW_STEPS // (MAX_TAGS + 1)  # a step a tag: the next draw finds the run's steps spent
    assert str(caught.value) == (
        f"{path}: its grammar recursed past {MAX_DEPTH} rules inside each other (or used {MAX_TAGS:,}) in "
        f"{dropped} of {dropped + 1} draws: give each rule that uses itself more texts that do not"
    )


def test_check_names_a_grammar_whose_every_sample_recursed_too_far(tmp_path: Path) -> None:
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["#b#"], "b": ["more #b#"]}), encoding="utf-8")
    report = sample_grammar(path, X, rng=random.Random(0))
    assert report.problems == [
        f"{path}: all 50 sampled expansions recursed past {MAX_DEPTH} rules inside each other or used "
        f"{MAX_TAGS:,}: give each rule that uses itself more texts that do not"
    ]


def test_an_expansion_with_a_time_goes_only_then_and_at_is_refused(tmp_path: Path) -> None:
    from datetime import datetime

    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"origin": ["{on: 12-25} Merry #w#", "Plain #w#"], "w": ["a", "b"]}), encoding="utf-8")
    christmas, june = datetime(2026, 12, 25, 9), datetime(2026, 6, 1, 9)
    drawn = {draw_post(path, X, rng=random.Random(seed), posted=set(), moment=june).line(0).text for seed in range(20)}
    assert drawn == {"Plain a", "Plain b"}  # never out of its day
    drawn = {draw_post(path, X, rng=random.Random(seed), posted=set(), moment=christmas).texts[0] for seed in range(20)}
    assert "{on: 12-25} Merry a" in drawn
    path.write_text(json.dumps({"origin": ["{on: 12-25} Merry Christmas"]}), encoding="utf-8")
    only = draw_post(path, X, rng=random.Random(0), posted=set(), moment=june)
    assert only.plain == [] and only.times  # a dated line the run does not post today
    path.write_text(json.dumps({"origin": ["{at: 2026-12-31 23:59} New year"]}), encoding="utf-8")
    with pytest.raises(TweetFileError, match="a one-off time means nothing there"):
        draw_post(path, X, rng=random.Random(0), posted=set(), moment=june)


# -- a grammar moved in with the slips Tracery runs through ------------------------------------------


def test_a_moved_in_grammar_with_slips_is_checked_with_notes_not_problems() -> None:
    """Shaped like two real Blue Bots Done Quick bots that `check` failed with exit 65: a rule used
    but not defined, an empty rule for "no ending", ``C#`` in a text, an unknown modifier."""
    report = sample_grammar(FIXTURES / "bbdq_slips.json", X, rng=random.Random(0))
    assert report.problems == [] and report.distinct > 20
    said = "\n".join(report.warnings)
    assert 'line 6 rule "blank" is empty: Tracery writes nothing for it' in said
    assert 'line 9 rule "medium" uses #material#, which is not there: Tracery writes ((material)) in the post' in said
    assert 'the post shows "drizzle in C minor"' in said
    assert "uses the modifier .shout, which Tracery does not have: Tracery writes ((.shout)) after the text" in said
    assert len(report.warnings) == 5


def test_a_run_posts_every_draw_as_tracery_writes_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """One draw in 15 was refused ("an expansion of rule punc-end has an empty rule blank", exit
    65); each draw is now posted as Tracery writes it, with a warning for what shows in it."""
    path = tmp_path / "bot.json"
    shutil.copy(FIXTURES / "bbdq_slips.json", path)
    texts = []
    with caplog.at_level(logging.WARNING, logger="twitterbot.posting.generated"):
        for seed in range(60):
            texts.append(draw_post(path, X, rng=random.Random(seed), posted=set()).line(0).text)
    assert any(text.endswith("in ((material))") for text in texts)
    assert any(text.endswith(" over the old mill") for text in texts)  # an empty ending: nothing
    assert any("in C minor" in text for text in texts)
    warned = [record.getMessage() for record in caplog.records]
    assert (
        'bot.json: rule "medium" uses #material#, which is not there: the post shows ((material)) (bot.py check names each such rule)'
        in warned
    )
    assert not any("empty" in message for message in warned)


def test_the_dry_run_warns_of_what_the_post_shows(home: BotHome) -> None:
    _write(home, {"origin": ["#painter# painted #subject#"], "painter": ["Ada"]})
    result = home.run("--dry-run", "--force")
    assert result.returncode == 0, result.stderr
    assert "Ada painted ((subject))" in result.stdout
    assert 'rule "origin" uses #subject#, which is not there: the post shows ((subject))' in result.stderr
