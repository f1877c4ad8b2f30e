#!/usr/bin/env bash
# `npm run setup:torch`: the Python environment of the torch engine (docs/torch-engine.md). Makes
# .venv-torch/ at the repository root with `${PYTHON:-python3} -m venv`, installs the pins of
# torch-engine/requirements.txt with that environment's pip (pip's own configuration picks the index or
# wheel store), then checks the result. Re-running on a ready environment only re-checks it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=".venv-torch"

fail() {
  echo "setup:torch: $*" >&2
  exit 1
}

# 0 when the interpreter $1 runs and is Python 3.10 or newer.
new_enough() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}

command -v "$python" >/dev/null 2>&1 || fail "no '$python' on PATH; install Python 3.10 or newer, or set PYTHON=/path/to/python3"
if ! new_enough "$python"; then
  fail "$("$python" --version 2>&1) ($(command -v "$python")) is too old: the torch engine needs Python 3.10 or newer; set PYTHON=/path/to/python3.10+"
fi

# An environment left by an older or removed interpreter is made again.
if [ -e "$venv" ] && ! new_enough "$venv/bin/python"; then
  echo "setup:torch: $venv does not run Python 3.10+; making it again"
  rm -rf "$venv"
fi
quiet=--quiet
if [ ! -x "$venv/bin/python" ]; then
  echo "setup:torch: making $venv with $("$python" --version 2>&1)"
  "$python" -m venv "$venv" || fail "'$python -m venv' failed (on Debian/Ubuntu: apt install python3-venv)"
  quiet= # the first install downloads about 1 GB: show pip's progress
fi

# pip skips pins that are already installed, so a second run is quick and needs no index.
"$venv/bin/python" -m pip install --disable-pip-version-check $quiet -r torch-engine/requirements.txt ||
  fail "pip could not install torch-engine/requirements.txt into $venv (see pip's message above; pip's configuration chooses the index: pip config list)"

PYTHONPATH=torch-engine "$venv/bin/python" -m edgerl_torch.requirements
