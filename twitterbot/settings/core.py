"""The foundation's own settings, which every command reads: where the state lives, the log, and
how long to wait for a network."""

from __future__ import annotations

from ..capability import Capability
from .parsers import COUNT, DAYS, LOG_LEVEL, OPTIONAL_PATH, PATH, SECONDS
from .table import Setting

__all__ = ["CORE"]


class Core(Capability):
    """The settings of the foundation: where the state lives, the log, and how long to wait for a
    network (every network's requests, every command)."""

    name = "core"
    title = "Every run"
    page = "configuration.md"
    settings = {
        "BOT_STATE_DIR": Setting("state", PATH, "folder for the history database and the lock"),
        "HISTORY_DAYS": Setting(
            "400", DAYS, "days of runs the history keeps row by row; older ones become daily counts"
        ),
        "LOG_FILE": Setting("", OPTIONAL_PATH, "also log to this file (rotated at 1 MB)"),
        "LOG_LEVEL": Setting("INFO", LOG_LEVEL, "DEBUG, INFO, WARNING or ERROR"),
        "API_TIMEOUT": Setting("20", SECONDS, "seconds to wait for a network before giving up on a request"),
        "API_RETRIES": Setting("2", COUNT, "retries of a request that certainly made no post (no connection, 5xx)"),
    }


CORE = Core()
