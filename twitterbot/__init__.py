"""twitterbot: a scheduled X (Twitter) bot for a Raspberry Pi.

The library under ``bot.py``: `config` reads the settings, `tweets` the tweets file, `choose`
rolls and picks, `history` remembers, `posters` talks to X, `scheduled` runs it all once, and
`cli` is the command line.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
