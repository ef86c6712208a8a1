#!/usr/bin/env bash
# Installs Debian's dbus (the `dbus-daemon` of a session bus) for server/tests/notify.rs, which
# starts a private session bus with a small org.freedesktop.Notifications service on it, and
# prints the path of `dbus-daemon`. Idempotent: a second run only checks that it is there.
#
#   bash tests/e2e/dbus/install.sh        # -> /usr/bin/dbus-daemon
#
# scripts/test.sh exports the printed program as LIVENOTE_DBUS_DAEMON; the tests skip, saying
# so, where there is none (and fail on CI). Needs root and apt-get; without them it fails and
# says why.
set -euo pipefail

ready() {
    for dir in /usr/bin /usr/sbin /bin; do
        if [ -x "$dir/dbus-daemon" ]; then
            echo "$dir/dbus-daemon"
            return 0
        fi
    done
    return 1
}

if ! ready >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        echo "error: dbus-daemon is not installed and installing it needs root" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null; then
        echo "error: dbus-daemon is not installed and there is no apt-get to install it" >&2
        exit 1
    fi
    echo "installing Debian's dbus" >&2
    status=0
    {
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dbus-daemon ||
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dbus
    } >&2 || status=$?
    if [ "$status" != 0 ]; then
        echo "error: apt-get could not install dbus (exit $status)" >&2
        exit 1
    fi
    if ! ready >/dev/null; then
        echo "error: dbus was installed but there is no dbus-daemon program" >&2
        exit 1
    fi
fi
ready
