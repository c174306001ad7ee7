"""``python -m twitterbot`` works like ``python bot.py``."""

import sys

from .cli import main

sys.exit(main())
