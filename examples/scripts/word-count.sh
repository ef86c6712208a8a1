#!/bin/sh
# Words, lines and headings of another note ($1), with a summary for lastRunSummary.
note="${1:-reading-list.md}"
if [ ! -f "$note" ]; then
    echo "no such note: $note" >&2
    exit 1
fi
# "1 heading", "2 headings".
count() { if [ "$1" = 1 ]; then echo "$1 $2"; else echo "$1 $2s"; fi; }
words=$(count "$(wc -w < "$note" | tr -d ' ')" word)
lines=$(count "$(wc -l < "$note" | tr -d ' ')" line)
headings=$(count "$(grep -c '^#' "$note" || true)" heading)
body=$(printf '%s has **%s** on %s, with %s.\\n\\nCounted at %s.' \
    "$note" "$words" "$lines" "$headings" "$(date '+%H:%M')")
printf '{"body": "%s", "summary": "%s in %s"}\n' "$body" "$words" "$note"
