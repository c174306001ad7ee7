"""What `bot.py bots` says of each bot: its networks, its last post, its next run and any problem,
read from its own folder without touching a network (no client library is imported)::

    for state in flock_states(flock, registry, environ=os.environ, now=utc_now()):
        print(state.name, state.networks, state.last_post, state.next_run, state.problem)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Iterable, Iterator, Mapping, Optional, Tuple

from ..errors import BotError
from ..settings.loading import Config, SettingsTable
from ..settings.table import POST_TO
from ..state.clock import zone_for
from ..unattended import TWEET_TIMES, TWEET_TIMEZONE
from .botconfig import bot_config
from .folder import Bot, Flock

__all__ = ["BotState", "flock_states", "next_time"]


@dataclass(frozen=True)
class BotState:
    """One bot as `bots` lists it: `problem` is set when its settings or history cannot be read."""

    name: str
    folder: str
    networks: Tuple[str, ...] = ()
    last_post: Optional[datetime] = None
    next_run: Optional[datetime] = None
    problem: Optional[str] = None

    def as_dict(self) -> dict:
        def moment(value: Optional[datetime]) -> Optional[str]:
            return value.isoformat() if value else None

        return {
            "name": self.name,
            "folder": self.folder,
            "networks": list(self.networks),
            "last_post": moment(self.last_post),
            "next_run": moment(self.next_run),
            "problem": self.problem,
        }


def flock_states(
    flock: Flock, registry: SettingsTable, *, environ: Mapping[str, str], now: datetime
) -> Iterator[BotState]:
    """Each bot's state, in the flock's order; a bot that cannot be read is one with a problem."""
    for bot in flock.bots:
        try:
            config = bot_config(bot, registry, environ=environ, overrides={}, named=False)
        except BotError as exc:
            yield BotState(bot.name, str(bot.folder), problem=str(exc).splitlines()[0])
            continue
        yield _state_of(bot, config, now)


def _state_of(bot: Bot, config: Config, now: datetime) -> BotState:
    networks = tuple(network.label for network in config[POST_TO])
    zone = zone_for(config[TWEET_TIMEZONE] or None)
    upcoming = next_time(config[TWEET_TIMES], now=now, zone=zone)
    last, problem = None, None
    missing = config.missing()
    if missing:
        problem = f"not set: {', '.join(missing)} (bot.py --bot {bot.name} check says more)"
    history = config.state.history
    if history.exists():
        from ..state.reader import UnreadableHistory, read_history  # only for a bot with a history

        try:
            with read_history(history) as reader:
                last = reader.last_scheduled_post(now)
        except UnreadableHistory as exc:
            problem = str(exc)
    return BotState(bot.name, str(bot.folder), networks, last, upcoming, problem)


def next_time(times: Iterable[str], *, now: datetime, zone: tzinfo) -> Optional[datetime]:
    """The first of `times` ("HH:MM" or "HH:MM:SS", in `zone`) after `now`, in UTC."""
    local = now.astimezone(zone)
    candidates = []
    for days in (0, 1):
        day: date = local.date() + timedelta(days=days)
        for text in times:
            moment = datetime.combine(day, time(*(int(part) for part in text.split(":"))), tzinfo=zone)
            if moment > local:
                candidates.append(moment)
    return min(candidates).astimezone(timezone.utc) if candidates else None
