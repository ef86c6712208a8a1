//! The `notify` watcher of `livenote watch` and of the language server (when the editor watches
//! nothing for it): which of its events mean a path changed, and which mean "look again".
//!
//! The backends differ. inotify (Linux) reports each change of each file, under the path that
//! was watched. FSEvents (macOS) coalesces: one event may carry several kinds at once, paths
//! come canonical (`/private/var/...` for a root given as `/var/...`), and when its queue
//! overflows it says "rescan this folder" (`MustScanSubDirs`) instead of naming the files.
//! So the receivers re-read whatever path they get rather than trusting the event's kind,
//! compare paths canonically (the roots are canonical; see `TrustStore::is_store_file` for
//! the trust store), and walk again on a rescan, which inotify also asks for when its queue
//! overflows.

use std::path::PathBuf;

use notify::EventKind;

/// What an event asks of its receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// This path may have changed: re-read it.
    Changed(PathBuf),
    /// Changes were dropped or coalesced (here, or in a folder below this path when the
    /// backend says which): walk again.
    Rescan,
}

/// After a [`Seen::Rescan`]: take whatever else is already queued, so that a burst of them (one
/// per folder FSEvents gave up on) makes one walk. The walk that follows covers the changes taken.
pub fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Seen>) {
    while rx.try_recv().is_ok() {}
}

/// What `event` means, in the order its receiver should act on it.
pub fn seen(event: notify::Event) -> Vec<Seen> {
    if event.need_rescan() {
        return vec![Seen::Rescan];
    }
    // Reads are events too (inotify's open/close); only changes matter, and reacting to our own
    // reads would loop.
    if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
        return Vec::new();
    }
    event.paths.into_iter().map(Seen::Changed).collect()
}

/// A watcher (not watching anything yet) that sends what it sees to `tx`. An error the backend
/// reports (a folder it could not add a watch for) is logged: walking again would not mend it.
pub fn watcher(tx: tokio::sync::mpsc::UnboundedSender<Seen>) -> notify::Result<notify::RecommendedWatcher> {
    <notify::RecommendedWatcher as notify::Watcher>::new(
        move |res: notify::Result<notify::Event>| match res {
            Ok(event) => {
                for s in seen(event) {
                    let _ = tx.send(s);
                }
            }
            Err(e) => tracing::warn!("watch files: {e}"),
        },
        // A symlinked folder is not watched through: `everything -> /` would watch the disk.
        notify::Config::default().with_follow_symlinks(false),
    )
}

#[cfg(test)]
mod tests {
    use notify::event::{AccessKind, CreateKind, DataChange, Flag, ModifyKind};
    use notify::{Event, EventKind};

    use super::*;

    fn at(kind: EventKind, paths: &[&str]) -> Event {
        paths.iter().fold(Event::new(kind), |e, p| e.add_path(PathBuf::from(p)))
    }

    #[test]
    fn changes_name_their_paths_and_reads_are_nothing() {
        let changed = at(EventKind::Modify(ModifyKind::Data(DataChange::Any)), &["/w/a.md", "/w/b.md"]);
        assert_eq!(
            seen(changed),
            [Seen::Changed(PathBuf::from("/w/a.md")), Seen::Changed(PathBuf::from("/w/b.md"))]
        );
        assert_eq!(
            seen(at(EventKind::Create(CreateKind::File), &["/w/c.md"])),
            [Seen::Changed("/w/c.md".into())]
        );
        // FSEvents' coalesced kind when it does not tell which.
        assert_eq!(seen(at(EventKind::Any, &["/w/d.md"])), [Seen::Changed("/w/d.md".into())]);
        assert_eq!(seen(at(EventKind::Access(AccessKind::Any), &["/w/a.md"])), []);
        assert_eq!(seen(at(EventKind::Other, &["/w/a.md"])), []);
    }

    #[test]
    fn a_burst_of_rescans_is_one_walk() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for s in [Seen::Rescan, Seen::Changed("/w/a.md".into()), Seen::Rescan] {
            let _ = tx.send(s);
        }
        assert_eq!(rx.try_recv().ok(), Some(Seen::Rescan));
        drain(&mut rx);
        assert!(rx.try_recv().is_err(), "the walk covers what was queued behind the first rescan");
        let _ = tx.send(Seen::Changed("/w/b.md".into()));
        assert_eq!(rx.try_recv().ok(), Some(Seen::Changed("/w/b.md".into())));
    }

    #[test]
    fn dropped_events_ask_for_a_walk() {
        // FSEvents' MustScanSubDirs (a folder) and inotify's queue overflow (no path): both
        // arrive as `Other` with the rescan flag, which the filter above would drop.
        let fsevents = at(EventKind::Other, &["/private/var/w/sub"]).set_flag(Flag::Rescan);
        assert_eq!(seen(fsevents), [Seen::Rescan]);
        assert_eq!(seen(Event::new(EventKind::Other).set_flag(Flag::Rescan)), [Seen::Rescan]);
    }
}
