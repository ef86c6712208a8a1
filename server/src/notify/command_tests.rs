use std::path::Path;

use super::*;
use crate::config::NotifyCommand;

fn config(origin: Origin) -> NotifyConfig {
    NotifyConfig { desktop: false, command: Some(NotifyCommand { command: vec!["prog".to_owned()], origin }) }
}

#[test]
fn the_hook_follows_the_trust_rules_of_providers() {
    let root = Path::new("/ws");
    let hook_of = |origin, trusted| hook(&config(origin), root, trusted);
    // The user's own program runs for any folder (in a neutral folder when it is not trusted).
    assert_eq!(
        hook_of(Origin::User, false),
        Ok(Some(Hook { command: vec!["prog".to_owned()], root: root.to_path_buf(), trusted: false }))
    );
    assert!(matches!(hook_of(Origin::Workspace, true), Ok(Some(_))));
    assert!(matches!(hook_of(Origin::Client, true), Ok(Some(_))));
    let refused = |r: Result<Option<Hook>, String>| r.err().unwrap_or_default();
    assert!(refused(hook_of(Origin::Workspace, false)).contains(".livenote.toml, which is not trusted"));
    assert!(refused(hook_of(Origin::Client, false)).contains("editor's settings"));
    assert_eq!(hook(&NotifyConfig::default(), root, true), Ok(None));
}
