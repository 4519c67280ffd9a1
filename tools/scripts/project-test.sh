#!/usr/bin/env bash
# A project's `npm test` (its package.json runs this from the project's folder): type-checks the
# project, tests included (`tsc --noEmit`), while vitest runs its tests, so the check adds no time;
# fails when either fails. Arguments go to `vitest run`.
set -uo pipefail
tsc -p tsconfig.json --noEmit &
tsc=$!
vitest run "$@"
status=$?
if ! wait "$tsc"; then
  echo "$(basename "$PWD"): tsc -p tsconfig.json --noEmit found type errors (above)" >&2
  status=1
fi
exit "$status"
