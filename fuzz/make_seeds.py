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


STANDUP = (ROOT / "server/tests/fixtures/sources/berlin-standup.ics").read_bytes().decode("utf-8")


def calendar(events):
    """A VCALENDAR of VEVENT bodies (one property a line), CRLF."""
    out = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
    for e in events:
        out += "BEGIN:VEVENT\r\n" + "".join(line + "\r\n" for line in e.strip().splitlines()) + "END:VEVENT\r\n"
    return out + "END:VCALENDAR\r\n"


def ics():
    # Layout (see ics.rs): zone, horizon in days, day of the poll after 2026-01-01, the file.
    # Zone 1 is Europe/Berlin; day 86 is 2026-03-28, the day before the spring DST change.
    def seed(name, text, zone=1, horizon=2, day=86):
        write("ics", name, bytes([zone, horizon, day]) + text.encode("utf-8"))

    seed("berlin-standup", STANDUP)
    seed("berlin-standup-lf", STANDUP.replace("\r\n", "\n"), zone=0)
    # Issue 31: LF in the time zone block, CRLF elsewhere, was refused at line 35 (END:VEVENT).
    lines = STANDUP.split("\r\n")
    seed("mixed-line-endings-issue-31", "\n".join(lines[:21]) + "\r\n" + "\r\n".join(lines[21:]))
    # Issue 31: DURATION:P99999999W from today overflowed `DateTime + TimeDelta` (tick exit 101).
    seed("crash-duration-overflow", calendar(["UID:f\nSUMMARY:Forever\nDTSTART:20260328T100000Z\nDURATION:P99999999W"]))
    # Issue 31: events repeating every second since 1990 (2,000 of them held the runtime for
    # minutes); a few here, the target's budget cuts them short.
    seed("slow-every-second-since-1990", calendar(
        [f"UID:s{i}\nSUMMARY:Tick {i}\nDTSTART:19900101T000000Z\nRRULE:FREQ=SECONDLY" for i in range(4)]))
    seed("edges", calendar([
        "UID:a\nSUMMARY:Far end\nDTSTART:20260328T110000Z\nDTEND:99991231T235959Z\nRRULE:FREQ=DAILY;COUNT=2",
        "UID:b\nSUMMARY:Six-digit year\nDTSTART:+2621430101T000000",
        "UID:c\nSUMMARY:Long ago\nDTSTART;VALUE=DATE:00000101\nRRULE:FREQ=YEARLY\nDURATION:-P9999999999D",
        "UID:d\nSUMMARY:Windows zone\nDTSTART;TZID=W. Europe Standard Time:20260329T020000\nDURATION:PT1H",
        "UID:d\nRECURRENCE-ID:20260329T010000Z\nSUMMARY:Moved\nDTSTART:20260329T030000Z",
        "UID:e\nSUMMARY:Rules\nDTSTART:20260101T090000\nRRULE:FREQ=MONTHLY;BYDAY=-1SU;BYSETPOS=1\nEXDATE:20260125T090000\nRDATE;VALUE=PERIOD:20260328T100000Z/PT1H",
    ]), zone=3, horizon=40)
    seed("broken-blocks", "BEGIN:VCALENDAR\nX-LONG:a\r\n b\n c\nBEGIN:VEVENT\nDTSTART:20260328T100000Z\nEND:VTODO\nEND:VCALENDAR\n")


RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Tool releases</title><link>https://example.org/</link>
<item><title>v2.0 &amp; more</title><link>/releases/v2.0</link>
<guid isPermaLink="false">tag:example.org,2026:v2.0</guid><pubDate>Wed, 25 Nov 2026 09:30:00 +0100</pubDate>
<author>dev@example.org (Ada)</author>
<description>&lt;p&gt;A &lt;b&gt;big&lt;/b&gt; release.&lt;/p&gt;</description>
<content:encoded><![CDATA[<h2>Notes</h2><p>Everything&nbsp;changed.</p><script>evil()</script>]]></content:encoded></item>
<item><title>No guid, no link</title><pubDate>Tue, 24 Nov 2026 08:00:00 GMT</pubDate></item>
</channel></rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.org/blog/">
<title type="html">A &lt;i&gt;blog&lt;/i&gt;</title><id>urn:uuid:60a76c80</id><updated>2026-11-25T10:00:00Z</updated>
<entry><title>Post</title><link rel="alternate" href="posts/1"/><id>urn:uuid:1225c695</id>
<updated>2026-11-25T09:00:00Z</updated><author><name>Ada</name><email>ada@example.org</email></author>
<summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Short</p></div></summary>
<content type="html">&lt;p&gt;Long &lt;a href="x"&gt;text&lt;/a&gt;&lt;/p&gt;</content></entry>
</feed>
"""

JSON_FEED = json.dumps({
    "version": "https://jsonfeed.org/version/1.1",
    "title": "JSON blog",
    "items": [
        {"id": "1", "url": "https://example.org/1", "title": "One", "content_html": "<p>Hi</p>",
         "date_published": "2026-11-25T09:00:00Z", "authors": [{"name": "Ada"}]},
        {"id": "", "content_text": "No id"},
    ],
})


def feed():
    write("feed", "rss", RSS)
    write("feed", "atom", ATOM)
    write("feed", "json-feed", JSON_FEED)
    write("feed", "rss-1.0", '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
          'xmlns="http://purl.org/rss/1.0/"><channel rdf:about="x"><title>T</title></channel>'
          '<item rdf:about="https://example.org/a"><title>A</title><link>https://example.org/a</link></item></rdf:RDF>')
    write("feed", "login-page", "<html><body>Sign in</body></html>")


MULTIPART = (
    "From: Alice Example <alice@example.com>\r\n"
    "To: bob@example.com, Carol <carol@example.com>\r\n"
    "Subject: =?UTF-8?Q?Q3_numbers_=E2=9C=93?=\r\n"
    "Date: Tue, 3 Nov 2026 09:30:00 +0100\r\n"
    "Message-ID: <q3@example.com>\r\n"
    "MIME-Version: 1.0\r\n"
    'Content-Type: multipart/mixed; boundary="XX"\r\n'
    "\r\n"
    "--XX\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "\r\n"
    "The Q3 report is attached.\r\n"
    "--XX\r\n"
    'Content-Type: application/pdf; name="q3.pdf"\r\n'
    'Content-Disposition: attachment; filename="q3.pdf"\r\n'
    "Content-Transfer-Encoding: base64\r\n"
    "\r\n"
    "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK\r\n"
    "--XX--\r\n"
)


def imap_message():
    # Layout (see imap_message.rs): UIDVALIDITY and UID (4 bytes each, little-endian), whether
    # the server's size is none (0), what arrived (1) or more (2); then the message.
    def seed(name, raw, sized=1, validity=7, uid=42):
        head = validity.to_bytes(4, "little") + uid.to_bytes(4, "little") + bytes([sized])
        write("imap_message", name, head + (raw if isinstance(raw, bytes) else raw.encode("utf-8")))

    seed("multipart", MULTIPART)
    seed("html-only", "From: news@example.com\r\nSubject: Weekly\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
         "<html><body><h1>Release 2.0</h1><p>Now with <b>sources</b>.</p><script>x()</script></body></html>\r\n")
    seed("truncated", MULTIPART[: len(MULTIPART) // 2], sized=2)
    seed("nested", "Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\nContent-Type: message/rfc822\r\n\r\n"
         "Subject: inner\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n"
         "Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
         "caf=E9\r\n--b--\r\n--a--\r\n", sized=0)
    seed("garbage", b"\xff\xfe\x00garbage", sized=0, uid=0xFFFFFFFF)


if __name__ == "__main__":
    frontmatter()
    edits()
    command_output()
    event_json()
    ics()
    feed()
    imap_message()
