"""``python -m twitterbot`` works like ``python bot.py``, the garbage collector off included (see bot.py)."""

import gc
import sys

gc.disable()

from .cli import main  # noqa: E402

sys.exit(main())
