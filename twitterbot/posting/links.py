"""The networks of the history's rows: a row keeps its network's name (and a scheduled row from
before several networks, none), so `history` and the status page turn that name back into its
`Network`, here and nowhere else, for its label and its links::

    label_of(config, row.network)                        # the row's network as people write it
    post_link(config, row.network, row.post_id, row.url)  # the stored link, else one made from the id
"""

from __future__ import annotations

from typing import Optional

from ..networks import Network
from ..registry import registry_of
from ..settings.loading import Config

__all__ = ["account_link", "label_of", "network_named", "post_link"]


def network_named(config: Config, name: Optional[str]) -> Optional[Network]:
    """The network a history row names (no name: an older scheduled row, made on the first
    network); None for a network no longer registered."""
    registry = registry_of(config)
    try:
        return registry.network(name) if name else registry.default()
    except KeyError:
        return None


def label_of(config: Config, name: str) -> str:
    """A row's network as people write it; a network no longer registered, by its name."""
    network = network_named(config, name)
    return network.label if network else name


def post_link(config: Config, name: Optional[str], post_id: Optional[str], stored_url: Optional[str]) -> Optional[str]:
    """A post's public link: the one its network gave and the history kept, else the one its
    network makes from the id (older rows)."""
    network = network_named(config, name)
    return stored_url or (network.post_url(post_id) if network else None)


def account_link(config: Config, name: str) -> Optional[str]:
    """Where a person looks for the account's posts on a row's network (to check an uncertain one)."""
    network = network_named(config, name)
    return network.account_url(config) if network else None
