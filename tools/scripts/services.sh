#!/usr/bin/env bash
# Makes sure the servers the tests talk to are installed and answering on 127.0.0.1:
# PostgreSQL (5432, trust auth), Redis (6379) and ClickHouse (HTTP 8123). Installs Debian
# packages only when missing. Usage: services.sh [redis] [postgres] [clickhouse] (default: all).
set -euo pipefail

log() { printf 'services: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

wait_until() { # wait_until SECONDS what command...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq 1 $((seconds * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  log "$what did not come up within ${seconds}s"; return 1
}

ensure_redis() {
  command -v redis-server >/dev/null || apt_install redis-server
  if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then log "redis is answering"; return; fi
  log "starting redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_until 20 redis redis-cli -h 127.0.0.1 -p 6379 ping
}

ensure_postgres() {
  command -v pg_ctlcluster >/dev/null || apt_install postgresql
  if pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then log "postgresql is answering"; return; fi
  log "starting postgresql"
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  wait_until 30 postgresql pg_isready -h 127.0.0.1 -p 5432
  # Trust auth for local TCP, as the tests connect as postgres without a password.
  if ! psql -h 127.0.0.1 -U postgres -c 'select 1' >/dev/null 2>&1; then
    hba=/etc/postgresql/$version/main/pg_hba.conf
    sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(host\s+all\s+all\s+::1\/128\s+)\S+/\1trust/' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  fi
}

ensure_clickhouse() {
  bash "$(dirname "${BASH_SOURCE[0]}")/clickhouse.sh"
}

for service in "${@:-redis postgres clickhouse}"; do
  for s in $service; do "ensure_$s"; done
done
