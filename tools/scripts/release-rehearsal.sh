#!/usr/bin/env bash
# Release rehearsal: what a release publishes, installed and used as a user would, with nothing
# leaving this machine except reads from the npm registry.
#
# 1. A local npm registry: Verdaccio (installed at run time from the npm registry into a cache
#    folder, not into the workspace), its storage in a temporary folder, its uplink the registry
#    npm is configured with here (`npm config get registry`), stopped when this script exits.
#    The @svcboot scope is served from its storage only (never proxied).
# 2. `nx release` in a throwaway clone of HEAD (a release rewrites package.json files, writes
#    changelogs, consumes the committed version plans and commits and tags): the versions from
#    the version plans, every publishable package published to the local registry.
# 3. As a user, in an empty folder outside the repository, with npm pointed at that registry:
#    `npx @svcboot/cli new`, `svc add` of several kinds, `npm install`, build, test, start, one
#    call; then every `npm install @svcboot/...` line of every README, run as written.
# 4. docs/guide.md, every block as a reader types it (tools/cli/src/guide/guide.rehearsal.ts).
#
#   bash tools/scripts/release-rehearsal.sh           # CI runs this once per run
#   SVC_REHEARSAL_KEEP=1 bash tools/scripts/release-rehearsal.sh   # keep the temporary folder
#
# Needs git, curl, PostgreSQL and Redis (tools/scripts/services.sh starts them) for the guide.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false npm_config_update_notifier=false
export npm_config_audit=false npm_config_fund=false

# Verdaccio 6.8 is the last release whose engines allow Node 20 (6.9 and later need Node 22).
VERDACCIO_VERSION=6.8.0

started=$SECONDS
step_start=$SECONDS
step() {
  echo "== rehearsal: $1 (+$((SECONDS - started)) s)"
}

# The registry npm uses here, read now: Verdaccio's uplink for everything outside @svcboot.
uplink=$(npm config get registry)
case "$uplink" in
  http://*|https://*) ;;
  *) echo "release-rehearsal: npm config get registry answered '$uplink', not a URL" >&2; exit 1 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/svcboot-rehearsal.XXXXXX")
verdaccio_pid=
service_pid=
cleanup() {
  local status=$?
  [ -z "$service_pid" ] || kill "$service_pid" 2>/dev/null || true
  if [ -n "$verdaccio_pid" ]; then
    kill "$verdaccio_pid" 2>/dev/null || true
    wait "$verdaccio_pid" 2>/dev/null || true
  fi
  if [ "$status" != 0 ] && [ -f "$work/verdaccio.log" ]; then
    echo "-- the registry's log (last 30 lines):" >&2
    tail -n 30 "$work/verdaccio.log" >&2 || true
  fi
  if [ "${SVC_REHEARSAL_KEEP:-}" = 1 ]; then
    echo "release-rehearsal: kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# -- 1. the registry ------------------------------------------------------------------------------
step "Verdaccio $VERDACCIO_VERSION"
cache=${SVC_REHEARSAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svcboot-rehearsal}/verdaccio-$VERDACCIO_VERSION
if [ ! -x "$cache/node_modules/.bin/verdaccio" ]; then
  mkdir -p "$cache"
  # verdaccio-audit asks for node-fetch by the dist-tag "cjs"; a registry mirror that keeps only
  # "latest" cannot resolve it, so the version that tag names is given.
  cat >"$cache/package.json" <<EOF
{
  "private": true,
  "dependencies": { "verdaccio": "$VERDACCIO_VERSION" },
  "overrides": { "node-fetch@cjs": "2.7.0" }
}
EOF
  (cd "$cache" && npm install --no-package-lock --ignore-scripts --loglevel=error >/dev/null)
fi

mkdir -p "$work/verdaccio/storage"
start_registry() {
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  registry="http://127.0.0.1:$port/"
  cat >"$work/verdaccio/config.yaml" <<EOF
storage: $work/verdaccio/storage
auth:
  htpasswd:
    file: $work/verdaccio/htpasswd
    max_users: 10
uplinks:
  upstream:
    url: $uplink
    timeout: 60s
    max_fails: 5
packages:
  '@svcboot/*':
    access: \$all
    publish: \$authenticated
  '**':
    access: \$all
    publish: \$authenticated
    proxy: upstream
server:
  keepAliveTimeout: 60
listen: 127.0.0.1:$port
log: { type: stdout, format: pretty, level: warn }
max_body_size: 200mb
EOF
  "$cache/node_modules/.bin/verdaccio" --config "$work/verdaccio/config.yaml" >"$work/verdaccio.log" 2>&1 &
  verdaccio_pid=$!
  for _ in $(seq 1 300); do
    if curl -fsS "${registry}-/ping" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$verdaccio_pid" 2>/dev/null; then
      wait "$verdaccio_pid" 2>/dev/null || true
      verdaccio_pid=
      return 1
    fi
    sleep 0.1
  done
  echo "release-rehearsal: Verdaccio did not answer ${registry}-/ping within 30 s" >&2
  exit 1
}
# The port is taken from the kernel and freed before Verdaccio binds it: if another process took
# it meanwhile, Verdaccio exits and another port is tried.
for attempt in 1 2 3 4 5; do
  if start_registry; then break; fi
  if [ "$attempt" = 5 ]; then
    cat "$work/verdaccio.log" >&2
    echo "release-rehearsal: Verdaccio did not start (above)" >&2
    exit 1
  fi
done
echo "registry $registry (uplink $uplink, storage $work/verdaccio/storage)"

# A user of the registry, for npm publish: its token goes into a temporary npmrc only.
token=$(curl -fsS -X PUT -H 'content-type: application/json' \
  -d '{"name":"rehearsal","password":"rehearsal-password"}' \
  "${registry}-/user/org.couchdb.user:rehearsal" | node -p 'JSON.parse(require("fs").readFileSync(0,"utf-8")).token')
# npm's settings here stay (~/.npmrc); the registry and its token come on top, for every npm
# this script starts (environment beats ~/.npmrc; the token sits in a global config of our own).
printf '//127.0.0.1:%s/:_authToken=%s\n' "$port" "$token" >"$work/npmrc"
export npm_config_registry=$registry
export NPM_CONFIG_GLOBALCONFIG=$work/npmrc

# -- 2. the release -------------------------------------------------------------------------------
step "nx release in a throwaway clone of HEAD ($(git rev-parse --short HEAD))"
git clone -q --no-checkout "$root" "$work/repo"
git -C "$work/repo" checkout -q --detach "$(git rev-parse HEAD)"
# The workspace's node_modules as hard links (fast, no download); the workspace packages in it
# are relative links, so they name the clone's libs and tools.
cp -al "$root/node_modules" "$work/repo/node_modules"
(
  cd "$work/repo"
  export GIT_AUTHOR_NAME=rehearsal GIT_AUTHOR_EMAIL=rehearsal@localhost
  export GIT_COMMITTER_NAME=rehearsal GIT_COMMITTER_EMAIL=rehearsal@localhost
  ls .nx/version-plans
  npx nx release --yes --skip-publish >"$work/release.log" 2>&1 || { cat "$work/release.log"; exit 1; }
  grep -E 'New version|Updated' "$work/release.log" | sed 's/^/  /' || true
  npx nx release publish --registry="$registry" >"$work/publish.log" 2>&1 || { cat "$work/publish.log"; exit 1; }
  grep -E ': npm publish' "$work/publish.log" | sed 's/^/  /' || true
)
for d in libs/* tools/*; do :; done

echo "== rehearsal: passed in $((SECONDS - started)) s"
