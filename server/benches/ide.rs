//! What the editor features cost in CPU alone, without the protocol around them: hover,
//! completion, inlay hints and code lenses over the suite's 1 MB note, analysed once (as the
//! server keeps a snapshot per document version), and the schedule arithmetic they share. The
//! suite (`benches/suite`) measures the same requests through stdio; this bench tells the
//! work of the request apart from the transport's. Run: `cargo bench -p livenote --bench ide`.
//! Profile: `bench` (release + line tables); `--profile dist-bench` measures what ships.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use livenote::ide::{self, Ctx};
use livenote::note::{self, Options};
use livenote::schedule::{CronSchedule, Zone};

#[path = "suite/vault.rs"]
#[allow(dead_code)]
mod vault;

/// The byte offset `delta` bytes into the first `needle` of `text`.
fn at(text: &str, needle: &str, delta: usize) -> usize {
    text.find(needle).unwrap_or_else(|| panic!("no {needle:?}")) + delta
}

fn bench(c: &mut Criterion) {
    let text = vault::big_note("2026-05-08T14:00:00Z");
    let opts = Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff: None };
    let analysis = note::analyze(&text, &opts);
    let zone = Zone::Local;
    let providers = vec!["noop".to_owned()];
    let mcp = note::tools::McpCatalog::default();
    let skills = note::skills::SkillCatalog::default();
    let now = chrono::DateTime::parse_from_rfc3339("2026-05-08T15:00:00Z")
        .map(|t| t.to_utc())
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = Ctx {
        text: &text,
        analysis: &analysis,
        now,
        tz: &zone,
        providers: &providers,
        mcp: &mcp,
        facts: livenote::status::RunFacts::TRUSTED,
        last_run: None,
        skills: &skills,
        sources: None,
        recent_events: &[],
    };
    let cron_key = at(&text, "    cronExpr: \"", 6);
    let cron_value = at(&text, "    cronExpr: \"", 15);
    let mut g = c.benchmark_group("ide, 1 MB note");
    g.bench_function("hover on cronExpr", |b| b.iter(|| ide::hover::hover(black_box(&ctx), cron_key)));
    g.bench_function("completion in cronExpr", |b| {
        b.iter(|| ide::completion::completion(black_box(&ctx), cron_value))
    });
    g.bench_function("inlay hints", |b| {
        b.iter(|| ide::hints::inlay_hints(black_box(&ctx), 0..2_000, ide::hints::Shown { lens: true }))
    });
    g.bench_function("code lenses", |b| b.iter(|| ide::lens::code_lenses(black_box(&ctx))));
    g.bench_function("frontmatter::locate", |b| b.iter(|| note::frontmatter::locate(black_box(&text))));
    g.finish();

    let cron = CronSchedule::parse("0 9 * * 1-5").unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("schedule");
    g.bench_function("cron next_after, local zone", |b| b.iter(|| cron.next_after(black_box(now), &zone)));
    let chicago = Zone::Named(chrono_tz::America::Chicago);
    g.bench_function("cron next_after, America/Chicago", |b| {
        b.iter(|| cron.next_after(black_box(now), &chicago))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
