#!/usr/bin/env bash
# Every check the project has, in the order CI runs them. This is the README's test command and
# works on a fresh machine with the Rust toolchain, Python 3.11 and Node 20: it installs what
# the editor and MCP tests need (Neovim 0.11 from PyPI into target/nvim-venv, mcp-server-time and
# mcp into target/mcp-venv, npm packages into the node_modules of editors/vscode and grammars,
# Chromium from apt and Node 22, code-server + puppeteer-core into target/vscode-e2e; check-jsonschema and
# kubernetes-validate into target/ci-venv, Debian's systemd for systemd-analyze, Debian's dovecot-imapd for the
# IMAP source tests, Debian's strace for the request-burst test, Debian's dbus for the desktop notification tests; for the Windows suite
# the Rust target x86_64-pc-windows-gnu, Debian's gcc-mingw-w64-x86-64 and wine64 and a Wine
# prefix in target/wine; cargo-fuzz for the fuzz step)
# before using it; a second run reuses them.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target directory for every cargo run below and in the scripts it calls, and one build of
# the crate graph besides clippy's check: the tests' debug build (line tables only, Cargo.toml)
# is the binary the editor tests and the VS Code packages use, and `cargo package` does not
# verify by building again. README gives what this needs (disk and time), docs/performance.md
# how it was measured.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# No incremental caches (about 1 GB for this crate's tests): they speed up only a rebuild after
# an edit, and a clone builds everything once. A developer re-running this after small edits
# may set CARGO_INCREMENTAL=1 (switching rebuilds livenote's own units, not its dependencies).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== Neovim 0.11 for the editor tests"
nvim="$(bash tests/e2e/nvim/install.sh)"
export LIVENOTE_NVIM="$nvim"
# The plugin also runs on 0.10 (Debian's packages; server/tests/nvim.rs skips that test, with a
# message, where they cannot be installed).
bash tests/e2e/nvim/install-0.10.sh >/dev/null || echo "warning: Neovim 0.10 could not be installed; its plugin test is skipped"
echo "== MCP servers and client for the MCP tests (mcp-server-time and mcp from PyPI into target/mcp-venv)"
LIVENOTE_MCP_VENV="$(bash tests/e2e/mcp/install.sh)"
export LIVENOTE_MCP_VENV
echo "== Dovecot for the IMAP source tests (Debian's dovecot-imapd, no service started; tests/e2e/dovecot/install.sh)"
LIVENOTE_DOVECOT="$(bash tests/e2e/dovecot/install.sh)"
export LIVENOTE_DOVECOT
echo "== strace for the request-burst test (Debian's strace; tests/e2e/strace/install.sh)"
strace_bin="$(bash tests/e2e/strace/install.sh)"
export PATH="$(dirname "$strace_bin"):$PATH"
echo "== dbus-daemon for the desktop notification tests (Debian's dbus; tests/e2e/dbus/install.sh)"
LIVENOTE_DBUS_DAEMON="$(bash tests/e2e/dbus/install.sh)"
export LIVENOTE_DBUS_DAEMON
echo "== Windows: the x86_64-pc-windows-gnu target, Debian's mingw and Wine 8, a Wine prefix in target/wine (tests/e2e/windows/install.sh)"
windows_env="$(bash tests/e2e/windows/install.sh)"
while IFS='=' read -r key value; do export "$key=$value"; done <<<"$windows_env"
echo "== cargo build --target $LIVENOTE_WINDOWS_TARGET (debug, no debug info, no warnings): the Windows build the Windows suite runs under Wine"
# No debug info: full debug info made target/x86_64-pc-windows-gnu 2.1 GB, line tables 0.7 GB,
# and nothing reads the Windows binary's symbols (the suite checks what it does).
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" CARGO_PROFILE_DEV_DEBUG=false \
  cargo build --locked --target "$LIVENOTE_WINDOWS_TARGET" --bin livenote
LIVENOTE_WINDOWS_EXE="${CARGO_TARGET_DIR:-$PWD/target}/$LIVENOTE_WINDOWS_TARGET/debug/livenote.exe"
export LIVENOTE_WINDOWS_EXE
echo "== cargo test (unit, protocol, CLI, runs, agent, events, faults, MCP, Helix, Neovim, Windows under Wine)"
cargo test --workspace --locked
echo "== fuzz: every target in fuzz/ for 15 s from its checked-in seeds (cargo-fuzz, installed when missing; fuzz/ci.sh)"
# One unoptimised build of the graph without AddressSanitizer, then the seven targets: 7.5
# minutes on the shared 2-core machine with cargo-fuzz installed (about 5.5 the build, 2 the
# runs), 2 min 50 s more to install it; 1.0 GB in target/x86_64-unknown-linux-gnu
# (docs/reliability.md). A crash fails the run with libFuzzer's report; the input is kept in
# fuzz/artifacts/.
bash fuzz/ci.sh
echo "== cargo package: the crate packs what it would publish (metadata, readme, licenses, binstall)"
# --allow-dirty: a developer's uncommitted work is packaged as it is; CI's clone is clean anyway.
# --no-verify: verifying builds the packed crate again without the tests' dev-dependency
# features (tokio's test-util), a second build of most of the graph; the release workflow
# verifies it, on a runner where the disk does not matter.
cargo package -p livenote --locked --allow-dirty --no-verify --quiet
echo "== GitHub workflows against the workflow schema (check-jsonschema from PyPI into target/ci-venv)"
bash scripts/check-workflows.sh
echo "== deploy recipes in docs/deploy: systemd units (systemd-analyze verify; Debian's systemd when missing), the GitHub workflow (check-jsonschema), the CronJobs (kubernetes-validate from PyPI into target/ci-venv)"
bash scripts/check-deploy.sh
echo "== grammars: TextMate (vscode-tmgrammar-test) and tree-sitter queries (Neovim)"
bash grammars/test.sh
echo "== VS Code extension: lint, unit tests, the extension against this build's server, compile, vsce package, and the platform package (with this debug build inside, installed and resolved)"
LIVENOTE_BIN="$CARGO_TARGET_DIR/debug/livenote" LIVENOTE_DEV_BIN="$CARGO_TARGET_DIR/debug/livenote" \
  bash editors/vscode/ci.sh
echo "== VS Code for real (code-server, Debian's Chromium, puppeteer-core; installed into target/vscode-e2e): the platform package, Run now on a clean note ends with the run on disk and the buffer clean"
LIVENOTE_VSCODE_E2E="$(bash tests/e2e/vscode/install.sh)"
export LIVENOTE_VSCODE_E2E
vsce_target="$(node -p '`${process.platform}-${process.arch === "arm" ? "armhf" : process.arch}`')"
LIVENOTE_VSIX="$PWD/editors/vscode/livenote-$vsce_target.vsix" LIVENOTE_BIN="$CARGO_TARGET_DIR/debug/livenote" \
  node tests/e2e/vscode/run-now.mjs
echo "== VS Code for real: the Live notes view lists the notes by folder, runs one inline, the Runs view opens the run's diff; a run of a note with notify: changes that is not the active editor is a notification with Open and Show diff, and Show diff opens its diff (screenshots in \$LIVENOTE_VSCODE_E2E/out/views)"
LIVENOTE_VSIX="$PWD/editors/vscode/livenote-$vsce_target.vsix" LIVENOTE_BIN="$CARGO_TARGET_DIR/debug/livenote" \
  node tests/e2e/vscode/views.mjs
echo "== VS Code for real: livenote's MCP server in VS Code's MCP list (started, its tools listed), @livenote in the chat and Ask livenote… from the palette answered through livenote.ask by a scripted model"
LIVENOTE_VSIX="$PWD/editors/vscode/livenote-$vsce_target.vsix" LIVENOTE_BIN="$CARGO_TARGET_DIR/debug/livenote" \
  node tests/e2e/vscode/ask.mjs
echo "== all checks passed"
