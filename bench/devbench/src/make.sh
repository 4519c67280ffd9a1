#!/usr/bin/env bash
# Rebuilds devbench/ on a build machine (Debian 12, network to the npm registry and Debian's
# archive, a checkout of svcboot with node_modules and built libs/*/dist). Not needed to run it.
#   bash devbench/src/make.sh PROJECT_CHECKOUT [OUT_DIR]
# PROJECT_CHECKOUT: a checkout with node_modules and built libs. OUT_DIR: where to build the kit
# (default: this folder); the scripts are copied there first, so a read-only copy can build elsewhere.
set -euo pipefail
D=$(cd "$(dirname "$0")/.." && pwd)
P=$(cd "${1:?usage: make.sh PROJECT_CHECKOUT [OUT_DIR]}" && pwd)
if [ -n "${2:-}" ]; then
  mkdir -p "$2" && cp -r "$D/run.sh" "$D/device.sh" "$D/bench.py" "$D/check.mjs" "$D/README.md" "$D/src" "$2/"
  chmod -R u+w "$2"
  exec bash "$2/src/make.sh" "$P"
fi
# 1. Node 24 (the npm registry's `node` package carries the official linux-x64 build), xz -9.
bin=$(bash "$P/tools/scripts/node.sh" 24)
mkdir -p "$D/node" && xz -9 -T2 -c "$bin/node" > "$D/node/node.xz"
# 2. h2load from Debian 12's nghttp2-client and the libraries it needs beyond glibc.
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download nghttp2-client libnghttp2-14 libev4 libjemalloc2 libssl3 libstdc++6 libgcc-s1)
rm -rf "$D/h2load" && mkdir -p "$D/h2load"
for d in "$tmp"/*.deb; do dpkg -x "$d" "$tmp/x"; done
mkdir -p "$D/h2load/usr/bin" "$D/h2load/usr/lib/x86_64-linux-gnu" "$D/h2load/cxx"
cp -a "$tmp/x/usr/bin/h2load" "$D/h2load/usr/bin/"
# Plain files under their sonames (no symbolic links, which a copy may not carry).
for l in libnghttp2.so.14 libev.so.4 libjemalloc.so.2 libssl.so.3 libcrypto.so.3; do
  cp -L "$tmp/x/usr/lib/x86_64-linux-gnu/$l" "$D/h2load/usr/lib/x86_64-linux-gnu/"
done
# Debian 12's libstdc++ needs glibc 2.36: kept apart, run.sh falls back to the system's.
cp -L "$tmp/x/usr/lib/x86_64-linux-gnu/libstdc++.so.6" "$tmp/x/lib/x86_64-linux-gnu/libgcc_s.so.1" "$D/h2load/cxx/"
rm -rf "$tmp"
# 3. The servers, bundled by esbuild, packed.
node "$D/src/build.mjs" "$P"
tar -C "$D/servers" -cf - . | xz -9 > "$D/servers.tar.xz"
rm -rf "$D/servers"
du -sh "$D"
