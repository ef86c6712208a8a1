#!/bin/sh
# The five most recently changed files of the workspace (livenote's own state left out).
echo "Most recently changed files:"
echo
find . -type f ! -path './.livenote/*' ! -name '.*' -printf '%T@ %P\n' 2>/dev/null \
    | sort -rn | head -n 5 \
    | while read -r _ path; do echo "- $path"; done
