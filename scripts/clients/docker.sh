#!/usr/bin/env bash
# The docker CLI 29 and the docker compose v2 plugin, built from their Go modules (the Go module proxy is the only
# source of them this machine reaches: no release binaries, no Debian package of these versions), into a folder cached
# outside the repository and keyed by the versions: a second run builds nothing.
#   <folder>/docker                        the docker CLI
#   <folder>/cli-plugins/docker-compose    the compose plugin (tests point the CLI at it with cliPluginsExtraDirs)
# Usage: scripts/clients/docker.sh    (prints the folder on stdout)
set -euo pipefail
# The docker CLI's newest 29.x on the proxy. compose: v5.7.x needs Go 1.26.10, newer than the machine's 1.26.8, and a
# toolchain download is no option here, so the newest release the installed Go builds (compose's v5 module is its v2
# line renamed: `docker compose version` prints v5.x).
cli_version=29.9.3
compose_version=5.6.0
cache=${BERTH_CLIENTS_CACHE:-/var/cache/berth-clients}
out="$cache/docker-cli-$cli_version-compose-$compose_version"
log() { printf '%s clients: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v go >/dev/null || { log "no go command: install Go 1.26 and rerun"; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build"

if [ -x "$out/docker" ] && [ -x "$out/cli-plugins/docker-compose" ]; then
  log "docker CLI $cli_version and compose $compose_version: cached in $out"
  echo "$out"
  exit 0
fi

work=$(mktemp -d); ticker=
cleanup() { [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true; rm -rf "$work" "$out.tmp"; }
trap cleanup EXIT
start=$(date +%s)
# A line a minute: the builds take minutes on 2 cores, niced below the other builds of the machine.
( while sleep 60; do log "docker CLI and compose: still building, $(( ($(date +%s) - start) / 60 )) min so far"; done ) &
ticker=$!

# A module's source, writable (the module cache is read-only): $1 = module path, $2 = version, $3 = folder.
source_of() {
  local json dir
  json=$(cd "$work" && go mod download -json "$1@$2") || { log "$1@$2: not downloaded: $json"; exit 1; }
  dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$json")
  cp -r "$dir" "$3"; chmod -R u+w "$3"
}
mkdir -p "$out.tmp/cli-plugins"

log "docker CLI $cli_version: building github.com/docker/cli (modules from the Go module proxy) into $out"
source_of github.com/docker/cli "v$cli_version+incompatible" "$work/cli"
# docker/cli versions by calendar, not SemVer, so it has no go.mod: its vendor.mod/vendor.sum are one, under the name
# the go command reads. Its vendor/ holds only modules.txt (module zips carry no vendored code): modules come from the
# proxy instead.
(
  cd "$work/cli"
  mv vendor.mod go.mod; mv vendor.sum go.sum; rm -rf vendor
  # The proxy serves swarmkit v2.1.3's version but not its source (403, "not available"); v2.1.2 is the newest release
  # it serves whole, and the CLI uses only swarmkit's API types and defaults, which a patch release keeps.
  go mod edit -replace github.com/moby/swarmkit/v2=github.com/moby/swarmkit/v2@v2.1.2
  # what scripts/build/.variables sets for a release build (the version `docker version` shows)
  nice -n 19 go build -trimpath -tags grpcnotrace -o "$out.tmp/docker" \
    -ldflags "-s -w -X github.com/docker/cli/cli/version.Version=$cli_version -X github.com/docker/cli/cli/version.GitCommit=v$cli_version -X github.com/docker/cli/cli/version.BuildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    ./cmd/docker
) || { log "docker CLI: the build failed (above)"; exit 1; }
log "docker CLI: built in $(( $(date +%s) - start )) s"

log "docker compose $compose_version: building github.com/docker/compose/v5 into $out/cli-plugins"
source_of github.com/docker/compose/v5 "v$compose_version" "$work/compose"
(
  cd "$work/compose"
  # the Makefile's release flags
  nice -n 19 go build -trimpath -o "$out.tmp/cli-plugins/docker-compose" \
    -ldflags "-s -w -X github.com/docker/compose/v5/internal.Version=v$compose_version" ./cmd
) || { log "docker compose: the build failed (above)"; exit 1; }

rm -rf "$out"; mv "$out.tmp" "$out"
log "docker CLI $cli_version and compose $compose_version: built in $(( $(date +%s) - start )) s"
echo "$out"
