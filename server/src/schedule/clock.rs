//! The source of "now": the system clock in production, a settable shared clock in tests.
//!
//! Scheduling code never calls `Utc::now()` itself, so every decision can be replayed at any
//! instant by injecting a [`ManualClock`].

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, TimeDelta, Utc};

/// Something that tells the current instant.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;

    /// For clocks that jump independently of real time (tests), how often a sleeper should
    /// look again; `None` means real time, so sleeping until an instant is exact.
    fn poll_interval(&self) -> Option<std::time::Duration> {
        None
    }
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to. Clones share one instant, so a test can hold a
/// handle while the scheduler under test holds another.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// How often sleepers re-read a manual clock, in real time.
    pub const POLL: std::time::Duration = std::time::Duration::from_millis(20);

    pub fn new(now: DateTime<Utc>) -> Self {
        ManualClock { now: Arc::new(Mutex::new(now)) }
    }

    pub fn set(&self, t: DateTime<Utc>) {
        *self.lock() = t;
    }

    /// Moves the clock by `d` (backwards when negative, like a wall-clock jump). Saturates at
    /// the ends of chrono's range instead of panicking.
    pub fn advance(&self, d: TimeDelta) {
        let mut now = self.lock();
        *now = now.checked_add_signed(d).unwrap_or(if d < TimeDelta::zero() {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        });
    }

    // A panic while holding the lock cannot leave a half-written `DateTime` behind, so a
    // poisoned lock is still safe to use.
    fn lock(&self) -> std::sync::MutexGuard<'_, DateTime<Utc>> {
        self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.lock()
    }

    fn poll_interval(&self) -> Option<std::time::Duration> {
        Some(Self::POLL)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }

    fn poll_interval(&self) -> Option<std::time::Duration> {
        (**self).poll_interval()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }

    fn poll_interval(&self) -> Option<std::time::Duration> {
        (**self).poll_interval()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        match DateTime::parse_from_rfc3339(s) {
            Ok(t) => t.to_utc(),
            Err(e) => panic!("bad test timestamp {s}: {e}"),
        }
    }

    #[test]
    fn manual_clock_is_shared_between_clones() {
        let clock = ManualClock::new(at("2026-05-08T15:00:00Z"));
        let handle = clock.clone();
        handle.advance(TimeDelta::minutes(90));
        assert_eq!(clock.now(), at("2026-05-08T16:30:00Z"));
        clock.set(at("2026-01-01T00:00:00Z"));
        assert_eq!(handle.now(), at("2026-01-01T00:00:00Z"));
        handle.advance(TimeDelta::seconds(-1));
        assert_eq!(clock.now(), at("2025-12-31T23:59:59Z"));
    }

    #[test]
    fn advance_saturates_instead_of_panicking() {
        let clock = ManualClock::new(DateTime::<Utc>::MAX_UTC);
        clock.advance(TimeDelta::days(1));
        assert_eq!(clock.now(), DateTime::<Utc>::MAX_UTC);
        clock.set(DateTime::<Utc>::MIN_UTC);
        clock.advance(TimeDelta::days(-1));
        assert_eq!(clock.now(), DateTime::<Utc>::MIN_UTC);
    }

    #[test]
    fn clocks_work_behind_pointers() {
        let shared: Arc<dyn Clock> = Arc::new(ManualClock::new(at("2026-05-08T15:00:00Z")));
        assert_eq!(shared.now(), at("2026-05-08T15:00:00Z"));
        let system = SystemClock;
        let by_ref: &dyn Clock = &system;
        assert!(by_ref.now() > at("2020-01-01T00:00:00Z"));
    }
}
