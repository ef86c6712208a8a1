#!/usr/bin/env python3
"""Write the checked-in fuzz seeds (fuzz/seeds/<target>/) from the example and fixture notes.

Run from anywhere: `python3 fuzz/make_seeds.py`. Existing seed files of the same names are
overwritten; reproducers of fixed crashes (`crash-*`) are left alone. The input layouts are
described at the top of each target in fuzz/fuzz_targets/.
"""

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = ROOT / "fuzz" / "seeds"

NOTES = {
    "clock": ROOT / "examples/clock.md",
    "weekday-briefing": ROOT / "examples/weekday-briefing.md",
    "reading-list": ROOT / "examples/reading-list.md",
    "hourly": ROOT / "tests/fixtures/vault/hourly.md",
    "morning": ROOT / "tests/fixtures/vault/morning.md",
    "paused": ROOT / "tests/fixtures/vault/paused.md",
    "plain": ROOT / "tests/fixtures/vault/plain.md",
    "broken-crlf": ROOT / "tests/fixtures/vault/sub/broken-crlf.md",
    "failed": ROOT / "tests/fixtures/vault/sub/failed.md",
}

# From the tests of server/src/note/rewrite.rs: comments, a block scalar, flow values, a
# quoted key.
COMMENTED = """---
title: "Chicago time"   # the user's
tags: [a, 'b c', {x: 1}]
live:
  objective: |          # required
    Show the current time in Chicago.
    One short line.

  triggers:
    cronExpr: "0 * * * *"   # hourly
    windows:
    - startTime: '09:00'
      endTime: "12:00"
  lastRunError: "boom"  # cleared on success
  # written by livenote only
'odd key': x
---

# Chicago time

3:00 PM
"""


def note(name):
    return NOTES[name].read_bytes().decode("utf-8")


def write(target, name, data):
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def frontmatter():
    for name in NOTES:
        write("frontmatter", f"{name}.md", note(name))
    write("frontmatter", "commented.md", COMMENTED)


def edits():
    # op (see edits.rs): 0 make_live(arg) 1 make_live(None) 2 make_passive 3 set_active
    # 4 runtime fields 5 replace_value(yaml_string) 6 replace_value(raw) 7 rename_key
    # 8 remove_entry 9 convert_track_fence.
    def seed(name, op, flags, arg, text):
        write("edits", name, bytes([op, flags]) + arg.encode("utf-8") + b"\0" + text.encode("utf-8"))

    seed("make-live-plain", 0, 0, "Keep a \"quoted\" list\nof things.\n", note("reading-list"))
    seed("make-live-none", 1, 0, "", "# Title\n\nNo frontmatter.\r\n")
    seed("make-live-crlf", 1, 0, "", note("broken-crlf").replace("\r\n", "\n").replace("\n", "\r\n"))
    seed("make-passive", 2, 0, "", note("clock"))
    seed("make-passive-commented", 2, 0, "", COMMENTED)
    seed("pause", 3, 0, "", note("hourly"))
    seed("resume", 3, 1, "", note("paused"))
    seed("pause-commented", 3, 0, "", COMMENTED)
    values = "\x1f".join(["2026-05-08T15:00:00.123Z", "01JTX3", "Updated \"3:00 PM\"\n\tCentral ☃ \\", "\x02"])
    seed("runtime", 4, 0, values, note("hourly"))
    seed("runtime-commented", 4, 3, values, COMMENTED)
    seed("runtime-insert", 4, 4, "provider timed out: 'x' # not a comment", note("morning"))
    seed("replace-value", 5, 2, "new: value # with \"quotes\"", COMMENTED)
    seed("replace-raw", 6, 1, "[1, 2]", note("weekday-briefing"))
    seed("rename-key", 7, 0, "new name: x", COMMENTED)
    seed("remove-entry", 8, 5, "", COMMENTED)
    seed("convert-track", 9, 0, "", note("plain"))


def command_output():
    def seed(name, text, stdout, current=None):
        data = b"\0" if current is None else b"\1"
        data += text.encode("utf-8") + b"\0" + stdout.encode("utf-8")
        if current is not None:
            data += b"\0" + current.encode("utf-8")
        write("command_output", name, data)

    seed("plain", note("clock"), "3:00 PM\n")
    seed("json", note("weekday-briefing"), json.dumps({"body": "## Today\n\nSunny.\n", "summary": " Sunny. "}))
    seed("json-trailing-comma", note("clock"), '{"body": "x",}\n')
    seed("echoed-h1", note("hourly"), "# Chicago time\n\n3:00 PM\n")
    seed("crlf", note("broken-crlf"), "line one\nline two\r\n")
    seed("no-frontmatter", "# Title\nbody\n", "new body\n")
    seed("no-h1", "---\nlive:\n  objective: x\n---\nold\n", "new\n")
    seed("empty-note", "", "first text\n")
    seed("user-edited", note("clock"), "3:00 PM\nmore\n", note("clock").replace("(not updated", "user text\n(not updated"))


def event_json():
    ev = {
        "id": "01JV0000000000000000000001",
        "source": "gmail",
        "type": "email.synced",
        "createdAt": "2026-05-08T15:00:00.000Z",
        "payload": {"subject": "Q3 planning", "n": 1.5, "to": ["a@b.c"], "nested": {"x": None}},
        "threadId": "t-1",
    }
    write("event_json", "event", json.dumps(ev))
    write("event_json", "event-string", json.dumps(dict(ev, payload="# Markdown\n\nbody ☃", targetFilePath="./notes/a.md")))
    write("event_json", "event-null-target", json.dumps(dict(ev, targetFilePath=None)))
    write("event_json", "event-missing", '{"id": "01A", "source": "s", "type": "t", "createdAt": "c"}')
    write("event_json", "routing", '{"filePaths": ["a.md", "b.md"]}')
    write("event_json", "routing-fenced", 'Sure:\n```json\n{"filePaths": []}\n```\n')


if __name__ == "__main__":
    frontmatter()
    edits()
    command_output()
    event_json()
