#!/usr/bin/env bash
# berth's main job, end to end on a fresh machine: install what is missing, start the dev cluster, run work in it
# as pods through the real kubectl, and stop it again. It grows with each capability berth gains.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"; cd "$root"
bash scripts/setup-machine.sh
source scripts/node-env.sh
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
podman image exists localhost/berth/busybox:1 || bash scripts/build-images.sh
berth() { node "$root/dist/src/cli/main.js" "$@"; }
state="$(mktemp -d)"
trap 'berth dev-cluster down --state-dir "$state" >/dev/null; rm -rf "$state"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "berth dev-cluster up"
berth dev-cluster up --state-dir "$state"
export KUBECONFIG="$state/kubeconfig"

step "kubectl get ns,nodes"
kubectl get ns,nodes

step "kubectl run: a pod that reads stdin and exits 3"
set +e; echo "hello from stdin" | kubectl run demo --rm -i --restart=Never --image=localhost/berth/busybox:1 -- sh -c 'cat; exit 3'
echo "exit code: $?"; set -e

step "a pod with a server, reached through kubectl port-forward"
kubectl run web --image=localhost/berth/busybox:1 -- sh -c 'echo "served from a pod" > /tmp/index.html; httpd -f -p 8080 -h /tmp'
kubectl wait --for=condition=Ready pod/web --timeout=60s
kubectl port-forward pod/web 18080:8080 >/dev/null & pf=$!
for _ in $(seq 50); do busybox wget -qO- http://127.0.0.1:18080/index.html 2>/dev/null && break; sleep 0.1; done
kill $pf
kubectl delete pod web

step "berth dev-cluster down"
