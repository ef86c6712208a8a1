#!/usr/bin/env bash
# Every fuzz target a short while, from its checked-in seeds: the CI step of scripts/test.sh.
# `bash fuzz/ci.sh [seconds]` (default 15 per target, or LIVENOTE_FUZZ_SECONDS). A crash fails
# it, with the end of libFuzzer's report; the input is in fuzz/artifacts/<target>/ and the
# whole log in fuzz/logs/<target>.log (reproduce and minimise: docs/reliability.md).
#
# What it costs: installing cargo-fuzz once, one unoptimised build of the crate graph for all
# targets, then seven targets at 15 s each. Measured 2026-12-07 on the shared 2-core machine
# (load about 3) with cargo-fuzz installed: 7 min 28 s (the build 5 min 30 s, the runs 2 min),
# 1.0 GB of target/; installing cargo-fuzz adds 2 min 50 s where it is missing
# (docs/reliability.md, "Fuzzing").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
seconds="${1:-${LIVENOTE_FUZZ_SECONDS:-15}}"

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
# The toolchain is stable; cargo-fuzz needs nightly flags (-Zsanitizer), as in run.sh.
export RUSTC_BOOTSTRAP=1
# fuzz/ is a workspace of its own whose lock file is not checked in: it starts from the
# versions the rest of the project is built and tested with.
if [[ ! -f "$here/Cargo.lock" ]]; then
  cp "$here/../Cargo.lock" "$here/Cargo.lock"
fi
# Unoptimised and without AddressSanitizer (livenote has no unsafe code; run.sh's long runs
# keep it): the optimised ASan build run.sh makes took 22 minutes of a loaded 2-core machine,
# this one 4 to 5, and its targets run 4 to 10 times faster than unoptimised ones with ASan.
# Built once for every target; each run below (through run.sh) finds it built.
export LIVENOTE_FUZZ_BUILD="${LIVENOTE_FUZZ_BUILD:---dev --sanitizer none}"
read -r -a build <<<"$LIVENOTE_FUZZ_BUILD"
cargo fuzz build "${build[@]}" --fuzz-dir "$here"

mkdir -p "$here/logs"
for target in $(cargo fuzz list --fuzz-dir "$here"); do
  log="$here/logs/$target.log"
  if ! bash "$here/run.sh" "$target" "$seconds" >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $target crashed (its input: fuzz/artifacts/$target/; the whole log: $log)" >&2
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  echo "fuzz $target: ${runs:-?} inputs in $seconds s, no crash"
done
