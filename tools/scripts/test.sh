#!/usr/bin/env bash
# npm test: start what the tests need, then test every project changed since the first commit
# (on a clean clone: every project). The services and tools (apt-get and server start-up: waiting,
# mostly) are made ready while nx builds the libs (CPU); the tests start once both are done.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=$(git rev-list --max-parents=0 HEAD | tail -n 1)
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

ready_log=$(mktemp)
# One after the other: both may run apt-get, which takes one lock.
(bash tools/scripts/services.sh && bash tools/scripts/tools.sh) >"$ready_log" 2>&1 &
ready=$!
# Every project's sources and tests type-checked as one program (tsconfig.typecheck.json), beside
# the builds; the projects' test scripts then leave their own check out (SVC_TYPECHECKED).
typecheck_log=$(mktemp)
trap 'rm -f "$ready_log" "$typecheck_log"' EXIT
npx tsc -p tsconfig.typecheck.json >"$typecheck_log" 2>&1 &
typecheck=$!
build_status=0
npx nx affected -t build --base="$base" --outputStyle=stream || build_status=$?
typecheck_status=0
wait "$typecheck" || typecheck_status=$?
ready_status=0
wait "$ready" || ready_status=$?
cat "$ready_log"
[ "$ready_status" = 0 ] || { echo "test.sh: making the test services and tools ready failed (above)"; exit "$ready_status"; }
[ "$build_status" = 0 ] || exit "$build_status"
if [ "$typecheck_status" != 0 ]; then
  cat "$typecheck_log"
  echo "test.sh: tsc -p tsconfig.typecheck.json found type errors (above)"
  exit "$typecheck_status"
fi
export SVC_TYPECHECKED=1
# The builds are in nx's cache now: the test targets' dependsOn build replays them.
# nx starts the test tasks of the most depended-upon projects first (entry-core, ...), so the CLI's,
# which nothing depends on and which runs longest (it scaffolds, installs and compiles services),
# would start among the last and end alone. When it is affected it starts here at once, beside the
# others.
affected=$(npx nx show projects --affected --base="$base" -t test)
if grep -qx '@svcboot/cli' <<<"$affected"; then
  npx nx run @svcboot/cli:test --outputStyle=stream "$@" &
  cli=$!
  status=0
  npx nx affected:test --base="$base" --exclude=@svcboot/cli --outputStyle=stream "$@" || status=$?
  cli_status=0
  wait "$cli" || cli_status=$?
  [ "$cli_status" = 0 ] || { echo "test.sh: the tests of @svcboot/cli failed (above)"; exit "$cli_status"; }
  exit "$status"
fi
exec npx nx affected:test --base="$base" --outputStyle=stream "$@"
