#!/usr/bin/env bash
# Release checks for every publishable package (a package.json under libs/*/ or tools/*/ without
# "private": true, discovered by tools/scripts/release/packages.mjs): nx release selects exactly
# them, internal ranges resolve, each builds, `npm publish --dry-run` packs it, publint and "are
# the types wrong" (attw, ESM-only profile) pass on its tarball, and its committed API report
# (api/<name>.api.md) matches the built declarations. Nothing is published.
#
#   bash tools/scripts/release-check.sh               # the checks (CI runs this)
#   bash tools/scripts/release-check.sh --update-api  # build, then rewrite api/*.api.md
#
# publint, attw and API Extractor run with `npx --yes` at pinned versions: attw and API Extractor
# each bring a TypeScript compiler API of their own (the workspace's TypeScript 7 has none),
# about 60 MB together, so they stay out of node_modules and come from npm's cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false npm_config_update_notifier=false

PUBLINT=publint@0.3.25
ATTW=@arethetypeswrong/cli@0.18.5

mode=check
case "${1:-}" in
  '') ;;
  --update-api) mode=update ;;
  *) echo "usage: $0 [--update-api]" >&2; exit 2 ;;
esac

dirs=()
names=()
while IFS=$'\t' read -r dir name version; do
  dirs+=("$dir")
  names+=("$name")
done < <(node tools/scripts/release/packages.mjs)
echo "== release check: ${#dirs[@]} publishable packages: ${names[*]}"

echo "== build"
npx nx run-many -t build --projects="$(IFS=,; echo "${names[*]}")" --output-style=static >/dev/null

if [ "$mode" = update ]; then
  node tools/scripts/release/api-report.mjs --update
  exit 0
fi

echo "== nx release selects the publishable packages; internal ranges resolve"
node tools/scripts/release/release-projects.mjs
node tools/scripts/release/ranges.mjs
node tools/scripts/internal-exports.mjs --check

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=()
for i in "${!dirs[@]}"; do
  dir=${dirs[$i]}
  name=${names[$i]}
  echo "== $name ($dir)"
  # Built above: --ignore-scripts skips prepack's second build.
  if ! (cd "$dir" && npm publish --dry-run --ignore-scripts) >"$tmp/publish.log" 2>&1; then
    cat "$tmp/publish.log"
    failed+=("$name: npm publish --dry-run")
    continue
  fi
  grep -E 'total files|unpacked size' "$tmp/publish.log" | sed 's/^npm notice /  npm publish --dry-run: /'
  (cd "$dir" && npm pack --ignore-scripts --pack-destination "$tmp" --json) >"$tmp/pack.json" 2>"$tmp/pack.log"
  tarball=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf-8"))[0].filename' "$tmp/pack.json")
  if (cd "$dir" && node "$root/tools/scripts/release/packed-targets.mjs" "$tmp/pack.json") >"$tmp/targets.log" 2>&1; then
    echo "  files: $(cat "$tmp/targets.log")"
  else
    cat "$tmp/targets.log"
    failed+=("$name: package.json targets missing from the tarball")
  fi
  if npx --yes "$PUBLINT" run --strict "$tmp/$tarball" >"$tmp/publint.log" 2>&1; then
    echo "  publint: $(tail -n 1 "$tmp/publint.log")"
  else
    cat "$tmp/publint.log"
    failed+=("$name: publint")
  fi
  if npx --yes "$ATTW" "$tmp/$tarball" --profile esm-only --format ascii --no-color >"$tmp/attw.log" 2>&1; then
    echo "  attw --profile esm-only: passed"
  else
    cat "$tmp/attw.log"
    failed+=("$name: attw --profile esm-only")
  fi
  rm -f "$tmp/$tarball"
done

echo "== API reports (api/*.api.md)"
node tools/scripts/release/api-report.mjs || failed+=("API reports (update: bash tools/scripts/release-check.sh --update-api)")

if [ ${#failed[@]} -gt 0 ]; then
  printf '== release check failed:\n' >&2
  printf -- '- %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== release check passed: ${#dirs[@]} packages"
