#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests (test/console/, `npm run test:browser`)
# when it is missing, and prints the browser's path on stdout (everything else goes to stderr):
#   export EDGERL_CHROMIUM=$(bash scripts/setup-chromium.sh)
# playwright-core drives it; nothing downloads a browser of its own. Other distributions: install
# Chromium with their package manager and point EDGERL_CHROMIUM at it.
set -euo pipefail

fail() {
  echo "setup-chromium: FAIL: $*" >&2
  exit 1
}
say() { echo "setup-chromium: $*" >&2; }

browser=${EDGERL_CHROMIUM:-/usr/bin/chromium}
if [[ -x "$browser" ]]; then
  say "$("$browser" --version 2>/dev/null || echo "$browser") already installed"
  echo "$browser"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || fail "no $browser and no apt-get: install Chromium by hand and set EDGERL_CHROMIUM"
sudo=''
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || fail "must run as root (or with sudo available) to apt-get install"
  sudo='sudo'
fi
say "apt-get update"
$sudo apt-get update -qq >&2 || fail "apt-get update failed"
say "installing Debian's chromium package"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2 ||
  fail "apt-get install chromium failed"
[[ -x /usr/bin/chromium ]] || fail "the chromium package installed no /usr/bin/chromium"
say "$(/usr/bin/chromium --version 2>/dev/null) ready"
echo /usr/bin/chromium
