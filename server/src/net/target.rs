//! A URL's host resolved once, before connecting: the addresses a request will reach, checked
//! against a [`Reach`], and a reqwest client pinned to exactly those addresses.
//!
//! Decisions worth knowing:
//! - Every address a name resolves to is checked, not the first: the client may try any.
//! - The client is pinned (`ClientBuilder::resolve_to_addrs`): reqwest would otherwise look the
//!   name up again when it connects, and a name with a short TTL can answer a public address to
//!   the check and `127.0.0.1` to the connection.
//! - A name that does not resolve here is pinned to no address at all, so a direct connection
//!   fails; through a proxy set in the environment (`HTTPS_PROXY`…), the proxy resolves it and
//!   decides where it leads, as it does for every name it is asked for.
//! - A host on this machine only is reached directly, never through a proxy.

use std::net::{IpAddr, SocketAddr};

use futures::future::BoxFuture;
use reqwest::{ClientBuilder, Url};

use super::scope::{Reach, Scope, scope};

/// Looks a name up: the system's resolver in the product, a table in tests.
pub trait Resolve: Send + Sync {
    fn lookup<'a>(&'a self, name: &'a str, port: u16) -> BoxFuture<'a, std::io::Result<Vec<SocketAddr>>>;
}

/// The system's resolver (`getaddrinfo`: the hosts file, then DNS).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(&'a self, name: &'a str, port: u16) -> BoxFuture<'a, std::io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { tokio::net::lookup_host((name, port)).await.map(Iterator::collect) })
    }
}

/// The URL has no host to resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the URL has no host")]
pub struct NoHost;

/// Where a URL leads: its host's addresses, as resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The name the addresses are pinned for; `None` for an address literal.
    name: Option<String>,
    addrs: Vec<SocketAddr>,
    /// Why the name did not resolve here.
    lookup_error: Option<String>,
}

impl Target {
    /// Resolves `url`'s host with `resolver` (an address literal is its own answer).
    pub async fn resolve(url: &Url, resolver: &dyn Resolve) -> Result<Target, NoHost> {
        let port = url.port_or_known_default().unwrap_or(443);
        // `domain()` is `None` for an address literal, whose text `host_str` brackets if IPv6.
        let Some(name) = url.domain() else {
            let literal = url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
            let ip: IpAddr = literal.parse().map_err(|_| NoHost)?;
            return Ok(Target { name: None, addrs: vec![SocketAddr::new(ip, port)], lookup_error: None });
        };
        if name.is_empty() {
            return Err(NoHost);
        }
        let (addrs, lookup_error) = match resolver.lookup(name, port).await {
            Ok(addrs) if addrs.is_empty() => (addrs, Some("the name has no address".to_owned())),
            Ok(addrs) => (addrs, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        Ok(Target { name: Some(name.to_owned()), addrs, lookup_error })
    }

    /// The addresses a connection may use.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Why the name did not resolve here (`None`: it did, or it is an address).
    pub fn lookup_error(&self) -> Option<&str> {
        self.lookup_error.as_deref()
    }

    /// The first address `reach` does not allow, with its scope.
    pub fn refused(&self, reach: Reach) -> Option<(IpAddr, Scope)> {
        self.addrs.iter().map(|a| (a.ip(), scope(a.ip()))).find(|(_, s)| !reach.allows(*s))
    }

    /// The farthest scope among the addresses (`None` when there are none): what the host is,
    /// for the redirects after it. A name that answers both a public and a local address is
    /// taken for public, which lets its redirects reach less.
    pub fn farthest(&self) -> Option<Scope> {
        self.addrs.iter().map(|a| scope(a.ip())).max()
    }

    /// `builder` pinned to these addresses: a name is not looked up again.
    pub fn pin(&self, builder: ClientBuilder) -> ClientBuilder {
        let builder = match &self.name {
            Some(name) => builder.resolve_to_addrs(name, &self.addrs),
            None => builder,
        };
        if self.farthest() == Some(Scope::Loopback) { builder.no_proxy() } else { builder }
    }
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
