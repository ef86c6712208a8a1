//! The vaults the suite works on: seeded notes from `scripts/gen_vault.py`, the 1 MB note the
//! editor requests run against, and the notes the scheduler measurements rewrite.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Timelike, Utc};

pub const BIG_NOTE: &str = "big/big-1mb.md";
pub const BIG_TITLE: &str = "Big note, 1 MB";
/// The workspace's provider: a no-op `command` provider. `cat` echoes the run's JSON, whose
/// `body` is the note's current text below its H1, so a run changes nothing but the runtime
/// fields.
pub const CONFIG: &str =
    "[agent]\nprovider = \"noop\"\n\n[providers.noop]\nkind = \"command\"\ncommand = [\"cat\"]\n";

pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `python3 scripts/gen_vault.py OUT --notes N --live-ratio 0.1 --big B --seed 1 --ran-at T`.
pub fn generate(manifest: &Path, out: &Path, notes: usize, big: usize, ran_at: &str) {
    let script = manifest.join("../scripts/gen_vault.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(out)
        .args(["--notes", &notes.to_string(), "--live-ratio", "0.1", "--seed", "1"])
        .args(["--big", &big.to_string(), "--ran-at", ran_at])
        .status()
        .unwrap_or_else(|e| panic!("run python3 {}: {e}", script.display()));
    assert!(status.success(), "{} failed: {status}", script.display());
}

/// Write `text` as editors save: a temp file beside it, then a rename.
pub fn write_atomic(path: &Path, text: &str) {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let tmp = dir.join(format!(".{}.tmp", path.file_name().map_or("x".into(), |n| n.to_string_lossy())));
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("write {}: {e}", tmp.display()));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename to {}: {e}", path.display()));
}

/// A live note with a ~1 MiB body of paragraphs, headings, lists and a few code fences.
/// `ran_at` keeps it quiet in a trusted vault.
pub fn big_note(ran_at: &str) -> String {
    const WORDS: &[&str] = &[
        "alpha", "beta", "gamma", "delta", "budget", "meeting", "roadmap", "weather", "news", "paper",
        "draft", "review", "garden", "recipe", "travel", "reading", "queue", "inbox", "project", "status",
        "weekly",
    ];
    let mut s = format!(
        "---\ntitle: \"{BIG_TITLE}\"\ntags: [bench, big]\nlive:\n  objective: |\n    Keep a rolling digest of \
         the week's budget news.\n    One summary, then sections freshest first.\n  active: true\n  \
         triggers:\n    cronExpr: \"0 9 * * 1-5\"\n    windows:\n      - startTime: \"09:00\"\n        \
         endTime: \"12:00\"\n  lastAttemptAt: \"{ran_at}\"\n  lastRunAt: \
         \"{ran_at}\"\n  lastRunId: \"run-big\"\n  lastRunSummary: \"Updated the digest.\"\n  \
         lastRunError: null\n---\n\n# {BIG_TITLE}\n\n"
    );
    // A fixed linear congruential generator: the same bytes on every run.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut para = 0;
    while s.len() < 1024 * 1024 {
        para += 1;
        if para % 12 == 0 {
            s.push_str(&format!("## Section {para}\n\n"));
        }
        if para % 40 == 0 {
            s.push_str("```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n");
        }
        if para % 7 == 0 {
            for _ in 0..4 {
                s.push_str(&format!("- {} {}\n", WORDS[next(21) as usize], WORDS[next(21) as usize]));
            }
            s.push('\n');
        }
        for sentence in 0..(2 + next(5)) {
            if sentence > 0 {
                s.push(' ');
            }
            let n = 6 + next(10);
            for w in 0..n {
                let word = WORDS[next(WORDS.len() as u64) as usize];
                if w == 0 {
                    s.push_str(&word[..1].to_uppercase());
                    s.push_str(&word[1..]);
                } else {
                    s.push(' ');
                    s.push_str(word);
                }
            }
            s.push('.');
        }
        s.push_str("\n\n");
    }
    s
}

/// A small live note. `last_run: None` leaves out the runtime fields: a note that never ran
/// is due at once (SPEC 3). No `lastAttemptAt`: the bench watches for the run to write it (and
/// a recent one would hold the note in backoff).
pub fn small_note(title: &str, cron: &str, last_run: Option<&str>) -> String {
    let runtime =
        last_run.map(|t| format!("  lastRunAt: \"{t}\"\n  lastRunSummary: \"ok\"\n")).unwrap_or_default();
    format!(
        "---\ntitle: \"{title}\"\nlive:\n  objective: Bench probe; keep as is.\n  triggers:\n    cronExpr: \
         \"{cron}\"\n{runtime}---\n\n# {title}\n\nNothing to see.\n"
    )
}

/// A six-field cron (leading seconds) that fires once a day at `at`'s second, in UTC.
pub fn cron_at(at: DateTime<Utc>) -> String {
    format!("{} {} {} * * *", at.second(), at.minute(), at.hour())
}

/// `lastAttemptAt` as written in a note's text, if any.
pub fn last_attempt(path: &Path) -> Option<DateTime<Utc>> {
    runtime_field(path, "lastAttemptAt: ")
}

pub fn last_run(path: &Path) -> Option<DateTime<Utc>> {
    runtime_field(path, "lastRunAt: ")
}

fn runtime_field(path: &Path, key: &str) -> Option<DateTime<Utc>> {
    let text = std::fs::read_to_string(path).ok()?;
    let fm_end = text.get(4..)?.find("\n---").map_or(text.len(), |i| i + 4);
    text[..fm_end]
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|v| DateTime::parse_from_rfc3339(v.trim().trim_matches('"')).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// Every file under `dir`, depth first, `.livenote/` left out.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        let kind = entry.file_type().unwrap_or_else(|e| panic!("stat {}: {e}", entry.path().display()));
        if kind.is_dir() && entry.file_name() != ".livenote" {
            walk(&entry.path(), out);
        } else if kind.is_file() && entry.path().extension().is_some_and(|e| e == "md") {
            out.push(entry.path());
        }
    }
}

/// The floor: walk the vault and read every note once, whole, on one thread.
/// Returns (time, files, bytes).
pub fn read_floor(vault: &Path) -> (Duration, usize, usize) {
    let t = Instant::now();
    let mut files = Vec::new();
    walk(vault, &mut files);
    let mut bytes = 0;
    for f in &files {
        bytes += std::fs::read(f).unwrap_or_else(|e| panic!("read {}: {e}", f.display())).len();
    }
    (t.elapsed(), files.len(), bytes)
}

/// Notes with a top-level `live:` key in their frontmatter: what listNotes must return.
pub fn count_live(vault: &Path) -> usize {
    let mut files = Vec::new();
    walk(vault, &mut files);
    files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
            let Some(rest) = text.strip_prefix("---\n") else { return false };
            let fm = rest.find("\n---").map_or(rest, |end| &rest[..end]);
            fm.starts_with("live:") || fm.contains("\nlive:")
        })
        .count()
}

/// `file://` URI of an absolute path, percent-encoding what is not unreserved.
pub fn file_uri(path: &Path) -> String {
    let mut uri = "file://".to_owned();
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// (line, UTF-16 column) of `needle`'s first occurrence plus `delta` columns (ASCII text).
pub fn position(text: &str, needle: &str, delta: usize) -> (usize, usize) {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` is not in the note"));
    let line = text[..at].matches('\n').count();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].encode_utf16().count() + delta)
}
