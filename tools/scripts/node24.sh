#!/usr/bin/env bash
# Prints the bin/ folder of a Node 24 binary installed from the npm registry's `node` package
# (it ships the Linux binary as a registry package), caching it outside the repository.
# Usage: PATH="$(bash tools/scripts/node24.sh):$PATH" npm test
set -euo pipefail
dir="${SVC_NODE24_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svcboot/node24}"
bin="$dir/node_modules/node/bin"
if [ ! -x "$bin/node" ] || [[ "$("$bin/node" --version)" != v24.* ]]; then
  mkdir -p "$dir"
  # The `node` package places the binary from a preinstall script: allow exactly that one.
  printf '{ "private": true, "allowScripts": { "node": true } }\n' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --no-save --prefer-offline --loglevel=error node@24 >&2)
fi
"$bin/node" --version >&2
echo "$bin"
