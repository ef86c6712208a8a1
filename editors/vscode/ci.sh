#!/usr/bin/env bash
# Every check of the VS Code extension, from a clean clone: install, lint, unit tests, build,
# package. Set LIVENOTE_BIN to a livenote binary to run the protocol smoke test as well
# (npm test skips it otherwise). Leaves livenote.vsix (universal: no server) here, and
# livenote-<target>.vsix, the package for this platform with the release server inside, which
# scripts/package-platform.sh builds (a release build, a few minutes; LIVENOTE_RELEASE_BIN
# skips it) and checks with scripts/release-size.py (LIVENOTE_DEV_BIN: a debug build instead,
# not size-checked; scripts/test.sh's choice).
set -euo pipefail
cd "$(dirname "$0")"

echo "== npm ci"
npm ci --no-audit --no-fund
echo "== npm run lint"
npm run lint
echo "== npm test"
npm test
echo "== npm run compile"
npm run compile
echo "== vsce package"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# vsce must not prompt (no TTY in CI anyway); --no-dependencies because esbuild bundled them.
npx --no-install vsce package --no-dependencies -o livenote.vsix </dev/null 2>&1 | tee "$log"
# vsce prints " WARNING " (without colour when not on a TTY) for every problem it tolerates.
if grep -n 'WARNING' "$log"; then
  echo "ci.sh: vsce printed warnings (above); fix them" >&2
  exit 1
fi
test -s livenote.vsix
echo "== platform package"
bash scripts/package-platform.sh
target="$(node -p "require('./out/src/serverPath.js').vsceTarget(process.platform, process.arch)")"
echo "== the platform package installed: the extension starts its bundled server"
LIVENOTE_PLATFORM_VSIX="$PWD/livenote-$target.vsix" LIVENOTE_VSIX="$PWD/livenote.vsix" \
  node --test out/test/platformPackage.test.js
echo "ci.sh: ok ($(du -k livenote.vsix | cut -f1) KiB livenote.vsix, $(du -k "livenote-$target.vsix" | cut -f1) KiB livenote-$target.vsix)"
