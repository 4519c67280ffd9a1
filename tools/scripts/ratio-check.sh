#!/usr/bin/env bash
# The ratio check (issue #41, part 4): svcboot ÷ bare grpc-js and ÷ bare Koa, no middleware and
# all three, as instructions per call (callgrind; gated against tools/scripts/ratio/baseline.json
# with its margin) and, printed beside them, CPU-time ratios from a short pinned run. Never an
# absolute time. `--update` rewrites the baseline (commit it with the reason).
# Needs valgrind (callgrind_control), taskset and the root workspace's node_modules; builds the
# libs' dist/ that the servers load when it is missing or stale. About 2–3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in valgrind callgrind_control taskset; do
  command -v "$tool" >/dev/null || { echo "ratio-check: $tool is not installed (apt-get install valgrind util-linux)" >&2; exit 2; }
done
# The servers load @svcboot/entry-grpc (and through it entry-core, entry-http, openapi) from
# dist/: nx builds what changed (a cache hit otherwise, seconds).
npx nx run-many -t build -p @svcboot/entry-grpc @svcboot/entry-http --outputStyle=static >/dev/null
exec node --import tsx tools/scripts/ratio/ratio-check.ts "$@"
