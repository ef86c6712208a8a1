//! Never a storm (pure): notifications that come within a window of each other are one
//! digest. With `first_at_once` (`watch`, the language server) the first is said at once and
//! opens the window; the ones that follow within it wait for its end and are said together.
//! Without it (`tick`, one pass), the first waits too, so a pass's runs make one digest. Time
//! comes from the caller's clock: nothing here sleeps.

use chrono::{DateTime, TimeDelta, Utc};

/// How long notifications gather into one digest.
pub const WINDOW: TimeDelta = TimeDelta::minutes(1);

#[derive(Debug)]
pub struct Digest<T> {
    window: TimeDelta,
    first_at_once: bool,
    /// When the current window began (`None`: no window open).
    open: Option<DateTime<Utc>>,
    held: Vec<T>,
}

impl<T> Digest<T> {
    pub fn new(window: TimeDelta, first_at_once: bool) -> Self {
        Digest { window, first_at_once, open: None, held: Vec::new() }
    }

    /// A new item at `now`: what to say at once (the first of a window, in `first_at_once`
    /// mode), or nothing (it waits for the window's end). Call [`Digest::due`] first, so a
    /// window that ended is said before the new one opens.
    pub fn push(&mut self, now: DateTime<Utc>, item: T) -> Option<Vec<T>> {
        let open = self.open.is_some_and(|at| now < at + self.window);
        if open || !self.held.is_empty() {
            self.held.push(item);
            return None;
        }
        self.open = Some(now);
        if self.first_at_once {
            Some(vec![item])
        } else {
            self.held.push(item);
            None
        }
    }

    /// What waited for a window that has ended by `now`, said together.
    pub fn due(&mut self, now: DateTime<Utc>) -> Option<Vec<T>> {
        let end = self.open? + self.window;
        if now < end {
            return None;
        }
        if self.held.is_empty() {
            self.open = None;
            return None;
        }
        // In `first_at_once` mode this notice is said now, so the next one waits a window.
        self.open = self.first_at_once.then_some(now);
        Some(std::mem::take(&mut self.held))
    }

    /// When [`Digest::due`] next has something to say.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        (!self.held.is_empty()).then_some(self.open? + self.window)
    }

    /// Everything still waiting, said now (the end of `tick`, of `watch`).
    pub fn drain(&mut self) -> Option<Vec<T>> {
        self.open = None;
        (!self.held.is_empty()).then(|| std::mem::take(&mut self.held))
    }
}

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;
