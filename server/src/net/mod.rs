//! Where an HTTP request of livenote may go, decided by the address it connects to, never by
//! the URL's text: `[::ffff:7f00:1]`, `0.0.0.0` and a name in a hosts file are this machine as
//! much as `127.0.0.1` is. One home for the rule of every fetch that follows what a server says
//! (a feed's or a calendar's redirects, the agent's `fetch_url`):
//! - [`scope`]: what an address reaches (this machine, the link, a private network, the
//!   internet), IPv6 forms that carry an IPv4 address judged by that address. Pure.
//! - [`target`]: a URL's host resolved once, every address checked against a [`Reach`], and
//!   the connection pinned to the addresses that were checked (a second lookup by the HTTP
//!   client could answer otherwise: DNS rebinding).

pub mod scope;
pub mod target;
#[cfg(test)]
pub mod testing;

pub use scope::{Reach, Scope, scope};
pub use target::{NoHost, Resolve, SystemResolver, Target};
