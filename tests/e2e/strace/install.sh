#!/usr/bin/env bash
# Installs Debian's strace for server/tests/faults/keystrokes.rs (issue 26: a burst of editor
# requests must make no file syscall on workspace or configuration paths), and prints the path
# of its `strace` program. Idempotent: a second run only checks that it is there.
#
#   bash tests/e2e/strace/install.sh        # -> /usr/bin/strace
#
# scripts/test.sh puts the printed program's folder first on PATH; the test skips, saying so,
# where there is no strace. Needs root and apt-get; without them it fails and says why.
set -euo pipefail

ready() {
    for dir in /usr/bin /usr/sbin /bin; do
        if [ -x "$dir/strace" ]; then
            echo "$dir/strace"
            return 0
        fi
    done
    return 1
}

if ! ready >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        echo "error: strace is not installed and installing it needs root" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null; then
        echo "error: strace is not installed and there is no apt-get to install it" >&2
        exit 1
    fi
    echo "installing Debian's strace" >&2
    status=0
    {
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends strace
    } >&2 || status=$?
    if [ "$status" != 0 ]; then
        echo "error: apt-get could not install strace (exit $status)" >&2
        exit 1
    fi
    if ! ready >/dev/null; then
        echo "error: strace was installed but there is no strace program" >&2
        exit 1
    fi
fi
ready
