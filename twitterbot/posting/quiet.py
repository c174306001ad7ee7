"""A scheduled run the roll skips, made in the caller's own process: the flock's daemon rolls each
due bot's die itself, and a run that would only count its skip is counted here, with no process
started and no network's library imported. It is the run `run_once` makes with that roll, to the
letter: the same reason, the same day's streak of skipped runs (state/skips.py), the same line
for the log. A run with anything more to do (a post, a post to catch up or look up, a one-off
line, a monitor to ping, a log file of its own, a clock in question) is left to a process of its
own, started with the roll made (`bot.py --roll N`)::

    done = skip_in_place(config, rolled=3)
    if isinstance(done, RunResult):
        log_result(done)          # counted: the run is over
    else:
        start_a_run("--roll", "3")  # `done` says why the run needs its process
"""

from __future__ import annotations

from typing import Optional, Union

from ..errors import LockHeld
from ..lock import run_lock
from ..monitoring import monitored
from ..settings.keys import LOG_FILE
from ..settings.loading import Config, env_file_warnings
from ..state.clock import Clock, utc_now
from ..state.floor import clock_trouble
from ..state.outcomes import Outcome
from ..state.store import HistoryStore
from .choose import hits
from .decision import Skip, clock_went_back, decide
from .result import RunResult
from .scheduled import RunRules, work_besides_the_roll
from .sources import source_of

__all__ = ["skip_in_place"]


def skip_in_place(config: Config, rolled: int, clock: Clock = utc_now) -> Union[RunResult, str]:
    """The scheduled run of the bot `config` describes, with the die showing `rolled`, counted as
    skipped when that is all it would do; otherwise, with nothing written, why it needs a process
    of its own. A bot whose lock is held (a run or a job of its own still going) is left to that
    process too: it waits for the lock, as a run started by cron would."""
    if hits(rolled):
        return "the roll posts"
    besides = _besides_the_history(config)
    if besides is not None:
        return besides
    try:
        with run_lock(config.state.lock, wait=0), HistoryStore(config.state.history) as store:
            return _counted(store, config, rolled, clock)
    except LockHeld:
        return "its lock is held (a run or a job of the bot's is going)"


def _besides_the_history(config: Config) -> Optional[str]:
    """What a skipping run does outside its history, which only a run of its own does: tell its
    monitors, write its own log file, say its keys are missing or its .env is readable by others."""
    if monitored(config):
        return "HEALTHCHECK_URL or NOTIFY_URL is told of every run"
    if config[LOG_FILE] is not None:
        return "it logs to its own LOG_FILE"
    if config.missing() or env_file_warnings(config):
        return "its keys or its .env need a word"
    if not config.state.history.is_file():
        return "its history is not made yet (its first run)"
    return None


def _counted(store: HistoryStore, config: Config, rolled: int, clock: Clock) -> Union[RunResult, str]:
    """The skip counted in the open history, unless the clock or the history holds work for a run."""
    now = clock()
    if clock_trouble(store.newest_record(), now) is not None:
        return "the clock is in question against its history"
    if clock_went_back(store, now):
        return "its last run is dated after now"
    source = source_of(config)
    rules = RunRules.of(config, source)
    work = work_besides_the_roll(store, rules, now, source.times)
    if work is not None:
        return work
    decision = decide(
        store, now, rolled=rolled, one_in=rules.one_in, cap=rules.max_posts_per_day, gap=rules.min_post_gap, force=False
    )
    assert isinstance(decision, Skip)  # a roll that misses skips, before the cap or the gap is asked
    streak = store.record_skip(now, one_in=rules.one_in, roll=rolled, reason=decision.reason)
    return RunResult(Outcome.SKIPPED, decision.reason, rules.one_in, rolled, streak=streak.runs)
