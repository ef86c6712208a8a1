#!/usr/bin/env bash
# The benchmark suite, start to finish: runs `cargo bench -p livenote --bench suite` (1k / 10k /
# 50k notes; about 10 minutes after the build; Linux, python3), then writes the tables into
# docs/performance.md (between its bench-report markers), draws docs/perf/scaling.png and copies
# the results to docs/perf/results.json. matplotlib goes into target/bench-venv (from PyPI) the
# first time.
#
#   bash scripts/bench.sh              # measure, then report
#   bash scripts/bench.sh --report     # report only, from target/bench/results.json
#
# Figures depend on what else the machine is doing: the suite records the load average at its
# start and end. For numbers worth publishing, run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--report" ]]; then
    cargo bench -p livenote --bench suite
fi
venv=target/bench-venv
if ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet matplotlib
fi
mkdir -p docs/perf
cp target/bench/results.json docs/perf/results.json
"$venv/bin/python" scripts/bench_report.py docs/perf/results.json --doc docs/performance.md --png docs/perf/scaling.png
echo "updated docs/performance.md, docs/perf/scaling.png and docs/perf/results.json"
