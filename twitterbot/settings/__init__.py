"""Settings: what a setting is, how each kind is read, reading them once at start-up, and keeping
secrets out of every output.

`table.py` defines a setting, `core.py` the foundation's own (each other part declares its settings
on its capability; the registry joins them), `parsers.py` checks each kind of value, `loading.py`
reads the env file, the environment and the flags into a frozen `Config`, and `secrets.py` scrubs
keys from logs and messages::

    from twitterbot.settings import load_config
    config = load_config(registry, project_dir=PROJECT_DIR)
    config["TWEET_ONE_IN"]
"""

from __future__ import annotations

from .loading import PROJECT_DIR, Config, env_file_warnings, load_config
from .parsers import LOG_LEVELS, did_you_mean, parse_duration, time_to_seconds
from .table import DEPRECATED, Setting

__all__ = [
    "DEPRECATED",
    "LOG_LEVELS",
    "PROJECT_DIR",
    "Config",
    "Setting",
    "did_you_mean",
    "env_file_warnings",
    "load_config",
    "parse_duration",
    "time_to_seconds",
]
