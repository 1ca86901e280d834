#!/usr/bin/env bash
# Builds the upstream cluster's parts from their Go modules, through the Go module proxy:
# Kubernetes (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl), etcd,
# containerd with its runc shim and ctr, CoreDNS, kube-router (NetworkPolicy) and local-path-provisioner.
# Each part lands in $BERTH_K8S_CACHE/<part>-<version>/bin and is marked done there: a second run builds nothing.
# Usage: scripts/upstream/build.sh [part...]   (parts: kubernetes etcd containerd coredns kube-router local-path)
#        scripts/upstream/build.sh --check      (exit 0 when every part is built; else name what a build would make)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/versions.sh"

command -v go >/dev/null || { echo "build: no go command; install Go 1.26 (https://go.dev/doc/install) and rerun" >&2; exit 1; }
# GOTOOLCHAIN=local: a module that wants a newer Go fails here instead of downloading a toolchain
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
export GOMODCACHE="$BERTH_K8S_CACHE/go/mod" GOCACHE="$BERTH_K8S_CACHE/go/build"

log() { printf '%s build: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# part_dir NAME VERSION -> the cache directory of one part at one version
part_dir() { printf '%s/%s-%s' "$BERTH_K8S_CACHE" "$1" "$2"; }

# built NAME VERSION: true when that part was built whole before
built() { [ -f "$(part_dir "$1" "$2")/bin/.done" ]; }

# run_part NAME VERSION FUNCTION: builds a part unless cached, timing it
run_part() {
  local name=$1 version=$2 fn=$3 dir start
  dir=$(part_dir "$name" "$version")
  if built "$name" "$version"; then log "$name $version: cached in $dir/bin"; return; fi
  start=$(date +%s)
  log "$name $version: building into $dir/bin (go caches in $BERTH_K8S_CACHE/go)"
  rm -rf "$dir/bin"; mkdir -p "$dir/src" "$dir/bin"
  # a compile of many minutes says it is alive once a minute, with the go cache's growth as its progress
  ( while sleep 60; do log "$name: still building, $(( ($(date +%s) - start) / 60 )) min so far, go build cache at $(du -sh "$GOCACHE" | cut -f1)"; done ) &
  local ticker=$!
  if ! (cd "$dir/src" && "$fn" "$version" "$dir/bin"); then
    kill "$ticker"
    log "$name $version: the build failed (its output is above)"
    exit 1
  fi
  kill "$ticker"
  touch "$dir/bin/.done"
  log "$name $version: built in $(( $(date +%s) - start )) s, $(du -sh "$dir/bin" | cut -f1)"
}

# A module of our own: k8s.io/kubernetes requires its staging modules at v0.0.0 through relative replace lines, which
# go ignores in a dependency. Each becomes a replace to its published v0.Y.Z, read from the release's own go.mod.
build_kubernetes() {
  local version=$1 bin=$2 minor staging gomod
  minor=${version#v1.}; minor=${minor%%.*}
  staging="v0.${version#v1.}"
  gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
  {
    echo "module berth.invalid/kubernetes-build"
    echo "go 1.26.0"
    echo "require k8s.io/kubernetes $version"
    grep -E '^\s+k8s\.io/\S+ v0\.0\.0$' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } >go.mod
  local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl) pkgs=() c
  for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  log "kubernetes: resolving modules ($(grep -c '^replace' go.mod) staging modules at $staging)"
  # each at the release's version: without it, go get takes the newest release of k8s.io/kubernetes
  go get -tool "${pkgs[@]/%/@$version}"
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld+=" -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  log "kubernetes: compiling ${cmds[*]} (the long part: tens of minutes on 2 cores when the cache is cold)"
  go build -trimpath -ldflags "$ld" -o "$bin/" "${pkgs[@]}"
}

# etcd's main package is the root of its server module, which has relative replace lines: a module of our own again.
build_etcd() {
  local version=$1 bin=$2
  printf 'module berth.invalid/etcd-build\ngo 1.26.0\n' >go.mod
  go get -tool "go.etcd.io/etcd/server/v3@$version"
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
}

build_containerd() {
  local version=$1 bin=$2 m=github.com/containerd/containerd/v2
  GOBIN=$bin go install -trimpath -ldflags "-s -w -X $m/version.Version=$version" \
    -tags "no_btrfs urfave_cli_no_docs" "$m/cmd/containerd@$version" "$m/cmd/ctr@$version"
  GOBIN=$bin go install -trimpath -ldflags "-s -w -X $m/version.Version=$version" \
    -tags "no_btrfs urfave_cli_no_docs no_grpc" "$m/cmd/containerd-shim-runc-v2@$version"
}

build_coredns() {
  GOBIN=$2 go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$1"
}

build_kube_router() {
  GOBIN=$2 go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$1"
}

build_local_path() {
  GOBIN=$2 go install -trimpath -ldflags "-s -w" "github.com/rancher/local-path-provisioner@$1"
}

# the part names and the version each is built at
declare -A versions=([kubernetes]=$K8S_VERSION [etcd]=$ETCD_VERSION [containerd]=$CONTAINERD_VERSION [coredns]=$COREDNS_VERSION [kube-router]=$KUBE_ROUTER_VERSION [local-path]=$LOCAL_PATH_VERSION)
all_parts=(kubernetes etcd containerd coredns kube-router local-path)

if [ "${1:-}" = --check ]; then
  missing=()
  for part in "${all_parts[@]}"; do built "$part" "${versions[$part]}" || missing+=("$part ${versions[$part]}"); done
  [ ${#missing[@]} -eq 0 ] && exit 0
  printf 'not built yet in %s: %s\n' "$BERTH_K8S_CACHE" "$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')"
  exit 1
fi

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=("${all_parts[@]}")
mkdir -p "$GOMODCACHE" "$GOCACHE"
total=$(date +%s)
for part in "${parts[@]}"; do
  case $part in
    kubernetes) run_part kubernetes "$K8S_VERSION" build_kubernetes ;;
    etcd) run_part etcd "$ETCD_VERSION" build_etcd ;;
    containerd) run_part containerd "$CONTAINERD_VERSION" build_containerd ;;
    coredns) run_part coredns "$COREDNS_VERSION" build_coredns ;;
    kube-router) run_part kube-router "$KUBE_ROUTER_VERSION" build_kube_router ;;
    local-path) run_part local-path "$LOCAL_PATH_VERSION" build_local_path ;;
    *) echo "build: unknown part $part (kubernetes etcd containerd coredns kube-router local-path)" >&2; exit 2 ;;
  esac
done
log "all parts ready in $(( $(date +%s) - total )) s"
