use super::*;

/// A workspace in a temp folder with `files`, its clock frozen.
fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    for (rel, text) in files {
        let path = root.join(rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    }
    let clock =
        crate::schedule::ManualClock::new("2026-11-25T08:00:00Z".parse().unwrap_or_else(|e| panic!("{e}")));
    let ws = Workspace::with_clock(&root, Arc::new(clock));
    (dir, ws)
}

/// Every path under the workspace, sorted (`.livenote/` included).
fn tree(ws: &Workspace) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![ws.root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(survey::shown_in(&p, &ws.root));
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn make_live(path: &str, cron: Option<&str>, windows: &[(&str, &str)]) -> MakeLive {
    MakeLive {
        path: path.to_owned(),
        objective: "Keep it current.".to_owned(),
        triggers: TriggerEdits {
            cron_expr: cron.map(str::to_owned),
            windows: (!windows.is_empty())
                .then(|| windows.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()),
            event_match_criteria: None,
        },
        describe: None,
    }
}

#[tokio::test]
async fn refusals_leave_no_trace() {
    let (_d, ws) = workspace(&[("a.md", "# A\n")]);
    let before = tree(&ws);
    let err = ws.make_live(&make_live("a.md", Some("0 25 * * *"), &[])).await;
    assert!(err.as_ref().is_err_and(|e| e.contains("live/invalid-cron")), "{err:?}");
    let err = ws.make_live(&make_live("new/deep/b.md", None, &[("10:00", "09:00")])).await;
    assert!(err.as_ref().is_err_and(|e| e.contains("error live/")), "{err:?}");
    let err = ws.make_live(&MakeLive { objective: " ".into(), ..make_live("a.md", None, &[]) }).await;
    assert!(err.as_ref().is_err_and(|e| e.contains("`objective` is empty")), "{err:?}");
    let err = ws.make_live(&make_live("new.markdown", None, &[])).await;
    assert_eq!(err, Err("`new.markdown` is not a markdown note (`.md`)".to_owned()));
    let err = ws.set_active("a.md", false).await;
    assert_eq!(err, Err("this note is not live (it has no `live:` block)".to_owned()));
    assert_eq!(ws.note_status("a.md"), Ok(json!({"path": "a.md", "live": false})));
    assert_eq!(tree(&ws), before);
    assert_eq!(std::fs::read_to_string(ws.root.join("a.md")).ok().as_deref(), Some("# A\n"));
}

/// Issue 21: a note without `title:` is named by its first `# ` heading, as everywhere.
#[tokio::test]
async fn notes_are_named_by_their_heading_without_a_title_key() {
    let (_d, ws) = workspace(&[
        ("reading-stats.md", "---\nlive:\n  objective: count\n---\n\n# Reading list statistics\n"),
        ("clock.md", "---\ntitle: Chicago time\nlive:\n  objective: time\n---\n# Clock\n"),
        ("bare.md", "---\nlive:\n  objective: x\n---\nno heading\n"),
    ]);
    let list = ws.list_live_notes();
    let titles: Vec<(&str, &str)> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["path"].as_str().unwrap_or(""), i["title"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        titles,
        [("bare.md", "bare"), ("clock.md", "Chicago time"), ("reading-stats.md", "Reading list statistics")]
    );
    let status = ws.note_status("reading-stats.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status["title"], "Reading list statistics", "{status}");
    let resources = ws.resources();
    assert!(resources.iter().any(|(_, p, t)| p == "reading-stats.md" && t == "Reading list statistics"));
}

#[tokio::test]
async fn a_new_note_gets_its_folders_a_title_and_the_block() {
    let (_d, ws) = workspace(&[]);
    let answer = ws.make_live(&make_live("notes/daily/Today.md", None, &[("07:00", "09:00")])).await;
    let answer = answer.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer["created"], true);
    assert_eq!(answer["status"]["title"], "Today");
    let text = std::fs::read_to_string(ws.root.join("notes/daily/Today.md")).unwrap_or_default();
    assert_eq!(
        text,
        "---\nlive:\n  objective: \"Keep it current.\"\n  triggers:\n    windows:\n      - startTime: \"07:00\"\n        endTime: \"09:00\"\n---\n# Today\n"
    );
    // Made again: the block is replaced in place, and nothing else changes.
    let again = ws.make_live(&make_live("notes/daily/Today.md", Some("@hourly"), &[])).await;
    assert_eq!(again.map(|a| a["created"].clone()), Ok(json!(false)));
    let text2 = std::fs::read_to_string(ws.root.join("notes/daily/Today.md")).unwrap_or_default();
    // A trigger the block lacks goes after those it has.
    assert_eq!(text2, text.replace("---\n# Today", "    cronExpr: \"@hourly\"\n---\n# Today"));
}

#[tokio::test]
async fn rewrites_wait_for_a_run_to_end() {
    let note = "---\nlive:\n  objective: x\n---\n# X\n";
    let (_d, ws) = workspace(&[("x.md", note)]);
    // Another process runs the note: it holds the note's lock.
    let held = ws.engine.store.try_lock("x.md").ok().flatten();
    assert!(held.is_some());
    let busy = ws.set_active("x.md", false).await;
    assert!(busy.as_ref().is_err_and(|e| e.starts_with("the note is updating")), "{busy:?}");
    let busy = ws.make_live(&make_live("x.md", Some("@daily"), &[])).await;
    assert!(busy.is_err(), "{busy:?}");
    assert_eq!(std::fs::read_to_string(ws.root.join("x.md")).ok().as_deref(), Some(note));
    drop(held);
    let paused = ws.set_active("x.md", false).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(paused["status"], "paused");
    let passive = ws.make_passive("x.md").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(passive, json!({"path": "x.md", "live": false}));
    assert_eq!(std::fs::read_to_string(ws.root.join("x.md")).ok().as_deref(), Some("# X\n"));
}

/// A folder inside with its own `.livenote.toml` is a root of its own: its notes are listed
/// and edited with its state (here: a run of the inner root holds the note's lock in
/// `inner/.livenote/`), not the workspace's.
#[tokio::test]
async fn a_nested_root_keeps_its_own_state() {
    let note = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Inner\n";
    let (_d, ws) = workspace(&[
        ("inner/.livenote.toml", "[agent]\n"),
        ("inner/n.md", note),
        ("outer.md", &note.replace("# Inner", "# Outer")),
    ]);
    let inner = crate::runs::Store::new(&ws.root.join("inner"));
    let _lock = inner.try_lock("n.md").ok().flatten().unwrap_or_else(|| panic!("no lock"));
    let listed = ws.list_live_notes();
    let status = |path: &str| {
        listed.as_array().into_iter().flatten().find(|i| i["path"] == path).map(|i| i["status"].clone())
    };
    assert_eq!(status("inner/n.md"), Some(json!("running")), "{listed}");
    assert_ne!(status("outer.md"), Some(json!("running")), "{listed}");
    assert_eq!(ws.note_status("inner/n.md").map(|v| v["status"].clone()), Ok(json!("running")));
    let err = ws.set_active("inner/n.md", false).await;
    assert!(err.as_ref().is_err_and(|e| e.contains("the note is updating")), "{err:?}");
    assert!(std::fs::read_to_string(ws.root.join("inner/n.md")).is_ok_and(|t| t == note));
}
