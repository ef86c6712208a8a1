//! One GET of a source's `url` (a feed, a calendar): conditional on the validators the last
//! answer gave (`ETag` → `If-None-Match`, `Last-Modified` → `If-Modified-Since`), bounded in
//! bytes and time, over the model clients' process-wide reqwest client (rustls); or the bytes
//! of a local file for `file:` URLs and an ics source's `path`.
//!
//! Decisions worth knowing:
//! - A calendar's secret address (Google's `private-…/basic.ics`) is a password in a URL, so no
//!   message names more of a URL than its scheme and host.
//! - `webcal://` (how Apple and Outlook hand out subscriptions) is `https://`.
//! - Redirects are followed by hand, at most [`MAX_REDIRECTS`], to http(s) only, and never from
//!   a remote host to a loopback one: the configured host is what the user named, a redirect
//!   is what the server says.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION};
use reqwest::{StatusCode, Url};
use serde::{Deserialize, Serialize};

use crate::model::http::{Endpoint, client_for, root_cause};
use crate::text::count;
use crate::workspace::confine;

/// Bytes of one answer (or file) at most, unless the caller says otherwise: a feed or a
/// calendar larger than this is misconfigured or hostile.
pub const DEFAULT_MAX_BYTES: usize = 10 * 1024 * 1024;
/// One fetch at most, connecting, redirects and the body included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;
/// A validator longer than this is not sent back (no server needs it; a header that size is
/// refused by some).
const MAX_VALIDATOR: usize = 1024;

/// What the last full answer said about its version, sent back to ask "only if changed".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The outcome of one fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// 304: nothing changed since the validators were given.
    NotModified,
    /// The whole body, with the validators to send next time.
    Body { bytes: Vec<u8>, validators: Validators },
}

/// Bounds of one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    pub max_bytes: usize,
    pub timeout: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions { max_bytes: DEFAULT_MAX_BYTES, timeout: DEFAULT_TIMEOUT }
    }
}

/// Why a fetch failed. Messages name the host (never the path or query: they can be the
/// secret) and say what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    #[error("cannot reach {host}: {cause}")]
    Connect { host: String, cause: String },
    #[error("{host} answered HTTP {status}")]
    Status { host: String, status: u16 },
    #[error("the answer from {host} is larger than {} (the limit of a source)", count::bytes(*limit as u64))]
    TooLarge { host: String, limit: usize },
    #[error("{host} did not answer within {}s", .timeout.as_secs())]
    TimedOut { host: String, timeout: Duration },
    #[error("{host} redirected {}", redirect_problem(.problem))]
    Redirect { host: String, problem: RedirectProblem },
    #[error("cannot read {}: {source}", .path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What was wrong with a redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectProblem {
    TooMany,
    NoLocation,
    NotHttp,
    ToLoopback,
}

fn redirect_problem(p: &RedirectProblem) -> String {
    match p {
        RedirectProblem::TooMany => format!("more than {MAX_REDIRECTS} times"),
        RedirectProblem::NoLocation => "without a Location".to_owned(),
        RedirectProblem::NotHttp => "to an address that is not http(s)".to_owned(),
        RedirectProblem::ToLoopback => {
            "to this machine (loopback), which is refused: name that address in the config".to_owned()
        }
    }
}

/// Where a source's bytes come from: its `url` (http, https, webcal or file) or its `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Http(Url),
    File(PathBuf),
}

impl Location {
    /// Reads a configured `url`. `webcal:` becomes `https:`; `file:` a local path.
    pub fn parse(url: &str) -> Result<Location, FetchError> {
        let url = url.trim();
        let invalid = |why: &str| FetchError::InvalidUrl(why.to_owned());
        let mut parsed = Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
        match parsed.scheme() {
            "http" | "https" => {}
            "webcal" | "webcals" => {
                // `set_scheme` refuses special ↔ non-special changes, so the URL is rebuilt.
                let rest = &url[url.find(':').map_or(0, |i| i + 1)..];
                parsed = Url::parse(&format!("https:{rest}")).map_err(|e| invalid(&e.to_string()))?;
            }
            "file" => {
                return parsed
                    .to_file_path()
                    .map(Location::File)
                    .map_err(|()| invalid("a file: URL that names no local path"));
            }
            other => return Err(invalid(&format!("the scheme `{other}` (http, https, webcal or file)"))),
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("no host"));
        }
        Ok(Location::Http(parsed))
    }

    /// Scheme and host (and port) only: what messages and logs may show.
    pub fn display(&self) -> String {
        match self {
            Location::Http(url) => format!("{}://{}", url.scheme(), host_of(url)),
            Location::File(path) => path.display().to_string(),
        }
    }
}

/// Fetches `location`: a conditional GET, or a bounded read of a local file (which has no
/// validators; the caller's versions tell whether it changed).
pub async fn fetch(
    location: &Location,
    validators: &Validators,
    options: FetchOptions,
) -> Result<Fetched, FetchError> {
    match location {
        Location::File(path) => read_file(path, options.max_bytes).await,
        Location::Http(url) => {
            let host = host_of(url);
            tokio::time::timeout(options.timeout, get(url.clone(), validators, options.max_bytes))
                .await
                .unwrap_or(Err(FetchError::TimedOut { host, timeout: options.timeout }))
        }
    }
}

/// The bytes of a regular file, at most `max`.
async fn read_file(path: &Path, max: usize) -> Result<Fetched, FetchError> {
    let owned = path.to_path_buf();
    let read = tokio::task::spawn_blocking(move || confine::read_regular(&owned, max as u64)).await;
    let file_error = |source| FetchError::File { path: path.to_path_buf(), source };
    match read {
        Ok(Ok(bytes)) => Ok(Fetched::Body { bytes, validators: Validators::default() }),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(FetchError::TooLarge { host: path.display().to_string(), limit: max })
        }
        Ok(Err(e)) => Err(file_error(e)),
        Err(e) => Err(file_error(std::io::Error::other(e.to_string()))),
    }
}

async fn get(mut url: Url, validators: &Validators, max_bytes: usize) -> Result<Fetched, FetchError> {
    let first_is_loopback = is_loopback(&url);
    for _ in 0..=MAX_REDIRECTS {
        let host = host_of(&url);
        let endpoint = Endpoint { url: url.clone(), host: host.clone() };
        let client = client_for(&endpoint)
            .map_err(|e| FetchError::Connect { host: host.clone(), cause: e.to_string() })?;
        let mut response = client
            .get(url.clone())
            .headers(conditional_headers(validators))
            .send()
            .await
            .map_err(|e| FetchError::Connect { host: host.clone(), cause: root_cause(&e) })?;
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        if status.is_redirection() {
            url = redirect_target(&url, response.headers(), first_is_loopback)?;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::Status { host, status: status.as_u16() });
        }
        let validators = Validators {
            etag: header_text(response.headers(), ETAG),
            last_modified: header_text(response.headers(), LAST_MODIFIED),
        };
        if response.content_length().is_some_and(|n| n > max_bytes as u64) {
            return Err(FetchError::TooLarge { host, limit: max_bytes });
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| FetchError::Connect { host: host.clone(), cause: root_cause(&e) })?
        {
            if bytes.len() + chunk.len() > max_bytes {
                return Err(FetchError::TooLarge { host, limit: max_bytes });
            }
            bytes.extend_from_slice(&chunk);
        }
        return Ok(Fetched::Body { bytes, validators });
    }
    Err(FetchError::Redirect { host: host_of(&url), problem: RedirectProblem::TooMany })
}

fn conditional_headers(validators: &Validators) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let valid = |v: &Option<String>| {
        v.as_deref()
            .filter(|v| v.len() <= MAX_VALIDATOR)
            .and_then(|v| reqwest::header::HeaderValue::from_str(v).ok())
    };
    if let Some(etag) = valid(&validators.etag) {
        headers.insert(IF_NONE_MATCH, etag);
    }
    if let Some(date) = valid(&validators.last_modified) {
        headers.insert(IF_MODIFIED_SINCE, date);
    }
    headers
}

fn redirect_target(from: &Url, headers: &HeaderMap, first_is_loopback: bool) -> Result<Url, FetchError> {
    let problem = |problem| FetchError::Redirect { host: host_of(from), problem };
    let location = headers
        .get(LOCATION)
        .and_then(|l| l.to_str().ok())
        .ok_or_else(|| problem(RedirectProblem::NoLocation))?;
    let next = from.join(location).map_err(|_| problem(RedirectProblem::NotHttp))?;
    if !matches!(next.scheme(), "http" | "https") || next.host_str().is_none() {
        return Err(problem(RedirectProblem::NotHttp));
    }
    if is_loopback(&next) && !first_is_loopback {
        return Err(problem(RedirectProblem::ToLoopback));
    }
    Ok(next)
}

/// A header's value as text, when it is short printable ASCII.
fn header_text(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= MAX_VALIDATOR)
        .map(str::to_owned)
}

fn host_of(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        (None, _) => "(no host)".to_owned(),
    }
}

fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
