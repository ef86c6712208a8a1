#!/usr/bin/env bash
# Installs what the Windows suite (server/tests/windows.rs) needs on a Debian/Ubuntu machine and
# prints, one per line, the `KEY=value` settings the suite reads:
#   LIVENOTE_WINE=<wine64>  LIVENOTE_WINEPREFIX=<prefix>  LIVENOTE_WINDOWS_TARGET=x86_64-pc-windows-gnu
# Steps, each skipped when already done (a second run only checks):
#   1. the Rust target x86_64-pc-windows-gnu (rustup) and its linker (Debian's
#      gcc-mingw-w64-x86-64),
#   2. Wine 8 (Debian's wine64),
#   3. a stand-in bcryptprimitives.dll (bcryptprimitives.c; Wine 8 lacks the DLL Rust's std
#      imports ProcessPrng from; see docs/reliability.md) built with mingw,
#   4. a Wine prefix of the project's own, <repo>/target/wine (LIVENOTE_WINEPREFIX overrides),
#      created once (its copies of Wine's own DLLs made links, 65 MiB instead of 700), with
#      the DLL in its system32.
# apt-get runs as root, or through sudo when not root. Progress goes to stderr.
#
#   eval "$(bash tests/e2e/windows/install.sh)"; export LIVENOTE_WINE LIVENOTE_WINEPREFIX ...
set -euo pipefail
cd "$(dirname "$0")/../../.."
here="tests/e2e/windows"
target=x86_64-pc-windows-gnu
prefix="${LIVENOTE_WINEPREFIX:-$PWD/target/wine}"
dll_dir="$PWD/target/wine-dll"

as_root() {
    if [[ "$(id -u)" == 0 ]]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages named that are missing, with one apt-get update before.
apt_install() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    echo "installing ${missing[*]} (apt-get)" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# 1. The Rust target and its linker.
if ! rustup target list --installed | grep -qx "$target"; then
    echo "adding the Rust target $target (rustup)" >&2
    rustup target add "$target" >&2
fi
apt_install gcc-mingw-w64-x86-64 wine64

# 2. Wine 8: Debian's wine64 puts the loader in /usr/lib/wine.
wine=""
for w in /usr/lib/wine/wine64 "$(command -v wine64 || true)"; do
    if [[ -n "$w" && -x "$w" ]]; then wine="$w"; break; fi
done
if [[ -z "$wine" ]]; then
    echo "error: no wine64 after installing Debian's wine64 package" >&2
    exit 1
fi

# 3. The stand-in DLL, rebuilt when its source changed.
mkdir -p "$dll_dir"
dll="$dll_dir/bcryptprimitives.dll"
if [[ ! -f "$dll" || "$here/bcryptprimitives.c" -nt "$dll" ]]; then
    echo "building the stand-in bcryptprimitives.dll (mingw)" >&2
    x86_64-w64-mingw32-gcc -shared -O2 -Wall -Werror -o "$dll.tmp" "$here/bcryptprimitives.c" -ladvapi32
    mv "$dll.tmp" "$dll"
fi

# 4. The prefix: `wineboot --init` creates it (a few seconds, once); the DLL goes in after.
export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
if [[ ! -f "$prefix/system.reg" ]]; then
    echo "creating the Wine prefix $prefix" >&2
    mkdir -p "$prefix"
    "$wine" wineboot --init >&2 2>/dev/null
    "$(dirname "$wine")/wineserver" -w 2>/dev/null || wineserver -w 2>/dev/null || true
    # Wine 8 copies each of its DLLs into system32 (about 610 MiB); links to the installed ones
    # load the same and keep the prefix near 65 MiB.
    for builtin in /usr/lib/x86_64-linux-gnu/wine/x86_64-windows /usr/lib/wine/x86_64-windows; do
        [[ -d "$builtin" ]] || continue
        for f in "$prefix/drive_c/windows/system32"/*; do
            b="$builtin/$(basename "$f")"
            if [[ -f "$f" && ! -L "$f" && -f "$b" ]] && cmp -s "$f" "$b"; then ln -sf "$b" "$f"; fi
        done
        break
    done
fi
sys32="$prefix/drive_c/windows/system32"
if [[ ! -d "$sys32" ]]; then
    echo "error: $prefix has no drive_c/windows/system32 after wineboot" >&2
    exit 1
fi
cmp -s "$dll" "$sys32/bcryptprimitives.dll" || cp "$dll" "$sys32/bcryptprimitives.dll"

echo "LIVENOTE_WINE=$wine"
echo "LIVENOTE_WINEPREFIX=$prefix"
echo "LIVENOTE_WINDOWS_TARGET=$target"
