#!/bin/sh
# The current local time, as the body of clock.md.
printf 'It is %s.\n' "$(date '+%H:%M on %A %-d %B %Y')"
