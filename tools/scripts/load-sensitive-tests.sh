#!/usr/bin/env bash
# Runs the test files that load a server (load shedding, bursts, many connections, the
# front → back chain, SIGTERM under keep-alive load, a closed loop of callers on a cold process)
# beside BUSY processes that each spin one CPU (default 8: about the load average 10 issue #42
# saw on the 2-core machine), one file after another, and says which passed.
# The spinners are ended by their process ids when the script ends, however it ends.
#   bash tools/scripts/load-sensitive-tests.sh [BUSY]
set -uo pipefail
cd "$(dirname "$0")/../.."
busy="${1:-8}"
files=(
  "libs/entry-core src/overload/load-shedding.test.ts"
  "libs/entry-core src/overload/io-bound-callers.test.ts"
  "libs/entry-http src/load-shedding.test.ts"
  "libs/entry-http src/burst.e2e.test.ts"
  "libs/entry-http src/hardening.test.ts"
  "libs/entry-http src/shed-at-door.test.ts"
  "libs/grpc-server src/load-shedding.test.ts"
  "libs/grpc-server src/hardening.test.ts"
  "libs/grpc-server src/connection-limits.test.ts"
  "libs/entry-httpclient src/pushback.e2e.test.ts"
  "libs/entry-http src/shutdown.test.ts"
  "libs/grpc-server src/shutdown.test.ts"
  "apps/demo-columnar src/demo.test.ts"
)
# A file that moved (the grpc entry's tests went to libs/grpc-server in #38's cut) fails the
# script at once, naming it, before any process spins (vitest would only say "no test files").
for entry in "${files[@]}"; do
  read -r dir file <<<"$entry"
  [ -f "$dir/$file" ] || { echo "load-sensitive-tests: $dir/$file does not exist; update the list" >&2; exit 2; }
done
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop EXIT
for _ in $(seq 1 "$busy"); do
  node -e 'for (;;);' &
  pids+=("$!")
done
echo "== $busy busy processes; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
passed=0
failed=0
for entry in "${files[@]}"; do
  read -r dir file <<<"$entry"
  if (cd "$dir" && SVC_E2E=1 npx vitest run "$file" >/tmp/load-sensitive.$$.log 2>&1); then
    passed=$((passed + 1))
    echo "ok    $dir/$file"
  else
    failed=$((failed + 1))
    echo "FAIL  $dir/$file (output: /tmp/load-sensitive.$$.$failed.log)"
    cp /tmp/load-sensitive.$$.log "/tmp/load-sensitive.$$.$failed.log"
  fi
done
rm -f /tmp/load-sensitive.$$.log
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
