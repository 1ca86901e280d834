#!/usr/bin/env bash
# The Python clients of berth serve's tests (test/clients/python/requirements.txt: docker-py 7, testcontainers-python,
# pytest), installed from PyPI into a virtual environment cached outside the repository, one per version of that
# file: a second run installs nothing. Prints the environment's python.
# Usage: scripts/clients/python.sh            (installs when needed; prints the path of its python on stdout)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
req="$root/test/clients/python/requirements.txt"
cache=${BERTH_CLIENTS_CACHE:-/var/cache/berth-clients}
key=$(sha256sum "$req" | cut -c1-12)
venv="$cache/python-$key"
log() { printf '%s clients: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ -f "$venv/.done" ]; then
  log "python clients: cached in $venv"
else
  python=$(command -v python3) || { log "no python3 on PATH: install Python 3.10 or newer and rerun"; exit 1; }
  log "python clients: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv (from PyPI)"
  rm -rf "$venv"; mkdir -p "$cache"
  "$python" -m venv "$venv" || { log "$python cannot make a virtual environment (Debian: apt-get install python3-venv)"; exit 1; }
  "$venv/bin/pip" install --disable-pip-version-check --progress-bar off -q -r "$req"
  "$venv/bin/python" -c 'import docker, testcontainers, pytest; print("docker", docker.__version__)' >&2
  touch "$venv/.done"
  log "python clients: installed"
fi
echo "$venv/bin/python"
