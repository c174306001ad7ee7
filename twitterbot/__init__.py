"""twitterbot: a scheduled X (Twitter) bot for a Raspberry Pi.

The library under ``bot.py``, one folder per capability: `posting` (the tweets file, the roll and
the pick, one scheduled run), `networks` (X, and a dry run that prints), `progress` (long jobs
post their progress), `unattended` (the daemon, cron and systemd), `jobs` (peg solitaire, the
infinite monkey). Beside them lies the foundation every part uses (`config`, `errors`,
`history`, `lock`, ...), and `cli` assembles the commands.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
