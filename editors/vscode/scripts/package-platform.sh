#!/usr/bin/env bash
# Builds the VS Code package for this machine's platform with the shipped (`dist` profile) `livenote` binary
# inside (server/livenote, found before livenote.path and PATH), as rust-analyzer, taplo and
# typos-lsp ship theirs: editors/vscode/livenote-<target>.vsix, e.g. livenote-linux-x64.vsix.
#
#   bash editors/vscode/scripts/package-platform.sh
#
# LIVENOTE_RELEASE_BIN: package this binary instead of running
# `cargo build --profile dist --locked -p livenote`. The binary must pass scripts/release-size.py
# (no debug sections, at most 25 MiB). Needs `npm ci` in editors/vscode (ci.sh runs it).
# LIVENOTE_VSCE_TARGET: package for this VS Code target instead of this machine's (the release
# workflow packages all five targets' binaries on one Linux runner); a binary for another
# machine is not run here, only checked and packed.
# LIVENOTE_DEV_BIN: package this development build without the release size check, which only
# a release build can pass. scripts/test.sh gives it the debug binary its tests ran, so the test
# command makes no second (release) build of the crate graph; the release workflow checks the
# size of what ships.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(cd ../.. && pwd)"

# The vsce target of this machine: Node's platform and arch, as vsceTarget() in src/serverPath.ts
# names them (test/platformPackage.test.ts checks the two agree).
host="$(node -p '`${process.platform}-${process.arch === "arm" ? "armhf" : process.arch}`')"
target="${LIVENOTE_VSCE_TARGET:-$host}"
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
dev_bin="${LIVENOTE_DEV_BIN:-}"
if [[ -n $bin && -n $dev_bin ]]; then
  echo "package-platform: set LIVENOTE_RELEASE_BIN or LIVENOTE_DEV_BIN, not both" >&2
  exit 1
fi
[[ -n $dev_bin ]] && bin="$dev_bin"
if [[ -z $bin ]]; then
  if [[ $target != "$host" ]]; then
    echo "package-platform: LIVENOTE_VSCE_TARGET=$target is not this machine ($host): give its binary in LIVENOTE_RELEASE_BIN" >&2
    exit 1
  fi
  echo "== cargo build --profile dist --locked -p livenote"
  (cd "$root" && cargo build --profile dist --locked -p livenote)
  target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')"
  bin="$target_dir/dist/$exe"
fi
# A binary built on another runner may come without its executable bit (an artifact download).
if [[ ! -f $bin || ( $target == "$host" && ! -x $bin ) ]]; then
  echo "package-platform: no executable livenote at $bin" >&2
  exit 1
fi
if [[ -n $dev_bin ]]; then
  echo "package-platform: $bin is a development build: no release size check"
else
  python3 "$root/scripts/release-size.py" "$bin"
fi
if [[ $target == "$host" ]]; then
  "$bin" --version
fi

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
