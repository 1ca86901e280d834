#!/usr/bin/env bash
# Builds berth's test images from local files only (no registry): Debian's busybox-static and the node
# binary that runs berth. Images land in podman's local store, which is what the dev cluster's node uses.
#   localhost/berth/busybox:1   sh, tar, nc, httpd (root by default, /etc/passwd knows nobody=65534)
#   localhost/berth/node:24     node as an entrypoint, user 65532 (for KRM functions written in JS)
#   localhost/berth/builder:1   buildah and berth-build (berth serve's docker build, a privileged pod)
#   localhost/berth/krm-*:1     KRM test functions from images/krm-fns (the shim's tests)
#   localhost/berth/test-resource:1  a Concourse resource type of shell scripts from images/test-resource (task plans)
#   localhost/berth/berth:dev   berth itself (dist/src + production node_modules) on the node image, `docker` = berth
#   localhost/berth/berth-tools:dev  the berth image + this machine's kubectl and docker CLI (in-cluster tests)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/node-env.sh"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# Every image is labeled, so the ones a rebuild replaced (untagged, 100 MB and more each) can be pruned below.
podman_build() { podman build --runtime /usr/sbin/runc --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --label berth.dev/test-image=1 -q "$@" >/dev/null; }

write_etc() { # $1 = rootfs
  mkdir -p "$1/etc" "$1/tmp" "$1/root" "$1/home/nonroot"; chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\nnogroup:x:65534:\n' >"$1/etc/group"
  chown 65532:65532 "$1/home/nonroot"
}

# busybox
bb="$work/busybox"; mkdir -p "$bb/rootfs/bin"
cp "$root/images/busybox/Containerfile" "$bb/"
cp /bin/busybox "$bb/rootfs/bin/busybox"
write_etc "$bb/rootfs"
podman_build -t localhost/berth/busybox:1 "$bb"
echo "built localhost/berth/busybox:1" >&2

# node
nd="$work/node"; mkdir -p "$nd/rootfs/usr/local/bin" "$nd/rootfs/bin"
cp "$root/images/node/Containerfile" "$nd/"
nodebin="$(command -v node)"
cp "$nodebin" "$nd/rootfs/usr/local/bin/node"
cp /bin/busybox "$nd/rootfs/bin/busybox"; ln -s busybox "$nd/rootfs/bin/sh"; ln -s busybox "$nd/rootfs/bin/cat"
for lib in $(ldd "$nodebin" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
  mkdir -p "$nd/rootfs$(dirname "$lib")"; cp -L "$lib" "$nd/rootfs$lib"
done
mkdir -p "$nd/rootfs/lib64"; [ -e "$nd/rootfs/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$nd/rootfs/lib64/"
write_etc "$nd/rootfs"
podman_build -t localhost/berth/node:24 "$nd"
echo "built localhost/berth/node:24" >&2

# builder (berth serve's docker build): Debian's buildah with the shared libraries ldd names, busybox-static,
# berth-build, and a containers config for building as root inside a privileged pod (vfs storage, chroot RUNs)
bd="$work/builder"; mkdir -p "$bd/rootfs/bin" "$bd/rootfs/usr/bin" "$bd/rootfs/usr/local/bin" "$bd/rootfs/etc/containers"
cp "$root/images/builder/Containerfile" "$bd/"
cp "$root/images/builder/berth-build" "$bd/rootfs/usr/local/bin/berth-build"; chmod 755 "$bd/rootfs/usr/local/bin/berth-build"
cp /usr/bin/buildah "$bd/rootfs/usr/bin/buildah"
cp /bin/busybox "$bd/rootfs/bin/busybox"
for lib in $(ldd /usr/bin/buildah | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
  mkdir -p "$bd/rootfs$(dirname "$lib")"; cp -L "$lib" "$bd/rootfs$lib"
done
mkdir -p "$bd/rootfs/lib64"; [ -e "$bd/rootfs/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$bd/rootfs/lib64/"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$bd/rootfs/etc/containers/policy.json"
printf '[storage]\ndriver = "vfs"\ngraphroot = "/var/lib/containers/storage"\nrunroot = "/run/containers/storage"\n' \
  >"$bd/rootfs/etc/containers/storage.conf"
# berth-build appends a [[registry]] table per plain-http registry to this file
printf 'unqualified-search-registries = ["docker.io"]\n' >"$bd/rootfs/etc/containers/registries.conf"
write_etc "$bd/rootfs"
# /out is made here, not by berth-build: the runtime leaves / read-only to a root without CAP_DAC_OVERRIDE
mkdir -p "$bd/rootfs/var/tmp" "$bd/rootfs/var/lib/containers/storage" "$bd/rootfs/run/containers/storage" "$bd/rootfs/out"
chmod 1777 "$bd/rootfs/var/tmp"
podman_build -t localhost/berth/builder:1 "$bd"
echo "built localhost/berth/builder:1" >&2

# KRM test functions (shim tests): localhost/berth/krm-<fn>:1, FROM the node image, with the yaml package
fns="$work/krm-fns"; mkdir -p "$fns/fn/node_modules"
cp "$root/images/krm-fns/Containerfile" "$fns/"
cp "$root"/images/krm-fns/fn/*.js "$fns/fn/"
cp -r "$root/node_modules/yaml" "$fns/fn/node_modules/yaml"
for fn in set-annotations generate-configmap require-label exit42 chatty echo probe sleep; do
  # --no-cache: podman 4.3 reuses the ENV layer across different --build-arg values
  podman_build --no-cache --build-arg "FN=$fn" -t "localhost/berth/krm-$fn:1" "$fns"
done
echo "built localhost/berth/krm-{set-annotations,generate-configmap,require-label,exit42,chatty,echo,probe,sleep}:1" >&2

# test resource type (berth task plans' get/put steps): /opt/resource/{check,in,out} on the busybox image
tr="$work/test-resource"; mkdir -p "$tr/resource"
cp "$root/images/test-resource/Containerfile" "$tr/"
cp "$root"/images/test-resource/resource/* "$tr/resource/"; chmod 755 "$tr"/resource/check "$tr"/resource/in "$tr"/resource/out
podman_build -t localhost/berth/test-resource:1 "$tr"
echo "built localhost/berth/test-resource:1" >&2

# berth: this checkout's dist/src (run `npm run build` first) and its production dependencies, copied from
# node_modules (the closure `npm ls --omit=dev` names; no registry), without type declarations and source maps.
bz="$work/berth"; app="$bz/rootfs/opt/berth"; mkdir -p "$app/node_modules" "$bz/rootfs/usr/local/bin" "$bz/rootfs/usr/bin"
cp "$root/images/berth/Containerfile.local" "$bz/Containerfile"
[ -x "$root/dist/src/cli/main.js" ] || { echo "build-images: dist/src is missing: run npm run build first" >&2; exit 1; }
cp "$root/package.json" "$app/"
mkdir -p "$app/dist"; cp -r "$root/dist/src" "$app/dist/src"
(cd "$root" && npm ls --omit=dev --parseable --all 2>/dev/null) | sed -n "s#^$root/node_modules/##p" \
  | grep -v '/node_modules/' | sort -u >"$work/berth-deps"
(cd "$root/node_modules" && tar -c --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --exclude='*.map' -T "$work/berth-deps") \
  | tar -x -C "$app/node_modules"
ln -s /opt/berth/dist/src/cli/main.js "$bz/rootfs/usr/local/bin/berth"
ln -s /opt/berth/dist/src/cli/main.js "$bz/rootfs/usr/local/bin/docker"   # berth's shim as `docker`
ln -s /bin/busybox "$bz/rootfs/usr/bin/env"                                 # main.js: #!/usr/bin/env node
podman_build -t localhost/berth/berth:dev "$bz"
echo "built localhost/berth/berth:dev ($(podman image inspect --format '{{.Size}}' localhost/berth/berth:dev | awk '{printf "%.0f MB", $1/1e6}'))" >&2

# berth-tools: kubectl (the real binary behind gcloud's dispatcher when there is one) and the docker CLI
bt="$work/berth-tools"; mkdir -p "$bt/tools"
cp "$root/images/berth/Containerfile.tools" "$bt/Containerfile"
kubectl_bin="$(readlink -f "$(command -v kubectl)")"
[ -x "$kubectl_bin.1.32" ] && kubectl_bin="$kubectl_bin.1.32"
cp "$kubectl_bin" "$bt/tools/kubectl"
cp "$(command -v docker)" "$bt/tools/docker"
# `kustomize build DIR` as Argo CD's plugin runs it, answered by kubectl's built-in kustomize
mkdir -p "$bt/kustomize"; printf '#!/bin/sh\n[ "$1" = build ] && shift\nexec /opt/tools/kubectl kustomize "$@"\n' >"$bt/kustomize/kustomize"
chmod 755 "$bt/kustomize/kustomize"
podman_build -t localhost/berth/berth-tools:dev "$bt"
echo "built localhost/berth/berth-tools:dev" >&2

# The images this script built before and a rebuild left untagged; nobody else's.
podman image prune -f --filter label=berth.dev/test-image=1 >/dev/null

# A running upstream dev cluster (the default state dir, or $BERTH_DEV_CLUSTER_DIR) gets them too, as after `kind load`.
if node "$root/dist/src/cli/main.js" dev-cluster status -o json 2>/dev/null \
  | node -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8")); process.exit(s.running && s.kind === "upstream" ? 0 : 1)'; then
  node "$root/dist/src/cli/main.js" dev-cluster load localhost/berth/busybox:1 localhost/berth/node:24 localhost/berth/builder:1 localhost/berth/test-resource:1 \
    localhost/berth/berth:dev localhost/berth/berth-tools:dev \
    localhost/berth/krm-{set-annotations,generate-configmap,require-label,exit42,chatty,echo,probe,sleep}:1 >/dev/null
  echo "loaded the images into the running upstream dev cluster" >&2
fi
