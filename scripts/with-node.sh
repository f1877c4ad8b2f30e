#!/usr/bin/env bash
# Runs a command on Node 22 LTS (package.json's engines floor, 22.12): the node on PATH when it is new
# enough, else the pinned one scripts/setup-node.sh keeps in its cache (fetched by `npm ci` on such a
# machine). Put in front of the npm scripts that run the project, so `npm test` and `npm run demo` work
# on a machine whose own Node is older:
#   "test": "bash scripts/with-node.sh vitest run …"
set -euo pipefail
node_bin=$(bash "$(dirname "$0")/setup-node.sh" --quiet)
PATH="$node_bin:$PATH" exec "$@"
