#!/usr/bin/env bash
# npm test: start what the tests need, then test every project changed since the first commit
# (on a clean clone: every project). The services and tools (apt-get and server start-up: waiting,
# mostly) are made ready while nx builds the libs (CPU); the tests start once both are done.
# Every project is tested when the first commit is not there to compare with: a shallow clone
# (its oldest commit is a cut, not the first; with --depth 1 it is HEAD, and nothing would be
# "affected"), no git history at all, or a first commit that is HEAD. The run fails when it ran
# no project's tests, or fewer than it set out to (each project's test script writes a line to
# $SVC_TEST_LEDGER once vitest has run).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

base=
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = false ]; then
  base=$(git rev-list --max-parents=0 HEAD | tail -n 1)
  if [ "$base" = "$(git rev-parse HEAD)" ]; then base=; fi
fi
if [ -n "$base" ]; then
  scope=(affected --base="$base")
else
  echo "test.sh: no first commit to compare with (shallow clone, no history, or HEAD is the first commit): testing every project"
  scope=(run-many)
fi

ready_log=$(mktemp)
# One after the other: both may run apt-get, which takes one lock.
(bash tools/scripts/services.sh && bash tools/scripts/tools.sh) >"$ready_log" 2>&1 &
ready=$!
# Every project's sources and tests type-checked as one program (tsconfig.typecheck.json), beside
# the builds; the projects' test scripts then leave their own check out (SVC_TYPECHECKED).
typecheck_log=$(mktemp)
ledger=$(mktemp)
# The test runs' output, kept as well as shown: a failed run ends by naming its failed tests
# (tools/scripts/test-failures.mjs), which a CI log's tail would otherwise leave out.
test_log=$(mktemp)
cli_log=$(mktemp)
trap 'rm -f "$ready_log" "$typecheck_log" "$ledger" "$test_log" "$cli_log"' EXIT
failures() { node tools/scripts/test-failures.mjs "$test_log" "$cli_log" || true; }
npx tsc -p tsconfig.typecheck.json >"$typecheck_log" 2>&1 &
typecheck=$!
build_status=0
npx nx "${scope[@]}" -t build --outputStyle=stream || build_status=$?
ready_status=0
wait "$ready" || ready_status=$?
cat "$ready_log"
[ "$ready_status" = 0 ] || { echo "test.sh: making the test services and tools ready failed (above)"; exit "$ready_status"; }
[ "$build_status" = 0 ] || exit "$build_status"
# The type check goes on beside the tests (its result is read once they are done: a type error
# fails the run all the same); waiting for it first held every test back by its ~25 s.
typecheck_result() {
  local typecheck_status=0
  wait "$typecheck" || typecheck_status=$?
  if [ "$typecheck_status" != 0 ]; then
    cat "$typecheck_log"
    echo "test.sh: tsc -p tsconfig.typecheck.json found type errors (above)"
    return "$typecheck_status"
  fi
}
export SVC_TYPECHECKED=1
# The builds are in nx's cache now: the test targets' dependsOn build replays them.
# nx starts the test tasks of the most depended-upon projects first (entry-core, ...), so the CLI's,
# which nothing depends on and which runs longest (it scaffolds, installs and compiles services),
# would start among the last and end alone. When it is affected it starts here at once, beside the
# others.
if [ -n "$base" ]; then
  planned=$(npx nx show projects --affected --base="$base" -t test)
else
  planned=$(npx nx show projects -t test)
fi
if [ -z "$planned" ]; then
  echo "test.sh: no project is affected since $base, so no test would run: nothing was tested (run a project's tests with 'npx nx run <project>:test')" >&2
  exit 1
fi
export SVC_TEST_LEDGER=$ledger

# Every planned project ran its tests (a passing nx run with no test task, or fewer than planned,
# fails here instead of passing).
check_ledger() {
  local want ran
  want=$(grep -c . <<<"$planned")
  ran=$(sort -u "$ledger" | grep -c . || true)
  if [ "$ran" != "$want" ]; then
    echo "test.sh: $ran of the $want planned projects ran their tests; these did not:" >&2
    comm -23 <(sort -u <<<"$planned") <(sort -u "$ledger") | sed 's/^/  /' >&2
    return 1
  fi
  echo "test.sh: $ran projects tested"
}

status=0
if grep -qx '@svcboot/cli' <<<"$planned"; then
  # --excludeTaskDependencies: the builds above are done; replaying them again from this second nx
  # process (the CLI depends on every lib through @svcboot/all) rewrote a lib's dist/ while another
  # project's pack test was packing it (entry-kv's found no entry-core/dist/index.js in CI).
  npx nx run @svcboot/cli:test --excludeTaskDependencies --outputStyle=stream "$@" 2>&1 | tee "$cli_log" &
  cli=$!
  npx nx "${scope[@]}" -t test --exclude=@svcboot/cli --outputStyle=stream "$@" 2>&1 | tee "$test_log" || status=$?
  cli_status=0
  wait "$cli" || cli_status=$?
  if [ "$cli_status" != 0 ]; then
    failures
    echo "test.sh: the tests of @svcboot/cli failed (above)"
    typecheck_result || true
    exit "$cli_status"
  fi
else
  npx nx "${scope[@]}" -t test --outputStyle=stream "$@" 2>&1 | tee "$test_log" || status=$?
fi
typecheck_status=0
typecheck_result || typecheck_status=$?
[ "$status" = 0 ] || { failures; exit "$status"; }
[ "$typecheck_status" = 0 ] || exit "$typecheck_status"
check_ledger
