#!/usr/bin/env bash
# Installs the MCP servers and client the tests drive into a Python venv, pinned, and prints the
# venv's path: `mcp-server-time` (a real MCP server from PyPI: server/tests/mcp.rs runs it as a
# run's tool) and `mcp`, the official Python SDK (the fake server tests/e2e/mcp/fake_server.py
# is built on it; the `livenote mcp` tests drive livenote with its client). Idempotent; a second
# run only checks the versions.
#
#   bash tests/e2e/mcp/install.sh            # -> <repo>/target/mcp-venv
#   LIVENOTE_MCP_VENV=/opt/mcp bash tests/e2e/mcp/install.sh
#
# The tests read the venv from LIVENOTE_MCP_VENV (scripts/test.sh exports it).
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv="${LIVENOTE_MCP_VENV:-$PWD/target/mcp-venv}"
want_time="2026.10.19"
want_mcp="2.3.0"

# True when the venv has both packages at the pinned versions.
is_ready() {
    "$venv/bin/python" - "$want_time" "$want_mcp" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if (version("mcp-server-time"), version("mcp")) == (sys.argv[1], sys.argv[2]) else 1)
PY
}

if ! is_ready; then
    echo "installing mcp-server-time $want_time and mcp $want_mcp into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mcp-server-time==$want_time" "mcp==$want_mcp" >&2
    if ! is_ready || [[ ! -x "$venv/bin/mcp-server-time" ]]; then
        echo "error: $venv lacks mcp-server-time $want_time or mcp $want_mcp after the install" >&2
        exit 1
    fi
fi
echo "$venv"
