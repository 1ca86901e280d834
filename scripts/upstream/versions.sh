# Versions of the upstream cluster's parts: one place, sourced by the build and by `berth dev-cluster`'s scripts.
# Change a version here and the next build puts it in a cache directory of its own.
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
CONTAINERD_VERSION=v2.3.7
COREDNS_VERSION=v1.14.7
# the newest kube-router/v2 and local-path-provisioner the Go module proxy serves (2026-11: v2.11.1 and v0.0.37 are not)
KUBE_ROUTER_VERSION=v2.1.0
LOCAL_PATH_VERSION=v0.0.30
PAUSE_TAG=registry.k8s.io/pause:3.10.2
BERTH_K8S_CACHE=${BERTH_K8S_CACHE:-/var/cache/berth-k8s}
