#!/usr/bin/env bash
# berth's main job, end to end on a fresh machine: install what is missing, start the dev cluster (upstream Kubernetes,
# built from its Go modules the first time), run work in it as pods through the real kubectl, and stop it again. It
# grows with each capability berth gains.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"; cd "$root"
if [ "$(id -u)" != 0 ]; then
  echo "demo: the dev cluster runs containerd and the kubelet on this machine, which needs root: sudo bash scripts/demo.sh" >&2
  exit 1
fi
source scripts/upstream/versions.sh
if ! missing=$(bash scripts/upstream/build.sh --check); then
  echo "demo: berth's dev cluster is Kubernetes $K8S_VERSION built from the release's Go modules, and this machine has not built it"
  echo "demo: ($missing). This first run builds it: about 22 minutes on 2 cores and 5 GB in $BERTH_K8S_CACHE,"
  echo "demo: with a line per part and one a minute while Kubernetes compiles. Later runs start the cluster in about half a minute."
fi
bash scripts/setup-machine.sh
bash scripts/upstream/build.sh
source scripts/node-env.sh
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
# built already and no source changed since: a second demo starts at once
if [ ! -f dist/src/cli/main.js ] || [ -n "$(find src scripts package.json tsconfig.json -newer dist/src/cli/main.js -print -quit)" ]; then
  npm run --silent build
fi
podman image exists localhost/berth/krm-set-annotations:1 || bash scripts/build-images.sh
berth() { node "$root/dist/src/cli/main.js" "$@"; }
# kubectl of the cluster's version, as the build made it, before any other kubectl on PATH
export PATH="$BERTH_K8S_CACHE/kubernetes-$K8S_VERSION/bin:$PATH"
state="$(mktemp -d)"
# the demo's own shim agent (in its private state folder, not the user's), stopped with its warm pods at the end
export BERTH_SHIM_AGENT_SOCKET="$state/shim-agent.sock"
# the dev cluster pulls from no registry: berth's helper containers (the --network none gate, file copies) use a local image
export BERTH_HELPER_IMAGE=localhost/berth/busybox:1
serve_pid=
cleanup() {
  berth shim agent stop >/dev/null || true
  if [ -n "$serve_pid" ]; then kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; fi
  berth dev-cluster down --state-dir "$state" >/dev/null
  rm -rf "$state"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "berth dev-cluster up"
# the images the demo runs, from podman into the node (busybox, berth's helper image, goes in by itself)
berth dev-cluster up --state-dir "$state" --load localhost/berth/krm-set-annotations:1
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

step "kubectl kustomize: a KRM function run as a pod by berth's docker shim"
berth shim install "$state/bin" >/dev/null
# examples/site: a Service and a transformer naming the container image localhost/berth/krm-set-annotations:1
PATH="$state/bin:$PATH" BERTH_NAMESPACE=default kubectl kustomize --enable-alpha-plugins examples/site

step "berth serve: the docker CLI, its containers as pods"
# node itself in the background (not the berth function): $! must be the process that gets the SIGTERM.
node "$root/dist/src/cli/main.js" serve -H "unix://$state/docker.sock" -n default >"$state/serve.log" 2>&1 & serve_pid=$!
for _ in $(seq 100); do [ -S "$state/docker.sock" ] && break; sleep 0.1; done
set +e; DOCKER_HOST="unix://$state/docker.sock" docker run --rm localhost/berth/busybox:1 sh -c 'echo "hello from $(hostname), a pod"; exit 3'
echo "exit code: $?"; set -e
kill $serve_pid; wait $serve_pid 2>/dev/null || true; serve_pid=

step "berth dev-cluster down"
