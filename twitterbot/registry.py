"""The one registry: every capability the program is made of, and what follows from them.

The command line builds it once from the built-in capabilities (`twitterbot.cli.built_in`) and hands
it down inside the `Config` it reads; nothing registers itself at import time. It answers what
used to be asked of module globals: the whole settings table and each setting's owner and parser,
the networks in order, their labels, posters and checks::

    registry = Registry((CORE, POSTING, X, MASTODON, BLUESKY, ...))
    registry.settings["TWEET_ONE_IN"]           # Setting(default='4', kind='positive_int', ...)
    registry.owner("BLUESKY_HANDLE").title      # 'Bluesky'
    registry.network(name).label                # as people write the network's name
    posters = registry.posters_for(config)      # {network: poster} for POST_TO, keys checked
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .capability import Capability, CheckLine
from .errors import ConfigError
from .networks import Fit, Network, Poster
from .settings.loading import Config
from .settings.parsers import PARSERS, did_you_mean, show
from .settings.table import Parser, Setting

__all__ = ["Registry"]


@dataclass(frozen=True)
class Registry:
    """The capabilities, in the order the reference lists their settings and runs post to the
    networks among them. Two capabilities may not declare the same setting or the same name."""

    capabilities: Tuple[Capability, ...]
    _settings: Dict[str, Setting] = field(init=False, repr=False, compare=False)
    _owners: Dict[str, Capability] = field(init=False, repr=False, compare=False)
    _parsers: Dict[str, Parser] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [capability.name for capability in self.capabilities]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two capabilities are called {twice[0]!r}")  # a bug in the composition
        if not self.networks:
            raise ValueError("a registry needs at least one network")
        settings: Dict[str, Setting] = {}
        owners: Dict[str, Capability] = {}
        parsers: Dict[str, Parser] = {**PARSERS, "networks": self._parse_networks}
        for capability in self.capabilities:
            for name, setting in capability.settings.items():
                if name in settings:
                    raise ValueError(f"{capability.name} and {owners[name].name} both declare {name}")
                settings[name], owners[name] = self._complete(name, setting), capability
            parsers.update(capability.parsers)
        unknown = sorted({setting.kind for setting in settings.values()} - set(parsers))
        if unknown:
            raise ValueError(f"no parser for settings of kind {unknown[0]!r}")
        object.__setattr__(self, "_settings", settings)
        object.__setattr__(self, "_owners", owners)
        object.__setattr__(self, "_parsers", parsers)

    # -- settings ----------------------------------------------------------------------------------

    @property
    def settings(self) -> Mapping[str, Setting]:
        """Every setting, each capability's in its order, in the order of the capabilities."""
        return self._settings

    def owner(self, name: str) -> Capability:
        """The capability that declares the setting `name`."""
        return self._owners[name]

    def parser(self, name: str) -> Parser:
        """How the setting `name` is read."""
        return self._parsers[self._settings[name].kind]

    def check_setting(self, name: str, text: str, where: str) -> None:
        """Raise `ConfigError` if `text` is not a valid value of the setting `name` (the command
        line checks a flag's value with it, by the same rule the env file's is read with)."""
        self.parser(name)(name, text, where, Path("."), self._settings[name])

    def validate(self, values: Mapping[str, object], where: Mapping[str, str]) -> List[Tuple[str, str]]:
        """Every capability's problems between settings, as (the setting to blame, the problem)."""
        return [problem for capability in self.capabilities for problem in capability.validate(values, where)]

    def secret_names(self) -> Tuple[str, ...]:
        return tuple(name for name, setting in self._settings.items() if setting.secret)

    def _complete(self, name: str, setting: Setting) -> Setting:
        """POST_TO's default and help name the networks of this registry."""
        if setting.kind != "networks":
            return setting
        names = self.names()
        return replace(
            setting,
            default=names[0],
            help=f"{setting.help}: {', '.join(names)}, or several, e.g. {','.join(names[1:] or names)}",
        )

    def _parse_networks(
        self, name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting
    ) -> Tuple[str, ...]:
        known = self.names()
        words = [part.strip().lower() for part in text.split(",") if part.strip()]
        unknown = [word for word in words if word not in known]
        if unknown or not words:
            what = f"{show(unknown[0])} is not a network" if unknown else "it names no network"
            hint = (self.renamed(unknown[0]) or did_you_mean(unknown[0], known)) if unknown else None
            listed = ", ".join(known[:-1]) + f" or {known[-1]}" if len(known) > 1 else known[0]
            raise ConfigError(
                f"{name}={show(text)} from {where}: {what}"
                f"{f' ({hint})' if hint else ''}: use {listed}, or several separated by commas"
            )
        return tuple(dict.fromkeys(words))  # each once, in the order given

    # -- commands and checks -----------------------------------------------------------------------

    def command_modules(self) -> Tuple[str, ...]:
        """The modules that register commands, in order; the first one's is the plain run."""
        return tuple(capability.commands for capability in self.capabilities if capability.commands)

    def checks(self, config: Config) -> Iterator[CheckLine]:
        """What every capability adds to `bot.py check`; nothing from one whose packages are
        missing (the features' lines say so, and its checks would import them)."""
        for capability in self.capabilities:
            if not any(feature.missing() for feature in capability.features):
                yield from capability.checks(config)

    # -- networks ----------------------------------------------------------------------------------

    @property
    def networks(self) -> Tuple[Network, ...]:
        """The networks, in the order runs post and reports list them."""
        return tuple(capability for capability in self.capabilities if isinstance(capability, Network))

    def names(self) -> Tuple[str, ...]:
        """Every network's name, as POST_TO writes them."""
        return tuple(network.name for network in self.networks)

    def network(self, name: str) -> Network:
        """The network called `name`; KeyError if there is none (POST_TO is checked when read)."""
        for network in self.networks:
            if network.name == name:
                return network
        raise KeyError(name)

    def posting_to(self, config: Config) -> Tuple[Network, ...]:
        """The networks POST_TO names, in its order."""
        return tuple(self.network(name) for name in config["POST_TO"])

    def default(self) -> str:
        """The first network: the one POST_TO names by default and that older history rows were made on."""
        return self.networks[0].name

    def label(self, name: str) -> str:
        """A network's name as people write it, for messages (its label)."""
        try:
            return self.network(name).label
        except KeyError:
            return name

    def site(self, name: str) -> str:
        """Where a person looks for a post on the network `name`, in words (its site)."""
        try:
            return self.network(name).site or name
        except KeyError:  # a poster no network stands for (the dry run, a test's)
            return name

    def renamed(self, word: str) -> Optional[str]:
        """A hint when POST_TO names a network by a former name: "X was called Twitter: write x"."""
        for network in self.networks:
            if word in network.former_names:
                return f"{network.label} was called {word.title()}: write {network.name}"
        return None

    def measure(self, name: str, text: str) -> Fit:
        """`text` as the network `name` counts it."""
        return self.network(name).measure(text)

    def missing(self, post_to: Sequence[str], config: Config) -> List[str]:
        """The settings the networks in `post_to` still need, each network's in its own order."""
        return [setting for name in post_to for setting in self.network(name).missing(config)]

    def posters_for(self, config: Config) -> Dict[str, Poster]:
        """A poster for each network in POST_TO, in that order, or one ConfigError naming every
        setting still missing (only the networks in POST_TO need theirs)."""
        self.check_keys(config)
        return {name: self.network(name).poster(config) for name in config["POST_TO"]}

    def check_keys(self, config: Config) -> None:
        """Raise one ConfigError naming every key POST_TO's networks still need, and where to put them."""
        post_to: Sequence[str] = config["POST_TO"]
        missing = self.missing(post_to, config)
        if not missing:
            return
        where = config.env_file or (config.base_dir / ".env" if config.base_dir else "an env file (--env-file PATH)")
        guides = [self.network(name).guide for name in post_to if self.network(name).guide]
        guide = " and ".join(f"'{title}'" for title in guides)
        shows = f"; README {guide} shows where to find them" if guide else ""
        raise ConfigError(
            f"{', '.join(missing)} not set (POST_TO={','.join(post_to)}): put them in {where} (copy "
            f"config.example.env{shows}), or try --dry-run"
        )
