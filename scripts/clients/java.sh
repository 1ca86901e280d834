#!/usr/bin/env bash
# testcontainers-java's test module (test/clients/java) with its dependencies from Maven Central, resolved and compiled
# once into a repository cached outside this one: a second run downloads nothing, and the tests run offline (-o).
# Usage: scripts/clients/java.sh    (prints the local repository's path on stdout)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${BERTH_CLIENTS_CACHE:-/var/cache/berth-clients}
repo="$cache/m2"
log() { printf '%s clients: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v mvn >/dev/null || { log "no mvn on PATH: install Maven 3.8 or newer (Debian: apt-get install maven) and rerun"; exit 1; }
mkdir -p "$repo"
log "java clients: resolving test/clients/java's dependencies into $repo (Maven Central on the first run) and compiling its tests"
# surefire fetches its JUnit provider only when a test class matches: a run that selects no method of one fetches it and runs nothing
mvn -B -q -f "$root/test/clients/java/pom.xml" -Dmaven.repo.local="$repo" test -Dtest="GenericContainerTest#noTestIsNamedSo" -Dsurefire.failIfNoSpecifiedTests=false >&2
log "java clients: ready"
echo "$repo"
