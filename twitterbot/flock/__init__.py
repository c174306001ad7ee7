"""A flock: every bot a maker has, in one install. One folder per bot under the flock folder, each
with its own `.env`, tweets file or grammar, reply rules, pictures and state folder; the checkout's
own `.env` (today's layout) is a flock of one. `select.py` says which bot a command is for
(`--bot NAME`), `folder.py` what the flock holds (docs/flock.md)."""
