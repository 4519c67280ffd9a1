#!/usr/bin/env bash
# Throughput and CPU of demo-grpc (all three middlewares on, as in its boot.yaml) with
# app.workers 1 and 2, measured from outside with h2load (issue 21, point 3):
#   - gateway: GET /v1/hello over HTTP/1.1 keep-alive (h2load --h1)
#   - grpc:    api.v1.Greeter/Hello over h2c (h2load, an empty HelloRequest frame)
# For each run it prints the requests/s h2load saw, the CPU time of the server (primary and
# workers, from /proc) and of h2load itself (the load generator runs on the same machine and
# takes CPU from the server), each also as µs per request and as a share of the machine.
# Records go to /dev/null (the primary writes them; with one worker the app does).
#
# Usage: tools/scripts/workers-bench.sh [seconds per run, default 10] [connections, default 16]
# Env: WORKERS="1 2" (the counts to run, in order), H2LOAD_THREADS=1, STREAMS=8 (gRPC streams per
# connection), EXTRA_SET="grpc.greeter.middleware.logging.enabled=false" (more SVC_SET overrides).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
app="$root/apps/demo-grpc"
duration="${1:-10}"
connections="${2:-16}"
workers_list="${WORKERS:-1 2}"
threads="${H2LOAD_THREADS:-1}"
streams="${STREAMS:-8}"
ticks="$(getconf CLK_TCK)"
cpus="$(nproc)"
tmp="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -TERM "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

command -v h2load >/dev/null || { echo "h2load not found: apt-get install nghttp2-client" >&2; exit 1; }
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
# An empty HelloRequest in a gRPC frame: not compressed, length 0.
printf '\x00\x00\x00\x00\x00' > "$tmp/hello.grpc"

# CPU ticks (user + system) of one process.
proc_ticks() {
  if [ -r "/proc/$1/stat" ]; then sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; else echo 0; fi
}

# CPU ticks (user + system) of a process and its children (the workers).
tree_ticks() {
  local total=0 pid
  for pid in "$1" $(pgrep -P "$1" || true); do
    if [ -r "/proc/$pid/stat" ]; then
      # Fields 14 and 15 (utime, stime), counted after the command name's closing parenthesis.
      total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
    fi
  done
  echo "$total"
}

run_load() { # name, h2load arguments...
  local name="$1"
  shift
  local before after pbefore pafter
  before="$(tree_ticks "$server")"
  pbefore="$(proc_ticks "$server")"
  /usr/bin/time -f '%U %S' -o "$tmp/h2load.time" \
    h2load -t "$threads" -c "$connections" -D "$duration" --warm-up-time=1 "$@" > "$tmp/h2load.out"
  after="$(tree_ticks "$server")"
  pafter="$(proc_ticks "$server")"
  local rps done_ failed lg_user lg_sys
  rps="$(awk '/^finished in/ {gsub(",", "", $4); print $4}' "$tmp/h2load.out")"
  done_="$(awk '/^requests:/ {print $8}' "$tmp/h2load.out")"
  failed="$(awk '/^requests:/ {print $10}' "$tmp/h2load.out")"
  read -r lg_user lg_sys < "$tmp/h2load.time"
  awk -v w="$workers" -v n="$name" -v rps="$rps" -v done_="$done_" -v failed="$failed" \
    -v sticks="$((after - before))" -v pticks="$((pafter - pbefore))" -v hz="$ticks" -v lu="$lg_user" -v ls="$lg_sys" \
    -v d="$duration" -v cpus="$cpus" 'BEGIN {
      scpu = sticks / hz; lcpu = lu + ls;
      primary = w > 1 ? sprintf("%.2f s", pticks / hz) : "none";
      printf "%-8s workers=%d  %9.0f req/s  done=%d failed=%d  server CPU %6.2f s (%5.1f µs/req, %3.0f%% of %d cores; primary %s)  h2load CPU %6.2f s (%5.1f µs/req, %3.0f%%)\n",
        n, w, rps, done_, failed, scpu, scpu * 1e6 / (rps * d), 100 * scpu / d / cpus, cpus, primary,
        lcpu, lcpu * 1e6 / (rps * d), 100 * lcpu / d / cpus
    }'
}

echo "# $(date -u +%FT%TZ) $(uname -srm), $cpus cores, node $(node --version), $(h2load --version | head -1)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); ${duration}s per run (after 1 s warm-up), $connections connections${EXTRA_SET:+; $EXTRA_SET}"
for workers in $workers_list; do
  (cd "$app" && SVC_SET="app.workers=$workers,app.drainDelayMs=0${EXTRA_SET:+,$EXTRA_SET}" PORT="$port" \
    exec node --conditions=svcboot-source --import tsx src/main.ts > /dev/null 2> "$tmp/server.err") &
  server=$!
  for _ in $(seq 1 300); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" = 200 ]; then break; fi
    sleep 0.1
  done
  # Warm the JIT of every worker before measuring.
  h2load --h1 -c "$connections" -n 4000 "http://127.0.0.1:$port/v1/hello" > /dev/null
  h2load -c "$connections" -n 4000 -d "$tmp/hello.grpc" -H 'content-type: application/grpc' -H 'te: trailers' \
    "http://127.0.0.1:$port/api.v1.Greeter/Hello" > /dev/null
  run_load gateway --h1 "http://127.0.0.1:$port/v1/hello"
  run_load grpc -m "$streams" -d "$tmp/hello.grpc" -H 'content-type: application/grpc' -H 'te: trailers' \
    "http://127.0.0.1:$port/api.v1.Greeter/Hello"
  kill -TERM "$server"
  wait "$server" || echo "server exited with $?: $(tail -3 "$tmp/server.err")" >&2
  server=""
done
