"""The roll and the shuffle bag."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from twitterbot.posting.choose import hits, pick, roll


@pytest.mark.parametrize("one_in", [1, 2, 4, 10])
def test_one_in_n_posts_about_one_run_in_n(one_in: int) -> None:
    rng = random.Random(1234)
    runs = 20_000
    posted = sum(hits(roll(one_in, rng)) for _ in range(runs))
    expected = runs / one_in
    # Binomial standard deviation; 5 of them is far beyond chance for a fair die.
    assert abs(posted - expected) < 5 * (runs * (1 / one_in) * (1 - 1 / one_in)) ** 0.5 + 1


def test_one_in_one_always_posts() -> None:
    rng = random.Random(0)
    assert all(hits(roll(1, rng)) for _ in range(100))


def test_same_seed_same_decisions() -> None:
    first = [roll(4, random.Random(42)) for _ in range(5)]
    assert first == [roll(4, random.Random(42)) for _ in range(5)]


def test_picks_only_lines_not_used_this_round() -> None:
    rng = random.Random(0)
    for _ in range(50):
        chosen = pick(["a", "b", "c"], used={"a", "c"}, last_posted="c", rng=rng)
        assert chosen.text == "b" and not chosen.new_round and chosen.left_in_round == 1


def test_a_full_round_posts_every_line_exactly_once() -> None:
    rng = random.Random(7)
    file_lines = list("abcdefg")
    used: set = set()
    posted = []
    for _ in range(len(file_lines)):
        chosen = pick(file_lines, used=used, last_posted=posted[-1] if posted else None, rng=rng)
        assert not chosen.new_round
        used.add(chosen.text)
        posted.append(chosen.text)
    assert sorted(posted) == list("abcdefg")
    after = pick(file_lines, used=used, last_posted=posted[-1], rng=rng)
    assert after.new_round


def test_a_new_round_never_starts_with_the_line_posted_last() -> None:
    for seed in range(200):
        chosen = pick(["a", "b"], used={"a", "b"}, last_posted="b", rng=random.Random(seed))
        assert chosen.new_round and chosen.text == "a"


def test_a_single_line_file_can_still_post_its_only_line() -> None:
    chosen = pick(["only"], used={"only"}, last_posted="only", rng=random.Random(0))
    assert chosen.text == "only" and chosen.new_round


def test_edits_to_the_file_just_work() -> None:
    # "b" was posted; then the user removed "a", added "d" and reordered.
    edited = ["d", "c", "b"]
    seen = Counter(pick(edited, used={"a", "b"}, last_posted="b", rng=random.Random(seed)).text for seed in range(400))
    assert set(seen) == {"c", "d"}  # the new line joined the round, the posted one stays out
    assert min(seen.values()) > 100  # and the choice is fair between them


def test_nothing_to_pick_from_an_empty_list() -> None:
    assert pick([], used=set(), last_posted=None, rng=random.Random(0)) is None


def test_a_pick_names_the_text_by_its_position_as_a_choice_among_the_unposted_ones() -> None:
    texts = ["a", "b", "c", "d"]
    for seed in range(50):
        chosen = pick(texts, used={"b"}, last_posted="b", rng=random.Random(seed))
        # The same draw as rng.choice over the unposted texts in file order: seeded picks are stable.
        assert chosen.text == texts[chosen.index] == random.Random(seed).choice(["a", "c", "d"])
