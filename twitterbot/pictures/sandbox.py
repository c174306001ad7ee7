"""A renderer shut in bubblewrap's sandbox (Debian's ``bubblewrap``, ``bwrap``): what a browser
is held by before it draws a grammar's SVG, because a browser follows links, runs scripts and
speaks WebRTC, and a page that reached the bot's folder could draw its ``.env`` into a post.

Inside, the program sees the system's programs, libraries and fonts (``/usr`` and the few files
under ``/etc`` a browser reads), read-only, and one folder of its own (the page and its
throw-away profile); no home folder, no bot folder, no other process, and no network at all (a
network namespace of its own: not even the Pi's own 127.0.0.1). Its environment is emptied, so no
key loaded from ``.env`` reaches it::

    command = sandboxed(["chromium", "--headless", ...], folder)
    problem = sandbox_problem()   # None where bubblewrap can make its sandbox here
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Optional

__all__ = ["sandbox_problem", "sandboxed", "session_memory_kib"]

# The top-level folders a program's libraries may be found through: on a merged-/usr system
# (Bookworm, Trixie) they are links into /usr; on an older one, folders of their own.
_SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What a browser reads under /etc: fonts, its Debian wrapper's settings, the linker's cache, the
# alternatives some fonts are reached through, and the time zone. Not passwd, hosts or resolv.conf.
_ETC = (
    "/etc/fonts",
    "/etc/chromium.d",
    "/etc/chromium",
    "/etc/chromium-browser",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/etc/localtime",
)
_INSTALL = "sudo apt install bubblewrap"


def sandboxed(command: List[str], folder: Path) -> List[str]:
    """`command` run by bubblewrap with `folder` its only writable (and only private) place, its
    home and its working folder; every namespace new (network, processes, users, IPC, host name),
    killed with its parent, its environment emptied."""
    program = shutil.which("bwrap")
    if program is None:
        raise FileNotFoundError(f"bubblewrap is not installed: {_INSTALL}")
    where = str(folder)
    return [
        program,
        "--unshare-all",
        "--die-with-parent",
        "--ro-bind",
        "/usr",
        "/usr",
        *_system_folders(),
        *[part for path in _ETC for part in ("--ro-bind-try", path, path)],
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--bind",
        where,
        where,
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        where,
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--chdir",
        where,
        *command,
    ]


def _system_folders() -> List[str]:
    """The top-level system folders as this machine has them: links kept as links, folders bound
    read-only."""
    found: List[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            found += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            found += ["--ro-bind", path, path]
    return found


@functools.cache
def sandbox_problem() -> Optional[str]:
    """Why bubblewrap cannot shut a renderer in here (not installed, or the kernel refuses it the
    namespaces it needs), with what to do; None when it can. Asked once a process: a sandbox that
    runs `true` runs a browser."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap, which shuts the browser in a sandbox before it draws, is not installed: {_INSTALL}"
    probe = "/usr/bin/true" if os.path.exists("/usr/bin/true") else "/bin/true"
    try:
        done = subprocess.run(
            sandboxed([probe], Path("/tmp")), capture_output=True, timeout=20, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot make its sandbox here ({exc}): draw with SVG_RENDERER=auto (rsvg) instead"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1][:200] if said else f"exit status {done.returncode}"
        return (
            f"bubblewrap cannot make its sandbox here ({reason}): the kernel must allow user namespaces "
            "(sudo sysctl kernel.unprivileged_userns_clone=1), or draw with SVG_RENDERER=auto (rsvg)"
        )
    return None


def session_memory_kib(session: int) -> int:
    """What every process of `session` (a renderer started in a session of its own, and all it
    started, sandbox or not) holds of the machine's memory, in KiB: the sum of their proportional
    set sizes (shared pages counted once in all), as /proc says. 0 where /proc cannot say."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) != session:  # after the name: state, ppid, pgrp, session
                continue
            with open(f"/proc/{entry.name}/smaps_rollup", "rb") as rollup:
                for line in rollup:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1])
                        break
        except (OSError, IndexError, ValueError):  # gone meanwhile, or another user's
            continue
    return total
