#!/usr/bin/env bash
# Every test of grammars/ (what CI runs): the TextMate injection grammar's syntax tests and the
# tree-sitter highlight query's headless Neovim test. Works from a clean clone; needs Node 20+
# and npm (the npm registry), gcc, and Python 3 for tests/e2e/nvim/install.sh's Neovim.
#
#   bash grammars/test.sh
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS

echo "== grammars: npm ci"
npm ci --no-audit --no-fund
echo "== grammars: TextMate injection grammar (npm test)"
npm test
echo "== grammars: tree-sitter highlight query (Neovim)"
bash test/treesitter.sh

echo "grammars: all tests passed in $((SECONDS - start))s"
