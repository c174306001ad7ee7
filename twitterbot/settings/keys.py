"""The foundation's own settings, as the typed keys they are read by: where the state lives, the
log, and how long to wait for a network. `core.py` makes them the foundation's capability; they are
here, apart from it, because the settings read one themselves (BOT_STATE_DIR, `Config.state`)::

    config[API_TIMEOUT]   # a float, in seconds
"""

from __future__ import annotations

from .parsers import COUNT, DAYS, LEVEL, OPTIONAL_PATH, PATH, SECONDS
from .table import Setting

__all__ = ["API_RETRIES", "API_TIMEOUT", "BOT_STATE_DIR", "FETCH_TIMEOUT", "HISTORY_DAYS", "LOG_FILE", "LOG_LEVEL"]

BOT_STATE_DIR = Setting("BOT_STATE_DIR", "state", PATH, "folder for the history database and the lock")
HISTORY_DAYS = Setting(
    "HISTORY_DAYS", "400", DAYS, "days of runs the history keeps row by row; older ones become daily counts"
)
LOG_FILE = Setting("LOG_FILE", "", OPTIONAL_PATH, "also log to this file (rotated at 1 MB)")
LOG_LEVEL = Setting("LOG_LEVEL", "INFO", LEVEL, "DEBUG, INFO, WARNING or ERROR")
API_TIMEOUT = Setting(
    "API_TIMEOUT",
    "20",
    SECONDS,
    "seconds a request to a network may take in all (connecting, the answer) before giving up",
)
API_RETRIES = Setting(
    "API_RETRIES", "2", COUNT, "retries of a request that certainly made no post (no connection, 5xx)"
)
FETCH_TIMEOUT = Setting(
    "FETCH_TIMEOUT",
    "10",
    SECONDS,
    "seconds a picture a post names by URL ({img}) or a link card (Bluesky) may take to fetch, in all",
)
