"""How the bot words counts and durations in its messages, the same everywhere."""

from __future__ import annotations

from datetime import timedelta

__all__ = ["format_duration", "plural"]


def plural(count: int, noun: str) -> str:
    """ "1 position", "2,048 positions": a count and its noun."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def format_duration(span: timedelta) -> str:
    """A duration as a setting is written, so a message can be pasted back: 1h30m, 45s, 0s."""
    seconds = int(span.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return "".join(f"{value}{unit}" for value, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if value) or "0s"
