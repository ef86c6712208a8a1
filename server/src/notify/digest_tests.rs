use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use super::*;

fn t(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH + TimeDelta::seconds(1_800_000_000 + secs)
}

#[test]
fn the_first_at_once_then_the_rest_of_the_minute_together() {
    let mut d = Digest::new(WINDOW, true);
    assert_eq!(d.push(t(0), "a"), Some(vec!["a"]));
    assert_eq!(d.due(t(10)), None);
    assert_eq!(d.push(t(10), "b"), None);
    assert_eq!(d.push(t(30), "c"), None);
    assert_eq!(d.next_due(), Some(t(60)));
    assert_eq!(d.due(t(59)), None);
    assert_eq!(d.due(t(60)), Some(vec!["b", "c"]));
    // That digest was said at 60: the next within a minute of it waits.
    assert_eq!(d.push(t(90), "d"), None);
    assert_eq!(d.due(t(120)), Some(vec!["d"]));
    // A quiet minute: the next is said at once again.
    assert_eq!(d.due(t(200)), None);
    assert_eq!(d.push(t(200), "e"), Some(vec!["e"]));
    assert_eq!(d.drain(), None);
}

#[test]
fn a_pass_is_said_together_at_its_end() {
    let mut d = Digest::new(WINDOW, false);
    assert_eq!(d.push(t(0), "a"), None);
    assert_eq!(d.push(t(5), "b"), None);
    assert_eq!(d.due(t(6)), None);
    assert_eq!(d.drain(), Some(vec!["a", "b"]));
    assert_eq!(d.drain(), None);
    // A pass longer than a minute says what its first minute brought.
    assert_eq!(d.push(t(100), "c"), None);
    assert_eq!(d.due(t(160)), Some(vec!["c"]));
    assert_eq!(d.push(t(170), "d"), None);
    assert_eq!(d.drain(), Some(vec!["d"]));
}

#[derive(Debug, Clone)]
enum Step {
    /// A run ended, this many seconds after the previous step.
    Run(u16),
    /// The flusher looked, this many seconds after the previous step.
    Look(u16),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![(0u16..150).prop_map(Step::Run), (0u16..150).prop_map(Step::Look)],
        0..60,
    )
}

proptest! {
    /// Against the simplest model of "never a storm": every run is said exactly once, in the
    /// order the runs ended; no notice is said within a minute of the one before it (but the
    /// last, which the end of the process says); and, said at once, a run that ends after a
    /// quiet minute with nothing waiting is said alone, at its end.
    #[test]
    fn every_run_once_and_never_two_notices_within_a_minute(steps in steps(), first_at_once: bool) {
        let mut d = Digest::new(WINDOW, first_at_once);
        let mut now = t(0);
        let mut said: Vec<(DateTime<Utc>, Vec<usize>)> = Vec::new();
        let mut ended: Vec<DateTime<Utc>> = Vec::new();
        for step in &steps {
            match step {
                Step::Run(gap) => {
                    now += TimeDelta::seconds(i64::from(*gap));
                    if let Some(b) = d.due(now) { said.push((now, b)); }
                    let waiting = ended.len() - said.iter().map(|(_, b)| b.len()).sum::<usize>();
                    let quiet = said.last().is_none_or(|(at, _)| now - *at >= WINDOW);
                    ended.push(now);
                    let at_once = d.push(now, ended.len() - 1);
                    if first_at_once && quiet && waiting == 0 {
                        prop_assert_eq!(&at_once, &Some(vec![ended.len() - 1]));
                    }
                    if let Some(b) = at_once { said.push((now, b)); }
                }
                Step::Look(gap) => {
                    now += TimeDelta::seconds(i64::from(*gap));
                    if let Some(b) = d.due(now) { said.push((now, b)); }
                }
            }
        }
        let before_drain = said.len();
        if let Some(b) = d.drain() { said.push((now, b)); }
        let order: Vec<usize> = said.iter().flat_map(|(_, b)| b.clone()).collect();
        prop_assert_eq!(order, (0..ended.len()).collect::<Vec<_>>());
        prop_assert!(said.iter().all(|(_, b)| !b.is_empty()));
        for pair in said[..before_drain].windows(2) {
            prop_assert!(pair[1].0 - pair[0].0 >= WINDOW, "two notices within a minute: {:?}", pair);
        }
    }
}
