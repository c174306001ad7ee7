"""Peg solitaire benchmark: our solver on every board, the seed blog's algorithm on the same boards
as the baseline, and the full English count. Prints its figures; run it from the checkout:

    .venv/bin/python benchmarks/pegs.py            # about a minute on a 2-core machine
    .venv/bin/python benchmarks/pegs.py --no-count # skip the English count
    .venv/bin/python benchmarks/pegs.py --no-count --no-fewest   # nor the English fewest moves (a minute)
    .venv/bin/python benchmarks/pegs.py --no-count --french --debian x/usr/share/games/peg-solitaire/games/data.sol
    .venv/bin/python benchmarks/pegs.py --no-count --no-fewest --python-search   # the searches without the kernel
    PEGS_PEER=/tmp/pegrust/target/release/peg_solitaire .venv/bin/python benchmarks/pegs.py --no-solve --repeat 5

`--debian` plays every game of Debian's peg-solitaire package (`apt-get download peg-solitaire`,
`dpkg-deb -x`): solved, proved impossible, or unknown after `--limit` CPU seconds, and the worst
time. `--french` does the French board from every single-hole start, finish anywhere and on each
hole. The count runs in a child process so that its CPU time and peak memory are its own; the
Rust peer (BerndAmend/peg-solitaire-rust, built by you outside this repository) runs the same
way when `--peer` or `PEGS_PEER` names its binary, else it is reported unavailable. The count
is `bot.py pegs count english --no-post` itself, with a temporary state folder (checkpoints and
level files included) where the compiled kernel is built beforehand, as the first `pegs count`
builds it; `--repeat N` alternates ours and the
peer's N times and prints the median of the paired ratios; `--numpy` also times the numpy path.

The baseline re-implements the seed's depth-first search faithfully: the board is a dict of
(x, y) -> 'X'/'O'/' ', every move deep-copies it, a position is skipped only if it is already
on the current path (a list membership test), nothing is remembered between branches, and the
goal is one peg anywhere. It stops at its first solution, or gives up after `--baseline-limit`
seconds.
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twitterbot.jobs.pegs.board import BoardFileError, builtin, parse_board  # noqa: E402
from twitterbot.jobs.pegs.boards import BOARDS  # noqa: E402
from twitterbot.jobs.pegs.solve import Impossible, Solved, replay, solve  # noqa: E402

A112737_TOTAL = 23_475_688
ENGLISH_SOLUTIONS = 40_861_647_040_079_968
ENGLISH_GAMES = 577_116_156_815_309_849_672


KERNEL = None  # the compiled kernel the solves use (main loads it), or None: searches in Python


class _Found(Exception):
    pass


class _OutOfTime(Exception):
    pass


def seed_algorithm(text: str, limit: float) -> float:
    """Seconds the seed's search takes to find a solution of the board drawn in `text`."""
    board = {}
    for y, line in enumerate(text.split("\n")):
        for x, char in enumerate(line):
            board[x, y] = char
    width, height = max(x for x, _ in board) + 1, max(y for _, y in board) + 1
    store = []
    deadline = time.perf_counter() + limit

    def single_peg(state) -> bool:
        return sum(1 for value in state.values() if value == "X") == 1

    def moves(state) -> None:
        if single_peg(state):
            raise _Found
        if time.perf_counter() > deadline:
            raise _OutOfTime
        for x, y in list(state):
            if state[x, y] != "X":
                continue
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                over, to = (x + dx, y + dy), (x + 2 * dx, y + 2 * dy)
                if not (0 <= to[0] < width and 0 <= to[1] < height):
                    continue
                if state.get(over) == "X" and state.get(to) == "O":
                    new = copy.deepcopy(state)
                    new[x, y], new[over], new[to] = "O", "O", "X"
                    if new not in store:
                        store.append(new)
                        moves(new)
                        store.remove(new)

    started = time.perf_counter()
    try:
        moves(board)
    except _Found:
        return time.perf_counter() - started
    except _OutOfTime:
        return float("inf")
    return float("nan")  # searched everything without a solution


# -- Debian's peg-solitaire games ------------------------------------------------------------------
#
# `apt-get download peg-solitaire && dpkg-deb -x peg-solitaire_*.deb x` gives
# x/usr/share/games/peg-solitaire/games/data.sol (GPL-3+, Innocent De Marchi). Each game is a
# title comment, then four lines: code, move type (1 direct, 2 inverse, 3 diagonal), and two
# numbers that are hints for the game's own solver and its "show me" button (a threshold of
# isolated pegs and a number of moves; they do not change when a game is won); rows and columns
# (columns 0: a triangle); one code per place (-1 no hole, 0 hole, 1 peg, 10 a hole marked as
# part of the finish, 11 a peg on it); a name code.
#
# What wins, read from the game's source (peg-solitaire 2.2, scr/tauler.cpp): with no marked
# place, one peg anywhere; with marked places, exactly the marked places hold pegs (one marked
# place is "finish there"; several are a final pattern). An inverse game moves a peg over a HOLE,
# which becomes a peg, until one hole is left: exactly a plain game on the complement board
# (every peg a hole and every hole a peg), jump for jump, so it is played in that form.


def debian_games(path: Path) -> list:
    """(code, title, board file text or None, why it is refused) for every game of data.sol."""
    games = []
    title = ""
    numbers: list = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            if line.lstrip("#").strip():
                title = line.lstrip("#").strip()
            continue
        if not line.strip():
            continue
        numbers.append(line.split())
        if len(numbers) == 4:
            games.append(_debian_game(title, *numbers))
            numbers = []
    return games


def _debian_game(title: str, head: list, shape: list, places: list, _name: list) -> tuple:
    code, move = int(head[0]), int(head[1])
    rows, cols = int(shape[0]), int(shape[1])
    values = [int(value) for value in places]
    if any(value not in (-1, 0, 1, 10, 11) for value in values):
        return code, title, None, "a place code other than -1, 0, 1, 10, 11"
    marked = [i for i, value in enumerate(values) if value >= 10]
    if move == 2:
        if marked:
            return code, title, None, "an inverse game with marked places"
        values = [{0: 1, 1: 0}.get(value, value) for value in values]  # its complement
        title += " (inverse, played as its complement)"
    off = " " if cols == 0 else "."  # "." keeps a row's trailing places without a hole
    start = {-1: off, 0: "O", 1: "X", 10: "O", 11: "X"}
    final = {-1: off, 0: "O", 1: "O", 10: "X", 11: "X"}
    if cols == 0:  # a triangle: row r holds r + 1 places
        kind = "triangular"
        offsets = [sum(range(row + 1)) for row in range(rows)]

        def draw(symbol: dict) -> list:
            return [
                " " * (rows - 1 - row)
                + " ".join(symbol[value] for value in values[offsets[row] : offsets[row] + row + 1])
                for row in range(rows)
            ]

        names = [f"{chr(97 + c)}{r + 1}" for r in range(rows) for c in range(r + 1)]
    else:
        kind = "diagonal" if move == 3 else "orthogonal"

        def draw(symbol: dict) -> list:
            return ["".join(symbol[value] for value in values[r * cols : (r + 1) * cols]) for r in range(rows)]

        names = [f"{chr(97 + c)}{r + 1}" for r in range(rows) for c in range(cols)]
    if len(marked) > 1:
        text = f"kind: {kind}\nfinish: pattern\n" + "\n".join(draw(start)) + "\n\n" + "\n".join(draw(final)) + "\n"
    else:
        finish = names[marked[0]] if marked else "any"
        text = f"kind: {kind}\nfinish: {finish}\n" + "\n".join(draw(start)) + "\n"
    return code, title, text, ""


def solve_within(board, limit: float) -> tuple:
    """(outcome, CPU seconds): "solved", "impossible" (with the reason), or "unknown" after `limit` s."""
    started = time.process_time()
    for event in solve(board, report_every=0.25, kernel=KERNEL):
        seconds = time.process_time() - started
        if isinstance(event, Solved):
            if not board.is_won(replay(board, event.jumps)[-1]):
                return "WRONG", seconds
            return "solved", seconds
        if isinstance(event, Impossible):
            return "impossible: " + event.reason.split(":", 1)[0].replace("impossible", "").strip(
                "() "
            ) or "search", seconds
        if seconds > limit:
            return "unknown", seconds
    raise AssertionError("solve() ends with Solved or Impossible")


def measure_debian(path: Path, limit: float) -> None:
    """Every orthogonal, diagonal and triangular game of Debian's data.sol: solved, impossible or unknown."""
    tally: dict = {}
    worst = (0.0, "")
    for code, title, text, why in debian_games(path):
        if text is None:
            tally["refused"] = tally.get("refused", 0) + 1
            print(f"  game {code:3} {title[:40]:40} refused: {why}")
            continue
        try:
            board = parse_board(text, name=str(code), source=f"game {code}")
        except BoardFileError as exc:
            tally["refused"] = tally.get("refused", 0) + 1
            print(f"  game {code:3} {title[:40]:40} refused: {exc}")
            continue
        outcome, seconds = solve_within(board, limit)
        word = outcome.split(":")[0]
        tally[(board.kind, word)] = tally.get((board.kind, word), 0) + 1
        if seconds > worst[0]:
            worst = (seconds, f"game {code} ({title})")
        print(
            f"  game {code:3} {title[:40]:40} {board.kind:10} {board.size:2} holes, {board.goal_text:18} {outcome} ({seconds:.2f} s)",
            flush=True,
        )
    for key, number in sorted(tally.items(), key=str):
        print(f"debian {' '.join(key) if isinstance(key, tuple) else key}: {number}")
    print(f"debian worst CPU time: {worst[0]:.2f} s, {worst[1]}")


def ours(name: str) -> tuple:
    board = builtin(name)
    started = time.process_time()
    *_, result = solve(board, kernel=KERNEL)
    seconds = time.process_time() - started  # CPU time: the machine is shared
    outcome = f"solved in {len(result.jumps)} jumps" if isinstance(result, Solved) else "proved impossible"
    assert isinstance(result, (Solved, Impossible))
    return seconds, result.positions, outcome


def measure_french(limit: float) -> None:
    """The French 37-hole board from every single-hole start: finish anywhere, and finish on each hole."""
    from dataclasses import replace

    board = builtin("french")
    tally: dict = {}
    worst = 0.0
    started = time.process_time()
    for empty in range(board.size):
        for goal in [None] + [1 << hole for hole in range(board.size)]:
            game = replace(board, start=board.full & ~(1 << empty), goal=goal)
            outcome, seconds = solve_within(game, limit)
            worst = max(worst, seconds)
            key = ("anywhere" if goal is None else "on a hole", outcome.split(":")[0])
            tally[key] = tally.get(key, 0) + 1
    for (finish, outcome), number in sorted(tally.items()):
        print(f"french, every start, finish {finish}: {outcome} {number}")
    print(f"french: {sum(tally.values())} games in {time.process_time() - started:.1f} s CPU, worst {worst:.2f} s")


def run_measured(command: list, env: Optional[dict] = None) -> tuple:
    """(CPU seconds, peak resident MiB, stdout, wall seconds) of a child process, from its own
    rusage (wait4)."""
    with tempfile.TemporaryFile("w+") as output:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read()
    if child.returncode:
        raise RuntimeError(f"{command[0]} failed with exit status {child.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text, wall


def _ours(state: Path, numpy: bool, workers: int = 1) -> tuple:
    """(CPU s, peak MiB, (positions, solutions, games, A112738 list), wall s) of `bot.py pegs count
    english --no-post --workers N` in a child process, as a user runs it: checkpoints and level
    files in `state`."""
    root = Path(__file__).resolve().parents[1]
    env_file = state.parent / "bench.env"
    env_file.write_text(f"BOT_STATE_DIR={state}\n")
    env_file.chmod(0o600)
    command = [sys.executable, str(root / "bot.py"), "--env-file", str(env_file), "pegs", "count", "english"]
    environ = dict(os.environ, TWITTERBOT_PEGS_KERNEL="numpy") if numpy else None  # else as the caller's
    cpu, peak, out, wall = run_measured(command + ["--no-post", "--workers", str(workers)], env=environ)
    summary = next(line for line in out.splitlines() if line.startswith("english: "))
    numbers = [int(word.replace(",", "")) for word in summary.replace(";", " ").split() if word[0].isdigit()]
    finishable = next(line for line in out.splitlines() if line.startswith("positions from which"))
    a112738 = finishable.split(": ", 1)[1].split(";")[0].replace(",", "").replace(" ", ",")
    return cpu, peak, (numbers[0], numbers[2], numbers[3], a112738), wall


def measure_count(peer: str, repeat: int, numpy: bool) -> None:
    """Our English count and the Rust peer's, each in a child process, CPU and peak memory,
    alternated `repeat` times; then the numpy path once if asked."""
    from statistics import median

    from twitterbot.jobs.pegs.kernel import load

    with tempfile.TemporaryDirectory(prefix="pegs-bench-") as folder:
        import resource

        state = Path(folder) / "state"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        built = load(state / "pegs-cache")  # where the first `pegs count` builds it
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if built is None:
            print("compiled kernel: unavailable (see the log line above): counting with numpy, searching in Python")
        else:
            compiling = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            print(f"compiled kernel: built once by cc in {compiling:.2f} s CPU (as the first `pegs count` does)")
        peer_ok = bool(peer) and Path(peer).exists()
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        ours, theirs, first, every_core = [], [], [], []
        for run in range(repeat):
            cpu, peak, words, wall = _ours(state, numpy=False)
            ours.append((cpu, peak))
            total, solutions, games, _ = words
            if run == 0:
                first = words
                print(
                    f"bot.py pegs count english ({'compiled kernel' if built else 'numpy'}): {total:,} positions "
                    f"(A112737 total {A112737_TOTAL:,}: {'ok' if total == A112737_TOTAL else 'WRONG'}), "
                    f"{solutions:,} solutions ({'ok' if solutions == ENGLISH_SOLUTIONS else 'WRONG'}), "
                    f"{games:,} complete games ({'ok' if games == ENGLISH_GAMES else 'WRONG'})"
                )
                print(f"A112738 (positions from which the centre finish is still possible): {words[3]}")
            line = f"run {run + 1}: ours {cpu:.1f} s CPU, {wall:.1f} s wall, peak {peak:,.0f} MiB"
            if cores > 1:
                many = _ours(state, numpy=False, workers=cores)
                every_core.append((wall, many[3], many[1], peak))
                same = "the same figures" if many[2] == words else "DIFFERENT figures"
                line += (
                    f"; --workers {cores}: {many[0]:.1f} s CPU, {many[3]:.1f} s wall ({many[3] / wall:.2f}x), "
                    f"peak {many[1]:,.0f} MiB ({many[1] / peak:.2f}x), {same}"
                )
            if peer_ok:
                peer_cpu, peer_peak, _, _ = run_measured([peer, "english", "1"])  # one thread, as ours
                theirs.append((peer_cpu, peer_peak))
                line += f"; peer {peer_cpu:.1f} s CPU, peak {peer_peak:,.0f} MiB; ratio {cpu / peer_cpu:.2f}x"
            print(line, flush=True)
        cpu, peak = median(c for c, _ in ours), max(p for _, p in ours)
        print(
            f"ours (median of {repeat}): {cpu:.1f} s CPU (range {min(c for c, _ in ours):.1f}-"
            f"{max(c for c, _ in ours):.1f}), peak {peak:,.0f} MiB"
        )
        if every_core:
            walls = sorted(many / one for one, many, _, _ in every_core)
            peaks = sorted(many / one for _, _, many, one in every_core)
            print(
                f"--workers {cores} against --workers 1 (median of {repeat} paired runs): wall {median(walls):.2f}x "
                f"(range {walls[0]:.2f}-{walls[-1]:.2f}x), peak {median(peaks):.2f}x"
            )
        if not peer:
            print("peer (BerndAmend/peg-solitaire-rust): unavailable (give its binary with --peer or PEGS_PEER)")
        elif not peer_ok:
            print(f"peer (BerndAmend/peg-solitaire-rust): unavailable ({peer} does not exist)")
        else:
            peer_cpu, peer_peak = median(c for c, _ in theirs), max(p for _, p in theirs)
            ratios = sorted(c / p for (c, _), (p, _) in zip(ours, theirs))
            print(
                f"peer {peer} english 1 (median of {repeat}): {peer_cpu:.1f} s CPU (range "
                f"{min(c for c, _ in theirs):.1f}-{max(c for c, _ in theirs):.1f}), peak {peer_peak:,.0f} MiB "
                "(positions only)"
            )
            print(
                f"ratio ours/peer: CPU {median(ratios):.2f}x (median of the paired ratios, range "
                f"{ratios[0]:.2f}-{ratios[-1]:.2f}x), peak memory {peak / peer_peak:.2f}x"
            )
        if numpy:
            cpu, peak, words, _ = _ours(state, numpy=True)
            print(
                f"numpy path (TWITTERBOT_PEGS_KERNEL=numpy): {cpu:.1f} s CPU, peak {peak:,.0f} MiB, "
                f"{'the same figures' if words == first else 'DIFFERENT figures: ' + str(words[:3])}"
            )


_FEWEST = """
import sys, tempfile
from pathlib import Path
sys.path.insert(0, {root!r})
from twitterbot.jobs.pegs.board import builtin
from twitterbot.jobs.pegs.fewest import Counted, FewestMoves, search_fewest, group_moves
from twitterbot.jobs.pegs.solve import replay
board = builtin("english")
counted = 0.0
for event in search_fewest(board):
    if isinstance(event, Counted):
        counted = event.seconds
assert isinstance(event, FewestMoves) and board.is_won(replay(board, event.jumps)[-1])
assert len(group_moves(event.jumps)) == event.moves
print(event.moves, event.proved, counted, event.states)
"""

_ZERO_ONE = """
import sys
sys.path.insert(0, {root!r})
from twitterbot.jobs.pegs.board import builtin
from twitterbot.jobs.pegs.fewest import MAX_STATES, _zero_one
print(_zero_one(builtin("english"), MAX_STATES) is None)
"""


def measure_fewest() -> None:
    """`solve english --fewest-moves` (18 moves, the published minimum, proved) in a child process,
    CPU and peak memory; the 0-1 search it replaced, which gives up on the English board, as the
    baseline in the same run."""
    root = str(Path(__file__).resolve().parents[1])
    cpu, peak, out, _ = run_measured([sys.executable, "-c", _FEWEST.format(root=root)])
    moves, proved, counted, states = out.split()
    print(
        f"fewest moves english: {moves} moves ({'ok' if moves == '18' else 'WRONG'}: 18 is the published minimum), "
        f"{'proved minimal' if proved == 'True' else 'NOT proved'}; {cpu:.1f} s CPU ({float(counted):.1f} s of it the "
        f"count), peak {peak:,.0f} MiB; {int(states):,} positions searched by moves"
    )
    old_cpu, old_peak, out, _ = run_measured([sys.executable, "-c", _ZERO_ONE.format(root=root)])
    print(
        f"baseline, the 0-1 search over (position, last hole): {'gave up' if out.strip() == 'True' else 'answered'} "
        f"at 500,000 states after {old_cpu:.1f} s CPU, peak {old_peak:,.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-limit", type=float, default=20.0, help="seconds to give the seed's algorithm")
    parser.add_argument("--no-solve", action="store_true", help="skip solving each built-in board")
    parser.add_argument("--no-count", action="store_true", help="skip counting the English board")
    parser.add_argument("--no-fewest", action="store_true", help="skip the English board's fewest moves")
    parser.add_argument("--repeat", type=int, default=1, help="count (ours, then the peer's) this many times")
    parser.add_argument("--numpy", action="store_true", help="also count once with the numpy path (~40 s)")
    parser.add_argument("--debian", metavar="DATA_SOL", help="also play every game of Debian's data.sol")
    parser.add_argument("--french", action="store_true", help="also the French board from every start")
    parser.add_argument("--limit", type=float, default=10.0, help="CPU seconds per Debian or French game")
    parser.add_argument("--python-search", action="store_true", help="solve without the compiled kernel")
    parser.add_argument(
        "--peer", default=os.environ.get("PEGS_PEER", ""), help="the Rust peer's binary (default: $PEGS_PEER)"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # why the kernel is unavailable, if it is

    print(f"python {sys.version.split()[0]}, {sys.platform}")
    if not args.python_search:
        global KERNEL
        from twitterbot.jobs.pegs.kernel import load

        KERNEL = load(Path(tempfile.mkdtemp(prefix="pegs-bench-")))
    print(f"solving with {'the compiled kernel' if KERNEL else 'the search in Python'}")
    if not args.no_solve:
        solve_boards(args.baseline_limit)
    if args.french:
        measure_french(args.limit)
    if args.debian:
        measure_debian(Path(args.debian), args.limit)
    if not args.no_count:
        measure_count(args.peer, max(args.repeat, 1), args.numpy)
    if not args.no_fewest:
        measure_fewest()


def solve_boards(baseline_limit: float) -> None:
    """Each built-in board: our solve's CPU time beside the seed's algorithm's."""
    print(f"{'board':16} {'ours':>10} {'positions':>10}  {'result':22} {'seed algorithm':>15}  speed-up")
    for name in BOARDS:
        seconds, positions, outcome = ours(name)
        if BOARDS[name][1] != "orthogonal":
            seed, ratio = "n/a", "-"  # the seed's search knows only orthogonal jumps
        else:
            baseline = seed_algorithm(BOARDS[name][0], baseline_limit)
            if baseline == float("inf"):
                seed, ratio = f">{baseline_limit:.0f} s", f">{baseline_limit / seconds:,.0f}x"
            elif baseline != baseline:  # nan: it searched everything and found nothing
                seed, ratio = "no solution", "-"
            else:
                seed, ratio = f"{baseline:.3f} s", f"{baseline / seconds:,.0f}x"
        print(f"{name:16} {seconds:>8.3f} s {positions:>10,}  {outcome:22} {seed:>15}  {ratio}", flush=True)


if __name__ == "__main__":
    main()
