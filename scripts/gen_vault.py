#!/usr/bin/env python3
"""Generate a reproducible vault of markdown notes for benchmarks.

    python3 scripts/gen_vault.py OUT_DIR [--notes 10000] [--live-ratio 0.1] [--big 0] [--seed 1]
                                         [--ran-at RFC3339]

Notes are spread over nested folders; a share of them are live (a `live:` block with cron
and/or windows, some with runtime fields, a few with mistakes so validation has work), the
rest are plain notes with ordinary frontmatter. `--big N` adds N notes with bodies of 1-10 MB.
`--ran-at T` gives every live note `lastRunAt` and `lastAttemptAt` = T instead of the seeded
past values: with T in the future (the benchmark suite passes "tomorrow"), a trusted vault is
quiet (nothing is due) while the scheduler still plans every note. Everything else is the same
bytes as without it. The same arguments always produce the same bytes.
"""
import argparse
import os
import random

WORDS = ("alpha beta gamma delta budget meeting roadmap weather news paper draft review "
         "garden recipe travel reading queue inbox project status weekly daily notes idea").split()

CRONS = ["0 * * * *", "*/15 * * * *", "0 9 * * 1-5", "30 7 * * *", "0 0 1 * *", "0 9 * * 1",
         "@hourly", "0 */6 * * *", "15 8,12,17 * * *", "0 18 * * 5"]


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def body(rng, title, size):
    parts = [f"# {title}\n\n"]
    total = len(parts[0])
    while total < size:
        para = " ".join(sentence(rng, rng.randint(6, 16)) for _ in range(rng.randint(2, 6))) + "\n\n"
        if rng.random() < 0.15:
            para = f"## {sentence(rng, 3)[:-1]}\n\n" + para
        parts.append(para)
        total += len(para)
    return "".join(parts)


def live_block(rng, i, ran_at=None):
    lines = ["live:", "  objective: |", f"    Keep a short digest of {rng.choice(WORDS)} and {rng.choice(WORDS)}.",
             "    One rolling summary, then sections freshest first."]
    lines.append(f"  active: {'false' if rng.random() < 0.1 else 'true'}")
    lines.append("  triggers:")
    r = rng.random()
    if r < 0.6:
        lines.append(f"    cronExpr: \"{rng.choice(CRONS)}\"")
    if r > 0.4:
        h = rng.randint(6, 18)
        lines += ["    windows:", f"      - startTime: \"{h:02d}:00\"", f"        endTime: \"{h + 2:02d}:30\""]
    if rng.random() < 0.2:
        lines.append("    eventMatchCriteria: \"Emails about the budget\"")
    if rng.random() < 0.7:
        # Drawn even with --ran-at, so the rest of the vault keeps the same bytes.
        attempt = f"2026-11-{rng.randint(1, 21):02d}T0{rng.randint(0, 9)}:00:00.000Z"
        run = "2026-11-01T08:00:00.000Z"
    else:
        attempt = run = None
    if ran_at:
        attempt = run = ran_at
    if run:
        lines += [f"  lastAttemptAt: \"{attempt}\"",
                  f"  lastRunAt: \"{run}\"",
                  f"  lastRunId: \"run-{i:06d}\"",
                  "  lastRunSummary: \"Updated the digest.\"",
                  "  lastRunError: null"]
    if rng.random() < 0.05:
        lines.append("  cron: \"0 * * * *\"  # a mistake: unknown key")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--live-ratio", type=float, default=0.1)
    ap.add_argument("--big", type=int, default=0, help="extra notes with 1-10 MB bodies")
    ap.add_argument("--body", type=int, default=1500, help="typical body size in bytes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ran-at", default=None,
                    help="RFC 3339 instant for every live note's lastRunAt/lastAttemptAt (quiet vault)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    live_every = max(1, round(1 / a.live_ratio)) if a.live_ratio > 0 else 0
    for i in range(a.notes + a.big):
        folder = os.path.join(a.out, f"area-{i % 20:02d}", f"topic-{(i // 20) % 25:02d}")
        os.makedirs(folder, exist_ok=True)
        title = f"{sentence(rng, 3)[:-1]} {i}"
        fm = [f"title: \"{title}\"", f"tags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]", f"created: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"]
        if live_every and i % live_every == 0:
            fm += live_block(rng, i, a.ran_at)
        size = a.body if i < a.notes else rng.randint(1, 10) * 1024 * 1024
        text = "---\n" + "\n".join(fm) + "\n---\n\n" + body(rng, title, size)
        with open(os.path.join(folder, f"note-{i:06d}.md"), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
