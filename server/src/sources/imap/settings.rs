//! A mailbox source's settings: the server, how the connection is protected, the account and
//! where its password comes from; checked before any connection (`tls = "none"` only to a
//! loopback address); the password itself is `secret.rs`'s.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::{DEFAULT_MAILBOX, ImapError, Password};

/// How the connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    /// TLS from the first byte (port 993).
    #[default]
    Implicit,
    /// A plain connection upgraded by STARTTLS before the login (port 143).
    Starttls,
    /// No TLS: only to a loopback address (a local bridge such as Proton Mail's, or a test).
    None,
}

impl Tls {
    fn default_port(self) -> u16 {
        match self {
            Tls::Implicit => 993,
            Tls::Starttls | Tls::None => 143,
        }
    }
}

/// The keys of `[sources.NAME]` this kind reads (the common ones, `every`, `backfill` ..., are
/// the framework's): deserialised from the source's table, other keys ignored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ImapSettings {
    pub host: String,
    /// Default: 993 with implicit TLS, else 143.
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub tls: Tls,
    pub username: String,
    /// The environment variable holding the password (an app password for Gmail or Fastmail).
    pub password_env: String,
    #[serde(default = "default_mailbox")]
    pub mailbox: String,
}

fn default_mailbox() -> String {
    DEFAULT_MAILBOX.to_owned()
}

impl ImapSettings {
    /// The settings of a `kind = "imap"` source: one home for the poll and the IDLE watcher.
    pub fn of(c: &crate::config::ImapSourceConfig) -> ImapSettings {
        use crate::config::ImapTls;
        ImapSettings {
            host: c.host.clone(),
            port: Some(c.port),
            tls: match c.tls {
                ImapTls::Implicit => Tls::Implicit,
                ImapTls::StartTls => Tls::Starttls,
                ImapTls::None => Tls::None,
            },
            username: c.username.clone(),
            password_env: c.password_env.clone(),
            mailbox: c.mailbox.clone(),
        }
    }

    pub fn port(&self) -> u16 {
        self.port.unwrap_or_else(|| self.tls.default_port())
    }

    /// `host:port`, how errors and logs name the server.
    pub fn server(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host.trim_start_matches('[').trim_end_matches(']'), self.port())
        } else {
            format!("{}:{}", self.host, self.port())
        }
    }

    /// What can be told wrong without connecting: empty fields, a mailbox name IMAP cannot
    /// quote, `tls = "none"` to anything but a loopback address.
    pub fn check(&self) -> Result<(), ImapError> {
        let bad = |what: String| Err(ImapError::Config(what));
        if self.host.trim().is_empty() {
            return bad("`host` is empty".to_owned());
        }
        if self.username.is_empty() {
            return bad("`username` is empty".to_owned());
        }
        if self.password_env.is_empty() {
            return bad(
                "`password_env` is empty: name the environment variable holding the password".to_owned()
            );
        }
        if self.mailbox.is_empty() || self.mailbox.chars().any(|c| c.is_control()) {
            return bad(format!("`mailbox` {:?} is not a mailbox name", self.mailbox));
        }
        if self.tls == Tls::None && !is_loopback_host(&self.host) {
            return bad(format!(
                "`tls = \"none\"` sends the password in clear text: allowed only to a loopback address, not {}; use tls = \"implicit\" or \"starttls\"",
                self.host
            ));
        }
        Ok(())
    }

    /// The password from the environment variable `password_env` names, looked up by `env`
    /// (`std::env::var` in the service, a map in tests).
    pub fn password(&self, env: impl Fn(&str) -> Option<String>) -> Result<Password, ImapError> {
        match env(&self.password_env) {
            Some(p) if !p.is_empty() => Ok(Password(p)),
            _ => Err(ImapError::MissingPassword { var: self.password_env.clone() }),
        }
    }
}

/// `localhost` (and `*.localhost`) or a loopback IP address.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
