#!/usr/bin/env bash
# Makes sure the command-line tools the tests run are installed: Chromium (demo-grpc renders
# /sw/ and /docs/ headless), promtool (`promtool check metrics`, from Debian's prometheus
# package), the Prometheus Pushgateway (entry-core's prom.pusher test pushes to the real one),
# HAProxy (demo-grpc's rolling-update test balances three replicas with it) and openssl (the TLS
# tests' self-signed certificates, testkit's writeSelfSignedCert). Installs Debian packages only
# when missing, as services.sh does for the servers.
# SVC_SKIP_BROWSER=1 / SVC_SKIP_PROMTOOL=1 / SVC_SKIP_HAPROXY=1 leave a tool out (its tests then
# show as skipped); without apt-get, a missing tool is named here and its tests fail saying what
# to install. (h2load, from nghttp2-client, is used by bench/grpc only, not by a test.)
set -euo pipefail

log() { printf 'tools: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
have() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || [ -x "/usr/local/sbin/$1" ]; }

packages=()
if [ "${SVC_SKIP_BROWSER:-}" != 1 ] && ! have chromium && ! have chromium-browser && ! have google-chrome; then
  packages+=(chromium)
fi
if [ "${SVC_SKIP_PROMTOOL:-}" != 1 ] && ! have promtool; then
  packages+=(prometheus)
fi
if [ "${SVC_SKIP_PROMTOOL:-}" != 1 ] && ! have prometheus-pushgateway; then
  packages+=(prometheus-pushgateway)
fi
if [ "${SVC_SKIP_HAPROXY:-}" != 1 ] && ! have haproxy; then
  packages+=(haproxy)
fi
if ! have openssl; then
  packages+=(openssl)
fi
[ "${#packages[@]}" = 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  log "missing ${packages[*]} and no apt-get to install them: install them by hand, or set SVC_SKIP_BROWSER=1 / SVC_SKIP_PROMTOOL=1 / SVC_SKIP_HAPROXY=1 to skip the tests that need them"
  exit 0
fi
log "installing ${packages[*]} (apt-get)"
as_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${packages[@]}" >/dev/null
