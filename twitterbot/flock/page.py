"""The flock's status page: `bot.py serve` in a flock of several bots shows the whole flock at a
glance at `/` (each bot's health, networks, last post, next run and problem; `/flock.json` the
same as JSON) and each bot's own page, the one bot's page as ever, at `/bots/NAME/`. One password
(WEB_PASSWORD in the flock folder's flock.env) guards them all, with the page's own rules (a
password of 12 characters off loopback, wrong ones slowed down)::

    app = flock_app(flock, registry, environ=os.environ, password="...", local_only=False)
"""

from __future__ import annotations

import argparse
import logging
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..errors import BotError, ConfigError
from ..settings.loading import Config, SettingsTable
from ..settings.parsers import is_loopback
from .botconfig import bot_config
from .budget import flock_settings
from .folder import Flock
from .listing import BotState, flock_states

__all__ = ["flock_app", "serve_flock_page"]

log = logging.getLogger(__name__)

_OVERVIEW = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="60">
<meta name="referrer" content="no-referrer">
<title>{% if troubled %}{{ troubled|length }} of {{ bots|length }} bots to look at{% else %}All {{ bots|length }} bots well{% endif %} · twitterbot</title>
<link rel="stylesheet" href="{{ url_for('status.static', filename='status.css') }}">
</head>
<body>
<header class="top {{ 'warn' if troubled else 'ok' }}"><div class="wrap">
  <h1>twitterbot · the flock</h1>
  <p class="verdict" id="verdict">{% if troubled %}{{ troubled|length }} of {{ bots|length }} bots to look at{% else %}All {{ bots|length }} bots well{% endif %}</p>
  <p class="small">Read at {{ now.strftime('%Y-%m-%d %H:%M') }} UTC · refreshes every 60 s · <a href="flock.json">flock.json</a></p>
</div></header>
<main><section id="bots" aria-labelledby="bots-title">
  <h2 id="bots-title">Bots</h2>
  <ul class="cards">
  {% for bot in bots %}
    <li class="card {{ 'attention' if bot.problem else '' }}" id="bot-{{ bot.name }}">
      <p class="title">{% if bot.name in pages %}<a href="bots/{{ bot.name }}/">{{ bot.name }}</a>{% else %}{{ bot.name }}{% endif %}
        <span class="tag">{{ 'problem' if bot.problem else 'ok' }}</span></p>
      <p class="small">{{ bot.networks|join(', ') or 'no network' }} · {% if bot.last_post %}last post {{ bot.last_post.strftime('%Y-%m-%d %H:%M') }} UTC{% else %}no post yet{% endif %} · {% if bot.next_run %}next run {{ bot.next_run.strftime('%Y-%m-%d %H:%M') }} UTC{% else %}no run to come{% endif %}</p>
      {% if bot.problem %}<p class="detail">{{ bot.problem }}</p>{% endif %}
    </li>
  {% endfor %}
  </ul>
  {% for problem in problems %}<p class="detail">{{ problem }}</p>{% endfor %}
</section></main>
</body>
</html>
"""


def flock_app(
    flock: Flock,
    registry: SettingsTable,
    *,
    root: Config,
    environ: Mapping[str, str],
    password: str,
    local_only: bool,
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> Any:
    """The WSGI application of the flock's page: the overview at `/`, each bot whose settings can
    be read at `/bots/NAME/` (its own page, its own secrets scrubbed from it)."""
    from flask import current_app, render_template_string, request
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from ..web.app import create_app

    overview = create_app(root, password=password or None, local_only=local_only, clock=clock)
    pages: Dict[str, Any] = {}
    for bot in flock.bots:
        try:
            config = bot_config(bot, registry, environ=environ, overrides={}, named=False)
        except BotError:
            continue  # the overview names its problem
        pages[f"/bots/{bot.name}"] = create_app(config, password=password or None, local_only=local_only, clock=clock)

    def states() -> List[BotState]:
        return list(flock_states(flock, registry, environ=environ, now=clock()))

    def show_flock() -> Optional[Any]:
        """After the page's own guard (its password, its Host rule): the flock, at / and /flock.json."""
        if request.path == "/flock.json":
            bots = [state.as_dict() for state in states()]
            return current_app.json.response({"bots": bots, "problems": list(flock.problems)})
        if request.path != "/":
            return None
        bots = states()
        troubled = [bot for bot in bots if bot.problem]
        names = {path.rsplit("/", 1)[1] for path in pages}
        html = render_template_string(
            _OVERVIEW, bots=bots, troubled=troubled, pages=names, problems=flock.problems, now=clock()
        )
        return current_app.response_class(html, mimetype="text/html")

    overview.before_request(show_flock)  # registered after create_app's guard, so it runs after it
    return DispatcherMiddleware(overview, pages)


def serve_flock_page(args: argparse.Namespace, config: Config, *, environ: Mapping[str, str]) -> int:
    """`bot.py serve` in a flock of several bots."""
    from ..web.command import password_problem
    from ..web.server import serve

    flock: Flock = args.flock
    password = str(flock_settings(flock.folder, config.registry)["WEB_PASSWORD"] or "")
    problem = password_problem(args.host, password)
    if problem:
        raise ConfigError(problem.replace("in the env file", f"in {flock.folder}/flock.env"))
    local_only = is_loopback(args.host) and not password
    app = flock_app(flock, config.registry, root=config, environ=environ, password=password, local_only=local_only)
    return serve(config, host=args.host, port=args.port, password=password, local_only=local_only, app=app)
