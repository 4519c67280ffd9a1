#!/usr/bin/env bash
# A project's `npm test` (its package.json runs this from the project's folder): type-checks the
# project, tests included (`tsc --noEmit`), while vitest runs its tests, so the check adds no time;
# fails when either fails. Arguments go to `vitest run`.
# SVC_TYPECHECKED=1 leaves the check out: the root `npm test` (tools/scripts/test.sh) has checked
# every project at once (tsconfig.typecheck.json: one program, the shared types read once, where
# a check per project read them 24 times).
# SVC_TEST_LEDGER (set by the root npm test): a file that gets the project's name once vitest has
# run, so the root run can tell that every project it planned did run its tests.
set -uo pipefail
tsc=
if [ "${SVC_TYPECHECKED:-}" != 1 ]; then
  tsc -p tsconfig.json --noEmit &
  tsc=$!
fi
vitest run "$@"
status=$?
# A project's `server-variants.tests` (grpc-server): test files run once more with each
# `VAR=value` its first line names (e.g. SVC_GRPC_SERVER=grpc-js), on a whole-project run only.
if [ $# -eq 0 ] && [ -f server-variants.tests ]; then
  variant=$(head -n 1 server-variants.tests)
  mapfile -t files < <(tail -n +2 server-variants.tests | grep -v '^#' | grep -v '^$')
  echo "$(basename "$PWD"): again with $variant: ${files[*]}"
  env "$variant" vitest run "${files[@]}" || status=1
fi
if [ -n "${SVC_TEST_LEDGER:-}" ]; then
  node -p 'require("./package.json").name' >>"$SVC_TEST_LEDGER"
fi
if [ -n "$tsc" ] && ! wait "$tsc"; then
  echo "$(basename "$PWD"): tsc -p tsconfig.json --noEmit found type errors (above)" >&2
  status=1
fi
exit "$status"
