#!/usr/bin/env bash
# Installs the official Python MCP SDK (`mcp`, the client the MCP tests drive livenote with) and
# the reference time server (`mcp-server-time`) into a venv, pinned, and prints the venv's path.
# Idempotent: a second run only checks that both import.
#
#   bash tests/e2e/mcp/install.sh                     # -> <repo>/target/mcp-venv
#   LIVENOTE_MCP_VENV=/opt/mcp bash tests/e2e/mcp/install.sh
#
# scripts/test.sh exports the printed path as LIVENOTE_MCP_VENV for the tests that need it
# (server/tests/mcp_server.rs).
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv="${LIVENOTE_MCP_VENV:-$PWD/target/mcp-venv}"
python="$venv/bin/python"

ready() {
    "$python" - <<'PY' 2>/dev/null
import importlib.metadata as m
assert m.version("mcp") == "2.3.0"
assert m.version("mcp-server-time") == "2026.10.19"
import mcp, mcp_server_time
PY
}

if ! ready; then
    echo "installing mcp 2.3.0 and mcp-server-time 2026.10.19 into $venv" >&2
    python3 -m venv "$venv"
    "$python" -m pip install --quiet --disable-pip-version-check 'mcp==2.3.0' 'mcp-server-time==2026.10.19' >&2
    if ! ready; then
        echo "error: $venv has no working mcp 2.3.0 and mcp-server-time 2026.10.19 after the install" >&2
        exit 1
    fi
fi
echo "$venv"
