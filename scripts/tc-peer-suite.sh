#!/usr/bin/env bash
# Runs testcontainers-node's own test suite (packages/testcontainers, the files that talk to a container engine)
# against podman's Docker API and against `berth serve` on a dev cluster, file by file, and prints a parity table.
#
#   scripts/tc-peer-suite.sh /path/to/testcontainers-node [FILE-FILTER...]
#
# The checkout is not part of berth (never vendored, never committed): get it yourself, e.g. `git clone
# https://github.com/testcontainers/testcontainers-node && git -C testcontainers-node checkout 457707f3` (v12.1.0,
# the commit of the table in docs/serve.md).
# Needs: podman (the dev cluster's runtime), the npm registry (the suite's own dependencies and vitest, installed
# into $TC_PEER_WORK, never into berth), apt (`apt-get download dumb-init`), and `npm run build` done in berth.
# There is no image registry: the suite's images are built here from local files (see build_images below; the
# substitutions are listed in docs/serve.md). Results go to $TC_PEER_WORK/results/<engine>/<file>.json (vitest's
# JSON reporter) and the table to $TC_PEER_WORK/results/table.md.
#
# Environment: TC_PEER_WORK (default /tmp/tc-peer), TC_PEER_FILE_TIMEOUT (seconds per file and engine, default
# 600), TC_PEER_ENGINES ("podman berth"; two invocations with one engine each, the second with
# TC_PEER_SKIP_INSTALL=1 TC_PEER_SKIP_IMAGES=1, run both at once), TC_PEER_SKIP_IMAGES=1 (images already
# built), TC_PEER_SKIP_INSTALL=1 (suite already installed in $TC_PEER_WORK/suite).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/node-env.sh"
checkout="$(cd "${1:?usage: tc-peer-suite.sh /path/to/testcontainers-node [file-filter...]}" && pwd)"; shift
filters=("$@")
work="${TC_PEER_WORK:-/tmp/tc-peer}"
timeout_s="${TC_PEER_FILE_TIMEOUT:-600}"
engines="${TC_PEER_ENGINES:-podman berth}"
cli="$root/dist/src/cli/main.js"
[ -x "$cli" ] || { echo "tc-peer-suite: run npm run build in $root first" >&2; exit 1; }
mkdir -p "$work"
log() { echo "tc-peer-suite: $*" >&2; }
podman_build() { podman build --runtime /usr/sbin/runc --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 -q "$@" >/dev/null; }

# The suite's files that need a container engine (the others are unit tests, engine-independent).
engine_files() {
  (cd "$work/suite/packages/testcontainers" && grep -lE 'new GenericContainer|getContainerRuntimeClient|Network\(\)|DockerComposeEnvironment|fromDockerfile|getReaper|PortForwarder|SocatContainer|TestContainers\.' \
    $(find src -name '*.test.ts') | sort)
}

install_suite() {
  log "copying the suite from $checkout to $work/suite and installing its dependencies (npm)"
  rm -rf "$work/suite"; mkdir -p "$work/suite/packages"
  cp -r "$checkout/packages/testcontainers" "$work/suite/packages/"
  cp "$checkout/vitest.config.ts" "$checkout/tsconfig.base.json" "$checkout/package.json" "$work/suite/"
  # Only the core package and the runner: the root's workspaces also name every module (hundreds of packages).
  node -e '
    const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f));
    p.workspaces = ["packages/testcontainers"];
    p.devDependencies = { vitest: p.devDependencies.vitest, typescript: p.devDependencies.typescript };
    fs.writeFileSync(f, JSON.stringify(p, null, 2));' "$work/suite/package.json"
  (cd "$work/suite" && npm install --no-audit --no-fund --loglevel=error)
}

# Copies binaries and the shared libraries they link into a rootfs.
copy_bins() { # $1 = rootfs, rest = binaries
  local fs="$1"; shift
  for bin in "$@"; do
    mkdir -p "$fs$(dirname "$bin")"; cp -L "$bin" "$fs$bin"
    for lib in $(ldd "$bin" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
      [ -e "$fs$lib" ] || { mkdir -p "$fs$(dirname "$lib")"; cp -L "$lib" "$fs$lib"; }
    done
  done
}

# The images the suite names, from local files (no registry), under the names the tests use:
#   node:10-alpine    the base of the suite's fixture Dockerfiles: berth's node image (node 24) plus busybox's
#                     applets, curl, openssl, getpcaps, getent, dumb-init (Debian's), and stand-ins for `apk add`
#                     (the packages are already there) and `npm init -y && npm install express@4.16.4` (express
#                     4.16.4 from the npm registry, installed at build time into /opt/npm-stub)
#   cristianrgreco/testcontainer:1.1.14   the suite's own fixtures/docker/docker/Dockerfile on it, without its
#                     EXPOSE line (see below)
#   alpine, alpine:3.10                   berth's busybox image
#   mendhak/udp-listener                  a UDP listener on 5005 in node that logs what it receives
# They stay in podman's store for the next run (TC_PEER_SKIP_IMAGES=1); remove them with
#   podman rmi node:10-alpine cristianrgreco/testcontainer:1.1.14 mendhak/udp-listener; podman untag localhost/berth/busybox:1 alpine alpine:3.10
build_images() {
  local b="$work/images"; rm -rf "$b"; mkdir -p "$b"
  log "building node:10-alpine (a stand-in on berth's node image)"
  local fs="$b/node/rootfs"; mkdir -p "$fs/bin" "$fs/usr/bin" "$fs/etc/ssl/private" "$fs/etc/ssl/certs" "$fs/opt/npm-stub"
  copy_bins "$fs" /usr/bin/curl /usr/bin/openssl /usr/sbin/getpcaps /usr/bin/getent
  mkdir -p "$fs/usr/lib/ssl"; cp -L /usr/lib/ssl/openssl.cnf "$fs/usr/lib/ssl/openssl.cnf"
  # busybox's applets where alpine has them (/usr/bin/wget: the suite's health checks name it), except
  # where a real tool was copied above
  for a in $(/bin/busybox --list-full | grep -vx 'bin/busybox\|linuxrc'); do
    [ -e "$fs/$a" ] || { mkdir -p "$fs/$(dirname "$a")"; ln -s /bin/busybox "$fs/$a"; }
  done
  (cd "$b" && apt-get download dumb-init >/dev/null 2>&1) || { log "apt-get download dumb-init failed"; exit 1; }
  dpkg-deb -x "$b"/dumb-init_*.deb "$b/dumb-init"; cp "$b/dumb-init/usr/bin/dumb-init" "$fs/usr/bin/dumb-init"
  printf 'hosts: files dns\n' >"$fs/etc/nsswitch.conf"
  # node:alpine's users and folders (the suite execs as user node, in /var/log)
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$fs/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' >"$fs/etc/group"
  mkdir -p "$fs/home/node" "$fs/var/log" "$fs/var/tmp" "$fs/root" "$fs/opt" "$fs/srv" "$fs/mnt"
  (cd "$fs/opt/npm-stub" && printf '{"name":"npm-stub","private":true}\n' >package.json && npm install --no-audit --no-fund --loglevel=error express@4.16.4 >/dev/null)
  printf '#!/bin/sh\necho "apk (tc-peer stand-in): $* is already in the image"\n' >"$fs/bin/apk"
  cat >"$fs/bin/npm" <<'EOF'
#!/bin/sh
# tc-peer stand-in for npm: `npm init -y` and `npm install express@4.16.4` from the copy made at image build
case "$1" in
  init) [ -e package.json ] || printf '{"name":"app","version":"1.0.0"}\n' >package.json ;;
  install) mkdir -p node_modules && cp -r /opt/npm-stub/node_modules/. node_modules/ ;;
  *) echo "npm (tc-peer stand-in): only init and install" >&2; exit 1 ;;
esac
EOF
  chmod 755 "$fs/bin/apk" "$fs/bin/npm"
  printf 'FROM localhost/berth/node:24\nUSER root\nCOPY rootfs/ /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nENTRYPOINT []\nCMD ["node"]\n' >"$b/node/Containerfile"
  podman_build -t docker.io/library/node:10-alpine "$b/node"

  log "building cristianrgreco/testcontainer:1.1.14 from the suite's fixtures/docker/docker (without EXPOSE)"
  # Without its EXPOSE line: podman 4.3 reports an image's exposed ports in HostConfig.PortBindings with no
  # binding, and testcontainers waits for them to be bound (10 s, then fails the start) whenever a test
  # publishes none. berth cannot read this image's config (no registry), so it is the same image to berth.
  cp -r "$work/suite/packages/testcontainers/fixtures/docker/docker" "$b/fixture"
  sed -i '/^EXPOSE /d' "$b/fixture/Dockerfile"
  podman_build -t docker.io/cristianrgreco/testcontainer:1.1.14 "$b/fixture"

  log "tagging berth's busybox as alpine:latest and alpine:3.10"
  podman tag localhost/berth/busybox:1 docker.io/library/alpine:latest docker.io/library/alpine:3.10

  log "building mendhak/udp-listener (a node stand-in)"
  mkdir -p "$b/udp"
  cat >"$b/udp/listener.js" <<'EOF'
const socket = require("dgram").createSocket("udp4");
socket.on("message", (msg) => console.log(msg.toString()));
socket.bind(5005, () => console.log("Listening on UDP port 5005"));
EOF
  printf 'FROM docker.io/library/node:10-alpine\nCOPY listener.js /listener.js\nCMD ["node", "/listener.js"]\n' >"$b/udp/Containerfile"
  podman_build -t docker.io/mendhak/udp-listener:latest "$b/udp"
}

pids=()
started_cluster=
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done   # berth deletes its pods on SIGTERM
  [ -z "$started_cluster" ] || node "$cli" dev-cluster down --state-dir "$work/cluster" >/dev/null 2>&1 || true
  # what podman's API made for the suite (testcontainers labels everything; the dev cluster's own are not ours)
  if [[ " $engines " == *" podman "* ]]; then
    podman ps -aq --filter label=org.testcontainers=true --format '{{.ID}} {{.Labels}}' | grep -v io.berth.dev-cluster \
      | awk '{print $1}' | xargs -r podman rm -f >/dev/null 2>&1 || true
    # images the suite built and committed (Ryuk, which would delete them, is off)
    podman images --format '{{.Repository}}:{{.Tag}}' | grep -E '^(localhost/[0-9a-f]{12}:[0-9a-f]{12}|docker.io/cristianrgreco/testcontainer:test-commit-)' \
      | xargs -r podman rmi -f >/dev/null 2>&1 || true
  fi
}

wait_ping() { # $1 = socket
  for _ in $(seq 300); do curl -sf --unix-socket "$1" http://d/_ping >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "no engine answers on $1"; return 1
}

start_engine() { # $1 = podman|berth
  local sock="$work/$1.sock"; rm -f "$sock"
  if [ "$1" = podman ]; then
    podman system service --time=0 "unix://$sock" >"$work/podman.log" 2>&1 &
  else
    rm -rf "$work/cluster"; started_cluster=1
    node "$cli" dev-cluster up --state-dir "$work/cluster" >"$work/cluster.log" 2>&1
    kubectl --kubeconfig "$work/cluster/kubeconfig" create namespace tc-peer >/dev/null
    # --helper-image: files copied before start into an image whose config berth cannot read (no registry
    # here) come through an init container of this image; the default (busybox:1.36) cannot be pulled here.
    node "$cli" serve --kubeconfig "$work/cluster/kubeconfig" -n tc-peer --instance tc-peer -H "unix://$sock" \
      --helper-image localhost/berth/busybox:1 >"$work/berth.log" 2>&1 &
  fi
  pids+=($!)
  wait_ping "$sock"
}

# TESTCONTAINERS_HOST_OVERRIDE=localhost: both engines publish on this machine's loopback; without it
# testcontainers, seeing /.dockerenv, looks for a gateway (podman's network when the socket is podman.sock).
# CI_PODMAN=true for podman only: the suite's own switch that leaves out the tests it knows podman fails (the
# pull-policy build tests would hang on podman, waiting for a pull event, containers/podman#17779). berth runs
# them all, so the copyUIDGID archive tests and the buildkit and pull-policy build tests count against berth too
# (a build fails at once on berth, never hangs). There is no Ryuk image
# here: Ryuk is disabled except in the files that test it (podman fails those; berth plays the reaper itself).
ryuk_disabled() { case "$1" in *reaper*|*auto-cleanup*) echo false ;; *) echo true ;; esac; }
# empty for berth: the suite tests `if (!process.env.CI_PODMAN)`, so any value, even "false", would leave them out
ci_podman() { [ "$1" = podman ] && echo true || echo ''; }

run_files() { # $1 = engine, $2 = socket
  local out="$work/results/$1"; mkdir -p "$out"
  for f in $(engine_files); do
    if [ ${#filters[@]} -gt 0 ]; then
      local hit=; for x in "${filters[@]}"; do [[ "$f" == *"$x"* ]] && hit=1; done; [ -n "$hit" ] || continue
    fi
    local name; name="$(basename "$f" .test.ts)"
    log "$1: $f"
    local t0=$SECONDS
    rm -f "$out/$name.json"
    (cd "$work/suite" && DOCKER_HOST="unix://$2" TESTCONTAINERS_RYUK_DISABLED="$(ryuk_disabled "$f")" CI= CI_PODMAN="$(ci_podman "$1")" \
      TESTCONTAINERS_HOST_OVERRIDE=localhost \
      timeout -k 10 "$timeout_s" node_modules/.bin/vitest run "packages/testcontainers/$f" \
        --reporter=default --reporter=json --outputFile.json="$out/$name.json" >"$out/$name.log" 2>&1) || true
    echo "$((SECONDS - t0))" >"$out/$name.seconds"
    [ -s "$out/$name.json" ] || log "$1: $f wrote no results (timed out after ${timeout_s}s?)"
  done
}

summarize() {
  node "$root/scripts/tc-peer-table.mjs" "$work/results" | tee "$work/results/table.md"
}

main() {
  [ "${TC_PEER_SKIP_INSTALL:-}" = 1 ] || install_suite
  [ "${TC_PEER_SKIP_IMAGES:-}" = 1 ] || build_images
  trap cleanup EXIT
  trap 'exit 130' INT TERM   # so that the EXIT trap runs (stops the engines and the dev cluster) when interrupted
  for e in $engines; do
    start_engine "$e"
    run_files "$e" "$work/$e.sock"
  done
  summarize
}

main
