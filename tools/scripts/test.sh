#!/usr/bin/env bash
# npm test: start what the tests need, then test every project changed since the first commit
# (on a clean clone: every project).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/scripts/services.sh
bash tools/scripts/tools.sh
base=$(git rev-list --max-parents=0 HEAD | tail -n 1)
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
exec npx nx affected:test --base="$base" --outputStyle=stream "$@"
