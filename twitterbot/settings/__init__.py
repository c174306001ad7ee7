"""Settings: the table of every setting, reading them once at start-up, and keeping secrets out of
every output.

`table.py` lists the settings every run uses (each network's own are declared in its module and
joined in from the network registry), `parsers.py` checks each kind of value, `loading.py` reads
the env file, the environment and the flags into a frozen `Config`, and `secrets.py` scrubs keys
from logs and messages::

    from twitterbot.settings import SETTINGS, load_config
    config = load_config(project_dir=PROJECT_DIR)
"""

from __future__ import annotations

from .loading import FIELDS, PROJECT_DIR, Config, check_setting, env_file_warnings, load_config
from .parsers import LOG_LEVELS, did_you_mean, parse_duration, time_to_seconds
from .table import DEPRECATED, SETTINGS, Setting, all_settings

__all__ = [
    "DEPRECATED",
    "FIELDS",
    "LOG_LEVELS",
    "PROJECT_DIR",
    "SETTINGS",
    "Config",
    "Setting",
    "all_settings",
    "check_setting",
    "did_you_mean",
    "env_file_warnings",
    "load_config",
    "parse_duration",
    "time_to_seconds",
]
