"""Settings: what a setting is, how each kind is read, reading them once at start-up, and keeping
secrets out of every output.

`table.py` defines a setting, `core.py` the foundation's own (each other part declares its settings
on its capability; the registry joins them), `parsers.py` checks each kind of value, `loading.py`
reads the env file, the environment and the flags into a frozen `Config`, and `secrets.py` scrubs
keys from logs and messages::

    from twitterbot.settings.loading import load_config
    config = load_config(registry, project_dir=PROJECT_DIR)
    config[TWEET_ONE_IN]   # an int, to the type checker too
"""
