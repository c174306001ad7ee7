"""twitterbot: a scheduled X (Twitter) bot for a Raspberry Pi.

The library under ``bot.py``, one folder per capability: `posting` (the tweets file, the roll and
the pick, one scheduled run, and the one way every post is delivered), `networks` (one package
per network, each a `Network` object), `progress` (long jobs post their progress), `unattended` (the daemon, cron
and systemd), `jobs` (peg solitaire, the infinite monkey, puzzles). Beside them lies the
foundation every part uses (`settings`, `state`, `errors`, `lock`, ...), and `cli` assembles the
commands. docs/code-map.md maps it all.
"""

__version__ = "0.3.0"
__all__ = ["__version__"]
