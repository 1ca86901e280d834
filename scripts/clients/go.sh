#!/usr/bin/env bash
# testcontainers-go's test module (test/clients/go), its modules from the Go module proxy, compiled once into a test
# binary cached outside the repository (keyed by the module's files): a second run compiles nothing.
# Usage: scripts/clients/go.sh    (prints the test binary's path on stdout)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mod="$root/test/clients/go"
cache=${BERTH_CLIENTS_CACHE:-/var/cache/berth-clients}
log() { printf '%s clients: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v go >/dev/null || { log "no go command: install Go 1.26 and rerun"; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build"
key=$(cat "$mod"/go.mod "$mod"/go.sum "$mod"/*_test.go | sha256sum | cut -c1-12)
bin="$cache/tcgo-$key/clients.test"
if [ -x "$bin" ]; then
  log "go clients: cached in $bin"
else
  log "go clients: compiling test/clients/go (testcontainers-go, modules from the Go module proxy) into $bin"
  start=$(date +%s)
  ( while sleep 60; do log "go clients: still compiling, $(( ($(date +%s) - start) / 60 )) min so far"; done ) &
  ticker=$!
  mkdir -p "$(dirname "$bin")"
  if ! (cd "$mod" && go test -c -o "$bin.tmp" .); then kill "$ticker"; log "go clients: the compile failed (above)"; exit 1; fi
  kill "$ticker"
  mv "$bin.tmp" "$bin"
  log "go clients: compiled in $(( $(date +%s) - start )) s"
fi
echo "$bin"
