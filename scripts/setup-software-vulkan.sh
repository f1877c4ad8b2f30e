#!/usr/bin/env bash
# Installs a software Vulkan driver (Mesa's lavapipe) on Debian 12 so the webgpu backend can run
# without a GPU, for CI. Prints the driver's ICD file on stdout (everything else goes to stderr):
#   export VK_ICD_FILENAMES=$(bash scripts/setup-software-vulkan.sh)
#   EDGERL_BACKEND=webgpu:software npx vitest run model/webgpu
# Why backports: bookworm's own lavapipe (Mesa 22.3.6) lacks the shaderUniform*ArrayDynamicIndexing
# features Dawn requires, so Dawn rejects it; Mesa 25.0.7 from bookworm-backports works with
# webgpu@0.6.2 (checked 2026-11-30). Other distributions: install Mesa >= 25 lavapipe and libvulkan1
# with their package manager and point VK_ICD_FILENAMES at its lvp_icd*.json.
set -euo pipefail

mesa_version='25.0.7-2~bpo12+1'
fail() {
  echo "setup-software-vulkan: FAIL: $*" >&2
  exit 1
}
say() { echo "setup-software-vulkan: $*" >&2; }

# Mesa 25 names it lvp_icd.json (older Mesa: lvp_icd.<arch>.json); ask dpkg where it put it.
lavapipe_icd() { dpkg -L mesa-vulkan-drivers 2>/dev/null | grep -m1 '/icd\.d/lvp_icd[^/]*\.json$' || true; }

installed=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
icd=$(lavapipe_icd)
if [[ "$installed" == "$mesa_version" && -n "$icd" && -f "$icd" ]] && dpkg-query -W libvulkan1 >/dev/null 2>&1; then
  say "lavapipe $installed already installed"
  echo "$icd"
  exit 0
fi

# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ "$codename" == bookworm ]] ||
  fail "this script knows Debian 12 (bookworm) only, found '${codename:-unknown}'; install Mesa >= 25 lavapipe + libvulkan1 by hand"
sudo=''
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || fail "must run as root (or with sudo available) to apt-get install"
  sudo='sudo'
fi

if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  say "adding the bookworm-backports source (/etc/apt/sources.list.d/bookworm-backports.sources)"
  printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
    'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
    $sudo tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
fi

say "apt-get update"
$sudo apt-get update -qq >&2 || fail "apt-get update failed"
say "installing mesa-vulkan-drivers=$mesa_version and libvulkan1 from bookworm-backports"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  -t bookworm-backports "mesa-vulkan-drivers=$mesa_version" libvulkan1 >&2 ||
  fail "apt-get install of mesa-vulkan-drivers=$mesa_version failed (is bookworm-backports reachable?)"
icd=$(lavapipe_icd)
[[ -n "$icd" && -f "$icd" ]] || fail "mesa-vulkan-drivers installed but it ships no lvp_icd*.json"
say "lavapipe $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers) ready"
echo "$icd"
