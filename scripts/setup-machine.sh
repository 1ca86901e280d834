#!/usr/bin/env bash
# Installs the system packages berth's dev cluster and tests need (podman with runc to build the images and run the
# reference, buildah for the builder image of berth serve's docker build, busybox-static for the test images, openssl,
# python3-docker for docker-py's e2e tests; for the cluster the CNI plugins, iptables, ipset, conntrack and catatonit for the pause image) and the podman settings these machines
# need: runc (crun fails on their hybrid cgroup setup) and explicit ulimits. Idempotent; needs root (as on the project's machines).
set -euo pipefail
need=()
for pair in podman:podman buildah:buildah runc:runc busybox:busybox-static openssl:openssl docker-registry:docker-registry \
  iptables:iptables ipset:ipset conntrack:conntrack catatonit:catatonit; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair#*:}")
done
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
# the Docker SDK for Python (docker-py) against berth serve, also with Debian's python3
/usr/bin/python3 -c 'import docker' >/dev/null 2>&1 || need+=(python3-docker)
# busybox from busybox-static must be the static one (it is copied into an image with no libc)
if command -v busybox >/dev/null 2>&1 && ldd "$(command -v busybox)" >/dev/null 2>&1; then need+=(busybox-static); fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
conf=/etc/containers/containers.conf
if ! grep -qs 'default_ulimits' "$conf"; then
  mkdir -p /etc/containers
  cat >>"$conf" <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
fi
