"""The monkey's checkpoint: the file a run is saved in, so that a stopped job (SIGTERM from systemd,
Ctrl-C, a reboot) continues exactly where it was, and what must match for a run to resume it.

    state = load_checkpoint(setup, options)   # None if there is none; UsageError if another run's
    simulation = restore_simulation(setup, state, kernel, typing)
    write_checkpoint(path, checkpoint_state(setup, simulation, records, typing_seconds))

A checkpoint is JSON: its format, what the run types at (`setup`), the simulation's state, the
records so far and the seconds spent typing them. Format 2 holds the typing in chunks (any number
of workers); format 1, from earlier versions, one stream per worker, so its `setup` names them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional

from ...errors import UsageError
from ...files import write_atomically
from ...progress.reporter import slug
from .chunks import ChunkedSimulation
from .kernel import Kernel
from .setup import Options, Setup
from .simulation import Simulation
from .texts import TextsError

__all__ = [
    "CHECKPOINT_FORMAT",
    "RecordLine",
    "checkpoint_for",
    "checkpoint_state",
    "load_checkpoint",
    "peek_seed",
    "records_in",
    "restore_simulation",
    "saved_records",
    "write_checkpoint",
]

CHECKPOINT_FORMAT = 2  # 2: the typing in chunks (any number of workers); 1: one stream per worker


@dataclass(frozen=True)
class RecordLine:
    """A record as the checkpoint keeps it (and the chart draws it): after how many keystrokes,
    how long, the text typed and where in the works it is from."""

    keystrokes: int
    length: int
    text: str
    source: str


def checkpoint_for(state_dir: Path, name: str) -> Path:
    """Where the job called `name` keeps its checkpoint."""
    return state_dir / f"monkey-{slug(name)}.json"


def load_checkpoint(setup: Setup, options: Options) -> Optional[Dict[str, Any]]:
    """The state saved in `options.checkpoint`, if there is one and it is this run's (None with
    no checkpoint, or with `options.restart`); a UsageError if it is another run's."""
    checkpoint = options.checkpoint
    if checkpoint is None or options.restart:
        return None
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


def restore_simulation(setup: Setup, state: Dict[str, Any], kernel: Optional[Kernel], typing: Any = None) -> Any:
    """The simulation a checkpoint holds: typed in chunks, or (format 1) one stream per worker."""
    if state["format"] == 1:
        return Simulation(setup.matcher, key_count=setup.keyboard.count, state=state["simulation"], kernel=kernel)
    return ChunkedSimulation(setup.matcher, key_count=setup.keyboard.count, state=state["simulation"], typing=typing)


def saved_records(state: Dict[str, Any]) -> List[RecordLine]:
    """The records a checkpoint's state holds, oldest first."""
    return [RecordLine(**item) for item in state["records"]]


def checkpoint_state(setup: Setup, simulation: Any, records: List[RecordLine], typing_seconds: float) -> Dict[str, Any]:
    """A run's state as a checkpoint holds it (and `run_monkey` returns it)."""
    chunked = isinstance(simulation, ChunkedSimulation)
    return {
        "format": CHECKPOINT_FORMAT if chunked else 1,
        "setup": _identity(setup, None if chunked else simulation.workers),
        "simulation": simulation.state(),
        "records": [asdict(record) for record in records],
        "seconds": typing_seconds,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_checkpoint(checkpoint: Path, state: Dict[str, Any]) -> None:
    """Save `state` (checkpoint_state) to `checkpoint`, whole or not at all."""
    write_atomically(checkpoint, json.dumps(state, indent=1) + "\n", 0o644)


def peek_seed(checkpoint: Optional[Path]) -> Optional[int]:
    """The seed of the run saved at `checkpoint`, if any (for the reporter's run key)."""
    try:
        return int(json.loads(checkpoint.read_text(encoding="utf-8"))["simulation"]["seed"]) if checkpoint else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def records_in(checkpoint: Path) -> List[RecordLine]:
    """The records of the run saved at `checkpoint`, for `monkey --chart`, whatever run it is.
    FileNotFoundError if there is none; ValueError, KeyError or TypeError if it cannot be read."""
    return saved_records(json.loads(checkpoint.read_text(encoding="utf-8")))


def _identity(setup: Setup, workers: Optional[int] = None) -> Dict[str, Any]:
    """What a checkpoint must match to be resumed (the workers only for format 1's streams)."""
    identity = {"mode": setup.mode, "keys": setup.keyboard.keys, "text": setup.identity}
    return identity if workers is None else {**identity, "workers": workers}
