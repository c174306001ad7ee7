"""The foundation's own settings as a capability, which every command reads: where the state lives,
the log, and how long to wait for a network. Their keys are in `keys.py`, which the settings
themselves read (`Config.state`) and a capability would import in a circle."""

from __future__ import annotations

from ..capability import Capability
from .keys import API_RETRIES, API_TIMEOUT, BOT_STATE_DIR, FETCH_TIMEOUT, HISTORY_DAYS, LOG_FILE, LOG_LEVEL
from .table import by_name

__all__ = ["CORE"]


class Core(Capability):
    """The settings of the foundation: where the state lives, the log, and how long to wait for a
    network (every network's requests, every command)."""

    name = "core"
    title = "Every run"
    page = "configuration.md"
    settings = by_name(BOT_STATE_DIR, HISTORY_DAYS, LOG_FILE, LOG_LEVEL, API_TIMEOUT, API_RETRIES, FETCH_TIMEOUT)


CORE = Core()
