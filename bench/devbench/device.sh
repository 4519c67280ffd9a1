#!/usr/bin/env bash
# Issue #41's many-core point in one call on a lent 16-core machine: two whole runs, one after the
# other (each part A, one core per server, then part B, app.workers 1, 4 and 8 against
# node:cluster peers, one core per worker), inside one 600 s command. From the checkout, with the kit
# made by `npm run devbench` (bench/) and carried as .devbench:
#
#   bash .devbench/device.sh              # results under $OUT (the device's folder that comes back)
#
# Each run's tables: $OUT/<run>-a/results.md and $OUT/<run>-b/results.md (raw.tsv beside them);
# $OUT/machine.txt says what the machine was. Knobs: RUNS ("r1 r2"), BUDGET_A (150 s a run),
# BUDGET_B (110 s a run), and every knob of run.sh (SECS, ROUNDS, … passed through; the defaults
# below are session 24's, scaled to fit). Rounds that would not fit a part's budget are cut by
# run.sh, so a slow machine gives fewer rounds, not a killed call.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/devbench-out}
mkdir -p "$OUT"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpus: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
  echo "kernel: $(uname -r)"
  echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"
rc=0
for run in ${RUNS:-r1 r2}; do
  echo "== $run: part A"
  OUT="$OUT/$run-a" PARTS=A SECS=${SECS:-2} ROUNDS=${ROUNDS:-5} WARMUP=${WARMUP:-2} \
    TIME_BUDGET=${BUDGET_A:-150} bash "$HERE/run.sh" || rc=1
  echo "== $run: part B"
  OUT="$OUT/$run-b" PARTS=B WORKERS=${WORKERS:-1 4 8} SECS=${SECS:-2} ROUNDS=${ROUNDS_B:-3} \
    WARMUP=${WARMUP:-2} TIME_BUDGET=${BUDGET_B:-110} bash "$HERE/run.sh" || rc=1
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
exit $rc
