#!/usr/bin/env bash
# The image `svc deploy` writes, built and run on this machine (issue #30): a base image from the
# local Node binary (node-base-image.sh), a service from `svc new --with grpc`, its Dockerfile from
# `svc deploy`, `buildah bud`, then the image run as uid 1000: /readyz must answer ready, and
# SIGTERM must drain and exit 0.
#   apt-get install -y buildah && bash tools/scripts/image-smoke.sh
# Needs the npm registry (the Dockerfile's `npm ci`). Containers run with `--isolation chroot`
# (the OCI runtime cannot create cgroups here) on the host's network.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
command -v buildah >/dev/null || { echo "image-smoke: buildah is not installed (apt-get install -y buildah)" >&2; exit 1; }
bs=(buildah --storage-driver vfs)
base=$(bash "$repo/tools/scripts/node-base-image.sh")
work=$(mktemp -d)
ctr=''
cleanup() {
  [ -n "$ctr" ] && "${bs[@]}" rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# The CLI and the packages it builds on (nx builds dependencies first).
(cd "$repo" && NX_DAEMON=false npx nx run @svcboot/cli:build --output-style=static >/dev/null)
cd "$work"
node "$repo/tools/cli/dist/bin.js" new smoke --with grpc >/dev/null
cd smoke
npm install --no-audit --no-fund >/dev/null 2>&1
node "$repo/tools/cli/dist/bin.js" deploy --base-image "$base" | grep -v '^wrote'
"${bs[@]}" bud --isolation chroot -q -t localhost/svcboot-smoke:0.1.0 . >/dev/null
echo "image-smoke: built localhost/svcboot-smoke:0.1.0"
port=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
ctr=$("${bs[@]}" from localhost/svcboot-smoke:0.1.0)
"${bs[@]}" run --isolation chroot --user 1000:1000 --env GRPC_PORT="$port" "$ctr" -- node dist/main.js >"$work/run.log" 2>&1 &
runner=$!
ready=''
for _ in $(seq 1 120); do
  ready=$(curl -s -m 1 "http://127.0.0.1:$port/readyz" || true)
  [ "$ready" = '{"status":"ready"}' ] && break
  sleep 0.5
done
[ "$ready" = '{"status":"ready"}' ] || { cat "$work/run.log"; echo "image-smoke: /readyz never answered ready" >&2; exit 1; }
echo "image-smoke: /readyz $ready"
# The service's node process (uid 1000) inside the container: PID of `node dist/main.js` under the runner.
pid=$(pgrep -u 1000 -f '^/usr/local/bin/node dist/main.js' | while read -r p; do
  if grep -q "GRPC_PORT=$port" "/proc/$p/environ" 2>/dev/null; then echo "$p"; fi
done | head -1)
[ -n "$pid" ] || { echo "image-smoke: the node process was not found" >&2; exit 1; }
kill -TERM "$pid"
set +e
wait "$runner"
code=$?
set -e
grep -q 'Shutdown complete' "$work/run.log" || { cat "$work/run.log"; echo "image-smoke: no clean shutdown" >&2; exit 1; }
echo "image-smoke: SIGTERM drained, exit code $code"
[ "$code" = 0 ]
