#!/usr/bin/env python3
"""Entry point for cron, systemd and people: ``python bot.py --help``. All the code is in twitterbot/.

Python's cyclic garbage collector is off from the first line: a scheduled run lives for a second,
and collecting while its modules (tweepy's above all) are imported would cost about a tenth of its
CPU and free next to nothing. `cli.main` turns it back on for every command but the plain run.
"""

import gc
import sys

gc.disable()

from twitterbot.cli import main  # noqa: E402  (after gc.disable: the imports are what it saves)

if __name__ == "__main__":
    sys.exit(main())
