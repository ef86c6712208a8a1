//! The web tool (`fetch_url`): address checks, the fetcher, HTML to text.

use std::net::IpAddr;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{ToolError, clip};
use crate::model::BoxFuture;
use crate::net::{self, Reach, Scope, SystemResolver, Target};
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
/// addresses (`net::Reach::Public`), which the connection is then pinned to: a page cannot make livenote reach the
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
    let target = Target::resolve(url, &SystemResolver).await.map_err(|e| e.to_string())?;
    if let (Some(e), Some(name)) = (target.lookup_error(), url.domain()) {
        return Err(format!("cannot resolve {name}: {e}"));
    }
    let reach = if allow_private { Reach::Anything } else { Reach::Public };
    if target.refused(reach).is_some() {
        return Err("local and private network addresses are refused".to_owned());
    }
    target.pin(builder).build().map_err(|e| format!("cannot set up the HTTP client: {e}"))
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

/// Whether `ip` is on the public internet (`net::scope`: its IPv6 spellings of an IPv4
/// address judged by that address).
fn is_public(ip: IpAddr) -> bool {
    net::scope(ip) == Scope::Public
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
