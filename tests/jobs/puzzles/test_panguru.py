"""The Panguru kind: the seed's board, small boards against a breadth-first count of shortest
paths, every optimal sequence replayed by a checker of its own, the hint, and bad files."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import pytest

from twitterbot.jobs.puzzles import panguru
from twitterbot.jobs.puzzles.events import Finished, Found, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"


def replay(plates, pebbles, table, moves):
    """Play the moves by the rules (a pebble moves into the hole along a listed line) and say
    whether every pebble ends on its colour."""
    board = list(pebbles)
    for pebble in moves:
        hole = board.index("-")
        assert pebble in table[hole], f"{pebble} cannot move into {hole}"
        board[hole], board[pebble] = board[pebble], "-"
    return all(b == "-" or b == p for b, p in zip(board, plates))


def shortest(plates, pebbles, table):
    """(fewest moves, number of shortest move sequences) by breadth-first search from the start."""

    def solved(state):
        return all(b == "-" or b == p for b, p in zip(state, plates))

    start = pebbles
    depth = {start: 0}
    ways = {start: 1}
    queue = deque([start])
    best = None
    while queue:
        state = queue.popleft()
        if solved(state) and best is None:
            best = depth[state]
        if best is not None and depth[state] >= best:
            continue
        hole = state.index("-")
        for pebble in table[hole]:
            cells = list(state)
            cells[hole], cells[pebble] = cells[pebble], "-"
            child = "".join(cells)
            if child not in depth:
                depth[child] = depth[state] + 1
                ways[child] = 0
                queue.append(child)
            if depth[child] == depth[state] + 1:
                ways[child] += ways[state]
    goals = [state for state in depth if solved(state)]
    if not goals:
        return None, 0
    best = min(depth[state] for state in goals)
    return best, sum(ways[state] for state in goals if depth[state] == best)


def run(puzzle, all_solutions=True):
    events = list(panguru.solve(puzzle, all_solutions=all_solutions))
    assert isinstance(events[-1], Finished)
    return [event.solution for event in events if isinstance(event, Found)], events[-1]


def test_the_seed_board_takes_16_moves_in_12_ways_each_replayed():
    puzzle = panguru.parse((FIXTURES / "panguru_seed.txt").read_text(), "seed")
    found, finished = run(puzzle)
    assert finished.solutions == len(found) == 12 and len(set(found)) == 12
    summary = panguru.summary_json(puzzle, finished)
    assert summary["moves"] == 16
    for moves in found:
        assert len(moves) == 16 and replay(puzzle.plates, puzzle.pebbles, puzzle.moves, moves)
    # The hint: the first moves of the optimal sequences, with how many start with each.
    firsts = {}
    for moves in found:
        firsts[moves[0]] = firsts.get(moves[0], 0) + 1
    assert {entry["move"]: entry["sequences"] for entry in summary["hint"]} == firsts
    one, finished_one = run(puzzle, all_solutions=False)
    assert len(one) == 1 and finished_one.solutions == 12
    assert panguru.render(puzzle, one[0]).startswith("16 moves: 0-")


def test_the_hint_from_a_position_on_the_way():
    puzzle = panguru.parse((FIXTURES / "panguru_seed.txt").read_text(), "seed")
    found, _ = run(puzzle)
    board = list(puzzle.pebbles)
    for pebble in found[0][:5]:
        hole = board.index("-")
        board[hole], board[pebble] = board[pebble], "-"
    later = panguru.Panguru(puzzle.plates, "".join(board), puzzle.moves)
    _, finished = run(later, all_solutions=False)
    assert finished.extra["moves"] == 11
    assert found[0][5] in [entry["move"] for entry in finished.extra["hint"]]


def random_table(rng, size):
    """A symmetric move table where every position has a line to at least one other."""
    table = [set() for _ in range(size)]
    for a in range(size):
        for b in range(a + 1, size):
            if rng.random() < 0.45:
                table[a].add(b)
                table[b].add(a)
    for a in range(size):
        if not table[a]:
            b = (a + 1) % size
            table[a].add(b)
            table[b].add(a)
    return [sorted(moves) for moves in table]


@pytest.mark.parametrize("seed", range(40))
def test_small_boards_agree_with_breadth_first_search(seed):
    rng = random.Random(seed)
    size = rng.randint(3, 7)
    colours = "ABCD"[: rng.randint(1, 4)]
    plates = "".join(rng.choice(colours) for _ in range(size))
    pebbles = list(plates)
    pebbles[rng.randrange(size)] = "-"
    rng.shuffle(pebbles)
    pebbles = "".join(pebbles)
    table = random_table(rng, size)
    text = f"{plates}\n{pebbles}\n" + "".join(f"{i}: {' '.join(map(str, moves))}\n" for i, moves in enumerate(table))
    puzzle = panguru.parse(text, "random")
    found, finished = run(puzzle)
    best, ways = shortest(plates, pebbles, table)
    if best is None:
        assert finished.solutions == 0
        return
    assert (finished.extra["moves"], finished.solutions) == (best, ways)
    assert len(found) == ways == len(set(found))
    for moves in found:
        assert len(moves) == best and replay(plates, pebbles, table, moves)


@pytest.mark.parametrize("seed", range(6))
def test_seed_board_positions_near_the_goal_agree_with_breadth_first_search(seed):
    rng = random.Random(seed)
    plates = "WCBRBOGYGPCORPY"
    board = list("-CBRBOGYGPCORPY")
    for _ in range(5):
        hole = board.index("-")
        pebble = rng.choice(panguru.SEED_MOVES[hole])
        board[hole], board[pebble] = board[pebble], "-"
    puzzle = panguru.Panguru(plates, "".join(board), panguru.SEED_MOVES)
    found, finished = run(puzzle)
    assert (finished.extra["moves"], finished.solutions) == shortest(plates, "".join(board), panguru.SEED_MOVES)
    for moves in found:
        assert replay(plates, "".join(board), panguru.SEED_MOVES, moves)


def test_a_solved_board_needs_no_moves():
    _, finished = run(panguru.Panguru("WCB", "-CB", ((1, 2), (0, 2), (0, 1))))
    assert (finished.extra["moves"], finished.solutions) == (0, 1)


@pytest.mark.parametrize(
    "text, line",
    [
        ("WCB\n-CB\n[1, 2]\n[0, 2]\n[0, x]\n", "line 5"),
        ("WCB\nCCB\n", "line 2"),
        ("WCB\n-CBB\n", "line 2"),
        ("WCB\n-CC\n", "line 2"),
        ("# plates\nWCB\n-CB\n[1, 2]\n[2]\n[0, 1]\n", "line 4"),
        ("WCB\n-CB\n[1, 2]\n[0, 2]\n", "line 3"),
        ("WCB\n-CB\n", "no move table"),
        ("WCB\n-CB\n[1, 1]\n[0, 2]\n[0, 1]\n", "line 3"),
    ],
)
def test_malformed_files_name_the_line(text, line):
    with pytest.raises(PuzzleFileError, match=line):
        panguru.parse(text, "board.txt")
