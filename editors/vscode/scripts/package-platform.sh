#!/usr/bin/env bash
# Builds the VS Code package for this machine's platform with the release `livenote` binary
# inside (server/livenote, found before livenote.path and PATH), as rust-analyzer, taplo and
# typos-lsp ship theirs: editors/vscode/livenote-<target>.vsix, e.g. livenote-linux-x64.vsix.
#
#   bash editors/vscode/scripts/package-platform.sh
#
# LIVENOTE_RELEASE_BIN: package this binary instead of running
# `cargo build --release --locked -p livenote`. The binary must pass scripts/release-size.py
# (no debug sections, at most 25 MiB). Needs `npm ci` in editors/vscode (ci.sh runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(cd ../.. && pwd)"

# The vsce target of this machine: Node's platform and arch, as vsceTarget() in src/serverPath.ts
# names them (test/platformPackage.test.ts checks the two agree).
target="$(node -p '`${process.platform}-${process.arch === "arm" ? "armhf" : process.arch}`')"
case "$target" in
  linux-x64 | linux-arm64 | linux-armhf | darwin-x64 | darwin-arm64 | win32-x64 | win32-arm64) ;;
  *)
    echo "package-platform: no VS Code platform package for $target" >&2
    exit 1
    ;;
esac
exe=livenote
[[ $target == win32-* ]] && exe=livenote.exe

bin="${LIVENOTE_RELEASE_BIN:-}"
if [[ -z $bin ]]; then
  echo "== cargo build --release --locked -p livenote"
  (cd "$root" && cargo build --release --locked -p livenote)
  target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')"
  bin="$target_dir/release/$exe"
fi
if [[ ! -x $bin ]]; then
  echo "package-platform: no executable livenote at $bin" >&2
  exit 1
fi
python3 "$root/scripts/release-size.py" "$bin"
"$bin" --version

# The binary is here only while vsce packages it: the universal package (ci.sh) must never
# carry one, nor git see it.
rm -rf server
trap 'rm -rf server' EXIT
mkdir server
cp "$bin" "server/$exe"
chmod 755 "server/$exe"

out="livenote-$target.vsix"
echo "== vsce package --target $target"
log="$(mktemp)"
trap 'rm -rf server; rm -f "$log"' EXIT
# vsce must not prompt; --no-dependencies because esbuild bundled them.
npx --no-install vsce package --target "$target" --no-dependencies -o "$out" </dev/null 2>&1 | tee "$log"
# vsce prints " WARNING " (without colour when not on a TTY) for every problem it tolerates.
if grep -n 'WARNING' "$log"; then
  echo "package-platform: vsce printed warnings (above); fix them" >&2
  exit 1
fi
test -s "$out"
echo "package-platform: ok ($(du -k "$out" | cut -f1) KiB $out)"
