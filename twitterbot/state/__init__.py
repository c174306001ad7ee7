"""What the bot remembers between runs, in the state folder: the history database (one
`HistoryStore` in `store.py`, split by concern into runs and attempts, jobs, the bag and a length
cache, over one SQLite file with its schema and migrations), the status page's read-only reader of
it (`reader.read_history`), and the folder's own care (`folder.py`: made private, probed, a full or
read-only disk explained). It knows nothing of any network: a network is a name it stores.

    from twitterbot.state.folder import ensure_state_dir
    from twitterbot.state.store import HistoryStore
"""
