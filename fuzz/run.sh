#!/usr/bin/env bash
# Run one fuzz target: `bash fuzz/run.sh <target> [seconds] [libFuzzer flags...]` (default 600 s).
#
# New inputs go to fuzz/corpus/<target>/ (git-ignored); the checked-in seeds in
# fuzz/seeds/<target>/ are read but never written. One process on one core (libFuzzer's default;
# `-jobs=1 -workers=1` would do the same through a child whose output goes to fuzz-0.log).
# Crashes land in fuzz/artifacts/<target>/. Reproduce one (or check every seed) with
#   bash fuzz/run.sh <target> -- fuzz/artifacts/<target>/crash-...
#   bash fuzz/run.sh <target> -- fuzz/seeds/<target> -- -runs=0
# LIVENOTE_FUZZ_BUILD adds cargo-fuzz build options (fuzz/ci.sh passes `--dev --sanitizer none`:
# an unoptimised build without AddressSanitizer, many minutes faster to make, for its short runs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:?usage: bash fuzz/run.sh <target> [seconds] [libFuzzer flags...]}"
shift

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

# The toolchain is stable; cargo-fuzz needs nightly flags (-Zsanitizer), hence RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
read -r -a build <<<"${LIVENOTE_FUZZ_BUILD:-}"
if [[ "${1:-}" == "--" ]]; then
  # Reproduce: run the target on the given inputs only (paths relative to where you are).
  shift
  exec cargo fuzz run "${build[@]}" --fuzz-dir "$here" "$target" "$@"
fi
seconds="${1:-600}"
[[ $# -gt 0 ]] && shift

mkdir -p "$here/corpus/$target" "$here/seeds/$target"
exec cargo fuzz run "${build[@]}" --fuzz-dir "$here" "$target" "$here/corpus/$target" "$here/seeds/$target" -- \
  -max_total_time="$seconds" -print_final_stats=1 "$@"
