#!/usr/bin/env bash
# Makes sure a ClickHouse server answers HTTP on 127.0.0.1:8123 (user `default`, no password).
# Installs Debian's clickhouse-server (18.16 in bookworm) when missing, starts it in daemon mode
# as the clickhouse user when /ping does not answer, and waits up to CLICKHOUSE_WAIT seconds
# (default 60) for `Ok.`. Idempotent, non-interactive, quiet: prints one line on success.
# Usage: bash tools/scripts/clickhouse.sh
set -euo pipefail

log() { printf 'clickhouse: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
ping_ok() { [ "$(curl -s --max-time 2 http://127.0.0.1:8123/ping 2>/dev/null)" = "Ok." ]; }

config=/etc/clickhouse-server/config.xml
pidfile=/var/run/clickhouse-server/clickhouse-server.pid
wait_seconds=${CLICKHOUSE_WAIT:-60}

if ping_ok; then log "answering on 127.0.0.1:8123"; exit 0; fi

if ! command -v clickhouse-server >/dev/null 2>&1 || [ ! -f "$config" ]; then
  log "installing Debian's clickhouse-server"
  export DEBIAN_FRONTEND=noninteractive
  out=$(mktemp)
  if ! { as_root apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    as_root apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
      clickhouse-server clickhouse-client; } >"$out" 2>&1; then
    cat "$out"; rm -f "$out"; log "installing clickhouse-server failed"; exit 1
  fi
  rm -f "$out"
fi

# Debian's postinst creates the clickhouse user and these directories; make sure they exist.
run_user=clickhouse
id "$run_user" >/dev/null 2>&1 || run_user=root
for dir in /var/lib/clickhouse /var/log/clickhouse-server /var/run/clickhouse-server; do
  as_root mkdir -p "$dir"
  as_root chown -R "$run_user:" "$dir" 2>/dev/null || true
done

running_pid=$(cat "$pidfile" 2>/dev/null || true)
if [ -n "$running_pid" ] && kill -0 "$running_pid" 2>/dev/null; then
  # Started earlier and still coming up (or busy): wait for it rather than start a second one.
  log "clickhouse-server (pid $running_pid) is running; waiting for it to answer"
elif [ "$run_user" = root ]; then
  log "starting clickhouse-server"
  as_root clickhouse-server --config-file="$config" --pid-file="$pidfile" --daemon
else
  log "starting clickhouse-server"
  as_root runuser -u "$run_user" -- clickhouse-server --config-file="$config" \
    --pid-file="$pidfile" --daemon
fi

deadline=$((SECONDS + wait_seconds))
until ping_ok; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    log "did not answer on http://127.0.0.1:8123/ping within ${wait_seconds}s; last log lines:"
    tail -n 20 /var/log/clickhouse-server/clickhouse-server.err.log 2>/dev/null || true
    exit 1
  fi
  sleep 0.2
done
log "answering on 127.0.0.1:8123"
