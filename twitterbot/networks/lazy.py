"""Posters made at their first use and kept: a run, a round of replies or a job that sends nothing
never makes them, and so never imports a client library nor checks a key it does not need::

    posters = LazyPosters.of(config)      # nothing made yet: posters.made is None
    posters()[network].post("Hello")      # POST_TO's posters, made now (keys checked) and kept

The one way the package makes posters on first use: the `Delivery`, a scheduled run and a round
of replies each hold one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Optional

if TYPE_CHECKING:
    from ..settings.loading import Config
    from . import Network, Poster

__all__ = ["LazyPosters"]


class LazyPosters:
    """The networks posted to, each with its poster, made by `make` at the first call and kept."""

    __slots__ = ("_make", "_made")

    def __init__(self, make: Callable[[], Mapping[Network, Poster]]) -> None:
        self._make = make
        self._made: Optional[Mapping[Network, Poster]] = None

    @classmethod
    def of(cls, config: Config) -> LazyPosters:
        """POST_TO's posters, in its order, its keys checked when they are made (`posters_for`)."""
        from . import posters_for

        return cls(lambda: posters_for(config))

    @property
    def made(self) -> Optional[Mapping[Network, Poster]]:
        """The posters if they were made, else None (nothing is made by asking)."""
        return self._made

    def __call__(self) -> Mapping[Network, Poster]:
        if self._made is None:
            self._made = self._make()
        return self._made
