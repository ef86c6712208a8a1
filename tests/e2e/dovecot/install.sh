#!/usr/bin/env bash
# Installs Debian's Dovecot IMAP server (dovecot-imapd) for the IMAP source tests without
# starting a system service, and prints the path of its `dovecot` program.
# Idempotent: a second run only checks that it is there.
#
#   bash tests/e2e/dovecot/install.sh        # -> /usr/sbin/dovecot
#
# scripts/test.sh exports the printed path as LIVENOTE_DOVECOT for server/tests/imap.rs,
# which starts a throwaway Dovecot on 127.0.0.1 from it (its own config, users and maildir in a
# temporary folder). Needs root and apt-get; without them it fails and says why.
set -euo pipefail

ready() {
    # The test's users have {PLAIN} passwords: nothing but the daemon itself is needed.
    for dir in /usr/sbin /usr/bin; do
        if [ -x "$dir/dovecot" ]; then
            echo "$dir/dovecot"
            return 0
        fi
    done
    return 1
}

if ! ready >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        echo "error: dovecot-imapd is not installed and installing it needs root" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null; then
        echo "error: dovecot-imapd is not installed and there is no apt-get to install it" >&2
        exit 1
    fi
    echo "installing Debian's dovecot-imapd (no service started)" >&2
    # policy-rc.d answering 101 keeps the package's scripts from starting the system service:
    # the tests start their own instance, and there may be no init system at all.
    policy=/usr/sbin/policy-rc.d
    had_policy=0
    [ -e "$policy" ] && had_policy=1
    if [ "$had_policy" = 0 ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
    fi
    status=0
    {
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dovecot-imapd
    } >&2 || status=$?
    if [ "$had_policy" = 0 ]; then
        rm -f "$policy"
    fi
    if [ "$status" != 0 ]; then
        echo "error: apt-get could not install dovecot-imapd (exit $status)" >&2
        exit 1
    fi
    if ! ready >/dev/null; then
        echo "error: dovecot-imapd was installed but there is no dovecot program" >&2
        exit 1
    fi
fi
ready
