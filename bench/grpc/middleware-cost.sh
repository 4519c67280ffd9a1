#!/usr/bin/env bash
# What each of svcboot's three middlewares costs on the gateway path (GET /v1/hello, HTTP/1.1),
# against bare Koa and the node:http floor (with and without the meta middleware's six headers,
# FLOOR_META: what node:http spends on them). Every server is up at once, pinned to CPU 1,
# h2load --h1 (32 connections) on CPU 0; each gets a warm-up, then ROUNDS rounds of SECS seconds
# with the order rotated; server CPU per request from /proc/<pid>/stat (utime + stime + the
# children's, 10 ms ticks) across each load. Prints each server's rounds and median, and the
# all-three ÷ Koa ratio per round. svcboot writes its records to a file, as in run.ts.
#   bash grpc/middleware-cost.sh [ROUNDS] [SECS]    (from bench/; needs h2load and taskset)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-6}
SECS=${2:-3}
dir=$(mktemp -d)
specs=(floor:floor floor-meta:floor-meta koa:koa none:none logging:logging prom:prom meta:meta all:logging,prom,meta)
declare -A pids ports
i=0
for spec in "${specs[@]}"; do
  name=${spec%%:*} kind=${spec#*:}
  port=$((42000 + RANDOM % 1000 + i * 1000)) i=$((i + 1))
  ports[$name]=$port
  case $kind in
    floor) PORT=$port taskset -c 1 node --import tsx grpc/servers/floor-http.ts >"$dir/$name.log" 2>&1 & ;;
    floor-meta) PORT=$port FLOOR_META=1 taskset -c 1 node --import tsx grpc/servers/floor-http.ts >"$dir/$name.log" 2>&1 & ;;
    koa) PORT=$port taskset -c 1 node --import tsx grpc/servers/koa.ts >"$dir/$name.log" 2>&1 & ;;
    *) PORT=$port SVC_MIDDLEWARE=$kind EVENTS_FILE="$dir/$name.events" taskset -c 1 node --import tsx grpc/servers/svcboot.ts >"$dir/$name.log" 2>&1 & ;;
  esac
  pids[$name]=$!
done
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
for n in "${!ports[@]}"; do
  for _ in $(seq 1 200); do curl -sf "localhost:${ports[$n]}/v1/hello" >/dev/null && break; sleep 0.2; done
done
ticks() { local t=0 p; for p in "$1" $(pgrep -P "$1" || true); do t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat"))); done; echo "$t"; }
load() { taskset -c 0 h2load --h1 -c 32 -D "$1" "http://127.0.0.1:$2/v1/hello" 2>&1 | awk '/^requests:/ {print $8}'; }
for n in "${!ports[@]}"; do load 2 "${ports[$n]}" >/dev/null; done
declare -A us
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((${#specs[@]} - 1))); do
    spec=${specs[$(((k + r) % ${#specs[@]}))]} name=${spec%%:*}
    c0=$(ticks "${pids[$name]}")
    done_=$(load "$SECS" "${ports[$name]}")
    c1=$(ticks "${pids[$name]}")
    us[$name]="${us[$name]:-} $(awk -v c=$((c1 - c0)) -v n="$done_" 'BEGIN {printf "%.1f", c * 10000 / n}')"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR] = $1} END {print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2}'; }
echo "server CPU µs per request, median (rounds)"
for spec in "${specs[@]}"; do name=${spec%%:*}; echo "$name $(echo "${us[$name]}" | median) (${us[$name]# })"; done
read -ra a <<<"${us[all]}"; read -ra k <<<"${us[koa]}"
ratios=$(for j in "${!a[@]}"; do awk -v x="${a[$j]}" -v y="${k[$j]}" 'BEGIN {printf "%.2f ", x / y}'; done)
echo "all three ÷ Koa per round: $ratios(median $(echo "$ratios" | median))"
