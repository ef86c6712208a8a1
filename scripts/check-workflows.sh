#!/usr/bin/env bash
# Validates every GitHub Actions workflow in .github/workflows against the GitHub workflow schema
# with check-jsonschema (PyPI, pinned; its schemas ship inside the package, so the check reads
# nothing from the network). Installs it into a venv under target/ the first time, as
# tests/e2e/mcp/install.sh does for the MCP tests; a second run only checks the version.
#
#   bash scripts/check-workflows.sh
#   bash scripts/check-workflows.sh docs/deploy/github-actions.yml   # these files instead
#   LIVENOTE_CI_VENV=/opt/ci-venv bash scripts/check-workflows.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.39.0
venv="${LIVENOTE_CI_VENV:-${CARGO_TARGET_DIR:-$PWD/target}/ci-venv}"
python="$venv/bin/python"

ready() {
    "$python" - "$version" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
assert m.version("check-jsonschema") == sys.argv[1]
PY
}

if ! ready; then
    echo "installing check-jsonschema $version into $venv" >&2
    python3 -m venv "$venv"
    "$python" -m pip install --quiet --disable-pip-version-check "check-jsonschema==$version" >&2
    if ! ready; then
        echo "error: $venv has no working check-jsonschema $version after the install" >&2
        exit 1
    fi
fi

shopt -s nullglob
if (($# > 0)); then
    workflows=("$@")
else
    workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
fi
if ((${#workflows[@]} == 0)); then
    echo "error: no workflow in .github/workflows" >&2
    exit 1
fi
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
