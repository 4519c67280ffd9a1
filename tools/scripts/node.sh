#!/usr/bin/env bash
# Prints the bin/ folder of a Node.js binary of the given major version, installed from the npm
# registry's `node` package (it ships the Linux binary as a registry package), cached outside the
# repository in ~/.cache/svcboot/node<major> (SVC_NODE_DIR overrides the folder).
# Usage: PATH="$(bash tools/scripts/node.sh 26):$PATH" npm test
set -euo pipefail
major=${1:?usage: tools/scripts/node.sh <major version, e.g. 24 or 26>}
dir="${SVC_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svcboot/node$major}"
bin="$dir/node_modules/node/bin"
if [ ! -x "$bin/node" ] || [[ "$("$bin/node" --version)" != "v$major".* ]]; then
  mkdir -p "$dir"
  # The `node` package places the binary from a preinstall script: allow exactly that one.
  printf '{ "private": true, "allowScripts": { "node": true } }\n' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --no-save --prefer-offline --loglevel=error "node@$major" >&2)
fi
"$bin/node" --version >&2
echo "$bin"
