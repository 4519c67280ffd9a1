#!/usr/bin/env bash
# Builds the image localhost/svcboot-node:<major> with buildah from the Node binary on this
# machine (and its shared libraries, npm, a `node` user of uid 1000), for hosts that reach no image
# registry: `svc deploy --base-image localhost/svcboot-node:<major>` then builds on it.
#   bash tools/scripts/node-base-image.sh          # needs: apt-get install -y buildah
# Storage: vfs (works without overlay support). RUN steps need `buildah bud --isolation chroot`
# where the OCI runtime cannot create cgroups (containers, CI).
set -euo pipefail
node_bin=$(readlink -f "$(command -v node)")
major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
tag=${1:-localhost/svcboot-node:$major}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/etc" "$root/tmp" "$root/app" "$root/home/node"
cp "$node_bin" "$root/usr/local/bin/node"
for lib in $(ldd "$node_bin" | grep -o '/[^ ]*lib[^ ]*\.so[^ ]*'); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cp -r "$npm_dir" "$root/usr/local/lib/node_modules/npm"
# No /usr/bin/env in the image for npm-cli.js's shebang: a wrapper instead.
printf '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/npm-cli.js "$@"\n' >"$root/usr/local/bin/npm"
chmod 755 "$root/usr/local/bin/npm"
# npm runs scripts with sh, and package bins start with `#!/usr/bin/env node`: the host's sh
# (dash) and env, with their libraries.
mkdir -p "$root/bin" "$root/usr/bin"
cp "$(readlink -f /bin/sh)" "$root/bin/sh"
cp "$(readlink -f /usr/bin/env)" "$root/usr/bin/env"
for bin in /bin/sh /usr/bin/env; do
  for lib in $(ldd "$(readlink -f "$bin")" | grep -o '/[^ ]*lib[^ ]*\.so[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/home/node:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$root/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ca-certificates.crt" 2>/dev/null || true
chmod 1777 "$root/tmp"
chown 1000:1000 "$root/home/node"
ctr=$(buildah --storage-driver vfs from scratch)
buildah --storage-driver vfs copy "$ctr" "$root/" / >/dev/null
buildah --storage-driver vfs config --env PATH=/usr/local/bin:/bin --env NODE_EXTRA_CA_CERTS=/etc/ca-certificates.crt \
  --workingdir /app --cmd '["node"]' "$ctr"
buildah --storage-driver vfs commit --rm "$ctr" "$tag" >/dev/null
echo "$tag"
