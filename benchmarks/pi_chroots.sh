#!/usr/bin/env bash
# The bot where a Raspberry Pi runs it, without a Pi: Debian chroots made with debootstrap from
# Debian's archive (as root, on a Debian or Ubuntu machine; nothing else is fetched but PyPI).
#
#   benchmarks/pi_chroots.sh pi ARCH [RELEASE]     ARCH armhf (32-bit Raspberry Pi OS: every Pi)
#                                                  or arm64, under qemu-user-static; RELEASE
#                                                  bookworm (default), bullseye or trixie
#   benchmarks/pi_chroots.sh suite RELEASE [cc]    x86-64: bullseye (Python 3.9) or trixie (3.13):
#                                                  the README's test command, without a C compiler,
#                                                  or with one (cc)
#   benchmarks/pi_chroots.sh ci [RELEASE]          CI (.ci/run): the README's test command under
#                                                  Trixie's Python 3.13 (default) or Bullseye's 3.9
#                                                  (bullseye), without a C compiler, in a chroot
#                                                  made afresh in a temporary folder (CI_CHROOTS,
#                                                  default /var/tmp) and removed after, mounts
#                                                  undone on every exit
#
# `pi` follows the README's "32-bit Raspberry Pi OS" commands exactly, with no compiler in the
# chroot, then runs a dry run, a picture line, `pegs solve english`, `serve` and `check`, and prints
# the install's time and the venv's size. Slow (emulated): run it before a release, and put its
# figures in docs/performance.md. The chroots are kept in CHROOTS (default /work/chroots, never
# inside the checkout) and reused; delete one to start afresh.
#
# Needs: apt-get install -y debootstrap (and for `pi`: qemu-user-static binfmt-support).
set -euo pipefail

CHECKOUT="$(cd "$(dirname "$0")/.." && pwd)"
CHROOTS="${CHROOTS:-/work/chroots}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

usage() {
    sed -n '2,24p' "$0" >&2
    exit 64
}

# A minimal Debian of RELEASE for ARCH in $1, with what a new user's system has: Python, its venv
# module, git and certificates, no compiler.
make_chroot() {
    local root=$1 release=$2 arch=$3
    local emulator
    case "$arch" in armhf) emulator=qemu-arm ;; arm64) emulator=qemu-aarch64 ;; *) emulator= ;; esac
    # qemu-user-static registers its emulators with binfmt_misc, but not always each of them.
    if [ -n "$emulator" ] && [ ! -e "/proc/sys/fs/binfmt_misc/$emulator" ]; then
        update-binfmts --enable "$emulator"
    fi
    if [ -d "$root/debootstrap" ]; then
        echo "$root holds an unfinished debootstrap: delete it (rm -rf $root) and run again" >&2
        exit 1
    fi
    if [ ! -x "$root/usr/bin/python3" ]; then
        echo "== debootstrap $release $arch into $root"
        debootstrap --variant=minbase --arch="$arch" --include=python3,python3-venv,ca-certificates,git,sudo \
            "$release" "$root" "$MIRROR"
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # debootstrap writes no /etc/hosts, which every installed system has: without it `localhost`
    # does not resolve.
    [ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    # This machine's own certificate authorities (a proxy's), so pip reaches PyPI as it does here.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
        chroot "$root" update-ca-certificates >/dev/null 2>&1
        printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
    fi
    for fs in proc sys dev dev/pts; do
        mountpoint -q "$root/$fs" || mount --bind "/$fs" "$root/$fs"
    done
}

unmount_chroot() {
    local root=$1
    for fs in dev/pts dev sys proc; do
        if mountpoint -q "$root/$fs"; then umount -l "$root/$fs" || true; fi
    done
}

# Deletes a chroot made by `ci`, only once nothing is mounted in it: with /dev still bound there,
# rm would empty this machine's /dev.
remove_chroot() {
    local root=$1 fs
    for fs in dev/pts dev sys proc; do
        if mountpoint -q "$root/$fs"; then
            echo "$root/$fs is still mounted: $root is left in place (umount it, then rm -rf $root)" >&2
            return 1
        fi
    done
    rm -rf --one-file-system "$root"
}

# An EXIT trap runs on an interrupted or killed run too only when the signal is trapped.
exit_on_signals() {
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# The checkout as git would clone it (tracked and new files), into $1/home/pi/twitterbot.
copy_checkout() {
    local root=$1
    rm -rf "$root/home/pi/twitterbot"
    mkdir -p "$root/home/pi/twitterbot"
    (cd "$CHECKOUT" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
        [ -e "$f" ] && printf '%s\0' "$f"
    done | tar --null -T - -cf - | tar -xf - -C "$root/home/pi/twitterbot")
    git -C "$root/home/pi/twitterbot" init -q
    git -C "$root/home/pi/twitterbot" add -A
}

in_chroot() {
    local root=$1 name
    shift
    # A clean environment, but for a proxy this machine reaches PyPI through.
    local keep=()
    for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
        [ -n "${!name:-}" ] && keep+=("$name=${!name}")
    done
    chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/pi LANG=C.UTF-8 "${keep[@]}" \
        bash -euo pipefail -c "cd /home/pi/twitterbot && $*"
}

# The README's shell blocks under its "32-bit Raspberry Pi OS" heading, as one script.
readme_pi_commands() {
    awk '/^## .*32-bit Raspberry Pi OS/ {on = 1; next} on && /^## / {on = 0}
         on && /^```(sh|bash)$/ {block = 1; next} block && /^```$/ {block = 0; next} block' "$CHECKOUT/README.md" \
        | sed 's/^sudo //'
}

pi() {
    local arch=${1:-armhf} release=${2:-bookworm}
    local root="$CHROOTS/$release-$arch"
    # shellcheck disable=SC2064  # expanded now: $root is this function's, gone when EXIT runs
    trap "unmount_chroot $root" EXIT
    exit_on_signals
    make_chroot "$root" "$release" "$arch"
    copy_checkout "$root"
    if chroot "$root" sh -c 'command -v cc || command -v gcc'; then
        echo "a C compiler is installed in $root: the 32-bit install must work without one" >&2
        exit 1
    fi
    echo "== the README's 32-bit commands:"
    readme_pi_commands
    # Each command echoed with the seconds since the start, to tell apt's share from pip's (set
    # here: bash takes no PS4 from the environment when run as root).
    { echo "PS4='+ [\${SECONDS} s] '"; echo "set -x"; readme_pi_commands; } >"$root/home/pi/install.sh"
    local start end
    start=$(date +%s)
    in_chroot "$root" "bash -euo pipefail /home/pi/install.sh"
    end=$(date +%s)
    echo "== install: $((end - start)) s; venv: $(du -sh "$root/home/pi/twitterbot/.venv" | cut -f1)"
    # shellcheck disable=SC2016  # the chroot's shell expands these
    in_chroot "$root" '
        printf "hello from a %s Pi\n" "$(uname -m)" > tweets.txt
        printf "POST_TO=x\nTWEETS_FILE=tweets.txt\n" > .env
        chmod 600 .env
        echo "== dry run"; time .venv/bin/python bot.py --dry-run --force
        echo "== a picture line"
        .venv/bin/python -c "from PIL import Image; Image.new(\"RGB\", (64, 48), \"teal\").save(\"pic.png\")"
        printf "a picture ![a teal square](pic.png)\n" > tweets.txt
        .venv/bin/python bot.py --dry-run --force
        echo "== pegs solve english"; time .venv/bin/python bot.py pegs solve english --no-post
        echo "== the clients and libraries, imported"
        .venv/bin/python -c "
from atproto_client import Client
from cryptography.hazmat.primitives.asymmetric import ec
ec.generate_private_key(ec.SECP256R1())
import mastodon, flask, waitress, numpy, PIL, cffi
from PIL import features
from twitterbot.pictures.draw import font
print(\"numpy\", numpy.__version__, \"Pillow\", PIL.__version__, \"cffi\", cffi.__version__, \"FreeType\", features.check(\"freetype2\"), type(font(24)).__name__)"
        echo "== serve"
        (.venv/bin/python bot.py serve --port 8734 & echo $! > serve.pid)
        for _ in $(seq 60); do
            .venv/bin/python -c "import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:8734/\", timeout=5)" 2>/dev/null && break
            sleep 2
        done
        .venv/bin/python -c "import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:8734/\", timeout=5).status, \"from the status page\")"
        kill "$(cat serve.pid)"
        echo "== check"; .venv/bin/python bot.py check || echo "check exited $?"'
}

suite() {
    local release=${1:?bullseye or trixie} compiler=${2:-}
    local root="$CHROOTS/$release-amd64"
    # shellcheck disable=SC2064  # expanded now: $root is this function's, gone when EXIT runs
    trap "unmount_chroot $root" EXIT
    exit_on_signals
    make_chroot "$root" "$release" amd64
    if [ "$compiler" = cc ]; then
        chroot "$root" sh -c 'command -v cc >/dev/null || (apt-get update -qq && apt-get install -y -qq gcc libc6-dev)'
    else
        chroot "$root" sh -c '! command -v cc >/dev/null || apt-get remove -y -qq gcc cpp' >/dev/null
    fi
    copy_checkout "$root"
    chroot "$root" sh -c 'id pi >/dev/null 2>&1 || useradd -d /home/pi pi'
    # shellcheck disable=SC2016  # the chroot's shell expands these
    in_chroot "$root" '
        [ -x /home/pi/venv/bin/python ] || python3 -m venv /home/pi/venv
        /home/pi/venv/bin/python -m pip install -q --upgrade pip
        /home/pi/venv/bin/python -m pip install -q -r requirements-dev.txt
        chmod 755 /home/pi /home/pi/twitterbot
        /home/pi/venv/bin/python --version
        start=$(date +%s)
        /home/pi/venv/bin/python -m pytest -q -p no:cacheprovider tests || status=$?
        echo "== the suite took $(( $(date +%s) - start )) s"
        exit ${status:-0}'
}

# CI: the suite under another Python than the host's, the only way to one here: Trixie's 3.13,
# where Raspberry Pi OS is going, and Bullseye's 3.9, the oldest the README promises. The chroot
# is made afresh each time (a minute or two of debootstrap from Debian's archive), with no C
# compiler, as a Lite image; the Bluesky PDS and chromium are not installed in it, so their tests
# skip and say so; librsvg2-bin is (the SVG pictures' renderer from the README's apt line, with
# cairo and pango: no compiler), so the SVG tests draw there too. The README's command as it is:
# the release's own pip (Bullseye's is 20.3).
ci() {
    local release=${1:-trixie} arch root
    case "$release" in
        trixie | bullseye) ;;
        *) echo "ci: RELEASE is trixie or bullseye, not $release" >&2; exit 64 ;;
    esac
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
    arch=$(dpkg --print-architecture)
    mkdir -p "${CI_CHROOTS:-/var/tmp}"
    root=$(mktemp -d "${CI_CHROOTS:-/var/tmp}/$release-ci.XXXXXX")
    chmod 755 "$root"  # the chroot's /: the permission tests run the bot as nobody
    # Set before anything is mounted: every way out unmounts, then deletes the chroot.
    # shellcheck disable=SC2064  # expanded now: $root is this function's, gone when EXIT runs
    trap "unmount_chroot $root; remove_chroot $root" EXIT
    exit_on_signals
    local start=$SECONDS
    # Here, not in make_chroot: `set -e` does not stop a function called inside `||`. Twice, for a
    # mirror's passing hiccup (nothing is mounted yet, so the half-made chroot can go).
    local attempt
    for attempt in 1 2; do
        if debootstrap --variant=minbase --arch="$arch" \
            --include=python3,python3-venv,ca-certificates,git,librsvg2-bin,fonts-dejavu-core \
            "$release" "$root" "$MIRROR" >"$root.log" 2>&1; then
            break
        fi
        tail -n 30 "$root.log" >&2
        echo "debootstrap of $release from $MIRROR into $root failed (attempt $attempt; the end of its log above)" >&2
        [ "$attempt" = 2 ] && { rm -f "$root.log"; exit 69; }
        unmount_chroot "$root"  # debootstrap mounts /proc there while it works
        find "$root" -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system {} +
    done
    rm -f "$root.log"
    make_chroot "$root" "$release" "$arch"
    if chroot "$root" sh -c 'command -v cc || command -v gcc'; then
        echo "a C compiler is installed in $root: the suite must pass without one, as on a Lite image" >&2
        exit 1
    fi
    echo "== $release chroot made in $((SECONDS - start)) s"
    copy_checkout "$root"
    chroot "$root" sh -c 'id pi >/dev/null 2>&1 || useradd -d /home/pi pi'
    # The README's test command (tests/test_docs.py keeps .ci/run's the same).
    # A failure is run once more on its own (pytest --last-failed): one that passes then is a
    # test that depends on timing on a loaded machine, named loudly and to be fixed, not a red CI;
    # one that fails again fails CI.
    # shellcheck disable=SC2016  # the chroot's shell expands these
    in_chroot "$root" '
        chmod 755 /home/pi /home/pi/twitterbot
        python=$(python3 -c "import platform; print(platform.python_version())")
        echo "== Python $python"
        python3 -m venv .venv && .venv/bin/pip install -q -r requirements-dev.txt
        if ! .venv/bin/python -m pytest -q; then
            echo "== FAILED above on Python $python: running the failed tests once more, on their own"
            .venv/bin/python -m pytest -q --last-failed
            echo "== FLAKY on Python $python: the tests failed above passed on their own; fix them"
        fi'
    echo "== the $release suite, chroot included, took $((SECONDS - start)) s"
}

case "${1:-}" in
    pi) shift; pi "$@" ;;
    suite) shift; suite "$@" ;;
    ci) shift; ci "$@" ;;
    *) usage ;;
esac
