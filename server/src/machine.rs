//! This machine's name, the one place it is decided: `LIVENOTE_HOST`, else `[machine] name`
//! in the user's own config, else the system's host name. `[scheduler] host` is compared
//! with it (`schedule::host`), runs record it (transcripts, `history`), `list` shows it.

use crate::config::{Env, MachineConfig};

/// The variable that names this machine above everything else (a container's host name is
/// random; a CI runner's says nothing).
pub const HOST_ENV: &str = "LIVENOTE_HOST";

/// What a machine is called when nothing names it and the system says nothing either.
const UNNAMED: &str = "unnamed";

/// This machine's name from `env`, the user's `[machine]`, then the system.
pub fn name(env: &dyn Env, config: &MachineConfig) -> String {
    let from_env = env.var(HOST_ENV).map(|v| v.to_string_lossy().trim().to_owned()).filter(|v| !v.is_empty());
    from_env
        .or_else(|| config.name.clone())
        .or_else(|| crate::platform::host_name(&|k| env.var(k)).map(|n| n.trim().to_owned()))
        .unwrap_or_else(|| UNNAMED.to_owned())
}

/// `name` as a `&'static str` (`status::RunFacts::scheduled_on`, which stays `Copy`): each
/// distinct name is kept once for the life of the process; a folder names one host, and a
/// process sees a handful of folders.
pub fn interned(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.iter().find(|n| **n == name) {
        return known;
    }
    let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(kept);
    kept
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    #[test]
    fn the_variable_wins_then_the_users_config_then_the_system() {
        let named = MachineConfig { name: Some("desk".to_owned()) };
        let env = |k: &str| (k == HOST_ENV).then(|| OsString::from(" laptop "));
        assert_eq!(name(&env, &named), "laptop");
        let none = |_: &str| None;
        assert_eq!(name(&none, &named), "desk");
        let system = name(&none, &MachineConfig::default());
        assert!(!system.is_empty());
        // An empty variable counts as unset.
        let empty = |k: &str| (k == HOST_ENV).then(OsString::new);
        assert_eq!(name(&empty, &named), "desk");
    }

    #[test]
    fn a_name_is_kept_once() {
        let a = interned("nas-machine-test");
        let b = interned(&String::from("nas-machine-test"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "nas-machine-test");
    }
}
