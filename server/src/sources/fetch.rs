//! One GET of a source's `url` (a feed, a calendar): conditional on the validators the last
//! answer gave (`ETag` → `If-None-Match`, `Last-Modified` → `If-Modified-Since`), bounded in
//! bytes and time, over the model clients' process-wide reqwest client (rustls); or the bytes
//! of a local file for `file:` URLs and an ics source's `path`.
//!
//! Decisions worth knowing:
//! - A calendar's secret address (Google's `private-…/basic.ics`) is a password in a URL, so no
//!   message names more of a URL than its scheme and host.
//! - `webcal://` (how Apple and Outlook hand out subscriptions) is `https://`.
//! - Redirects are followed by hand, at most [`MAX_REDIRECTS`], to http(s) only. The configured
//!   host is what the user named, so it is reached wherever it resolves; a redirect is what a
//!   server says, so it may reach the public internet and the scope the configured host was
//!   in, nothing else (`net::Reach`): a feed on the internet cannot send a poll to this
//!   machine, the link (a cloud metadata service) or the LAN, whatever the spelling of the
//!   address (`[::ffff:7f00:1]`, `0.0.0.0`) or the name that leads there (a hosts file).
//!   Every hop's name is resolved once, checked, and the connection pinned to what was checked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION};
use reqwest::{StatusCode, Url};
use serde::{Deserialize, Serialize};

use crate::model::http::{CONNECT_TIMEOUT, root_cause};
use crate::net::{Reach, Resolve, Scope, SystemResolver, Target};
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectProblem {
    TooMany,
    NoLocation,
    NotHttp,
    /// To `to` (host and port, and the address a name led to), in a scope the redirect may not
    /// reach from the configured host.
    Refused {
        to: String,
        scope: Scope,
    },
}

fn redirect_problem(p: &RedirectProblem) -> String {
    match p {
        RedirectProblem::TooMany => format!("more than {MAX_REDIRECTS} times"),
        RedirectProblem::NoLocation => "without a Location".to_owned(),
        RedirectProblem::NotHttp => "to an address that is not http(s)".to_owned(),
        RedirectProblem::Refused { to, scope } => format!(
            "to {to}, {}, which is refused: name that address in the source's url if it is meant",
            scope.describe()
        ),
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
    fetch_via(location, validators, options, &SystemResolver).await
}

/// [`fetch`], names looked up by `resolver`.
async fn fetch_via(
    location: &Location,
    validators: &Validators,
    options: FetchOptions,
    resolver: &dyn Resolve,
) -> Result<Fetched, FetchError> {
    match location {
        Location::File(path) => read_file(path, options.max_bytes).await,
        Location::Http(url) => {
            let host = host_of(url);
            tokio::time::timeout(options.timeout, get(url.clone(), validators, options.max_bytes, resolver))
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

async fn get(
    mut url: Url,
    validators: &Validators,
    max_bytes: usize,
    resolver: &dyn Resolve,
) -> Result<Fetched, FetchError> {
    // The configured host goes anywhere; what it is decides where its redirects may go.
    let mut reach = Reach::Anything;
    // The host whose redirect led to `url`.
    let mut from: Option<String> = None;
    for _ in 0..=MAX_REDIRECTS {
        let host = host_of(&url);
        let target = hop(&url, reach, from.as_deref(), resolver).await?;
        if reach == Reach::Anything {
            // A name that does not resolve here goes through a proxy, to the internet.
            reach = Reach::PublicAnd(target.farthest().unwrap_or(Scope::Public));
        }
        let client = client(&target).map_err(|cause| FetchError::Connect { host: host.clone(), cause })?;
        let connect_error = |e: reqwest::Error| {
            let cause = match target.lookup_error() {
                Some(lookup) if e.is_connect() => lookup.to_owned(),
                _ => root_cause(&e),
            };
            FetchError::Connect { host: host.clone(), cause }
        };
        let mut response = client
            .get(url.clone())
            .headers(conditional_headers(validators))
            .send()
            .await
            .map_err(connect_error)?;
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        if status.is_redirection() {
            url = redirect_target(&url, response.headers())?;
            from = Some(host);
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

/// `url`'s host resolved and checked against `reach` before anything connects; `from` is the
/// host whose redirect led here (`None` for the configured one).
async fn hop(
    url: &Url,
    reach: Reach,
    from: Option<&str>,
    resolver: &dyn Resolve,
) -> Result<Target, FetchError> {
    let target = Target::resolve(url, resolver).await.map_err(|e| FetchError::InvalidUrl(e.to_string()))?;
    let Some((ip, scope)) = target.refused(reach) else { return Ok(target) };
    let host = host_of(url);
    let to = if url.domain().is_some() { format!("{host} ({ip})") } else { host.clone() };
    Err(FetchError::Redirect {
        host: from.unwrap_or(&host).to_owned(),
        problem: RedirectProblem::Refused { to, scope },
    })
}

/// A client for one request, reaching only `target`'s addresses (a name is not looked up
/// again), honouring the proxy variables unless the host is on this machine.
fn client(target: &Target) -> Result<reqwest::Client, String> {
    let builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("livenote/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none());
    target.pin(builder).build().map_err(|e| format!("cannot set up the HTTP client: {}", root_cause(&e)))
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

/// Where a redirect from `from` points: http(s) only. Where that is on the network is
/// [`hop`]'s to check, once the name is resolved.
fn redirect_target(from: &Url, headers: &HeaderMap) -> Result<Url, FetchError> {
    let problem = |problem| FetchError::Redirect { host: host_of(from), problem };
    let location = headers
        .get(LOCATION)
        .and_then(|l| l.to_str().ok())
        .ok_or_else(|| problem(RedirectProblem::NoLocation))?;
    let next = from.join(location).map_err(|_| problem(RedirectProblem::NotHttp))?;
    if !matches!(next.scheme(), "http" | "https") || next.host_str().is_none_or(str::is_empty) {
        return Err(problem(RedirectProblem::NotHttp));
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

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
