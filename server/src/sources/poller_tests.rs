use std::cell::Cell;
use std::time::Instant;

use chrono::TimeZone;

use super::*;
use crate::config::Origin;
use crate::schedule::Zone;
use crate::sources::ics::tests::every_second_since_1990;

fn calendar_at(path: &Path) -> SourceConfig {
    SourceConfig {
        kind: SourceKind::Ics { at: IcsLocation::Path(path.to_path_buf()), horizon: ics::DEFAULT_HORIZON },
        every: Some(ics::DEFAULT_EVERY),
        enabled: true,
        backfill: true,
        event_type: ics::DEFAULT_TYPE.to_owned(),
        origin: Origin::User,
        folders: Vec::new(),
    }
}

/// Issue 31: a calendar's expansion held one of the runtime's two workers for minutes, and a
/// webhook got no answer. On a runtime of one thread, a timer keeps firing while a hostile
/// calendar is read, and the poll ends within the calendar's budget with the problem first
/// in the digest.
#[tokio::test(flavor = "current_thread")]
async fn a_calendar_is_expanded_off_the_runtime_within_its_budget() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("cal.ics");
    std::fs::write(&path, every_second_since_1990(2_000)).unwrap_or_else(|e| panic!("{e}"));
    let home = state::Home::new(Some(&dir.path().join("data")), dir.path());
    let cx = PollCx {
        root: dir.path(),
        home: &home,
        name: "cal",
        trusted: true,
        now: Utc.with_ymd_and_hms(2026, 3, 10, 6, 0, 0).unwrap(),
        zone: Zone::Named(chrono_tz::UTC),
        dry_run: false,
        say_each_failure: true,
        cancel: CancellationToken::new(),
    };
    let worst = Cell::new(Duration::ZERO);
    let ticker = async {
        loop {
            let before = Instant::now();
            tokio::time::sleep(Duration::from_millis(10)).await;
            worst.set(worst.get().max(before.elapsed()));
        }
    };
    let cfg = calendar_at(&path);
    let started = Instant::now();
    let poll = async {
        let report = poll_source(&cfg, &cx).await;
        let took = started.elapsed();
        // The timer's turn: a poll that held the thread until now ended in the same turn.
        tokio::time::sleep(Duration::from_millis(50)).await;
        (report, took)
    };
    let (report, took) = tokio::select! {
        polled = poll => polled,
        () = ticker => unreachable!(),
    };
    let report = report.unwrap_or_else(|e| panic!("{e}"));
    assert!(worst.get() < Duration::from_millis(750), "the runtime stood still for {:?}", worst.get());
    assert!(took < ics::Budget::CALENDAR.time * 5, "the poll took {took:?}");
    let [(item, Some(_))] = report.new.as_slice() else { panic!("{report:?}") };
    let problems = &item.payload["problems"];
    assert!(
        problems[0].as_str().is_some_and(|p| p.starts_with("the calendar's recurrences are too many")),
        "{problems}"
    );
}

#[tokio::test]
async fn a_panic_while_parsing_is_the_polls_error() {
    let e = off_thread(|| -> u8 { panic!("a mail's text: the len is 3") }).await.unwrap_err();
    expect_test::expect!["the poll failed on a bug in livenote; the log says where (please report it)"]
        .assert_eq(&e);
    assert_eq!(off_thread(|| 7).await, Ok(7));
}

#[tokio::test]
async fn a_panic_in_a_poll_is_its_failure() {
    let polled: Result<u8, FetchError> = caught(async { panic!("attempt to add with overflow") }).await;
    let Err(FetchError::Failed(e)) = polled else { panic!("not a failure") };
    assert!(e.starts_with("the poll failed on a bug in livenote") && !e.contains("overflow"), "{e}");
    let polled: Result<Vec<Item>, FetchError> = caught(async { Ok(Vec::new()) }).await;
    assert!(polled.is_ok_and(|items| items.is_empty()));
}
