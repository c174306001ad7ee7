"""The one registry: every capability the program is made of, and what follows from them.

The command line builds it once from the built-in capabilities (`twitterbot.cli.built_in`) and hands
it down inside the `Config` it reads; nothing registers itself at import time. It answers what
used to be asked of module globals: the whole settings table and each setting's owner and parser,
the networks in order, their labels, posters and checks::

    registry = Registry((CORE, POSTING, X, MASTODON, BLUESKY, ...))
    registry.settings["TWEET_ONE_IN"]           # Setting(name='TWEET_ONE_IN', default='4', kind=<SettingType positive_int>, ...)
    registry.owner("BLUESKY_HANDLE").title      # 'Bluesky'
    config[POST_TO]                             # (<X x>, <Bluesky bluesky>): POST_TO's parser gives Networks
    registry.network(row.network)               # a name the history kept, as its Network
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from .capability import Capability, CheckLine
from .errors import ConfigError
from .networks import Network
from .settings.loading import Config
from .settings.parsers import did_you_mean, show
from .settings.table import NETWORKS, Parser, Setting, SettingType

log = logging.getLogger(__name__)

__all__ = ["Registry", "registry_of"]


@dataclass(frozen=True)
class Registry:
    """The capabilities, in the order the reference lists their settings and runs post to the
    networks among them. Two capabilities may not declare the same setting or the same name."""

    capabilities: Tuple[Capability, ...]
    _settings: Dict[str, Setting] = field(init=False, repr=False, compare=False)
    _owners: Dict[str, Capability] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [capability.name for capability in self.capabilities]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two capabilities are called {twice[0]!r}")  # a bug in the composition
        if not self.networks:
            raise ValueError("a registry needs at least one network")
        settings: Dict[str, Setting] = {}
        owners: Dict[str, Capability] = {}
        for capability in self.capabilities:
            for name, setting in capability.settings.items():
                if name in settings:
                    raise ValueError(f"{capability.name} and {owners[name].name} both declare {name}")
                if not isinstance(setting.kind, SettingType):  # a bug in the capability's declaration
                    raise ValueError(f"{name}'s kind is {setting.kind!r}, not a SettingType (settings/parsers.py)")
                if setting.name != name:  # a bug in the capability's declaration
                    raise ValueError(f"{capability!r} lists {setting.name} as {name}: list it by its own name")
                settings[name], owners[name] = self._complete(name, setting), capability
        object.__setattr__(self, "_settings", settings)
        object.__setattr__(self, "_owners", owners)

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
        return self._settings[name].kind.read

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
        if setting.kind is not NETWORKS:
            return setting
        names = self.names()
        return replace(
            setting,
            kind=SettingType(NETWORKS.name, self._parse_networks),
            default=names[0],
            help=f"{setting.help}: {', '.join(names)}, or several, e.g. {','.join(names[1:] or names)}",
        )

    def _parse_networks(
        self, name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting
    ) -> Tuple[Network, ...]:
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
        by_name = {network.name: network for network in self.networks}
        return tuple(by_name[word] for word in dict.fromkeys(words))  # each once, in the order given

    # -- commands and checks -----------------------------------------------------------------------

    def command_modules(self) -> Tuple[str, ...]:
        """The modules that register commands, in order; the first one's is the plain run."""
        return tuple(capability.commands for capability in self.capabilities if capability.commands)

    def command_module(self, name: str) -> Optional[str]:
        """The module that registers the command `name`; None: no capability declares it."""
        return next((each.commands for each in self.capabilities if each.commands and name in each.command_names), None)

    def needed(self) -> Dict[str, Tuple[str, str]]:
        """Each module a feature imports: the features that need it, and the command that adds it
        (what a missing package's message says)."""
        needed: Dict[str, Tuple[str, str]] = {}
        for capability in self.capabilities:
            for feature in capability.features:
                for module in feature.modules:
                    named = needed[module][0] + " and " if module in needed else ""
                    needed[module] = (named + feature.name, feature.install)
        return needed

    def before_run(self, config: Config, *, dry_run: bool) -> Optional[Exception]:
        """Every capability's work before a scheduled run's roll (`Capability.before_run`), in order.
        None of it may cost the scheduled post: a part's error is logged (a user's error as a
        warning, a bug as one ERROR line) and the other parts and the run go on. Returned: a
        part's bug (the first), for the run to show its traceback with --debug and exit 1 after
        posting; None: no bug."""
        from .errors import BotError

        bug: Optional[Exception] = None
        for capability in self.capabilities:
            try:
                capability.before_run(config, dry_run=dry_run)
            except BotError as exc:
                log.warning("%s: %s; the scheduled run goes on", capability.name, exc)
            except Exception as exc:  # a bug in the part, not in the post: the post goes on
                bug = bug or exc
                log.error(
                    "%s before the run: unexpected error (%s: %s); the scheduled run goes on and exits 1: run "
                    "again with --debug to see where, and report it",
                    capability.name,
                    type(exc).__name__,
                    exc,
                )
        return bug

    def while_job(self, config: Config) -> Tuple[Callable[[str], None], ...]:
        """What every capability does each time a long job reports (`Capability.while_job`)."""
        hooks = (capability.while_job(config) for capability in self.capabilities)
        return tuple(hook for hook in hooks if hook is not None)

    def checks(self, config: Config) -> Iterator[CheckLine]:
        """What every capability adds to `bot.py check`; nothing from one whose packages are
        missing (the features' lines say so, and its checks would import them); a missing program
        does not stop them."""
        for capability in self.capabilities:
            if not any(feature.missing_modules() for feature in capability.features):
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
        """The network called `name` (a name read back from the history, where rows keep names);
        KeyError if there is none."""
        for network in self.networks:
            if network.name == name:
                return network
        raise KeyError(name)

    def default(self) -> Network:
        """The first network: the one POST_TO names by default and that older history rows were made on."""
        return self.networks[0]

    def renamed(self, word: str) -> Optional[str]:
        """A hint when POST_TO names a network by a former name: "X was called Twitter: write x"."""
        for network in self.networks:
            if word in network.former_names:
                return f"{network.label} was called {word.title()}: write {network.name}"
        return None


def registry_of(config: Config) -> Registry:
    """The registry `config` was read with, as itself: the settings know it only by what reading
    them needs (`SettingsTable`); `check`, `history` and the status page need the rest."""
    registry = config.registry
    if not isinstance(registry, Registry):
        raise TypeError(f"the settings were read with {registry!r}, not a Registry")  # a bug in the composition
    return registry
