#!/usr/bin/env bash
# Times the quick start of tools/cli/README.md from a svcboot clone that has had `npm install`:
#   npx svc new hello --dir PARENT, then in PARENT/hello: npm install, npm start
# until GET localhost:8080/v1/hello answers; then stops the service with SIGTERM.
# Usage: tools/cli/scripts/time-quickstart.sh [PARENT]   (PARENT is emptied first; default a temp folder)
# To time a fresh clone, remove the libs' builds first: rm -rf libs/*/dist tools/cli/dist
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
parent=${1:-$(mktemp -d -t svc-quickstart-XXXXXX)}
rm -rf "$parent/hello"
mkdir -p "$parent"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$repo"
t0=$(date +%s.%N)
npx svc new hello --dir "$parent" >"$parent/new.log" 2>&1 || { cat "$parent/new.log"; exit 1; }
t1=$(date +%s.%N)
cd "$parent/hello"
npm install >"$parent/install.log" 2>&1 || { cat "$parent/install.log"; exit 1; }
t2=$(date +%s.%N)
setsid npm start >"$parent/start.log" 2>&1 &
group=$!
trap 'kill -TERM -- -$group 2>/dev/null || true' EXIT
deadline=$((SECONDS + 120))
until curl -sf localhost:8080/v1/hello >"$parent/answer.json"; do
  kill -0 "$group" 2>/dev/null || { echo "npm start ended:"; tail -20 "$parent/start.log"; exit 1; }
  ((SECONDS < deadline)) || { echo "no answer on localhost:8080 after 120 s"; tail -20 "$parent/start.log"; exit 1; }
  sleep 0.1
done
t3=$(date +%s.%N)
printf 'svc new %.1f s | npm install %.1f s | npm start to an answer %.1f s | total %.1f s\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t3 - $t2" | bc)" "$(echo "$t3 - $t0" | bc)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(grep -E '^added' "$parent/install.log"), node_modules $(du -sh node_modules | cut -f1); answer: $(cat "$parent/answer.json")"
