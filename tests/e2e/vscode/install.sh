#!/usr/bin/env bash
# Installs what the real-VS Code test (tests/e2e/vscode/run-now.mjs) needs: Debian's Chromium and
# ripgrep (apt, when missing; CI runs as root), code-server 4.99.4 (the last line that runs on
# Node 20) and puppeteer-core (which downloads no browser) into one folder, by default
# <repo>/target/vscode-e2e, and prints that folder. code-server's own post-install downloads
# ripgrep from the internet; its steps are done here by hand instead (see
# /work/shared/VSCODE-TESTING.md in the issue's notes, and docs/editors.md). Idempotent: a second
# run only checks that the pieces are there.
#
#   bash tests/e2e/vscode/install.sh                  # -> <repo>/target/vscode-e2e
#   LIVENOTE_VSCODE_E2E=/opt/vscode-e2e bash tests/e2e/vscode/install.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
dir="${LIVENOTE_VSCODE_E2E:-$PWD/target/vscode-e2e}"
code_server_version=4.99.4
puppeteer_version=24.10.2
vscode_dir="$dir/node_modules/code-server/lib/vscode"
stamp="$dir/.installed-$code_server_version-$puppeteer_version"

missing_apt=()
command -v chromium >/dev/null || missing_apt+=(chromium)
command -v rg >/dev/null || missing_apt+=(ripgrep)
# The compiler and headers the native modules of code-server build with.
for pkg in g++ make libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing_apt+=("$pkg")
done
if ((${#missing_apt[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: missing ${missing_apt[*]}; install them (apt-get install ${missing_apt[*]}) or run as root" >&2
        exit 1
    fi
    echo "installing ${missing_apt[*]} (apt)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing_apt[@]}" >&2
fi

# The native modules (node-pty, kerberos, argon2...) build against Node's headers. node-gyp
# downloads them unless told where they are: on a machine without network and without `nodedir`
# in ~/.npmrc that download fails, after minutes, as "node-pty did not build". Use the headers
# this Node came with (npm_config_nodedir if set, else the prefix of the node binary, else
# Debian's /usr/include/node) and say so at once when there are none.
node_headers_dir() {
    local candidate
    for candidate in "${npm_config_nodedir:-}" "$(npm config get nodedir 2>/dev/null || true)" \
        "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")" /usr /usr/local; do
        [[ -n "$candidate" && "$candidate" != undefined && "$candidate" != null ]] || continue
        if [[ -f "$candidate/include/node/node.h" || -f "$candidate/src/node.h" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if [[ ! -f "$stamp" ]]; then
    if ! nodedir="$(node_headers_dir)"; then
        echo "error: Node's headers (include/node/node.h) are not on this machine, and node-gyp would download them: install them (Debian: apt-get install libnode-dev, or the nodejs package that ships /usr/include/node) or set npm_config_nodedir to a Node source or install prefix" >&2
        exit 1
    fi
    export npm_config_nodedir="$nodedir"
    echo "building native modules against Node's headers in $nodedir" >&2
    echo "installing code-server $code_server_version and puppeteer-core into $dir (a few minutes)" >&2
    mkdir -p "$dir"
    cd "$dir"
    [[ -f package.json ]] || echo '{"name":"livenote-vscode-e2e","private":true}' >package.json
    npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
        "code-server@$code_server_version" "puppeteer-core@$puppeteer_version" >&2
    cd "$vscode_dir"
    npm install --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error >&2
    # node-pty's post-install fails at its very last step (compile_commands.json through npx)
    # after the module is built: judge by the file, not the exit status.
    npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog --loglevel=error >&2 || true
    if [[ ! -f node_modules/node-pty/build/Release/pty.node ]]; then
        echo "error: node-pty did not build ($vscode_dir/node_modules/node-pty)" >&2
        exit 1
    fi
    mkdir -p node_modules/@vscode/ripgrep/bin
    cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    ln -sfn node_modules node_modules.asar
    ln -sf code-linux.sh bin/remote-cli/code-server
    ln -sf browser-linux.sh bin/helpers/browser.sh
    (cd extensions && npm install --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error >&2)
    # argon2 (code-server's password hashing) sits wherever npm hoisted it: rebuild it from the top.
    cd "$dir"
    npm rebuild argon2 --loglevel=error >&2
    touch "$stamp"
fi
if [[ ! -x "$dir/node_modules/.bin/code-server" || ! -d "$dir/node_modules/puppeteer-core" ]]; then
    echo "error: $dir lacks code-server or puppeteer-core after the install; delete it and retry" >&2
    exit 1
fi
echo "$dir"
