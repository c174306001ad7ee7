"""The status page: what the bot did today and what needs the owner's eye, on one read-only page.

    python bot.py serve [--host 127.0.0.1] [--port 8080]

`data` reads the history (through `state.reader`, read-only) and the settings into a `Status`,
with `attention`, `jobs` and `tweetsfile` for its parts; `app.create_app` is the
Flask application factory; `server.serve` runs it under waitress; `guard` decides whom it answers.
Flask and waitress are imported only by `app` and `server`, which only `serve` imports: a
scheduled run never loads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..capability import Capability, Feature
from ..errors import ConfigError
from ..settings.table import Setting, SettingType, by_name

__all__ = ["MIN_PASSWORD_LENGTH", "WEB", "WEB_PASSWORD"]

# Off loopback the page faces every machine on the network: a password short enough to guess is
# no lock. Twelve characters is four words of a passphrase or a password manager's short one.
MIN_PASSWORD_LENGTH = 12


def _parse_passphrase(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """A password a person types: any printable characters, spaces and quotes too (the browser
    sends them as UTF-8); the spaces around it are not part of it."""
    value = text.strip()
    if any(not character.isprintable() for character in value):
        # Never echo the value: it is a secret.
        raise ConfigError(
            f"{name} from {where} contains a control character (a tab, a line break or an invisible one):"
            " retype it with letters, digits, spaces and punctuation only"
        )
    return value


PASSPHRASE = SettingType("passphrase", _parse_passphrase)


WEB_PASSWORD = Setting(
    "WEB_PASSWORD",
    "",
    PASSPHRASE,
    f"the status page's password (bot.py serve, HTTP Basic auth), spaces allowed; required, of at"
    f" least {MIN_PASSWORD_LENGTH} characters, for any --host but 127.0.0.1",
    secret=True,
    source="your password manager",
)


class StatusPage(Capability):
    """The status page's password and its command, `serve`."""

    name = "status page"
    features = (Feature("the status page (serve)", ("flask", "waitress"), "web"),)
    title = "Status page"
    page = "status-page.md"
    settings = by_name(WEB_PASSWORD)
    commands = "twitterbot.web.command"
    command_names = ("serve",)


WEB = StatusPage()
