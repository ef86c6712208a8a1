#!/usr/bin/env bash
# Tests livenote's tree-sitter highlight query in a headless Neovim 0.11:
#   1. the copy Neovim's plugin loads (editors/nvim/queries/yaml/highlights.scm) is identical to
#      grammars/tree-sitter/queries/yaml/highlights.scm;
#   2. builds tree-sitter-yaml's parser (Neovim 0.11 bundles none) from the C sources of the npm
#      package pinned in grammars/package.json (needs `npm ci` first; no install script runs,
#      see grammars/.npmrc) into target/grammars/parser/yaml.so;
#   3. runs test/treesitter.lua twice: with no base yaml query (Neovim as shipped) and on top of
#      the package's own highlights query as a base (as with nvim-treesitter).
#
#   bash grammars/test/treesitter.sh
#
# Neovim: $LIVENOTE_NVIM if set, else the one tests/e2e/nvim/install.sh installs (or finds).
set -euo pipefail
grammars="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(dirname "$grammars")"
out="$repo/target/grammars"
pkg="$grammars/node_modules/@tree-sitter-grammars/tree-sitter-yaml"
query="$grammars/tree-sitter/queries/yaml/highlights.scm"
copy="$repo/editors/nvim/queries/yaml/highlights.scm"
status=0

if cmp -s "$query" "$copy"; then
    echo "ok   editors/nvim/queries/yaml/highlights.scm is identical to grammars/tree-sitter/queries/yaml/highlights.scm"
else
    echo "FAIL editors/nvim/queries/yaml/highlights.scm differs from grammars/tree-sitter/queries/yaml/highlights.scm (copy it over)"
    diff -u "$query" "$copy" || true
    status=1
fi

for f in src/parser.c src/scanner.c src/schema.core.c src/tree_sitter/parser.h queries/highlights.scm; do
    if [[ ! -f "$pkg/$f" ]]; then
        echo "FAIL $pkg/$f is missing: run 'npm ci' in grammars/ first" >&2
        exit 1
    fi
done
version="$(node -p "require('$pkg/package.json').version")"
pinned="$(node -p "require('$grammars/package.json').devDependencies['@tree-sitter-grammars/tree-sitter-yaml']")"
if [[ "$version" != "$pinned" ]]; then
    echo "FAIL installed tree-sitter-yaml $version is not the pinned $pinned: run 'npm ci' in grammars/" >&2
    exit 1
fi

mkdir -p "$out/parser" "$out/base/queries/yaml"
# Always rebuilt (under a second): npm gives every packed file the same old mtime, so make-style
# freshness checks would keep a parser built from another version.
gcc -shared -fPIC -O2 -I "$pkg/src" "$pkg/src/parser.c" "$pkg/src/scanner.c" -o "$out/parser/yaml.so.tmp"
mv "$out/parser/yaml.so.tmp" "$out/parser/yaml.so"
cp "$pkg/queries/highlights.scm" "$out/base/queries/yaml/highlights.scm"
echo "ok   built tree-sitter-yaml $version: $out/parser/yaml.so"

nvim="${LIVENOTE_NVIM:-$(bash "$repo/tests/e2e/nvim/install.sh")}"
for base in "" "$out/base"; do
    if ! "$nvim" --headless --clean -l "$grammars/test/treesitter.lua" "$out" "$repo/editors/nvim" \
        ${base:+--base "$base"} "$query" "$copy" 2>&1; then
        status=1
    fi
done
exit "$status"
