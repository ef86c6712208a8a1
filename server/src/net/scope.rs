//! What an IP address reaches, and what a fetch may reach.
//!
//! Decisions worth knowing:
//! - An address that carries an IPv4 address reaches that address (through the kernel, a
//!   NAT64 gateway or a relay), so it is judged by it: `::ffff:127.0.0.1`, `::ffff:7f00:1`,
//!   `::127.0.0.1`, `64:ff9b::7f00:1`, `2002:7f00:1::` are all this machine.
//! - The unspecified address (`0.0.0.0`, `::`) and the rest of `0.0.0.0/8` are this machine:
//!   a connection to `0.0.0.0` reaches a local listener on Linux and macOS.
//! - Anything that is neither this machine, the link nor the public internet (RFC 1918, shared
//!   address space, unique local, documentation, benchmarking, multicast, reserved) is
//!   [`Scope::Private`]: none of it is a public web server, and some of it is the user's
//!   router, printer or NAS.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// How far from this machine an address is, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// This machine: `127.0.0.0/8`, `::1`, `0.0.0.0/8`, `::`, and their IPv6 spellings.
    Loopback,
    /// The local link: `169.254.0.0/16`, `fe80::/10` (routers, cloud metadata services).
    LinkLocal,
    /// A private network or an address that is not on the public internet.
    Private,
    /// The public internet.
    Public,
}

impl Scope {
    /// The scope in words, for messages: "… redirected to X, {describe}, which is refused".
    pub fn describe(self) -> &'static str {
        match self {
            Scope::Loopback => "on this machine (loopback)",
            Scope::LinkLocal => "a link-local address (a router or a cloud metadata service)",
            Scope::Private => "on a private network",
            Scope::Public => "on the internet",
        }
    }
}

/// The scope of `ip`.
pub fn scope(ip: IpAddr) -> Scope {
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => v6(ip),
    }
}

fn v4(ip: Ipv4Addr) -> Scope {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() || a == 0 {
        Scope::Loopback
    } else if ip.is_link_local() {
        Scope::LinkLocal
    } else if ip.is_private()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        // 240.0.0.0/4, reserved.
        || a >= 240
        // 100.64.0.0/10, carrier-grade NAT.
        || (a == 100 && (b & 0xc0) == 64)
        // 192.0.0.0/24, protocol assignments; 198.18.0.0/15, benchmarking.
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b & 0xfe) == 18)
    {
        Scope::Private
    } else {
        Scope::Public
    }
}

/// The IPv4 address in two segments.
fn embedded(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
}

fn v6(ip: Ipv6Addr) -> Scope {
    match ip.segments() {
        // ::ffff:a.b.c.d, IPv4-mapped.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => v4(embedded(hi, lo)),
        // ::/96: the deprecated IPv4-compatible `::a.b.c.d`; `::1` (0.0.0.1) and `::` (0.0.0.0)
        // land on this machine as their IPv4 reading does. Never public: no router carries it.
        [0, 0, 0, 0, 0, 0, hi, lo] => v4(embedded(hi, lo)).min(Scope::Private),
        // ::ffff:0:a.b.c.d, IPv4-translated (RFC 6145).
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => v4(embedded(hi, lo)),
        // 64:ff9b::/96, the NAT64 well-known prefix (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => v4(embedded(hi, lo)),
        // The rest of 64:ff9b::/32, including 64:ff9b:1::/48 (local-use NAT64, RFC 8215).
        [0x64, 0xff9b, ..] => Scope::Private,
        // 2002::/16, 6to4: the IPv4 address follows the prefix.
        [0x2002, hi, lo, ..] => v4(embedded(hi, lo)),
        // 2001::/32, Teredo: the server's address, then the client's (inverted) at the end.
        [0x2001, 0, shi, slo, _, _, chi, clo] => v4(embedded(shi, slo)).min(v4(embedded(!chi, !clo))),
        // 2001:db8::/32, documentation; 100::/64, discard-only.
        [0x2001, 0x0db8, ..] | [0x0100, 0, 0, 0, ..] => Scope::Private,
        // fe80::/10, link-local.
        [first, ..] if (first & 0xffc0) == 0xfe80 => Scope::LinkLocal,
        // fc00::/7 unique local, fec0::/10 site-local, ff00::/8 multicast.
        [first, ..]
            if (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfec0 || (first & 0xff00) == 0xff00 =>
        {
            Scope::Private
        }
        _ => Scope::Public,
    }
}

/// The addresses a fetch may connect to.
///
/// A source's own `url` is what the user named, so its first request goes wherever the host
/// resolves ([`Reach::Anything`]). Every redirect after it may reach the public internet, and
/// the scope the source's host was in, nothing nearer and no other local scope
/// ([`Reach::PublicAnd`]): a feed on the internet can send a poll only to the internet, a
/// feed on the LAN also to the LAN (never to this machine or the link), a feed on this machine
/// also to this machine (a local server moving its feed). The agent's `fetch_url` reaches the
/// public internet alone ([`Reach::Public`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Any address: a host the user named.
    Anything,
    /// Public addresses, and those of one more scope.
    PublicAnd(Scope),
    /// Public addresses only.
    Public,
}

impl Reach {
    /// Whether an address of `scope` may be connected to.
    pub fn allows(self, scope: Scope) -> bool {
        match self {
            Reach::Anything => true,
            Reach::PublicAnd(also) => scope == Scope::Public || scope == also,
            Reach::Public => scope == Scope::Public,
        }
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
