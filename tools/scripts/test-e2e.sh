#!/usr/bin/env bash
# npm run test:e2e: the end-to-end tests (*.e2e.test.ts: a system of processes behind HAProxy, a
# browser driving a page, a burst), which `npm test` leaves out (vitest.config.ts) so that each
# Node version's run stays short; CI runs them once, on the machine's Node, in their own step.
# Starts what they need (services.sh, tools.sh), builds every project (nx's cache makes it a replay
# after npm test), then runs each project's e2e files with that project's own test script. Fails when a file
# fails, or when there is no e2e file at all (a run that tested nothing cannot pass).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false SVC_E2E=1
# One file at a time (vitest.config.ts reads SVC_TEST_WORKERS): two of the CLI's files that run
# `svc new` from this checkout both rebuild tools/cli's dist/ (rm -rf dist && tsc) to pack it, and
# side by side one removed what the other was packing (CI: "rm: cannot remove 'dist'", a vendored
# svc without dist/install/command.js). These are whole-process tests; one at a time also keeps
# them off each other's cores.
export SVC_TEST_WORKERS=1

mapfile -t files < <(git ls-files -- '*.e2e.test.ts' | sort)
if [ ${#files[@]} = 0 ]; then
  echo "test-e2e.sh: no *.e2e.test.ts file is tracked: nothing to run" >&2
  exit 1
fi
bash tools/scripts/services.sh
bash tools/scripts/tools.sh
npx nx run-many -t build --outputStyle=stream

status=0
# Each project's output, kept as well as shown, its lines prefixed with the project's folder name:
# a failed run ends by naming its failed tests (tools/scripts/test-failures.mjs).
e2e_log=$(mktemp)
one_log=$(mktemp)
trap 'rm -f "$e2e_log" "$one_log"' EXIT
# Each project's files from its folder (the folder holding the nearest package.json).
declare -A by_project=()
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  while [ ! -f "$dir/package.json" ]; do dir=$(dirname "$dir"); done
  by_project[$dir]+="${f#"$dir"/} "
done
for dir in $(printf '%s\n' "${!by_project[@]}" | sort); do
  # shellcheck disable=SC2086 # the file list is split on purpose
  set -- ${by_project[$dir]}
  echo "== e2e: $dir: $*"
  start=$SECONDS
  # The project's own test script (its timeouts and environment; tools/scripts/project-test.sh),
  # given the files; the type check is the build's and npm test's.
  (cd "$dir" && SVC_TYPECHECKED=1 npm test --silent -- "$@") 2>&1 | tee "$one_log" || status=1
  sed "s|^|$(basename "$dir"): |" "$one_log" >>"$e2e_log"
  echo "== e2e: $dir: $((SECONDS - start)) s"
done
[ "$status" = 0 ] || node tools/scripts/test-failures.mjs "$e2e_log" || true
exit "$status"
