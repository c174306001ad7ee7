"""The status page: what the bot did today and what needs the owner's eye, on one read-only page.

    python bot.py serve [--host 127.0.0.1] [--port 8080]

`data` reads the history (through `state.reader`, read-only) and the settings into a `Status`,
with `attention`, `jobs` and `tweetsfile` for its parts; `app.create_app` is the
Flask application factory; `server.serve` runs it under waitress. Flask and waitress are imported
only by `app` and `server`, which only `serve` imports: a scheduled run never loads them.
"""
