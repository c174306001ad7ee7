"""The flock's X budget: `FLOCK_X_MONTHLY_BUDGET` in the flock folder's `flock.env`, on top of each
bot's own `X_MONTHLY_BUDGET`. A bot's run is held to both: its own budget is lowered, for that run,
to what its own posts this month cost plus what the flock's budget leaves after every other bot's
(each bot's spend read from its own history, as `check` reads it)::

    config = within_flock_budget(config, bot, flock, registry, load=..., now=utc_now())
"""

from __future__ import annotations

import logging
import math
from datetime import datetime
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional

from ..errors import BotError, ConfigError
from ..networks import Network
from ..settings.loading import Config
from ..settings.table import POST_TO
from .folder import Bot, Flock

__all__ = ["FLOCK_FILE", "FLOCK_X_BUDGET", "flock_settings", "flock_x_budget", "within_flock_budget"]

log = logging.getLogger(__name__)

FLOCK_FILE = "flock.env"  # the flock's own settings, in the flock folder
FLOCK_X_BUDGET = "FLOCK_X_MONTHLY_BUDGET"
_BOT_BUDGET = "X_MONTHLY_BUDGET"
_PASSWORD = "WEB_PASSWORD"
_NEARLY_SPENT = 1.0  # dollars: less left than this is said at INFO


def flock_settings(folder: Optional[Path], registry: object) -> Dict[str, object]:
    """The flock's own settings, from `flock.env` in the flock folder, each checked by the rule of
    the bot's setting it stands above: FLOCK_X_MONTHLY_BUDGET (dollars, None: no budget) and
    WEB_PASSWORD (the flock's page's one password). Anything else there is a ConfigError."""
    path = folder / FLOCK_FILE if folder is not None else None
    if path is None or not path.is_file():
        return {FLOCK_X_BUDGET: None, _PASSWORD: ""}
    from dotenv import dotenv_values

    values = dotenv_values(path)
    unknown = sorted(name for name in values if name not in (FLOCK_X_BUDGET, _PASSWORD))
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting {unknown[0]}: the flock's file sets {FLOCK_X_BUDGET} and {_PASSWORD} only"
        )
    found: Dict[str, object] = {}
    for name, rule in ((FLOCK_X_BUDGET, _BOT_BUDGET), (_PASSWORD, _PASSWORD)):
        parse = registry.parser(rule)  # type: ignore[attr-defined]
        found[name] = parse(name, values.get(name) or "", str(path), None, registry.settings[rule])  # type: ignore[attr-defined]
    return found


def flock_x_budget(folder: Optional[Path], registry: object) -> Optional[float]:
    """The flock's monthly X budget in dollars (None: none set, or no flock folder)."""
    return flock_settings(folder, registry)[FLOCK_X_BUDGET]  # type: ignore[return-value]


def within_flock_budget(
    config: Config, bot: Bot, flock: Flock, *, load: Callable[[Bot, Mapping[str, str]], Config], now: datetime
) -> Config:
    """`config`, or, when the flock has an X budget and the bot posts to X, the bot's settings
    again with X_MONTHLY_BUDGET lowered to what the flock's budget leaves it this month."""
    budget = flock_x_budget(flock.folder, config.registry)
    if budget is None or _paying(config) is None:
        return config
    others = sum(_x_spent(other, load, now) for other in flock.bots if other.name != bot.name)
    mine = _x_spent_by(config, now)
    left = max(0.0, math.floor((budget - others - mine) * 100) / 100)
    own = config[_BOT_BUDGET]
    if own is not None and own <= mine + left:
        return config
    # Said when it is nearly spent (a post not sent names X_MONTHLY_BUDGET: this says why it is low).
    log.log(
        logging.INFO if left < _NEARLY_SPENT else logging.DEBUG,
        "%s=$%.2f, with $%.2f spent by the other bots this month, leaves this bot $%.2f (X_MONTHLY_BUDGET=$%.2f for this run)",
        FLOCK_X_BUDGET,
        budget,
        others,
        left,
        mine + left,
    )
    return load(bot, {_BOT_BUDGET: f"{mine + left:.2f}"})


def _x_spent(bot: Bot, load: Callable[[Bot, Mapping[str, str]], Config], now: datetime) -> float:
    """What `bot`'s posts to X cost this month (0 for a bot whose settings cannot be read: it posts nothing)."""
    try:
        return _x_spent_by(load(bot, {}), now)
    except BotError:
        return 0.0


def _paying(config: Config) -> Optional[Network]:
    """The network of POST_TO whose budget is X_MONTHLY_BUDGET (X), if the bot posts there."""
    return next((network for network in config[POST_TO] if network.budget == _BOT_BUDGET), None)


def _x_spent_by(config: Config, now: datetime) -> float:
    history = config.state.history
    if not history.exists():
        return 0.0
    from ..delivery.budget import month_spend
    from ..state.reader import read_history

    network = _paying(config)
    if network is None:
        return 0.0
    with read_history(history) as reader:
        return month_spend(reader, network, now, None).spent
