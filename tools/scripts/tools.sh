#!/usr/bin/env bash
# Makes sure the command-line tools some tests run are installed: Chromium (demo-grpc renders
# /sw/ and /docs/ headless), promtool (`promtool check metrics`, from Debian's prometheus
# package) and the Prometheus Pushgateway (entry-core's prom.pusher test pushes to the real
# one). Installs Debian packages only when missing, as services.sh does for the servers.
# SVC_SKIP_BROWSER=1 / SVC_SKIP_PROMTOOL=1 leave a tool out (its tests then show as skipped);
# without apt-get, a missing tool is named here and its tests fail saying what to install.
set -euo pipefail

log() { printf 'tools: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=()
if [ "${SVC_SKIP_BROWSER:-}" != 1 ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
  packages+=(chromium)
fi
if [ "${SVC_SKIP_PROMTOOL:-}" != 1 ] && ! command -v promtool >/dev/null; then
  packages+=(prometheus)
fi
if [ "${SVC_SKIP_PROMTOOL:-}" != 1 ] && ! command -v prometheus-pushgateway >/dev/null; then
  packages+=(prometheus-pushgateway)
fi
[ "${#packages[@]}" = 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  log "missing ${packages[*]} and no apt-get to install them: install them by hand, or set SVC_SKIP_BROWSER=1 / SVC_SKIP_PROMTOOL=1 to skip the tests that need them"
  exit 0
fi
log "installing ${packages[*]} (apt-get)"
as_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${packages[@]}" >/dev/null
