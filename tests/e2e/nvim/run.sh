#!/usr/bin/env bash
# Runs the headless Neovim test by hand: builds livenote, installs Neovim 0.11 if needed, then
# runs test.lua with the README's config (init.lua). `cargo test -p livenote --test nvim` does
# the same from Rust (server/tests/nvim.rs). Extra arguments go to nvim.
set -euo pipefail
cd "$(dirname "$0")/../../.."
cargo build --quiet -p livenote --bin livenote
nvim="${LIVENOTE_NVIM:-$(bash tests/e2e/nvim/install.sh)}"
state="$(mktemp -d)"
trap 'rm -rf "$state"' EXIT
export LIVENOTE_BIN="${LIVENOTE_BIN:-$PWD/target/debug/livenote}"
# A fresh home for Nvim's state and logs; --clean keeps user config and plugins out.
export XDG_CONFIG_HOME="$state/config" XDG_DATA_HOME="$state/data" XDG_STATE_HOME="$state/state" \
    XDG_CACHE_HOME="$state/cache"
"$nvim" --headless --clean -u tests/e2e/nvim/init.lua "$@" -l tests/e2e/nvim/test.lua
