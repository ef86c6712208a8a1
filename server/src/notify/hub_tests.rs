use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::schedule::{ManualClock, TriggerKind};

/// A sink that keeps what it is given.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, bool)>>);

impl Sink for Arc<Recorder> {
    fn send(&self, notice: Notice, desktop: bool) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push((notice.message, desktop));
        Box::pin(async {})
    }
}

fn told(title: &str, desktop: bool) -> Told {
    Told {
        entry: Entry {
            path: PathBuf::from(format!("/ws/{title}.md")),
            title: title.to_owned(),
            trigger: TriggerKind::Cron,
            outcome: Outcome::Changed,
            summary: "s".to_owned(),
            added: 1,
            removed: 0,
            run_id: "r".to_owned(),
        },
        desktop,
        hook: None,
    }
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_default()
}

fn said(r: &Recorder) -> Vec<(String, bool)> {
    r.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

#[tokio::test]
async fn the_hub_says_the_first_at_once_and_the_rest_when_the_clock_ends_their_minute() {
    let clock = ManualClock::new(at("2026-11-23T09:00:00Z"));
    let recorder = Arc::new(Recorder::default());
    let hub = Hub::new(Arc::new(clock.clone()), vec![Arc::new(recorder.clone())], true);
    hub.start();
    hub.report(told("A", false));
    hub.report(told("B", true));
    hub.report(told("C", false));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(said(&recorder), [("A changed: 1 line added".to_owned(), false)]);
    // The flusher sees the clock pass the minute, whoever moves it.
    clock.advance(TimeDelta::seconds(61));
    for _ in 0..100 {
        if said(&recorder).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(said(&recorder)[1], ("2 notes changed".to_owned(), true), "desktop when any folder wants it");
    hub.report(told("D", false));
    hub.finish().await;
    assert_eq!(said(&recorder).len(), 3, "finish says what waits: {:?}", said(&recorder));
}
