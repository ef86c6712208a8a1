//! The web tool (`fetch_url`): address checks, the fetcher, HTML to text.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{ToolError, clip};
use crate::model::BoxFuture;
use crate::text::html::html_to_text;

// ---------------------------------------------------------------------------------------------
// The web

/// Fetches a web page as text. Implementations honour `max_bytes`, `timeout` and `cancel`,
/// follow redirects only to http(s) URLs that pass [`check_url`] (and refuse hosts that
/// resolve to local or private addresses), and return a short error message otherwise.
pub trait Fetcher: Send + Sync {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_bytes: usize,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// A fetcher that never fetches: for runs and tests that must stay off the network. It
/// answers that fetching is not available.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFetcher;

impl Fetcher for NoFetcher {
    fn fetch<'a>(
        &'a self,
        _url: &'a str,
        _max_bytes: usize,
        _timeout: Duration,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async { Err("fetch_url is not available in this build".to_owned()) })
    }
}

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

/// The real fetcher, over HTTP(S) with reqwest. Every hop (redirects are followed by hand, at
/// most [`MAX_REDIRECTS`]) passes [`check_url`], and its host must resolve only to public
/// addresses, which the connection is then pinned to: a page cannot make livenote reach the
/// user's router, a cloud metadata service or a local dev server. (Through a proxy set in the
/// environment, the proxy resolves names.) HTML comes back as plain text; other types than
/// text, JSON and XML are refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpFetcher {
    /// Reach loopback and private addresses too: only for tests against a local server.
    allow_private: bool,
}

impl Fetcher for HttpFetcher {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_bytes: usize,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            tokio::select! {
                biased;
                () = cancel.cancelled() => Err("stopped".to_owned()),
                r = tokio::time::timeout(timeout, http_fetch(url, max_bytes, timeout, self.allow_private)) => {
                    r.unwrap_or_else(|_| Err("the fetch timed out".to_owned()))
                }
            }
        })
    }
}

async fn http_fetch(
    url: &str,
    max_bytes: usize,
    timeout: Duration,
    allow_private: bool,
) -> Result<String, String> {
    let mut url = reqwest::Url::parse(url.trim()).map_err(|e| format!("invalid URL: {e}"))?;
    for _ in 0..=MAX_REDIRECTS {
        check_url_with(url.as_str(), allow_private).map_err(|e| e.0)?;
        let client = pinned_client(&url, timeout, allow_private).await?;
        let mut response = client.get(url.clone()).send().await.map_err(|e| fetch_error(&e))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("HTTP {status} without a Location"))?;
            url = url.join(location).map_err(|e| format!("bad redirect: {e}"))?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/plain")
            .to_ascii_lowercase();
        let textual = content_type.starts_with("text/")
            || ["json", "xml", "javascript"].iter().any(|t| content_type.contains(t));
        if !textual {
            return Err(format!("not a text page ({content_type})"));
        }
        let mut bytes = Vec::new();
        let mut cut = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| fetch_error(&e))? {
            let room = max_bytes.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                cut = true;
                break;
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut text = if content_type.contains("html") { html_to_text(&text) } else { text.into_owned() };
        if cut {
            text.push_str(&format!("\n[… the page is longer than {max_bytes} bytes and was cut]"));
        }
        return Ok(text);
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// A client that reaches `url`'s host only at the public addresses it resolves to now.
async fn pinned_client(
    url: &reqwest::Url,
    timeout: Duration,
    allow_private: bool,
) -> Result<reqwest::Client, String> {
    let builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .timeout(timeout)
        .user_agent(concat!("livenote/", env!("CARGO_PKG_VERSION"), " (fetch_url)"));
    // `domain()` is `None` for an IP literal, which `check_url` has already judged.
    let builder = match (url.domain(), url.host_str()) {
        (Some(domain), _) => {
            let port = url.port_or_known_default().unwrap_or(443);
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((domain, port))
                .await
                .map_err(|e| format!("cannot resolve {domain}: {e}"))?
                .collect();
            if addrs.is_empty() {
                return Err(format!("cannot resolve {domain}"));
            }
            if !allow_private && addrs.iter().any(|a| !is_public(a.ip())) {
                return Err("local and private network addresses are refused".to_owned());
            }
            builder.resolve_to_addrs(domain, &addrs)
        }
        (None, Some(_)) => builder,
        (None, None) => return Err("the URL has no host".to_owned()),
    };
    builder.build().map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// One short line for a failed request (reqwest's messages can repeat the whole URL).
fn fetch_error(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "the response broke off"
    } else {
        "the request failed"
    };
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{kind}: {}", clip(&cause.to_string(), 200))
}

/// Whether `url` may be fetched: http(s) only, no credentials, no local or private hosts
/// (by name or literal address; a real fetcher must also check where the name resolves).
pub fn check_url(url: &str) -> Result<(), ToolError> {
    check_url_with(url, false)
}

fn check_url_with(url: &str, allow_private: bool) -> Result<(), ToolError> {
    let url = url.trim();
    if url.len() > 2048 {
        return Err(ToolError::new("the URL is longer than 2048 bytes"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ToolError::new("the URL contains spaces or control characters"));
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .ok_or_else(|| ToolError::new("only http:// and https:// URLs can be fetched"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(ToolError::new("URLs with credentials are refused"));
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(ToolError::new("the URL has no host"));
    }
    let local_name = host == "localhost"
        || [".localhost", ".local", ".internal", ".localdomain"].iter().any(|s| host.ends_with(s));
    if !allow_private && (local_name || host.parse::<IpAddr>().is_ok_and(|ip| !is_public(ip))) {
        return Err(ToolError::new("local and private network addresses are refused"));
    }
    Ok(())
}

fn is_public(ip: IpAddr) -> bool {
    fn v4(ip: Ipv4Addr) -> bool {
        let [a, b, c, _] = ip.octets();
        !(ip.is_loopback()
            || ip.is_private()
            || ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || ip.is_documentation()
            || ip.is_multicast()
            || a == 0
            // 240.0.0.0/4, reserved.
            || a >= 240
            // 100.64.0.0/10, carrier-grade NAT.
            || (a == 100 && (b & 0xc0) == 64)
            // 192.0.0.0/24, protocol assignments; 198.18.0.0/15, benchmarking.
            || (a == 192 && b == 0 && c == 0)
            || (a == 198 && (b & 0xfe) == 18))
    }
    /// The IPv4 address in two segments.
    fn embedded(hi: u16, lo: u16) -> Ipv4Addr {
        Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
    }
    // An address that carries an IPv4 address reaches that address (through the kernel, a
    // NAT64 gateway or a relay), so it is judged by it; reserved ranges are never public.
    fn v6(ip: Ipv6Addr) -> bool {
        match ip.segments() {
            // ::ffff:a.b.c.d, IPv4-mapped.
            [0, 0, 0, 0, 0, 0xffff, hi, lo] => v4(embedded(hi, lo)),
            // ::/96: unspecified, loopback and the deprecated IPv4-compatible `::a.b.c.d`.
            [0, 0, 0, 0, 0, 0, _, _] => false,
            // ::ffff:0:a.b.c.d, IPv4-translated (RFC 6145).
            [0, 0, 0, 0, 0xffff, 0, hi, lo] => v4(embedded(hi, lo)),
            // 64:ff9b::/96, the NAT64 well-known prefix (RFC 6052).
            [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => v4(embedded(hi, lo)),
            // The rest of 64:ff9b::/32, including 64:ff9b:1::/48 (local-use NAT64, RFC 8215).
            [0x64, 0xff9b, ..] => false,
            // 2002::/16, 6to4: the IPv4 address follows the prefix.
            [0x2002, hi, lo, ..] => v4(embedded(hi, lo)),
            // 2001::/32, Teredo: the server's address, then the client's (inverted) at the end.
            [0x2001, 0, shi, slo, _, _, chi, clo] => v4(embedded(shi, slo)) && v4(embedded(!chi, !clo)),
            // 2001:db8::/32, documentation.
            [0x2001, 0x0db8, ..] => false,
            // 100::/64, discard-only.
            [0x0100, 0, 0, 0, ..] => false,
            [first, ..] => {
                // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
                !((first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
                    || (first & 0xffc0) == 0xfec0
                    || (first & 0xff00) == 0xff00)
            }
        }
    }
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => v6(ip),
    }
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
