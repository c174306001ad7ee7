"""The infinite-monkey job: a monkey types at Shakespeare; its records become posts.

    python bot.py monkey                              # records anywhere in the complete works
    python bot.py monkey --mode prefix --work hamlet  # the classic: Hamlet from its first letter

The typing (`simulation`) and the texts (`texts`, made ready by `setup`) know nothing about
posting; this module turns their events into the reporter's updates, prints each record, and
saves the run in its checkpoint (`checkpoint`) so a stopped job (SIGTERM from systemd, Ctrl-C, a
reboot) continues exactly where it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, TextIO, Union

from ...progress.reporter import Reporter
from ...progress.reports import NullReporter, Templates
from ...progress.statusline import NullStatusLine, StatusLine
from ...progress.text import format_elapsed
from ...wording import plural
from ..cluster import ClusterLost
from .chart import monkey_chart, progress_animation
from .checkpoint import (
    RecordLine,
    checkpoint_state,
    load_checkpoint,
    restore_simulation,
    saved_records,
    write_checkpoint,
)
from .chunks import ChunkedSimulation, LocalTyping
from .kernel import Kernel
from .setup import Options, Setup
from .simulation import NewRecord, Round

__all__ = [
    "FIELDS",
    "TEMPLATES",
    "approximate",
    "finished_run",
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
# How often the reporter hears the latest figures (it decides when they become a post).
NEWS_EVERY = 10.0
# How often the log gets a progress line (the journal under systemd).
LOG_EVERY = 900.0

AnyReporter = Union[Reporter, NullReporter]


def run_monkey(
    setup: Setup,
    options: Options,
    reporter: AnyReporter,
    *,
    out: Optional[TextIO] = None,
    clock: Callable[[], float] = time.monotonic,
    status: Optional[Union[StatusLine, NullStatusLine]] = None,
    kernel: Optional[Kernel] = None,
    typing: Any = None,
) -> Dict[str, Any]:
    """Type until a stop condition, a signal, or forever; report records and progress. With
    `options.checkpoint`, resume from it (unless `options.restart`) and save to it; with `kernel`
    (kernel.load), type in C, with the same records and checkpoints; `typing` (chunks.ForkedTyping,
    ClusterTyping) types on more cores or machines, with the same records again; with `options.animate`,
    the final post's picture is a video of the records appearing. Returns the final state (as the
    checkpoint)."""
    out = sys.stdout if out is None else out  # the stream as it is now: a caller may have redirected it
    checkpoint = options.checkpoint
    typing = typing or LocalTyping(setup.matcher, setup.keyboard.count, kernel)
    state = load_checkpoint(setup, options)
    if state:
        simulation = restore_simulation(setup, state, kernel, typing)
        if simulation.finished(options.keystrokes, options.until_length):
            assert checkpoint is not None
            log.warning("%s", _finished_message(checkpoint, simulation))
            return state
        records = saved_records(state)
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
    run = _Run(setup, simulation, records, typing_seconds, where, options.animate)
    out.write(
        f"the monkey types at {setup.title} ({options.mode} mode, {setup.keyboard.count} keys, "
        f"seed {simulation.seed}) on {where}\n"
    )
    out.flush()
    stopping: List[str] = []
    previous = _on_signals(lambda name: stopping.append(name))
    try:
        _type(run, options, reporter, stopping, out=out, clock=clock, status=status)
    except ClusterLost:
        run.save(checkpoint)  # as of the last piece taken in: the same command continues from here
        raise
    finally:
        _restore_signals(previous)
    final = run.save(checkpoint)
    _report_end(run, reporter, stopping, out=out, status=status)
    return final


def finished_run(setup: Setup, options: Options) -> Optional[str]:
    """Why there is nothing to do, if `options.checkpoint` holds this run and it has reached its
    stop conditions already; None if there is typing to do, or `options.restart` starts it afresh.
    (The command says so and posts nothing.)"""
    checkpoint = options.checkpoint
    state = load_checkpoint(setup, options)
    if state is None:
        return None
    simulation = restore_simulation(setup, state, None)
    if not simulation.finished(options.keystrokes, options.until_length):
        return None
    assert checkpoint is not None
    return _finished_message(checkpoint, simulation)


def run_key(setup: Setup, options: Options, seed: Optional[int]) -> str:
    """The reporter's name for this run: the same typing towards the same goal continues one thread."""
    parts = [setup.mode, setup.identity, setup.keyboard.keys, f"seed={seed}"]
    if options.keystrokes is not None:
        parts.append(f"keystrokes={options.keystrokes}")
    if options.until_length is not None:
        parts.append(f"until={options.until_length}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass
class _Run:
    """A run under way: its simulation, the records so far and the seconds spent typing them, and
    what the posts, the log and the checkpoint say of it."""

    setup: Setup
    simulation: Any
    records: List[RecordLine]
    typing_seconds: float
    where: str  # the cores or machines the typing runs on, as the posts say it
    animate: bool = False  # the final post's picture: the records appearing, as a video

    def chart(self) -> Any:  # drawn only when a post carries it (PICTURES_EVERY)
        return monkey_chart(self.setup, list(self.records))

    def final_chart(self) -> Any:
        return progress_animation(self.setup, list(self.records)) if self.animate else self.chart()

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
        saved = checkpoint_state(self.setup, self.simulation, self.records, self.typing_seconds)
        if checkpoint:
            write_checkpoint(checkpoint, saved)
        return saved


def _type(
    run: _Run,
    options: Options,
    reporter: AnyReporter,
    stopping: List[str],
    *,
    out: TextIO,
    clock: Callable[[], float],
    status: Optional[Union[StatusLine, NullStatusLine]],
) -> None:
    """Type until the options' stop conditions, or the round after a stop signal lands in
    `stopping`: each record printed and reported, progress reported, logged and checkpointed
    on its own timer."""
    simulation, setup, checkpoint = run.simulation, run.setup, options.checkpoint
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
        reporter.done(summary, picture=run.final_chart, **latest)


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


def _finished_message(checkpoint: Path, simulation: Any) -> str:
    return (
        f"{checkpoint} holds a run that has already finished ({plural(simulation.keystrokes, 'keystroke')}"
        f", record {plural(simulation.record, 'letter', figure=approximate)}): nothing to do. Pass --restart to type it again from "
        "the start, --name NAME to start another run beside it, or a larger --keystrokes to type on"
    )


def approximate(number: float) -> str:
    """A count people read at a glance: 9,876 / 12 million / 3.1 billion."""
    names = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
    for size, name in names:
        if number >= size:
            value = number / size
            return f"{value:.1f} {name}" if value < 10 else f"{value:,.0f} {name}"
    return f"{number:,.0f}"


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
