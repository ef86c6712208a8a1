use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;

fn of(text: &str) -> Scope {
    scope(text.parse::<IpAddr>().unwrap_or_else(|e| panic!("{text}: {e}")))
}

#[test]
fn addresses_have_the_scope_they_reach() {
    use Scope::*;
    for (addr, want) in [
        // This machine, however it is spelled.
        ("127.0.0.1", Loopback),
        ("127.255.255.254", Loopback),
        ("0.0.0.0", Loopback),
        ("0.1.2.3", Loopback),
        ("::1", Loopback),
        ("::", Loopback),
        ("::ffff:127.0.0.1", Loopback),
        ("::ffff:7f00:1", Loopback),
        ("::ffff:0.0.0.0", Loopback),
        ("::127.0.0.1", Loopback),
        ("::7f00:1", Loopback),
        ("::ffff:0:127.0.0.1", Loopback),
        ("64:ff9b::7f00:1", Loopback),
        ("2002:7f00:1::1", Loopback),
        ("2001:0:7f00:1::", Loopback),
        // Teredo whose client is 127.0.0.1 (inverted at the end).
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", Loopback),
        // The link: routers and cloud metadata services.
        ("169.254.169.254", LinkLocal),
        ("::ffff:169.254.169.254", LinkLocal),
        ("::ffff:a9fe:a9fe", LinkLocal),
        ("64:ff9b::a9fe:a9fe", LinkLocal),
        ("fe80::1", LinkLocal),
        ("febf::1", LinkLocal),
        // Private networks and what is not on the internet.
        ("10.1.2.3", Private),
        ("172.16.0.1", Private),
        ("172.31.255.255", Private),
        ("192.168.1.1", Private),
        ("::ffff:192.168.1.1", Private),
        ("::ffff:c0a8:101", Private),
        ("2002:c0a8:101::", Private),
        ("100.64.0.1", Private),
        ("192.0.0.8", Private),
        ("192.0.2.1", Private),
        ("198.18.0.1", Private),
        ("224.0.0.1", Private),
        ("240.0.0.1", Private),
        ("255.255.255.255", Private),
        ("::8.8.8.8", Private),
        ("64:ff9b:1::8.8.8.8", Private),
        ("2001:db8::1", Private),
        ("100::1", Private),
        ("fc00::1", Private),
        ("fd12:3456::1", Private),
        ("fec0::1", Private),
        ("ff02::1", Private),
        // The internet.
        ("8.8.8.8", Public),
        ("172.32.0.1", Public),
        ("100.128.0.1", Public),
        ("::ffff:8.8.8.8", Public),
        ("64:ff9b::8.8.8.8", Public),
        ("2002:808:808::1", Public),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", Public),
        ("2606:4700:4700::1111", Public),
    ] {
        assert_eq!(of(addr), want, "{addr}");
    }
}

#[test]
fn a_redirect_reaches_the_internet_and_its_sources_own_scope_only() {
    use Scope::*;
    let all = [Loopback, LinkLocal, Private, Public];
    let allowed = |reach: Reach| all.into_iter().filter(|s| reach.allows(*s)).collect::<Vec<_>>();
    assert_eq!(allowed(Reach::Anything), all);
    assert_eq!(allowed(Reach::Public), [Public]);
    assert_eq!(allowed(Reach::PublicAnd(Public)), [Public]);
    assert_eq!(allowed(Reach::PublicAnd(Private)), [Private, Public]);
    assert_eq!(allowed(Reach::PublicAnd(LinkLocal)), [LinkLocal, Public]);
    assert_eq!(allowed(Reach::PublicAnd(Loopback)), [Loopback, Public]);
}

fn v6(segments: [u16; 8]) -> IpAddr {
    IpAddr::V6(Ipv6Addr::from(segments))
}

proptest! {
    /// Every IPv6 spelling that carries an IPv4 address reaches what that address reaches
    /// (the deprecated IPv4-compatible form never the internet, since nothing routes it).
    #[test]
    fn ipv6_spellings_of_an_ipv4_address_share_its_scope(bits: u32) {
        let ip = Ipv4Addr::from(bits);
        let want = scope(IpAddr::V4(ip));
        let (hi, lo) = ((bits >> 16) as u16, bits as u16);
        prop_assert_eq!(scope(IpAddr::V6(ip.to_ipv6_mapped())), want);
        prop_assert_eq!(scope(v6([0, 0, 0, 0, 0, 0xffff, hi, lo])), want);
        prop_assert_eq!(scope(v6([0, 0, 0, 0, 0xffff, 0, hi, lo])), want);
        prop_assert_eq!(scope(v6([0x64, 0xff9b, 0, 0, 0, 0, hi, lo])), want);
        prop_assert_eq!(scope(v6([0x2002, hi, lo, 0, 0, 0, 0, 1])), want);
        prop_assert_eq!(scope(IpAddr::V6(ip.to_ipv6_compatible())), want.min(Scope::Private));
        // The mapped form written as text, as a URL carries it, parses to the same scope.
        let text = format!("::ffff:{hi:x}:{lo:x}");
        prop_assert_eq!(of(&text), want);
    }

    /// The canonical form of any IPv6 address (a mapped one becomes IPv4) has its scope.
    #[test]
    fn an_address_and_its_canonical_form_have_one_scope(segments: [u16; 8]) {
        let ip = Ipv6Addr::from(segments);
        prop_assert_eq!(scope(IpAddr::V6(ip)), scope(ip.to_canonical()));
    }
}
