//! Per-note validation cost: a typical `live:` block with a 1 KB body and with a 10 MB body
//! (frontmatter only, and with the body scan for legacy fences), plus the frontmatter-only
//! read path that `list` and the index use. Run: `cargo bench -p livenote --bench validate`.
//! Profile: `bench` (release + line tables); `--profile dist-bench` measures what ships.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use livenote::note::{self, Options};

const BLOCK: &str = r#"---
title: "Chicago time"
tags: [time, travel]
live:
  objective: |
    Show the current time in Chicago in 12-hour format, one short line.
  active: true
  triggers:
    cronExpr: "0 * * * *"
    windows:
      - startTime: "09:00"
        endTime: "12:00"
    eventMatchCriteria: "Emails about Q3 planning"
  lastAttemptAt: "2026-05-08T15:00:00.123Z"
  lastRunAt: "2026-05-08T15:00:01.234Z"
  lastRunId: "01JTX3ABCDEF"
  lastRunSummary: "Updated - 3:00 PM Central."
  lastRunError: null
---
"#;

fn note_with_body(size: usize) -> String {
    let para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor.\n\n";
    let mut s = String::with_capacity(BLOCK.len() + size + para.len());
    s.push_str(BLOCK);
    s.push_str("# Chicago time\n\n");
    while s.len() < BLOCK.len() + size {
        s.push_str(para);
    }
    s
}

fn bench(c: &mut Criterion) {
    let small = note_with_body(1024);
    let large = note_with_body(10 * 1024 * 1024);
    let fm_only = Options { providers: None, mcp: None, skills: None, scan_body: false, max_backoff: None };
    let with_body = Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff: None };
    let mut g = c.benchmark_group("validate");
    g.bench_function("frontmatter/1KB body", |b| b.iter(|| note::analyze(black_box(&small), &fm_only)));
    g.bench_function("frontmatter/10MB body", |b| b.iter(|| note::analyze(black_box(&large), &fm_only)));
    g.bench_function("with fence scan/1KB body", |b| b.iter(|| note::analyze(black_box(&small), &with_body)));
    g.sample_size(20);
    g.bench_function("with fence scan/10MB body", |b| {
        b.iter(|| note::analyze(black_box(&large), &with_body))
    });
    g.finish();
}

criterion_group!(benches, bench);

fn parts(c: &mut Criterion) {
    let small = note_with_body(1024);
    let fm = livenote::note::frontmatter::locate(&small).unwrap_or_else(|| panic!("no frontmatter"));
    let mut g = c.benchmark_group("parts");
    g.bench_function("yaml::parse", |b| {
        b.iter(|| livenote::note::yaml::parse(black_box(&small), fm.content.clone()))
    });
    g.bench_function("cron parse (cached)", |b| {
        b.iter(|| livenote::schedule::CronSchedule::parse(black_box("0 * * * *")))
    });
    g.bench_function("cron parse (uncached)", |b| {
        b.iter(|| livenote::schedule::CronSchedule::parse_uncached(black_box("0 * * * *")))
    });
    g.bench_function("time parse", |b| b.iter(|| livenote::schedule::TimeOfDay::parse(black_box("09:00"))));
    g.finish();
}

criterion_group!(parts_group, parts);
criterion_main!(benches, parts_group);
