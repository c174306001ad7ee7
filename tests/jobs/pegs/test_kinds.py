"""Peg solitaire's jump kinds (orthogonal, diagonal, triangular), goals and board files, checked
against a referee and brute force that share no code with the solver or the board model: they
read the printed pictures and work out the geometry from the characters' places."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import numpy as np
import pytest
from conftest import BotHome

from twitterbot.jobs.pegs.board import BoardFileError, builtin, load_board, parse_board, with_empty_hole
from twitterbot.jobs.pegs.boards import BOARDS
from twitterbot.jobs.pegs.count import count_levels
from twitterbot.jobs.pegs.kernel import Kernel
from twitterbot.jobs.pegs.solve import Impossible, Solved, solution_text, solve

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pegs"
Cell = Tuple[int, int]  # (line, character) in a printed picture

# Where a jump may go in a picture, in (line, character) steps: the referee's own geometry.
STEPS = {
    "orthogonal": [(0, 1), (0, -1), (1, 0), (-1, 0)],
    "diagonal": [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)],
    "triangular": [(0, 2), (0, -2), (1, 1), (1, -1), (-1, 1), (-1, -1)],
}


def picture(text: str) -> Dict[Cell, str]:
    return {(y, x): char for y, line in enumerate(text.split("\n")) for x, char in enumerate(line) if char in "XO"}


def referee(printed: str, kind: str) -> Dict[Cell, str]:
    """Check every step of a printed solution by the game's rules; return the final picture."""
    blocks = printed.split("\n\n")
    assert blocks[0].startswith("Starting Board\n")
    pictures = [picture(blocks[0].split("\n", 1)[1])]
    assert blocks[1] == "Start Solution"
    for block in blocks[2:]:
        if block.startswith("End Solution"):
            break
        pictures.append(picture(block))
    jumps_line = printed.strip().splitlines()[-1]
    assert jumps_line.startswith(f"Jumps ({len(pictures) - 1}): ")
    for before, after in zip(pictures, pictures[1:]):
        assert set(before) == set(after), "a picture changed shape"
        emptied = sorted(cell for cell in before if before[cell] == "X" and after[cell] == "O")
        filled = [cell for cell in before if before[cell] == "O" and after[cell] == "X"]
        assert len(emptied) == 2 and len(filled) == 1, "a jump empties two holes and fills one"
        (end,) = filled
        legal = False
        for start in emptied:
            step = ((end[0] - start[0]) // 2, (end[1] - start[1]) // 2)
            over = (start[0] + step[0], start[1] + step[1])
            if step in STEPS[kind] and (start[0] + 2 * step[0], start[1] + 2 * step[1]) == end and over in emptied:
                legal = True
        assert legal, f"{emptied} -> {end} is not a {kind} jump"
    return pictures[-1]


def triangle_text(rows: int, empty: Cell = (0, 0)) -> str:
    """A triangle picture drawn by hand: row r has r + 1 holes two characters apart."""
    return "\n".join(
        " " * (rows - 1 - r) + " ".join("O" if (r, c) == empty else "X" for c in range(r + 1)) for r in range(rows)
    )


def jumps_of(cells: List[Cell], kind: str) -> List[Tuple[int, int, int]]:
    index = {cell: i for i, cell in enumerate(cells)}
    found = []
    for i, (y, x) in enumerate(cells):
        for dy, dx in STEPS[kind]:
            over, end = index.get((y + dy, x + dx)), index.get((y + 2 * dy, x + 2 * dx))
            if over is not None and end is not None:
                found.append((i, over, end))
    return found


def winnable(cells: List[Cell], kind: str) -> np.ndarray:
    """For every position of the picture's holes: can jumps still leave one peg? By brute force
    over all 2^n positions, fewest pegs first."""
    n = len(cells)
    positions = np.arange(1 << n, dtype=np.int64)
    pegs = np.zeros(1 << n, dtype=np.int64)
    for bit in range(n):
        pegs += (positions >> bit) & 1
    win = pegs == 1
    for count in range(2, n + 1):
        level = positions[pegs == count]
        can = np.zeros(len(level), dtype=bool)
        for start, over, end in jumps_of(cells, kind):
            needs = (1 << start) | (1 << over)
            ok = ((level & needs) == needs) & ((level >> end) & 1 == 0)
            can |= ok & win[level ^ (needs | (1 << end))]
        win[level] = can
    return win


# -- the referee replays every kind ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["english", "triangle", "triangle6"])
def test_built_in_solutions_of_every_kind_pass_the_referee(name: str) -> None:
    board = builtin(name)
    *_, event = solve(board)
    assert isinstance(event, Solved)
    final = referee(solution_text(board, event.jumps), board.kind)
    assert sum(char == "X" for char in final.values()) == 1


def test_the_referee_catches_a_move_that_is_not_a_jump() -> None:
    board = builtin("triangle")
    *_, event = solve(board)
    printed = solution_text(board, event.jumps)
    with pytest.raises(AssertionError, match="not a orthogonal jump"):
        referee(printed, "orthogonal")  # a triangle's slanted jumps are no square-board jumps


def test_the_15_hole_triangle_is_solvable_from_every_start() -> None:
    board = builtin("triangle")
    assert (board.kind, board.size, board.goal) == ("triangular", 15, None)
    for hole in range(15):
        start = with_empty_hole(board, board.name_of(hole))
        *_, event = solve(start)
        assert isinstance(event, Solved), board.name_of(hole)
        final = referee(solution_text(start, event.jumps), "triangular")
        assert sum(char == "X" for char in final.values()) == 1


@pytest.mark.parametrize("rows", [4, 5, 6])
def test_triangles_from_every_start_agree_with_brute_force(rows: int, search_kernel: Optional[Kernel]) -> None:
    text = triangle_text(rows)
    cells = sorted(picture(text))
    win = winnable(cells, "triangular")
    board = parse_board("kind: triangular\n" + text, name=f"t{rows}")
    assert board.size == len(cells)
    for empty in range(len(cells)):
        start = ((1 << len(cells)) - 1) & ~(1 << empty)
        *_, event = solve(with_empty_hole(board, board.name_of(empty)), kernel=search_kernel)
        assert isinstance(event, Solved) == bool(win[start]), (rows, board.name_of(empty))
        if isinstance(event, Solved):
            referee(solution_text(with_empty_hole(board, board.name_of(empty)), event.jumps), "triangular")


def test_a_diagonal_board_from_every_start_agrees_with_brute_force(search_kernel: Optional[Kernel]) -> None:
    text = "XXXX\nXXXX\nXXXX\nXXXX"
    cells = sorted(picture(text))
    win = winnable(cells, "diagonal")
    board = parse_board("kind: diagonal\n" + text.replace("X", "O", 1), name="square")
    for empty in range(16):
        *_, event = solve(with_empty_hole(board, board.name_of(empty)), kernel=search_kernel)
        assert isinstance(event, Solved) == bool(win[0xFFFF & ~(1 << empty)])
    orthogonal = winnable(cells, "orthogonal")
    assert win.sum() > orthogonal.sum()  # diagonal jumps do open more games


# -- counts of each kind against brute force -------------------------------------------------------


def sequences_per_level(text: str, kind: str) -> Tuple[List[int], int, List[int]]:
    """Every jump sequence from the picture's start, per number of jumps; those ending with one
    peg; and per number of jumps, the complete games (sequences after which no jump is left)."""
    cells = sorted(picture(text))
    start = sum(1 << i for i, cell in enumerate(cells) if picture(text)[cell] == "X")
    jumps = jumps_of(cells, kind)
    level: Dict[int, int] = {start: 1}
    sizes, games = [1], []
    while True:
        following: Dict[int, int] = {}
        ended = 0
        for position, ways in level.items():
            stuck = True
            for a, b, c in jumps:
                if position >> a & 1 and position >> b & 1 and not position >> c & 1:
                    child = position ^ (1 << a | 1 << b | 1 << c)
                    following[child] = following.get(child, 0) + ways
                    stuck = False
            ended += ways if stuck else 0
        games.append(ended)
        if not following:
            return sizes, sum(ways for position, ways in level.items() if bin(position).count("1") == 1), games
        sizes.append(sum(following.values()))
        level = following


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("orthogonal", BOARDS["plus"][0]),
        ("diagonal", "XXXX\nXOXX\nXXXX\nXXXX"),
        ("triangular", triangle_text(5, empty=(2, 1))),
    ],
)
def test_counts_of_every_kind_agree_with_brute_force(kind: str, text: str) -> None:
    board = parse_board(f"kind: {kind}\n{text}", name="small", finish="any")
    levels = list(count_levels(board, block=50))
    sizes, wins, games = sequences_per_level(text, kind)
    assert [level.sequences for level in levels] == sizes
    assert levels[-1].solutions == wins and wins > 0
    assert [level.games for level in levels] == games and sum(games) > wins


# -- board files: kinds, goals, refusals -----------------------------------------------------------


def test_a_board_file_states_its_kind_and_goal(tmp_path: Path) -> None:
    path = tmp_path / "tri.txt"
    path.write_text("# my triangle\nkind: triangular\nfinish: a1\n\n" + triangle_text(5) + "\n")
    board = load_board(path)
    assert (board.kind, board.size, board.target) == ("triangular", 15, 0)
    assert board.render(board.start) == triangle_text(5) + "\n"
    *_, event = solve(board)
    assert isinstance(event, Solved)
    final = referee(solution_text(board, event.jumps), "triangular")
    assert [cell for cell, char in final.items() if char == "X"] == [(0, 4)]  # the top hole


def test_a_final_pattern_goal(tmp_path: Path) -> None:
    path = tmp_path / "pattern.txt"
    path.write_text("finish: pattern\nXXXO\n\nXOOX\n")  # the middle peg jumps right
    board = load_board(path)
    *_, event = solve(board)
    assert isinstance(event, Solved) and len(event.jumps) == 1
    path.write_text("finish: pattern\nXXXOO\n\nOOOOX\n")  # passes the parity test; the search says no
    *_, event = solve(load_board(path))
    assert isinstance(event, Impossible)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: hexagonal\nXXO\n", "kind: hexagonal', which the solver cannot model"),
        ("colour: red\nXXO\n", "knows only 'kind:'"),
        ("kind: triangular\n  O\n X X\nX  X\n", "line 4 column 4 is off the triangle's grid"),
        ("finish: z9\nXXO\n", "'z9', which is not a hole"),
        ("finish: pattern\nXXO\n", "no second drawing"),
        ("finish: pattern\nXXO\n\nXX\n", "holes differ"),
        ("XXO\n\nOOX\n", "second drawing"),
        ("kind: triangular\nfinish: centre\n O\nX X\n", "no hole in the middle"),
        ("X" * 128 + "O\n", "models at most 128"),
    ],
)
def test_boards_the_model_cannot_express_are_refused_with_a_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "board.txt"
    path.write_text(text)
    with pytest.raises(BoardFileError, match=message):
        load_board(path)


def test_debian_games_converted_to_board_files(search_kernel: Optional[Kernel]) -> None:
    files = sorted(FIXTURES.glob("debian-*.txt"))
    kinds: Set[str] = set()
    for path in files:
        board = load_board(path)
        kinds.add(board.kind)
        expected = path.read_text().split("expect: ", 1)[1].split()[0]
        *_, event = solve(board, kernel=search_kernel)
        assert type(event).__name__.lower() == expected, path.name
        if isinstance(event, Solved):
            final = referee(solution_text(board, event.jumps), board.kind)
            pegs = [cell for cell, char in final.items() if char == "X"]
            if board.final_pegs == 1:
                assert len(pegs) == 1
            else:  # a final pattern: exactly its pegs, as its second drawing has them
                drawing = path.read_text().split("\n\n")[-1]
                assert len(pegs) == drawing.count("X") > 1
                assert sorted(pegs) == sorted(
                    cell for cell, char in picture(board.render(board.goal)).items() if char == "X"
                )
    assert {"orthogonal", "diagonal", "triangular"} <= kinds


def test_kinds_and_starts_from_the_command_line(home: BotHome) -> None:
    listed = home.run("pegs", "boards")
    assert "triangle         triangular  one peg anywhere" in listed.stdout
    solved = home.run("pegs", "solve", "triangle", "--empty", "c5", "--no-post")
    assert solved.returncode == 0, solved.stderr
    assert "    X\n   X X\n  X X X\n X X X X\nX X O X X\n" in solved.stdout
    referee(solved.stdout, "triangular")
    wrong = home.run("pegs", "solve", "triangle", "--empty", "f1", "--no-post")
    assert wrong.returncode == 64 and "no hole 'f1'" in wrong.stderr
    (home.path / "hex.txt").write_text("kind: hexagonal\nXXO\n")
    refused = home.run("pegs", "solve", "--file", str(home.path / "hex.txt"), "--no-post")
    assert refused.returncode == 65 and "cannot model" in refused.stderr and "impossible" not in refused.stdout


def test_several_finishing_holes_mean_one_peg_on_any_of_them(tmp_path: Path) -> None:
    path = tmp_path / "ends.txt"
    path.write_text("finish: a1 e1\nOXXOO\n")  # c1 over b1 ends in a1; b1 over c1 would end in d1
    board = load_board(path)
    assert board.goal_text == "one peg in a1 or e1"
    *_, event = solve(board)
    assert isinstance(event, Solved)
    final = referee(solution_text(board, event.jumps), "orthogonal")
    assert [cell for cell, char in final.items() if char == "X"] == [(0, 0)]
    path.write_text("finish: b1 e1\nOXXOO\n")
    assert isinstance(list(solve(load_board(path)))[-1], Impossible)


def test_counts_past_2_64_are_exact() -> None:
    from twitterbot.jobs.pegs.levels import PRIME, exact_count

    for value in (0, 5, 2**64 - 1, 2**64, 40_861_647_040_079_968, 577_116_156_815_309_849_672, 2**90 + 12345):
        assert exact_count(value % 2**64, value % PRIME) == value


def test_positions_that_can_still_finish_agree_with_brute_force(tmp_path: Path) -> None:
    from twitterbot.jobs.pegs.count import finishable_counts

    text = triangle_text(5)
    board = parse_board("kind: triangular\nfinish: a1\n" + text, name="t5")
    levels = list(count_levels(board, keep=tmp_path))
    found = finishable_counts(board, tmp_path, len(levels))
    # Brute force: which positions can still end with one peg on the top hole, fewest pegs first.
    cells = sorted(picture(text))
    n = len(cells)
    top = 1 << cells.index((0, 4))
    reach = {top}
    jumps = jumps_of(cells, "triangular")
    for position in sorted(range(1 << n), key=lambda position: bin(position).count("1")):
        for a, b, c in jumps:
            if (
                position >> a & 1
                and position >> b & 1
                and not position >> c & 1
                and position ^ (1 << a | 1 << b | 1 << c) in reach
            ):
                reach.add(position)
                break
    canonical = lambda position: min(  # noqa: E731
        sum(1 << perm[hole] for hole in range(n) if position >> hole & 1) for perm in board.symmetries
    )
    expected = []
    frontier = {board.start}
    while frontier:
        expected.append(len({canonical(position) for position in frontier if position in reach}))
        frontier = {
            position ^ (1 << a | 1 << b | 1 << c)
            for position in frontier
            for a, b, c in jumps
            if position >> a & 1 and position >> b & 1 and not position >> c & 1
        }
    assert found == expected and expected[-1] == 1 and expected == expected[::-1]


# -- fewest moves ----------------------------------------------------------------------------------


def fewest_by_brute_force(text: str, kind: str) -> int:
    """The fewest moves (runs of jumps by one peg) over every winning jump sequence, found by trying them all."""
    cells = sorted(picture(text))
    start = sum(1 << i for i, cell in enumerate(cells) if picture(text)[cell] == "X")
    jumps = jumps_of(cells, kind)
    best = [10**9]

    def walk(position: int, last: int, moves: int) -> None:
        if bin(position).count("1") == 1:
            best[0] = min(best[0], moves)
        for a, b, c in jumps:
            if position >> a & 1 and position >> b & 1 and not position >> c & 1:
                walk(position ^ (1 << a | 1 << b | 1 << c), c, moves + (a != last))

    walk(start, -1, 0)
    return best[0]


@pytest.mark.parametrize(
    ("kind", "text"), [("orthogonal", BOARDS["plus"][0]), ("triangular", triangle_text(4, (1, 0)))]
)
def test_fewest_moves_agree_with_brute_force(kind: str, text: str) -> None:
    from twitterbot.jobs.pegs.fewest import fewest_moves, group_moves

    board = parse_board(f"kind: {kind}\n{text}", name="small", finish="any")
    result = fewest_moves(board)
    assert result is not None and result.proved and result.jumps
    assert result.moves == len(group_moves(result.jumps)) == fewest_by_brute_force(text, kind)
    referee(solution_text(board, result.jumps), kind)


def test_fewest_moves_from_the_command_line(home: BotHome) -> None:
    solved = home.run("pegs", "solve", "triangle", "--fewest-moves", "--no-post")
    assert solved.returncode == 0, solved.stderr
    assert "Moves (10, proved the fewest): " in solved.stdout
    referee(solved.stdout.split("Moves (")[0], "triangular")
    wrong = home.run("pegs", "count", "plus", "--fewest-moves", "--no-post")
    assert wrong.returncode == 64 and "--fewest-moves is for pegs solve" in wrong.stderr


def test_fewest_moves_gives_up_on_a_board_too_big_to_prove() -> None:
    from twitterbot.jobs.pegs.fewest import fewest_moves

    assert fewest_moves(builtin("german", finish="any"), max_states=1000) is None


def reachable(cells: List[Cell], kind: str, start: int) -> Set[int]:
    """Every position jumps can make from `start`, by brute force over the picture's geometry."""
    moves = [((1 << a) | (1 << b), 1 << c) for a, b, c in jumps_of(cells, kind)]
    seen, frontier = {start}, [start]
    while frontier:
        following = []
        for position in frontier:
            for needs, end in moves:
                if position & needs == needs and not position & end:
                    child = position ^ needs ^ end
                    if child not in seen:
                        seen.add(child)
                        following.append(child)
        frontier = following
    return seen


def drawn_with(text: str, pegs: Set[Cell]) -> str:
    """`text`'s picture with pegs exactly in `pegs` (picture cells) and holes elsewhere."""
    lines = [list(line) for line in text.split("\n")]
    for y, line in enumerate(lines):
        for x, char in enumerate(line):
            if char in "XO":
                line[x] = "X" if (y, x) in pegs else "O"
    return "\n".join("".join(line) for line in lines)


@pytest.mark.parametrize("budget", [None, 40])  # 40: too small to meet, so the depth-first search aims at the edge
def test_final_patterns_agree_with_brute_force(
    monkeypatch: pytest.MonkeyPatch, budget: object, search_kernel: Optional[Kernel]
) -> None:
    """Patterns of 1 to 9 pegs on the 15-hole triangle, some reachable and some not, each solved
    exactly when brute force reaches it, and every solution ends on the pattern itself."""
    from twitterbot.jobs.pegs import meet

    if budget is not None:
        monkeypatch.setattr(meet, "MAX_POSITIONS", budget)
    start_text = triangle_text(5)
    cells = sorted(picture(start_text))  # reading order, as the board numbers its holes
    full = (1 << len(cells)) - 1
    found = reachable(cells, "triangular", full ^ 1)  # the top hole (cells[0]) empty
    rng = np.random.default_rng(7)
    verdicts = []
    for pegs in (1, 2, 3, 4, 5, 6, 7, 9):
        for _ in range(3):
            chosen = {cells[hole] for hole in rng.choice(len(cells), size=pegs, replace=False).tolist()}
            goal = sum(1 << hole for hole, cell in enumerate(cells) if cell in chosen)
            text = f"kind: triangular\nfinish: pattern\n{start_text}\n\n{drawn_with(start_text, chosen)}\n"
            board = parse_board(text, name="t")
            *_, event = solve(board, kernel=search_kernel)
            verdicts.append(goal in found)
            assert isinstance(event, Solved) == (goal in found), text
            answers = [event.jumps] if isinstance(event, Solved) else []
            if budget is None:  # the search from both ends on its own (in solve, the others may win first)
                *_, met = meet.MeetInTheMiddle(board).run()
                assert bool(met) == (goal in found), text
                answers += [met] if met else []
            for jumps in answers:
                final = referee(solution_text(board, jumps), "triangular")
                assert {cell for cell, char in final.items() if char == "X"} == chosen
    assert any(verdicts) and not all(verdicts)


def test_boards_of_more_than_64_holes_are_solved_but_not_counted(home: BotHome) -> None:
    """Two words hold a position in the compiled search and the beam: Debian's biggest boards are
    played; the count and fewest moves hold one word, and say so instead of answering wrongly."""
    path = FIXTURES / "debian-146.txt"
    assert load_board(path).size == 106
    solved = home.run("pegs", "solve", "--file", str(path), "--no-post")
    assert solved.returncode == 0, solved.stderr
    final = referee(solved.stdout, "orthogonal")
    assert sum(char == "X" for char in final.values()) == 1
    for action in (["count"], ["solve", "--fewest-moves"]):
        refused = home.run("pegs", *action, "--file", str(path), "--no-post")
        assert refused.returncode == 65, refused.stderr
        assert "106 holes" in refused.stderr and "at most 64 holes: use pegs solve" in refused.stderr
        assert "Traceback" not in refused.stderr and not refused.stdout  # refused before a word of output


def test_a_beam_aims_at_the_goal_side_of_a_search_from_both_ends_that_outgrew_its_memory() -> None:
    """Debian's game 289 (English board, a final pattern of 6 pegs 25 jumps away): the search from
    both ends gives up past its budget; a beam forward to the goal's side then finishes the game."""
    from twitterbot.jobs.pegs.beam import beam_search
    from twitterbot.jobs.pegs.meet import MeetInTheMiddle, TooBig

    board = load_board(FIXTURES / "debian-289.txt")
    search = MeetInTheMiddle(board, max_positions=200_000)
    with pytest.raises(TooBig):
        for _ in search.run():
            pass
    assert 0 < search.edge_depth < board.pegs(board.start) - board.final_pegs
    jumps = beam_search(board, 20_000, edge=search)
    assert jumps is not None
    final = referee(solution_text(board, jumps), "orthogonal")
    assert {cell for cell, char in final.items() if char == "X"} == {
        cell for cell, char in picture(board.render(board.goal)).items() if char == "X"
    }
