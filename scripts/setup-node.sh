#!/usr/bin/env bash
# Makes sure edgerl runs on Node 22 LTS, the floor package.json's engines state (>=22.12; wrangler 4 needs
# 22.12). Prints the directory to put first on PATH on stdout (everything else goes to stderr):
#   PATH="$(bash scripts/setup-node.sh):$PATH"
# With a new enough `node` already on PATH it prints that node's directory. Otherwise it fetches the
# pinned Node from the npm registry as the official binary package node-<os>-<arch> (the tarball nodejs.org
# publishes, repackaged by the `node` package's maintainers: https://www.npmjs.com/package/node), with
# `npm pack`, which checks the tarball against the registry's sha512 integrity, into a cache outside the
# clone: ${XDG_CACHE_HOME:-$HOME/.cache}/edgerl/. Later runs reuse the cached copy, offline. `npm ci` runs it
# (the `prepare` script), so on a machine with an older Node the fetch happens while npm is online anyway;
# scripts/with-node.sh runs `npm test`, `npm run demo` and the other test scripts on what it prints.
# --quiet: say nothing unless it fetches or fails.
set -euo pipefail

# The Node CI fetches when the machine's is older than the floor: a 22.x LTS release.
node_version='22.23.5'
floor_major=22
floor_minor=12

fail() {
  echo "setup-node: FAIL: $*" >&2
  exit 1
}
quiet=false
[[ "${1:-}" == --quiet ]] && quiet=true
say() { [[ "$quiet" == true ]] || echo "setup-node: $*" >&2; }
# What is done (a fetch) is said even when quiet: it takes a while and writes outside the clone.
tell() { echo "setup-node: $*" >&2; }

# True when the node at $1 is at least floor_major.floor_minor.
new_enough() {
  "$1" -e "const [major, minor] = process.versions.node.split('.').map(Number);
    process.exit(major > $floor_major || (major === $floor_major && minor >= $floor_minor) ? 0 : 1)" 2>/dev/null
}

current=$(command -v node || true)
if [[ -n "$current" ]] && new_enough "$current"; then
  say "using $current ($("$current" --version))"
  dirname "$current"
  exit 0
fi
say "node on PATH is ${current:+$("$current" --version) at }${current:-missing}; the floor is $floor_major.$floor_minor"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "no node-<os>-<arch> package for $(uname -s); install Node $node_version yourself" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no node-$os-<arch> package for $(uname -m); install Node $node_version yourself" ;;
esac
package="node-$os-$arch@$node_version"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/edgerl/node-$os-$arch-$node_version"
bin="$cache/package/bin"

if [[ ! -x "$bin/node" ]]; then
  command -v npm >/dev/null 2>&1 || fail "npm is needed to fetch $package"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tell "node on PATH is ${current:+$("$current" --version) at }${current:-missing}, older than $floor_major.$floor_minor: fetching $package from $(npm config get registry) into $cache"
  # npm pack verifies the download against the registry's integrity (EINTEGRITY on a mismatch).
  (cd "$work" && npm pack --json "$package" >pack.json) || fail "npm pack $package failed (message above)"
  integrity=$(sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' "$work/pack.json" | head -n 1)
  tarball=$(sed -n 's/.*"filename": *"\([^"]*\)".*/\1/p' "$work/pack.json" | head -n 1)
  [[ -n "$integrity" && -f "$work/$tarball" ]] || fail "npm pack $package wrote no tarball"
  tell "verified $tarball ($integrity)"
  mkdir -p "$work/unpacked" "$(dirname "$cache")"
  tar -xzf "$work/$tarball" -C "$work/unpacked"
  [[ -x "$work/unpacked/package/bin/node" ]] || fail "$tarball holds no package/bin/node"
  # Whole or not at all: a run stopped half-way leaves no broken cache behind.
  rm -rf "$cache"
  mv "$work/unpacked" "$cache"
fi

version=$("$bin/node" --version) || fail "$bin/node does not run on this machine"
[[ "$version" == "v$node_version" ]] || fail "$bin/node is $version, expected v$node_version"
say "using $bin/node ($version)"
echo "$bin"
