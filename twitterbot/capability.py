"""What one part of the bot brings to the program, declared as data: the shape every network and
every job shares, which the command line collects into one registry (`twitterbot.registry`).

A capability names itself, lists the settings it reads (with the parsers of the kinds only it
has), the module that registers its commands, and what `bot.py check` should look at for it.
It imports nothing heavy: the command line reads every capability's settings on every run::

    TWITTERBOT_PEGS_KERNEL = Setting("TWITTERBOT_PEGS_KERNEL", "auto", KERNEL, "...")   # the key it is read by

    class Pegs(Capability):
        name = "pegs"
        title = "Peg solitaire"
        page = "jobs/pegs.md"
        settings = by_name(TWITTERBOT_PEGS_KERNEL)
        commands = "twitterbot.jobs.pegs.command"

        def checks(self, config):
            yield "ok", "the compiled kernel is built"

A network is a capability with more facts (`twitterbot.networks.Network`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ClassVar, Iterable, List, Mapping, Optional, Tuple, Union

if TYPE_CHECKING:
    from .errors import BotError
    from .settings.loading import Config
    from .settings.table import Setting

__all__ = ["Capability", "CheckLine", "Feature", "arm32"]

# One line of `bot.py check`: ("ok" | "note" | "problem", what it found), and for a problem the
# error whose exit status `check` ends with (without one: a settings problem, 78).
CheckLine = Union[Tuple[str, str], Tuple[str, str, "BotError"]]


class Feature:
    """Something the bot does with packages beyond the core install (X-only text posting): the
    modules it imports, the pip extra that brings them, and where Raspberry Pi OS builds them,
    the apt packages that do instead (no compiler needed on a 32-bit Pi); or a program the
    distribution installs (`programs`, found on PATH), with no extra and its apt package. A plain
    class: every run imports this module, and a dataclass costs one to make."""

    __slots__ = ("apt", "extra", "modules", "name", "pi32", "programs")

    def __init__(
        self,
        name: str,
        modules: Tuple[str, ...],
        extra: str,
        apt: str = "",
        pi32: str = "",
        programs: Tuple[str, ...] = (),
    ) -> None:
        self.name = name  # as `check` lists it: "pictures", "posting to Bluesky"
        self.modules = modules  # the top-level modules it imports: ("PIL",)
        self.extra = extra  # pyproject.toml's extra: pip install ".[pictures]"
        self.apt = apt  # "python3-pil": Debian's build of them, for every Pi
        # On 32-bit Raspberry Pi OS, the pip command of the README's "32-bit Raspberry Pi OS"
        # section when the extra would make pip build something; empty: the extra is safe there.
        self.pi32 = pi32
        self.programs = programs  # ("rsvg-convert",): programs it runs, from `apt`

    def missing(self) -> Tuple[str, ...]:
        """The modules of this feature that cannot be imported here, and the programs not on PATH."""
        import shutil

        return self.missing_modules() + tuple(program for program in self.programs if shutil.which(program) is None)

    def missing_modules(self) -> Tuple[str, ...]:
        """The modules of this feature that cannot be imported here."""
        import importlib.util

        gone = []
        for module in self.modules:
            try:
                found = importlib.util.find_spec(module)
            except (ImportError, ValueError):
                found = None
            if found is None:
                gone.append(module)
        return tuple(gone)

    @property
    def install(self) -> str:
        """The one command that adds it on this machine, run in the checkout with the bot's Python."""
        import platform
        import struct

        return self.install_on(arm32(platform.machine(), struct.calcsize("P")))

    def install_on(self, pi32: bool) -> str:
        """The one command that adds it: on a 32-bit ARM system (`pi32`), apt's build in a venv
        that sees it and pip for the rest, as the README's "32-bit Raspberry Pi OS" section does,
        since pip would otherwise build for half an hour with a compiler a Lite image lacks."""
        if not self.extra:  # a program: the distribution's package, on any Pi
            return f"sudo apt install {self.apt}"
        pip = f'.venv/bin/python -m pip install ".[{self.extra}]"'
        if not self.apt:
            return pip
        if pi32:
            return (
                f"sudo apt install -y {self.apt} && python3 -m venv --system-site-packages .venv && "
                f'{self.pi32 or pip} (README: "32-bit Raspberry Pi OS")'
            )
        return f"{pip} (on Raspberry Pi OS: sudo apt install {self.apt}, then {pip})"


def arm32(machine: str, pointer_bytes: int) -> bool:
    """Whether this is a 32-bit ARM system (every Pi on the 32-bit Raspberry Pi OS), where PyPI
    has no wheel of the compiled packages: `machine` as uname names it (armv6l, armv7l, or aarch64
    under a 64-bit kernel with a 32-bit system, which the interpreter's `pointer_bytes` of 4 tell)."""
    machine = machine.lower()
    if machine.startswith("arm") and machine != "arm64":
        return True
    return machine in ("aarch64", "arm64") and pointer_bytes == 4


class Capability:
    """One part of the bot, as class data; a subclass sets what it has and overrides `checks` or
    `validate` when it has something to say."""

    name: ClassVar[str]  # a short word: pegs, status page, a network's as POST_TO writes it
    title: ClassVar[str] = ""  # its heading in the settings reference: "Peg solitaire"
    page: ClassVar[str] = ""  # the docs page (under docs/) that explains its settings
    # Its settings, in the order config.example.env lists them, each with its kind (the shared
    # kinds are in twitterbot.settings.parsers; one only it has is declared beside it).
    settings: ClassVar[Mapping[str, Setting]] = {}
    # The module whose `register(parser, commands)` adds its commands to the command line,
    # imported only when the command line needs them; None: it has no command of its own.
    commands: ClassVar[Optional[str]] = None
    # The names of the commands that module registers (tests/test_cli.py holds them to what it
    # does): a command line that names one imports that module alone beside the plain run's.
    command_names: ClassVar[Tuple[str, ...]] = ()
    # What it needs beyond the core install; `check` lists each as available or not.
    features: ClassVar[Tuple[Feature, ...]] = ()

    def uses(self, config: Config) -> bool:
        """Whether the settings use this part's features, so that `check` fails without them (a
        network in POST_TO); otherwise a missing feature is a note."""
        return False

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """What `bot.py check` reports for this part; it runs only when check does, so it may
        import what it needs here."""
        return ()

    def before_run(self, config: Config, *, dry_run: bool) -> None:
        """What this part does before each scheduled run's roll (the plain run, the daemon's slots):
        replies answer new mentions. A hook, so that the scheduled post never imports a part above
        it; most parts do nothing. It imports what it needs only when its settings use it."""

    def while_job(self, config: Config) -> Optional[Callable[[str], None]]:
        """What this part does each time a long job reports, given the job's latest progress line
        (replies answer a mention saying "status" with it); None: nothing. A hook, so that progress
        mode never imports a part above it."""
        return None

    def validate(self, values: Mapping[str, object], where: Mapping[str, str]) -> List[Tuple[str, str]]:
        """Problems that only show between settings once each is read (a jitter longer than the
        gap between two times), as (the setting to blame, the problem); `where` says where each
        value came from ("the environment"), for the message."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
