"""What the bot remembers between runs, in the state folder: the history database (one
`HistoryStore`, split by concern into runs and attempts, jobs, the bag and a length cache, over
one SQLite file with its schema and migrations), the status page's read-only reader of it
(`reader.read_history`), and the folder's own care (made private, probed,
a full or read-only disk explained). It knows nothing of any network: a network is a name it stores.

    from twitterbot.state import HistoryStore, ensure_state_dir
"""

from __future__ import annotations

from .counting import COUNTED_OUTCOMES
from .folder import MIN_FREE_BYTES, ensure_state_dir, probe_state_dir, state_error
from .runs import TEMPORARY
from .store import HistoryStore

__all__ = [
    "COUNTED_OUTCOMES",
    "MIN_FREE_BYTES",
    "TEMPORARY",
    "HistoryStore",
    "ensure_state_dir",
    "probe_state_dir",
    "state_error",
]
