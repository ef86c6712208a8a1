//! `[sources.NAME]`: one source read from a layer, merged by name, and finally checked into a
//! usable [`SourceConfig`] (or the reason it cannot be used).

use std::net::{IpAddr, SocketAddr};

use super::*;
use crate::config::{
    IcsLocation, ImapSourceConfig, ImapTls, SourceConfig, SourceKind, WebhookSourceConfig,
    default_event_type, default_every,
};

const SOURCE_KEYS: &[&str] = &[
    "kind",
    "every",
    "enabled",
    "backfill",
    "type",
    "url",
    "path",
    "horizon",
    "host",
    "port",
    "tls",
    "username",
    "password_env",
    "mailbox",
    "idle_min_gap",
    "listen",
    "token_env",
    "secret_env",
    "command",
    "timeout",
    "folders",
];

const KINDS: &[&str] = &["feed", "ics", "imap", "webhook", "command"];

/// The longest name a source may have: it names the file of its state (`NAME.json`).
const MAX_NAME: usize = 64;

/// Whether `name` may name a source: it is a file name (its state's `NAME.json`) and the
/// `source` of its events, so only letters, digits, `_` and `-`.
pub(crate) fn is_source_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// One `[sources.NAME]` as merged so far: each key as the latest layer set it.
pub(super) struct PartialSource {
    at: At,
    origin: Origin,
    kind: Option<String>,
    every: Option<Set<Duration>>,
    enabled: Option<bool>,
    backfill: Option<bool>,
    event_type: Option<Set<String>>,
    url: Option<Set<String>>,
    path: Option<Set<String>>,
    horizon: Option<Duration>,
    host: Option<Set<String>>,
    port: Option<u16>,
    tls: Option<Set<String>>,
    username: Option<Set<String>>,
    password_env: Option<Set<String>>,
    mailbox: Option<String>,
    idle_min_gap: Option<Duration>,
    listen: Option<Set<String>>,
    token_env: Option<Set<String>>,
    secret_env: Option<Set<String>>,
    command: Option<Set<Vec<String>>>,
    timeout: Option<Duration>,
    folders: Option<Vec<PathBuf>>,
}

impl PartialSource {
    fn new(at: At) -> Self {
        PartialSource {
            origin: at.origin,
            at,
            kind: None,
            every: None,
            enabled: None,
            backfill: None,
            event_type: None,
            url: None,
            path: None,
            horizon: None,
            host: None,
            port: None,
            tls: None,
            username: None,
            password_env: None,
            mailbox: None,
            idle_min_gap: None,
            listen: None,
            token_env: None,
            secret_env: None,
            command: None,
            timeout: None,
            folders: None,
        }
    }
}

pub(super) fn apply_source(acc: &mut Partial, entry: &Entry, cx: &mut Cx<'_>) {
    let name = entry.key.as_str();
    let prefix = format!("sources.{name}");
    if !is_source_name(name) {
        let message = format!(
            "`{prefix}`: a source name may hold only letters, digits, `_` and `-`, at most {MAX_NAME} (it names the file of its state); ignored"
        );
        cx.report(entry.key_span.clone(), Some(&prefix), message);
        return;
    }
    let Some(fields) = cx.table(&prefix, &entry.node) else { return };
    let at = cx.at(entry.key_span.clone());
    // `kind` first: a layer that changes a source's kind starts it afresh (a user's `url` must
    // not leak into a folder's redefinition as a webhook).
    let mut kind = None;
    for f in set_entries(fields).filter(|f| f.key == "kind") {
        let key = format!("{prefix}.kind");
        kind = cx.string(&key, &f.node).and_then(|k| {
            if KINDS.contains(&k.as_str()) {
                return Some(k);
            }
            let message = format!("unknown source kind in `{key}` (use {})", KINDS.join(", "));
            cx.report(f.node.span.clone(), Some(&key), message);
            None
        });
    }
    let s = acc.sources.entry(name.to_owned()).or_insert_with(|| PartialSource::new(at.clone()));
    if let Some(k) = kind {
        if s.kind.as_ref().is_some_and(|old| *old != k) {
            *s = PartialSource::new(at.clone());
        }
        s.kind = Some(k);
    }
    s.at = at;
    s.origin = cx.origin;
    for f in set_entries(fields) {
        let key = format!("{prefix}.{}", f.key);
        let at = cx.at(f.node.span.clone());
        let env_name = |cx: &mut Cx<'_>| -> Option<Set<String>> {
            let v = cx.string(&key, &f.node)?;
            if is_env_name(&v) {
                return Some(Set { value: v, at: at.clone() });
            }
            // Never echo the value: it may well be the secret itself.
            let message = format!(
                "`{key}` must be the name of an environment variable (like MAIL_PASSWORD), not a secret"
            );
            cx.report(f.node.span.clone(), Some(&key), message);
            None
        };
        match f.key.as_str() {
            "kind" => {}
            "every" => {
                if let Some(v) = cx.duration(&key, &f.node) {
                    s.every = Some(Set { value: v, at });
                }
            }
            "enabled" => s.enabled = cx.boolean(&key, &f.node).or(s.enabled),
            "backfill" => s.backfill = cx.boolean(&key, &f.node).or(s.backfill),
            "type" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    s.event_type = Some(Set { value: v.trim().to_owned(), at });
                }
            }
            "url" => s.url = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.url.take()),
            "path" => s.path = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.path.take()),
            "horizon" => s.horizon = cx.duration(&key, &f.node).or(s.horizon),
            "host" => s.host = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.host.take()),
            "port" => {
                if let Some(v) = cx.integer(&key, &f.node, 1, 65535) {
                    s.port = u16::try_from(v).ok();
                }
            }
            "tls" => s.tls = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.tls.take()),
            "username" => {
                s.username = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.username.take());
            }
            "mailbox" => s.mailbox = cx.string(&key, &f.node).or(s.mailbox.take()),
            "idle_min_gap" => match cx.duration(&key, &f.node) {
                Some(d) if d < crate::config::MIN_IDLE_MIN_GAP => {
                    let message =
                        format!("`{key}` must be at least 1s: a mail server is not polled more often");
                    cx.report(f.node.span.clone(), Some(&key), message);
                }
                Some(d) => s.idle_min_gap = Some(d),
                None => {}
            },
            "listen" => {
                s.listen = cx.string(&key, &f.node).map(|value| Set { value, at }).or(s.listen.take());
            }
            "password_env" => s.password_env = env_name(cx).or(s.password_env.take()),
            "token_env" => s.token_env = env_name(cx).or(s.token_env.take()),
            "secret_env" => s.secret_env = env_name(cx).or(s.secret_env.take()),
            "command" => {
                s.command = cx.strings(&key, &f.node).map(|value| Set { value, at }).or(s.command.take());
            }
            "timeout" => s.timeout = cx.duration(&key, &f.node).or(s.timeout),
            "folders" => s.folders = folders(&key, &f.node, cx).or(s.folders.take()),
            other if super::provider::looks_like_secret_key(other) => {
                let message = format!(
                    "`{key}` is ignored: secrets are never read from configuration; put it in an environment variable and name that variable (`password_env`, `token_env`, `secret_env`)"
                );
                cx.report(f.key_span.clone(), Some(&key), message);
            }
            _ => cx.unknown(&key, f, SOURCE_KEYS),
        }
    }
}

/// `folders`: the workspace roots a source of the user's own file serves, each absolute or
/// from `~/`. A folder's file (or the editor's settings) cannot say it: a source defined there
/// serves that folder alone, and a clone must not widen or narrow the user's sources.
fn folders(key: &str, node: &Node, cx: &mut Cx<'_>) -> Option<Vec<PathBuf>> {
    if cx.origin != Origin::User {
        let message =
            format!("`{key}` is read only from your own config (~/.config/livenote/config.toml); ignored");
        cx.report(node.span.clone(), Some(key), message);
        return None;
    }
    let list = cx.strings(key, node)?;
    let mut out = Vec::with_capacity(list.len());
    for f in list {
        let path = PathBuf::from(f.trim());
        if !(path.is_absolute() || path.starts_with("~")) {
            let message =
                format!("`{key}`: `{f}` is not an absolute path (or one starting with ~/); ignored");
            cx.report(node.span.clone(), Some(key), message);
            continue;
        }
        out.push(path);
    }
    Some(out)
}

/// Whether `host` names this machine only (an IP loopback address or `localhost`).
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A usable source, or why not (the problem is reported here, the reason kept for the CLI).
pub(super) fn build_source(
    name: &str,
    s: PartialSource,
    problems: &mut Vec<ConfigProblem>,
) -> Result<SourceConfig, String> {
    let prefix = format!("sources.{name}");
    let mut fail = |at: &At, key: Option<&str>, reason: String| -> String {
        problems.push(at.problem(key.or(Some(&prefix)), format!("source `{name}`: {reason}")));
        reason
    };
    let Some(kind_name) = s.kind.clone() else {
        return Err(fail(&s.at, None, format!("no `kind` ({})", KINDS.join(", "))));
    };
    let need = |field: &Option<Set<String>>, what: &str| -> Result<Set<String>, String> {
        field.clone().filter(|f| !f.value.trim().is_empty()).ok_or_else(|| format!("no `{what}`"))
    };
    let kind = match kind_name.as_str() {
        "feed" => {
            let url = need(&s.url, "url").map_err(|r| fail(&s.at, None, r))?;
            check_url(&url.value).map_err(|r| fail(&url.at, Some(&format!("{prefix}.url")), r))?;
            SourceKind::Feed { url: url.value }
        }
        "ics" => {
            let at = match (&s.url, &s.path) {
                (Some(_), Some(p)) => {
                    return Err(fail(
                        &p.at,
                        Some(&format!("{prefix}.path")),
                        "set `url` or `path`, not both".into(),
                    ));
                }
                (Some(u), None) => {
                    check_url(&u.value).map_err(|r| fail(&u.at, Some(&format!("{prefix}.url")), r))?;
                    IcsLocation::Url(u.value.clone())
                }
                (None, Some(p)) => IcsLocation::Path(PathBuf::from(&p.value)),
                (None, None) => return Err(fail(&s.at, None, "no `url` or `path`".into())),
            };
            SourceKind::Ics { at, horizon: s.horizon.unwrap_or(Duration::from_secs(2 * 24 * 3600)) }
        }
        "imap" => {
            let host = need(&s.host, "host").map_err(|r| fail(&s.at, None, r))?;
            let username = need(&s.username, "username").map_err(|r| fail(&s.at, None, r))?;
            let password_env = need(&s.password_env, "password_env").map_err(|r| fail(&s.at, None, r))?;
            let tls = match s.tls.as_ref().map(|t| t.value.as_str()) {
                None | Some("implicit") => ImapTls::Implicit,
                Some("starttls") => ImapTls::StartTls,
                Some("none") => ImapTls::None,
                Some(_) => {
                    let at = s.tls.as_ref().map_or(&s.at, |t| &t.at);
                    return Err(fail(
                        at,
                        Some(&format!("{prefix}.tls")),
                        "`tls` must be implicit, starttls or none".into(),
                    ));
                }
            };
            if tls == ImapTls::None && !is_loopback_host(&host.value) {
                let at = s.tls.as_ref().map_or(&s.at, |t| &t.at);
                return Err(fail(
                    at,
                    Some(&format!("{prefix}.tls")),
                    "`tls = \"none\"` sends the password in clear text: only to a loopback address (127.0.0.1, ::1, localhost)".into(),
                ));
            }
            let port = s.port.unwrap_or(if tls == ImapTls::Implicit { 993 } else { 143 });
            SourceKind::Imap(ImapSourceConfig {
                host: host.value,
                port,
                tls,
                username: username.value,
                password_env: password_env.value,
                mailbox: s
                    .mailbox
                    .clone()
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| "INBOX".to_owned()),
                idle_min_gap: s.idle_min_gap.unwrap_or(crate::config::DEFAULT_IDLE_MIN_GAP),
            })
        }
        "webhook" => {
            let listen =
                need(&s.listen, "listen (like \"127.0.0.1:8787\")").map_err(|r| fail(&s.at, None, r))?;
            let key = format!("{prefix}.listen");
            let addr: SocketAddr = listen.value.trim().parse().map_err(|_| {
                fail(
                    &listen.at,
                    Some(&key),
                    "`listen` must be an address and port, like \"127.0.0.1:8787\"".into(),
                )
            })?;
            // A folder's file arrives with a clone: it must not open the machine to the network.
            if !addr.ip().is_loopback() && listen.at.origin != Origin::User {
                return Err(fail(
                    &listen.at,
                    Some(&key),
                    "a webhook listens on a non-loopback address only when your own config (~/.config/livenote/config.toml) says so".into(),
                ));
            }
            let path = s.path.as_ref().map_or_else(|| "/".to_owned(), |p| p.value.trim().to_owned());
            if !path.starts_with('/') {
                let at = s.path.as_ref().map_or(&s.at, |p| &p.at);
                return Err(fail(at, Some(&format!("{prefix}.path")), "`path` must start with `/`".into()));
            }
            let token_env = s.token_env.as_ref().map(|t| t.value.clone());
            let secret_env = s.secret_env.as_ref().map(|t| t.value.clone());
            if token_env.is_none() && secret_env.is_none() {
                return Err(fail(
                    &s.at,
                    None,
                    "no `token_env` or `secret_env`: a webhook accepts only requests that prove they know a secret".into(),
                ));
            }
            SourceKind::Webhook(WebhookSourceConfig { listen: addr, path, token_env, secret_env })
        }
        _ => {
            let command = s
                .command
                .clone()
                .filter(|c| c.value.first().is_some_and(|p| !p.is_empty()))
                .ok_or_else(|| fail(&s.at, None, "no `command` (a program and its arguments)".into()))?;
            SourceKind::Command(CommandConfig {
                command: command.value,
                timeout: s.timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT),
            })
        }
    };
    let every = match (&kind, &s.every) {
        (SourceKind::Webhook(_), Some(e)) => {
            problems.push(e.at.problem(
                Some(&format!("{prefix}.every")),
                format!("`{prefix}.every` does not apply to a webhook (it listens); ignored"),
            ));
            None
        }
        (SourceKind::Webhook(_), None) => None,
        (_, e) => e.as_ref().map(|e| e.value).or_else(|| default_every(&kind_name)),
    };
    let event_type = s
        .event_type
        .as_ref()
        .map(|t| t.value.clone())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| default_event_type(&kind_name).to_owned());
    Ok(SourceConfig {
        kind,
        every,
        enabled: s.enabled.unwrap_or(true),
        backfill: s.backfill.unwrap_or(false),
        event_type,
        origin: s.origin,
        folders: s.folders.unwrap_or_default(),
    })
}

/// An `http(s)://` address with a host.
fn check_url(url: &str) -> Result<(), String> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => Ok(()),
        _ => Err("`url` must be an http:// or https:// address".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::tests::messages;
    use crate::config::{Config, IcsLocation, ImapTls, Origin, SourceKind};

    fn layers(files: &[(&str, Origin)]) -> (Config, Vec<String>) {
        let (config, problems) = super::super::tests::toml_layers(files);
        (config, messages(&problems))
    }

    #[test]
    fn every_kind_with_its_defaults() {
        let (c, problems) = layers(&[(
            r#"
[sources.news]
kind = "feed"
url = "https://example.com/feed.xml"

[sources.cal]
kind = "ics"
path = "calendar.ics"

[sources.mail]
kind = "imap"
host = "imap.fastmail.com"
username = "me@example.com"
password_env = "FASTMAIL_PASSWORD"

[sources.gh]
kind = "webhook"
listen = "127.0.0.1:8787"
path = "/github"
secret_env = "GITHUB_WEBHOOK_SECRET"

[sources.script]
kind = "command"
command = ["./poll.sh"]
every = "1h"
backfill = true
type = "my.event"
enabled = false
"#,
            Origin::Workspace,
        )]);
        assert!(problems.is_empty(), "{problems:?}");
        let min = |m: u64| Some(std::time::Duration::from_secs(m * 60));
        let s = &c.sources;
        assert_eq!(
            (s["news"].every, s["news"].event_type.as_str(), s["news"].backfill),
            (min(15), "feed.entry", false)
        );
        assert_eq!((s["cal"].every, s["cal"].event_type.as_str()), (min(15), "calendar.digest"));
        assert!(
            matches!(&s["cal"].kind, SourceKind::Ics { at: IcsLocation::Path(p), horizon } if p == &PathBuf::from("calendar.ics") && horizon.as_secs() == 2 * 86400)
        );
        let SourceKind::Imap(imap) = &s["mail"].kind else { panic!("{:?}", s["mail"]) };
        assert_eq!((imap.port, imap.tls, imap.mailbox.as_str()), (993, ImapTls::Implicit, "INBOX"));
        assert_eq!(imap.idle_min_gap, crate::config::DEFAULT_IDLE_MIN_GAP);
        assert_eq!((s["mail"].every, s["mail"].event_type.as_str()), (min(5), "mail.message"));
        assert_eq!((s["gh"].every, s["gh"].event_type.as_str()), (None, "webhook.post"));
        let script = &s["script"];
        assert_eq!(
            (script.every, script.event_type.as_str(), script.backfill, script.enabled),
            (min(60), "my.event", true, false)
        );
        assert!(script.needs_trust());
    }

    #[test]
    fn layers_merge_by_name_and_the_users_file_alone_opens_a_webhook_to_the_network() {
        let user = "[sources.gh]\nkind = \"webhook\"\nlisten = \"0.0.0.0:8787\"\ntoken_env = \"T\"\n[sources.mail]\nkind = \"imap\"\nhost = \"127.0.0.1\"\ntls = \"none\"\nusername = \"u\"\npassword_env = \"P\"\n";
        let folder = "[sources.mail]\nmailbox = \"Q3\"\n";
        let (c, problems) = layers(&[(user, Origin::User), (folder, Origin::Workspace)]);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!c.sources["gh"].needs_trust());
        let SourceKind::Imap(imap) = &c.sources["mail"].kind else { panic!() };
        assert_eq!((imap.port, imap.mailbox.as_str()), (143, "Q3"));
        assert!(c.sources["mail"].needs_trust(), "the folder changed it");
        // The same webhook from a folder's file is refused; changing the kind starts afresh.
        let (c, problems) =
            layers(&[(user, Origin::Workspace), ("[sources.mail]\nkind = \"command\"\n", Origin::Workspace)]);
        assert!(c.sources.is_empty(), "{:?}", c.sources);
        assert_eq!(
            problems,
            [
                "/cfg/workspace.toml:3:10: source `gh`: a webhook listens on a non-loopback address only when your own config (~/.config/livenote/config.toml) says so",
                "/cfg/workspace.toml:1:10: source `mail`: no `command` (a program and its arguments)",
            ]
        );
    }

    #[test]
    fn only_the_users_file_names_the_folders_a_source_serves() {
        let user = "[sources.mail]\nkind = \"command\"\ncommand = [\"true\"]\nfolders = [\"~/notes\", \"/srv/team\", \"relative\"]\n";
        let (c, problems) = layers(&[(user, Origin::User)]);
        assert_eq!(c.sources["mail"].folders, [PathBuf::from("~/notes"), PathBuf::from("/srv/team")]);
        assert_eq!(
            problems,
            [
                "/cfg/user.toml:4:11: `sources.mail.folders`: `relative` is not an absolute path (or one starting with ~/); ignored"
            ]
        );
        // A folder's file cannot widen or narrow them, nor give its own sources any.
        let folder = "[sources.mail]\nfolders = [\"/elsewhere\"]\n[sources.own]\nkind = \"command\"\ncommand = [\"true\"]\nfolders = [\"/x\"]\n";
        let (c, problems) = layers(&[(user, Origin::User), (folder, Origin::Workspace)]);
        assert_eq!(c.sources["mail"].folders, [PathBuf::from("~/notes"), PathBuf::from("/srv/team")]);
        assert!(c.sources["own"].folders.is_empty());
        let read_only_there =
            problems.iter().filter(|p| p.contains("is read only from your own config")).count();
        assert_eq!(read_only_there, 2, "{problems:?}");
    }

    #[test]
    fn a_source_serves_the_folders_it_names_through_links_and_from_home() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let notes = dir.path().join("notes");
        let other = dir.path().join("other");
        for d in [&notes, &other] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let home = dir.path().display().to_string();
        let env = move |k: &str| (k == "HOME" || k == "USERPROFILE").then(|| std::ffi::OsString::from(&home));
        let user = "[sources.mail]\nkind = \"command\"\ncommand = [\"true\"]\nfolders = [\"~/notes\"]\n";
        let (c, _) = layers(&[(user, Origin::User)]);
        let mail = &c.sources["mail"];
        assert!(mail.serves(&notes, &env));
        assert!(!mail.serves(&other, &env));
        // A link to the folder names it: compared by canonical paths.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&notes, dir.path().join("link")).unwrap_or_else(|e| panic!("{e}"));
            let user = "[sources.mail]\nkind = \"command\"\ncommand = [\"true\"]\nfolders = [\"~/link\"]\n";
            let (c, _) = layers(&[(user, Origin::User)]);
            assert!(c.sources["mail"].serves(&notes, &env) && !c.sources["mail"].serves(&other, &env));
        }
        let (c, _) = layers(&[("[sources.all]\nkind = \"command\"\ncommand = [\"true\"]\n", Origin::User)]);
        assert!(c.sources["all"].serves(&other, &env), "without `folders`, every (trusted) folder");
    }

    #[test]
    fn mistakes_are_reported_and_secrets_never_echoed() {
        let (c, problems) = layers(&[(
            "[sources.\"a/b\"]\nkind = \"feed\"\n[sources.f]\nkind = \"feed\"\nurl = \"ftp://x\"\n[sources.m]\nkind = \"imap\"\nhost = \"mail.example.com\"\nusername = \"u\"\npassword_env = \"hunter2!\"\npassword = \"hunter2\"\n[sources.w]\nkind = \"webhook\"\nlisten = \"127.0.0.1:1\"\n[sources.z]\nkind = \"rss\"\n",
            Origin::User,
        )]);
        assert!(c.sources.is_empty(), "{:?}", c.sources);
        let all = problems.join("\n");
        assert!(!all.contains("hunter2"), "{all}");
        for want in [
            "a source name may hold only letters",
            "`url` must be an http:// or https:// address",
            "`sources.m.password_env` must be the name of an environment variable",
            "`sources.m.password` is ignored: secrets are never read from configuration",
            "no `token_env` or `secret_env`",
            "unknown source kind in `sources.z.kind` (use feed, ics, imap, webhook, command)",
        ] {
            assert!(all.contains(want), "{want}:\n{all}");
        }
        assert_eq!(c.broken_sources.keys().collect::<Vec<_>>(), ["f", "m", "w", "z"]);
    }

    /// A mailbox's IDLE gap: as set, but never under a second (a folder's file must not make
    /// a mail server a stream of logins); a value refused leaves the default.
    #[test]
    fn the_idle_gap_is_at_least_a_second() {
        let mail = |gap: &str| {
            format!(
                "[sources.mail]\nkind = \"imap\"\nhost = \"127.0.0.1\"\ntls = \"none\"\nusername = \"u\"\npassword_env = \"P\"\nidle_min_gap = \"{gap}\"\n"
            )
        };
        let gap_of = |c: &Config| match &c.sources["mail"].kind {
            SourceKind::Imap(i) => i.idle_min_gap,
            other => panic!("{other:?}"),
        };
        let (c, problems) = layers(&[(&mail("2m"), Origin::Workspace)]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(gap_of(&c), std::time::Duration::from_secs(120));
        let (c, problems) = layers(&[(&mail("200ms"), Origin::Workspace)]);
        assert_eq!(gap_of(&c), crate::config::DEFAULT_IDLE_MIN_GAP);
        assert!(
            problems.join("\n").contains("`sources.mail.idle_min_gap` must be at least 1s"),
            "{problems:?}"
        );
    }
}
