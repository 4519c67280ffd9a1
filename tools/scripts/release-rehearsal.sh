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
npm_cache=$(npm config get cache)
mkdir -p "$npm_cache/_cacache"
case "$uplink" in
  http://*|https://*) ;;
  *) echo "release-rehearsal: npm config get registry answered '$uplink', not a URL" >&2; exit 1 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/svcboot-rehearsal.XXXXXX")
verdaccio_pid=
service_pid=
cleanup() {
  local status=$?
  [ -z "$service_pid" ] || kill -KILL -- "-$service_pid" 2>/dev/null || true
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

# PostgreSQL and Redis, for the user's service and the guide (started when not answering).
bash tools/scripts/services.sh redis postgres

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
    # A throwaway user: a cheap hash (bcrypt took ~0.4 s per authenticated request).
    algorithm: sha1
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
# The workspace's node_modules as hard links (fast, no download; a copy when the temporary
# folder is on another file system); the workspace packages in it are relative links, so they
# name the clone's libs and tools.
cp -al "$root/node_modules" "$work/repo/node_modules" 2>/dev/null ||
  { rm -rf "$work/repo/node_modules"; cp -a "$root/node_modules" "$work/repo/node_modules"; }
(
  cd "$work/repo"
  export GIT_AUTHOR_NAME=rehearsal GIT_AUTHOR_EMAIL=rehearsal@localhost
  export GIT_COMMITTER_NAME=rehearsal GIT_COMMITTER_EMAIL=rehearsal@localhost
  ls .nx/version-plans
  npx nx release --skip-publish >"$work/release.log" 2>&1 || { cat "$work/release.log"; exit 1; }
  grep -E 'New version' "$work/release.log" | sort -u | sed 's/^ */  /' || true
  npx nx release publish --registry="$registry" >"$work/publish.log" 2>&1 || { cat "$work/publish.log"; exit 1; }
)
# Every publishable package, at the version the release gave it, is on the registry (each one's
# registry document, asked for all at once).
(cd "$work/repo" && node tools/scripts/release/packages.mjs) | node -e '
  const registry = process.argv[1];
  const wanted = require("fs").readFileSync(0, "utf-8").trim().split("\n").map((l) => l.split("\t"));
  Promise.all(wanted.map(async ([dir, name, version]) => {
    const res = await fetch(registry + name.replace("/", "%2f"));
    const doc = res.ok ? await res.json() : {};
    return doc.versions?.[version] ? `${name}@${version}` : Promise.reject(new Error(`${name}@${version} (${dir}) is not on the registry after nx release publish (${res.status})`));
  })).then((found) => console.log(`published ${found.length} packages: ${found.join(" ")}`),
    (err) => { console.error(`release-rehearsal: ${err.message}`); process.exit(1); });
' "$registry" || { tail -n 40 "$work/publish.log" >&2; exit 1; }
echo "== rehearsal: release and publish took $((SECONDS - step_start)) s"

# -- 3. as a user ---------------------------------------------------------------------------------
# A user is anonymous: the publish token goes.
: >"$work/npmrc"
# An empty folder outside the repository. npm's cache folder is one of its own, for npx: npx keeps
# what it installs by name and version there (_npx), and each rehearsal publishes the same
# versions anew. Its content store is npm's own here (packages by checksum, so a package the
# workspace installed is not downloaded again).
export npm_config_cache=$work/npm-cache
mkdir -p "$npm_config_cache"
ln -s "$npm_cache/_cacache" "$npm_config_cache/_cacache"
user=$work/user
mkdir -p "$user"
cd "$user"
step_start=$SECONDS
step "npx @svcboot/cli new shop (in $user)"
npx --yes @svcboot/cli new shop --with grpc
cd shop
step "npm install; svc add relationaldb, cache, httpserver, grpcclient, jwt; npm install"
npm install --loglevel=error
npx svc add relationaldb
npx svc add cache
npx svc add httpserver
npx svc add grpcclient
npx svc add jwt
npm install --loglevel=error
npm ls --all 2>/dev/null | grep -E '@svcboot/' | sed 's/^[^@]*/  /' | sort -u
npm run schema
step "npm run build, npm test"
npm run build
npm test
step "npm start, one call on the REST gateway"
grpc_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
http_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# Its own process group, as a terminal's foreground job: Ctrl-C (SIGINT to the group) stops it.
set -m
GRPC_PORT=$grpc_port HTTP_PORT=$http_port npm start >"$work/start.log" 2>&1 &
service_pid=$!
set +m
answer=
for _ in $(seq 1 1200); do
  if answer=$(curl -fsS "http://127.0.0.1:$grpc_port/v1/hello" 2>/dev/null); then break; fi
  kill -0 "$service_pid" 2>/dev/null || { cat "$work/start.log"; echo "release-rehearsal: npm start exited" >&2; exit 1; }
  sleep 0.1
done
echo "GET /v1/hello: $answer"
case "$answer" in
  *'"message"'*) ;;
  *) cat "$work/start.log"; echo "release-rehearsal: no Hello answer on the REST gateway" >&2; exit 1 ;;
esac
kill -INT -- "-$service_pid"
for _ in $(seq 1 300); do
  kill -0 -- "-$service_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 -- "-$service_pid" 2>/dev/null || ! grep -q 'Shutdown complete' "$work/start.log"; then
  cat "$work/start.log"
  echo "release-rehearsal: the service did not shut down within 30 s of Ctrl-C (SIGINT)" >&2
  exit 1
fi
service_pid=
echo "== rehearsal: the user's service took $((SECONDS - step_start)) s"

# -- 4. every README's install lines --------------------------------------------------------------
step "the install lines of every README"
mkdir -p "$work/readme-lines" && cd "$work/readme-lines"
npm init -y >/dev/null
lines=0
while IFS=$'\t' read -r file line; do
  echo "  $file: $line"
  bash -c "$line --loglevel=error" >/dev/null || { echo "release-rehearsal: $file: \`$line\` failed" >&2; exit 1; }
  lines=$((lines + 1))
done < <(cd "$root" && node tools/scripts/release-rehearsal-lines.mjs)
[ "$lines" -gt 0 ] || { echo "release-rehearsal: no npm install line found in the READMEs" >&2; exit 1; }
npm ls --all >/dev/null || { echo "release-rehearsal: npm ls finds the README installs' tree broken (above)" >&2; exit 1; }
copies=$(find node_modules -path '*/@svcboot/entry-core/package.json' | wc -l)
[ "$copies" = 1 ] || { echo "release-rehearsal: $copies copies of @svcboot/entry-core after the README installs" >&2; exit 1; }
echo "$lines install lines ran; one @svcboot/entry-core"

# -- 5. docs/guide.md -----------------------------------------------------------------------------
step "docs/guide.md, every block as a reader types it"
step_start=$SECONDS
(cd "$root/tools/cli" && SVC_REHEARSAL_REGISTRY=$registry SVC_REHEARSAL_DIR=$work \
  npx vitest run src/guide/guide.rehearsal.test.ts)
echo "== rehearsal: the guide took $((SECONDS - step_start)) s"

echo "== rehearsal: passed in $((SECONDS - started)) s"
