"""The puzzle job: run any kind's solver and turn its events into output, a status line, a
checkpoint and reporter calls, as the peg job does for its solver.

    module = load_kind("hidoku")
    puzzle = module.parse(text, "board.txt")
    result = run_puzzle(module, puzzle, reporter, Options(source="board.txt", all_solutions=True))

Also the daily Hidoku challenge: `post_challenge` posts a generated puzzle and keeps its solution
in the state folder; `reveal_challenge` posts that solution as a reply in the puzzle's thread.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import logging
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Optional, TextIO, Union

from ...errors import BotError, ExitStatus, UsageError
from ...files import write_atomically
from ...networks import Network
from ...progress.reporter import Reporter, slug
from ...progress.reports import NullReporter
from ...progress.statusline import NullStatusLine, StatusLine
from ...wording import plural
from . import KINDS
from .events import Finished, Found, Progress
from .picture import solved_picture

__all__ = [
    "Challenge",
    "Options",
    "PuzzleOutputError",
    "PuzzleResult",
    "available_kinds",
    "challenge_key",
    "checkpoint_path",
    "load_challenge",
    "load_kind",
    "make_challenge",
    "post_challenge",
    "save_challenge",
    "result_json",
    "reveal_challenge",
    "run_puzzle",
]

log = logging.getLogger(__name__)

AnyReporter = Union[Reporter, NullReporter]
AnyStatus = Union[StatusLine, NullStatusLine]
CHECKPOINT_VERSION = 1


class PuzzleOutputError(BotError):
    """The --output file or the state folder's file cannot be written; the message names it."""

    exit_status = ExitStatus.CANNOT_CREATE
    kind = "output"


def load_kind(name: str) -> ModuleType:
    """The kind module `name` (one of KINDS)."""
    return importlib.import_module(f"{__package__}.{name}")


def available_kinds() -> Dict[str, ModuleType]:
    """The kinds whose modules are present, in KINDS order (all of them in a full checkout)."""
    kinds = {}
    for name in KINDS:
        try:
            kinds[name] = load_kind(name)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise
    return kinds


@dataclass(frozen=True)
class Options:
    """What the command asked of one search: the puzzle's name (its file, or "example"), every
    solution or the first, and what to keep: a checkpoint to resume from (None: none), a copy of
    what is printed (`output`), one JSON object instead of the solutions and summary (`as_json`)."""

    source: str
    all_solutions: bool
    checkpoint: Optional[Path] = None
    output: Optional[Path] = None
    as_json: bool = False


@dataclass
class PuzzleResult:
    """What a run found: how many solutions, whether the search was exhaustive, the first one."""

    kind: str
    puzzle: str
    solutions: int = 0
    complete: bool = False
    first: Any = None  # the first solution, as the kind's solution_json gives it
    first_text: str = ""
    nodes: int = 0
    seconds: float = 0.0
    resumed: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


def result_json(result: PuzzleResult) -> Dict[str, Any]:
    """The --json object: `puzzle`, `solutions`, `complete`, `solution` and the kind's own keys."""
    return {
        "kind": result.kind,
        "puzzle": result.puzzle,
        "solutions": result.solutions,
        "complete": result.complete,
        "solution": result.first,
        "nodes": result.nodes,
        "seconds": round(result.seconds, 3),
        **result.extra,
    }


def checkpoint_path(state_dir: Path, kind: str, text: str, all_solutions: bool) -> Path:
    """Where a search of this puzzle (by its file's content) keeps its checkpoint."""
    digest = hashlib.sha256(f"{kind}\0{all_solutions}\0{text}".encode()).hexdigest()[:16]
    return state_dir / f"puzzle-{kind}-{digest}.json"


def _load_checkpoint(path: Optional[Path], kind: str) -> Optional[Dict[str, Any]]:
    if path is None or not path.exists():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("ignoring the unreadable checkpoint %s (%s); starting afresh", path, exc)
        return None
    if not isinstance(saved, dict) or saved.get("version") != CHECKPOINT_VERSION or saved.get("kind") != kind:
        log.warning("ignoring the checkpoint %s, written by another version; starting afresh", path)
        return None
    return saved


def _save(path: Path, text: str) -> None:
    try:
        write_atomically(path, text, 0o600)
    except OSError as exc:
        raise PuzzleOutputError(f"cannot write {path} ({exc.strerror}): check the folder and its permissions") from None


def _compact(solution: Any) -> str:
    """A solution in one line for a post: rows of numbers as '1 2 3 / 4 5 6', anything else as JSON."""
    if isinstance(solution, list) and all(isinstance(row, list) for row in solution):
        return " / ".join(" ".join(str(value) for value in row) for row in solution)
    return json.dumps(solution, ensure_ascii=False)


def run_puzzle(
    module: ModuleType,
    puzzle: Any,
    reporter: AnyReporter,
    options: Options,
    *,
    out: Optional[TextIO] = None,
    status: Optional[AnyStatus] = None,
) -> PuzzleResult:
    """Solve `puzzle`, printing each solution and a summary (or, `options.as_json`, one JSON
    object at the end), showing the search on the status line, reporting progress (the first
    solution is a milestone) and the result. `options.output` gets the same text, written
    atomically at the end. With `options.checkpoint`, progress is saved there and a stopped search
    resumes from it; the file goes once the search ends."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    source, checkpoint, output, as_json = options.source, options.checkpoint, options.output, options.as_json
    status = status or NullStatusLine()
    show_solutions = not as_json
    printed: List[str] = []
    result = PuzzleResult(module.NAME, source)
    saved = _load_checkpoint(checkpoint, module.NAME)
    resume = None
    if saved:
        resume = saved.get("state")
        result.solutions = int(saved.get("solutions", 0))
        result.first, result.first_text = saved.get("first"), saved.get("first_text", "")
        result.resumed = True
        log.info(
            "%s: resuming the search saved in %s (%s so far)", source, checkpoint, plural(result.solutions, "solution")
        )
        if show_solutions:
            out.write(f"resuming an earlier search: {plural(result.solutions, 'solution')} found before\n")
    finished: Optional[Finished] = None
    for event in module.solve(puzzle, all_solutions=options.all_solutions, resume=resume):
        if isinstance(event, Progress):
            message = _progress_message(event)
            status.show(message, part="job")
            reporter.update(message)
            if checkpoint and event.state is not None:
                _save(checkpoint, _checkpoint_text(module.NAME, event, result))
        elif isinstance(event, Found):
            result.solutions += 1
            text = module.render(puzzle, event.solution)
            if result.first is None:
                result.first, result.first_text = module.solution_json(puzzle, event.solution), text
            if show_solutions:
                status.clear()
                out.write(f"solution {result.solutions:,}:\n{text}")
                out.flush()
                if output:
                    printed.append(f"solution {result.solutions:,}:\n{text}")
            reporter.update(
                f"{plural(result.solutions, 'solution')} so far, after {plural(event.nodes, 'node')}",
                milestone=result.solutions == 1,
            )
        elif isinstance(event, Finished):
            finished = event
    assert finished is not None, "solve() always ends with Finished"
    result.solutions = max(result.solutions, finished.solutions)
    result.complete, result.nodes, result.seconds = finished.complete, finished.nodes, finished.seconds
    result.extra = {**finished.extra, **module.summary_json(puzzle, finished)}
    status.clear()
    _write_result(result, printed, out=out, output=output, as_json=as_json)
    message = summary(result)
    solved = None
    if result.first is not None:
        message += ": " + _compact(result.first)
        solved = lambda: solved_picture(module.NAME, source, result.first, result.first_text)  # noqa: E731
    reporter.done(message, picture=solved)
    if checkpoint and checkpoint.exists():
        checkpoint.unlink()  # finished: the next run starts afresh
    return result


def _progress_message(event: Progress) -> str:
    """How far the search is, for the status line and the progress posts."""
    done = f", about {event.done:.1%} of the search done" if event.done is not None else ""
    return (
        f"{plural(event.nodes, 'node')} searched ({event.per_second:,.0f}/s), "
        f"{plural(event.solutions, 'solution')} so far{done}"
    )


def _checkpoint_text(kind: str, event: Progress, result: PuzzleResult) -> str:
    """The checkpoint as of `event`: the search's state and the first solution, if found."""
    return json.dumps(
        {
            "version": CHECKPOINT_VERSION,
            "kind": kind,
            "state": event.state,
            "solutions": event.solutions,
            "first": result.first,
            "first_text": result.first_text,
        }
    )


def _write_result(
    result: PuzzleResult, printed: List[str], *, out: TextIO, output: Optional[Path], as_json: bool
) -> None:
    """The summary (or, `as_json`, the result as one JSON object) to `out`, and to `output` after
    the solutions `printed`, written atomically; PuzzleOutputError if `output` cannot be written."""
    final = json.dumps(result_json(result), ensure_ascii=False) if as_json else summary(result)
    out.write(final + "\n")
    if output:
        try:
            write_atomically(output, "".join(printed) + final + "\n", 0o644)
        except OSError as exc:
            raise PuzzleOutputError(f"cannot write --output {output} ({exc.strerror}): check the path") from None


def solve_text(kind: str, text: str, source: str, all_solutions: bool, options: Dict[str, Any]) -> str:
    """What `puzzle KIND FILE` prints for one puzzle (a batch's task: a pure function of the file)."""
    module = load_kind(kind)
    out = io.StringIO()
    run_puzzle(module, module.parse(text, source, **options), NullReporter(), Options(source, all_solutions), out=out)
    return out.getvalue()


def summary(result: PuzzleResult) -> str:
    """One line: how many solutions, how sure, how much work."""
    if result.complete:
        found = "no solution" if result.solutions == 0 else plural(result.solutions, "solution")
        how = "searched to the end"
    else:
        found = f"{plural(result.solutions, 'solution')} (stopped: there may be more)"
        how = "search stopped"
    return (
        f"{result.kind} {result.puzzle}: {found}, {how} after {plural(result.nodes, 'node')} in {result.seconds:.2f} s"
    )


# -- the daily Hidoku challenge --------------------------------------------------------------------


@dataclass(frozen=True)
class Challenge:
    """A posted puzzle whose solution is kept for later (the file lives in the state folder).
    Its posts are one reporter run with the run key `challenge_key(name)`: the puzzle opens the
    thread, the solution is the run's result, so it is posted once, as a reply."""

    name: str
    puzzle: str  # the puzzle in its file format
    solution: List[List[int]]
    post: str  # the text posted


def challenge_key(name: str) -> str:
    return f"puzzle-challenge:{name}"


def challenge_path(state_dir: Path, name: str) -> Path:
    return state_dir / f"puzzle-challenge-{slug(name)}.json"


def make_challenge(name: str, rows: int, cols: int, rng: random.Random, network: Network) -> Challenge:
    """A new Hidoku with exactly one solution, and the post that presents it; UsageError if that
    post would be too long for `network` (POST_TO's default, X)."""
    from . import hidoku

    puzzle, solution = hidoku.generate(rows, cols, rng)
    text = hidoku.challenge_text(puzzle, name)
    fit = network.measure(text)
    if fit.length > fit.limit:
        raise UsageError(
            f"a {rows}x{cols} Hidoku takes {fit.length} of a post's {fit.limit} characters: "
            "choose a smaller --size, e.g. 7x7"
        )
    return Challenge(name, hidoku.render_puzzle(puzzle), hidoku.solution_json(puzzle, solution), text)


def save_challenge(state_dir: Path, challenge: Challenge) -> None:
    """Keep the solution before the puzzle is posted, so it is never lost once the puzzle is out."""
    _save(challenge_path(state_dir, challenge.name), json.dumps(challenge.__dict__))


def post_challenge(reporter: AnyReporter, challenge: Challenge, *, out: Optional[TextIO] = None) -> None:
    """Post the puzzle as the first post of the challenge's thread; the run stays open for the
    solution (`reveal_challenge`)."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    out.write(challenge.puzzle)
    reporter.update(challenge.post, milestone=True)
    reporter.stop()  # not finished: the run (and its thread) waits for the solution


def load_challenge(state_dir: Path, name: str) -> Challenge:
    path = challenge_path(state_dir, name)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        return Challenge(**saved)
    except FileNotFoundError:
        raise PuzzleChallengeMissing(
            f"no challenge named {name!r} was posted from this state folder ({path} is missing): "
            "give the --name it was posted with"
        ) from None
    except (OSError, ValueError, TypeError) as exc:
        raise PuzzleChallengeMissing(f"{path} cannot be read ({exc}): the challenge's solution is lost") from None


class PuzzleChallengeMissing(BotError):
    """`--reveal NAME` names no challenge this bot posted."""

    exit_status = ExitStatus.USAGE
    kind = "usage"


def reveal_challenge(reporter: AnyReporter, challenge: Challenge, *, out: Optional[TextIO] = None) -> None:
    """Post the solution as the reply that finishes the challenge's thread (once: the reporter
    never sends a run's result twice)."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    out.write("\n".join(" ".join(str(value) for value in row) for row in challenge.solution) + "\n")
    reporter.done(f"the solution: {_compact(challenge.solution)}")
