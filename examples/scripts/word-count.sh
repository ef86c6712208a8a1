#!/bin/sh
# Words, lines and headings of another note ($1), with a summary for lastRunSummary.
note="${1:-reading-list.md}"
if [ ! -f "$note" ]; then
    echo "no such note: $note" >&2
    exit 1
fi
words=$(wc -w < "$note" | tr -d ' ')
lines=$(wc -l < "$note" | tr -d ' ')
headings=$(grep -c '^#' "$note" || true)
body=$(printf '%s has **%s words** on %s lines, with %s headings.\\n\\nCounted at %s.' \
    "$note" "$words" "$lines" "$headings" "$(date '+%H:%M')")
printf '{"body": "%s", "summary": "%s words in %s"}\n' "$body" "$words" "$note"
