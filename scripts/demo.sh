#!/usr/bin/env bash
# The README's first command: build livenote, copy examples/ to a scratch folder outside the
# checkout (the checkout is never edited, and may be read-only), trust that copy and run the
# headless scheduler there. The example notes fill themselves within a second, through small
# scripts (the offline `command` provider): no account, no network. Ctrl-C stops it.
#
# LIVENOTE_DEMO_DIR: the scratch folder (default: $TMPDIR/livenote-examples). It is refreshed
# from examples/ at each start, so only use a folder you made for this.
# LIVENOTE_BIN: an already built livenote to use instead of building one.
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
demo="${LIVENOTE_DEMO_DIR:-${TMPDIR:-/tmp}/livenote-examples}"
bin="${LIVENOTE_BIN:-}"
if [ -z "$bin" ]; then
  # The dev profile, not release: a fresh clone builds it in under 3 minutes on 2 cores, where a
  # release build takes 7.5 (docs/performance.md, "Build profiles"), and the demo's notes do
  # not need optimised code. `scripts/test.sh` then reuses this build's dependencies.
  cargo build --locked --bin livenote --manifest-path "$checkout/Cargo.toml"
  bin="${CARGO_TARGET_DIR:-$checkout/target}/debug/livenote"
fi
case "$demo" in
  "$checkout" | "$checkout"/*) echo "demo.sh: LIVENOTE_DEMO_DIR must be outside the checkout" >&2; exit 2 ;;
esac
# A copy that is ours to write: the files of a read-only checkout come out writable, and the
# notes start from the checkout's text each time.
mkdir -p "$demo"
(cd "$checkout/examples" && tar -cf - .) | (cd "$demo" && tar -xf - --no-same-permissions --no-same-owner)
chmod -R u+w "$demo"
echo "demo.sh: the example notes are in $demo; open them in your editor while this runs"
"$bin" trust "$demo"
exec "$bin" watch "$demo"
