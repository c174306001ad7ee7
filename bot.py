#!/usr/bin/env python3
"""Entry point for cron, systemd and people: ``python bot.py --help``. All the code is in twitterbot/."""

import sys

from twitterbot.cli import main

if __name__ == "__main__":
    sys.exit(main())
