#!/usr/bin/env bash
# Installs Neovim 0.10 for the plugin's headless test on the oldest Neovim it supports
# (tests/e2e/nvim/plugin_test.lua, run by server/tests/nvim.rs when this is installed), and
# prints the path of its `nvim`. Idempotent; a second run only checks the version.
#
#   bash tests/e2e/nvim/install-0.10.sh      # -> <repo>/target/nvim-0.10/nvim
#
# PyPI has no Neovim 0.10 wheel, so this takes Debian 13 (trixie)'s neovim 0.10 packages with
# apt-get from Debian's archive, in private apt directories (the system's sources and dpkg
# database are not touched), and unpacks them with their libraries, glibc included, under the
# target folder. `nvim` there is a wrapper that starts the binary through trixie's own dynamic
# loader, so it runs on older Debian and Ubuntu releases (bookworm's glibc 2.36 is too old for
# it) without putting those libraries into the environment of the programs Neovim starts.
# Needs apt-get and dpkg-deb (a Debian or Ubuntu machine); elsewhere it fails and the 0.10
# test is simply not run.
set -euo pipefail
cd "$(dirname "$0")/../../.."
dir="${LIVENOTE_NVIM010_DIR:-$PWD/target/nvim-0.10}"
nvim="$dir/nvim"

# True when $1 runs and reports NVIM v0.10.
is_010() {
    local v
    v="$("$1" --version 2>/dev/null | head -n 1)" || return 1
    [[ "$v" =~ ^NVIM\ v0\.10\. ]]
}

if is_010 "$nvim"; then
    echo "$nvim"
    exit 0
fi
for tool in apt-get dpkg-deb; do
    if ! command -v "$tool" >/dev/null; then
        echo "error: $tool not found: Neovim 0.10 is installed from Debian packages" >&2
        exit 1
    fi
done

echo "installing Neovim 0.10 (Debian trixie packages) into $dir" >&2
rm -rf "$dir"
apt="$dir/apt"
root="$dir/root"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$root"
# Debian's archive key: from Debian's keyring package when there (Ubuntu has it as
# debian-archive-keyring too), else apt's own trusted keys (which hold it on Debian 12+).
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed_by=""
if [[ -r $keyring ]]; then
    signed_by="[signed-by=$keyring] "
fi
echo "deb ${signed_by}http://deb.debian.org/debian trixie main" >"$apt/sources.list"
: >"$apt/status"
opts=(
    -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::State::status=$apt/status"
    -o APT::Sandbox::User=root -o Debug::NoLocking=1 -qq
)
apt-get "${opts[@]}" update >&2
# neovim and the libraries it links against, plus trixie's glibc for its loader.
packages=(
    neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 libtree-sitter0.22
    libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libutf8proc3 libc6 libgcc-s1
)
(cd "$apt/debs" && apt-get "${opts[@]}" download "${packages[@]}" >&2)
for deb in "$apt/debs"/*.deb; do
    dpkg-deb -x "$deb" "$root"
done
rm -rf "$apt"

# The loader and the library folder, whatever the machine's architecture.
loader="$(find "$root/usr/lib" -maxdepth 2 -name 'ld-linux*.so.*' -type f | head -n 1)"
libc="$(find "$root/usr/lib" -maxdepth 2 -name libc.so.6 | head -n 1)"
if [[ -z $loader || -z $libc ]]; then
    echo "error: no dynamic loader or libc among the unpacked packages in $root" >&2
    exit 1
fi
{
    echo '#!/bin/sh'
    echo '# Neovim 0.10 from Debian trixie, started through trixie'"'"'s loader (see install-0.10.sh).'
    printf 'VIMRUNTIME=%q\nexport VIMRUNTIME\n' "$root/usr/share/nvim/runtime"
    printf 'exec %q --library-path %q %q "$@"\n' "$loader" "$(dirname "$libc")" "$root/usr/bin/nvim"
} >"$nvim"
chmod +x "$nvim"
# Neovim's own help tags (Debian generates them at install time, they are not in the package).
"$nvim" --headless --clean -c "helptags $root/usr/share/nvim/runtime/doc" -c q >&2 || true
if ! is_010 "$nvim"; then
    echo "error: $nvim is not a working Neovim 0.10 after the install" >&2
    exit 1
fi
echo "$nvim"
