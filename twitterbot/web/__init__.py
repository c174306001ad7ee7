"""The status page: what the bot did today and what needs the owner's eye, on one read-only page.

    python bot.py serve [--host 127.0.0.1] [--port 8080]

`data` reads the history (through `state.reader`, read-only) and the settings into a `Status`,
with `attention`, `jobs` and `tweetsfile` for its parts; `app.create_app` is the
Flask application factory; `server.serve` runs it under waitress. Flask and waitress are imported
only by `app` and `server`, which only `serve` imports: a scheduled run never loads them.
"""

from __future__ import annotations

from ..capability import Capability, Feature
from ..settings.table import Setting

__all__ = ["WEB"]


class StatusPage(Capability):
    """The status page's password and its command, `serve`."""

    name = "status page"
    features = (Feature("the status page (serve)", ("flask", "waitress"), "web"),)
    title = "Status page"
    page = "status-page.md"
    settings = {
        "WEB_PASSWORD": Setting(
            "",
            "secret",
            "the status page's password (bot.py serve, HTTP Basic auth); required for any --host but 127.0.0.1",
            secret=True,
            source="your password manager",
        ),
    }
    commands = "twitterbot.web.command"


WEB = StatusPage()
