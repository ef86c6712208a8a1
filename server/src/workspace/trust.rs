//! Which folders the user trusts, in the user's data dir (SPEC section 7), the way direnv's
//! `allow` works: trust binds to a folder **and** the content of its `.livenote.toml` (a
//! SHA-256 of its bytes, or "no file"). When the file changes (a `git pull`), the folder is
//! untrusted again until the user trusts it again. A folder without a `.livenote.toml` of its
//! own is covered by the nearest trusted folder above it, but never through a folder that has
//! one: the trust of a folder does not extend to nested folders with their own configuration.
//!
//! Trust binds the programs that configuration runs too: every file inside the folder named by
//! a `[providers.*]`, `[mcp.servers.*]` or `[sources.*]` `command` of its `.livenote.toml` (the
//! program when it is a path, and each argument that names a file there, like
//! `["bash", "scripts/gen.sh"]`) is hashed when the folder is trusted, and a change to one of
//! them (a `git pull` that rewrites `scripts/gen.sh`), or one of them appearing, untrusts the
//! folder like a change to the config. An entry written before files were bound (no `files`)
//! stays in effect only while its configuration runs no file inside the folder.
//!
//! The store is `trust.json`: `{"version": 2, "folders": [{"path", "config", "files",
//! "trustedAt"}]}`,
//! with canonical paths of existing folders only (a path that is not valid UTF-8 or holds a
//! control character is refused). Writes are atomic (temp file + fsync + rename) under an OS
//! file lock, and re-read the store under that lock, so two processes trusting at once both
//! keep their entry.
//!
//! The store of earlier versions (`trusted-workspaces`, one path per line, parents covering
//! children, no content) is read but grants nothing: its folders were trusted before livenote
//! recorded what their configuration said, so they are reported as "trusted by an older
//! livenote" and must be trusted again. The old file is left as it is.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::path_style::{Head, PathStyle};

/// The store's file name in the data dir.
pub const STORE_FILE: &str = "trust.json";
/// The line-per-path store of earlier versions.
pub const LEGACY_FILE: &str = "trusted-workspaces";
/// A folder's own configuration, whose content trust binds to.
pub const CONFIG_FILE: &str = ".livenote.toml";
const FORMAT_VERSION: u32 = 2;
/// A config larger than this is not hand-written configuration (matches config/load.rs).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What a folder's `.livenote.toml` held when it was trusted: `None` = no file.
pub type Digest = Option<String>;

/// The digest of a config file's bytes, as stored: `sha256:<hex>`.
pub fn digest_bytes(bytes: &[u8]) -> String {
    hex_digest(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

fn hex_digest(d: &[u8]) -> String {
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for b in d {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The bytes of `root/.livenote.toml`: `Ok(None)` when there is none. A config that is not a
/// regular file, or is too large, is an error (nothing about it can be trusted).
pub fn read_config_bytes(root: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let path = root.join(CONFIG_FILE);
    // Non-blocking, so a FIFO in its place cannot hang the caller; then only a regular file
    // is read.
    let file = match crate::platform::nonblocking(std::fs::OpenOptions::new().read(true)).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!("{} is not a regular file", path.display())));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "{} is larger than {} KiB",
            path.display(),
            MAX_CONFIG_BYTES / 1024
        )));
    }
    Ok(Some(bytes))
}

/// The digest of `root/.livenote.toml` as it is now.
pub fn current_digest(root: &Path) -> std::io::Result<Digest> {
    Ok(read_config_bytes(root)?.map(|b| digest_bytes(&b)))
}

/// Whether a folder is trusted, and if not, why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// Trusted with its configuration as it is now (directly, or through the folder above it).
    Trusted {
        /// The folder whose entry grants the trust (the folder itself, or one above it).
        by: PathBuf,
    },
    /// Never trusted (or untrusted since).
    Untrusted,
    /// Trusted once, but its `.livenote.toml` (or that of the trusting folder above it) changed
    /// since, or appeared or disappeared; or a file that configuration runs did (`file`, as
    /// written in the configuration).
    Changed { by: PathBuf, file: Option<String> },
    /// Listed by an older livenote that did not record the configuration's content.
    Legacy,
}

impl Trust {
    pub fn is_trusted(&self) -> bool {
        matches!(self, Trust::Trusted { .. })
    }

    /// One clause for messages: why the folder's config is not used.
    pub fn reason(&self) -> &'static str {
        match self {
            Trust::Trusted { .. } => "the folder is trusted",
            Trust::Untrusted => "this folder is not trusted",
            Trust::Changed { file: None, .. } => "it changed since you trusted this folder",
            Trust::Changed { file: Some(_), .. } => {
                "a file its configuration runs changed since you trusted this folder"
            }
            Trust::Legacy => {
                "this folder was trusted by an older livenote that did not record the file's content"
            }
        }
    }
}

/// Why trusting or untrusting failed. `Display` is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Not an existing folder (as typed).
    #[error(transparent)]
    Path(#[from] super::given::GivenError),
    #[error("refusing a path with a newline or another control character: {0:?}")]
    ControlCharacter(String),
    #[error("refusing a path that is not valid UTF-8: {0}")]
    NotUtf8(String),
    #[error("{0}/.livenote.toml changed while you were asked; look at it again, then trust the folder")]
    ChangedMeanwhile(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("the trust store {0} is not valid (fix or remove it): {1}")]
    Corrupt(String, String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TrustError + '_ {
    move |source| TrustError::Io { path: path.display().to_string(), source }
}

/// One trusted folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Canonical path of an existing folder.
    pub path: String,
    /// `sha256:<hex>` of its `.livenote.toml` when trusted; `null` = it had none.
    pub config: Digest,
    /// The files inside the folder that configuration runs (see [`bound_files`]), by their
    /// path relative to the folder, with their digest when trusted (`null` = not there then).
    /// Absent in entries written before files were bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<BTreeMap<String, Digest>>,
    /// When it was trusted (RFC 3339, UTC).
    pub trusted_at: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoreFile {
    version: u32,
    #[serde(default)]
    folders: Vec<Record>,
}

/// The user's livenote data folder (the trust store, the MCP tool lists): `$LIVENOTE_DATA_DIR`,
/// else `$XDG_DATA_HOME/livenote`, else the platform's (`~/.local/share/livenote`;
/// `%APPDATA%\livenote\data` on Windows). `None` when no home can be found.
pub fn user_data_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let env = |k: &str| var(k).map(PathBuf::from);
    env("LIVENOTE_DATA_DIR")
        .or_else(|| env("XDG_DATA_HOME").filter(|d| d.is_absolute()).map(|d| d.join("livenote")))
        .or_else(|| crate::platform::default_data_dir(&var))
}

#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
}

impl TrustStore {
    /// The store in `dir` (tests and `LIVENOTE_DATA_DIR` point it elsewhere).
    pub fn in_dir(dir: &Path) -> TrustStore {
        TrustStore { dir: dir.to_path_buf() }
    }

    /// The user's store: `$LIVENOTE_DATA_DIR`, else `$XDG_DATA_HOME/livenote`, else
    /// `~/.local/share/livenote`. `None` when no home can be found.
    pub fn user() -> Option<TrustStore> {
        user_data_dir().map(|dir| TrustStore::in_dir(&dir))
    }

    /// The data folder the store is in (what sources have seen is kept there too).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding the store (watched so trust takes effect without a restart).
    pub fn file(&self) -> PathBuf {
        self.dir.join(STORE_FILE)
    }

    /// Whether a file watcher's `path` is this store: as [`TrustStore::file`] names it
    /// (inotify reports the path that was watched) or with the folder's links resolved
    /// (FSEvents reports canonical paths: `/private/var/...` for a `/var/...` data folder).
    pub fn is_store_file(&self, path: &Path) -> bool {
        path == self.file()
            || (path.file_name() == Some(std::ffi::OsStr::new(STORE_FILE))
                && std::fs::canonicalize(&self.dir).is_ok_and(|dir| path == dir.join(STORE_FILE)))
    }

    fn legacy_file(&self) -> PathBuf {
        self.dir.join(LEGACY_FILE)
    }

    fn lock_file(&self) -> PathBuf {
        self.dir.join(format!("{STORE_FILE}.lock"))
    }

    /// The records as stored; an unreadable or invalid store is an error.
    fn read(&self) -> Result<StoreFile, TrustError> {
        let file = self.file();
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(StoreFile { version: FORMAT_VERSION, folders: Vec::new() });
            }
            Err(e) => return Err(io_err(&file)(e)),
        };
        let store: StoreFile = serde_json::from_str(&text)
            .map_err(|e| TrustError::Corrupt(file.display().to_string(), e.to_string()))?;
        if store.version != FORMAT_VERSION {
            return Err(TrustError::Corrupt(
                file.display().to_string(),
                format!("format version {} (this livenote reads {FORMAT_VERSION})", store.version),
            ));
        }
        // A hand-edited entry with a relative or odd path grants nothing.
        let folders = store.folders.into_iter().filter(|r| valid_record_path(&r.path)).collect();
        Ok(StoreFile { version: FORMAT_VERSION, folders })
    }

    fn legacy(&self) -> Vec<PathBuf> {
        std::fs::read_to_string(self.legacy_file())
            .map(|s| {
                s.lines().map(str::trim).filter(|l| !l.is_empty()).map(PathBuf::from).collect::<Vec<_>>()
            })
            .unwrap_or_default()
    }

    /// The store as read now, for answering many questions with one read. An invalid store
    /// trusts nothing (and says so in the log).
    pub fn list(&self) -> TrustList {
        let records = match self.read() {
            Ok(s) => s.folders,
            Err(e) => {
                tracing::warn!("trust {e}; nothing is trusted until it is fixed");
                Vec::new()
            }
        };
        TrustList { records, legacy: self.legacy() }
    }

    /// Whether `root` is trusted with its configuration as it is now.
    pub fn is_trusted(&self, root: &Path) -> bool {
        self.check(root).is_trusted()
    }

    pub fn check(&self, root: &Path) -> Trust {
        self.list().check(root)
    }

    /// Trust `root` (an existing folder) with its `.livenote.toml` as it is now.
    pub fn trust(&self, root: &Path) -> Result<Record, TrustError> {
        self.trust_expecting(root, None)
    }

    /// Trust `root` with its `.livenote.toml` as it is now, provided that is `expected` when
    /// given (the content the user was shown when asked).
    pub fn trust_expecting(&self, root: &Path, expected: Option<&Digest>) -> Result<Record, TrustError> {
        let root = existing_folder(root)?;
        let bytes = read_config_bytes(&root).map_err(io_err(&root))?;
        let digest = bytes.as_deref().map(digest_bytes);
        if expected.is_some_and(|e| *e != digest) {
            return Err(TrustError::ChangedMeanwhile(root.display().to_string()));
        }
        let path = checked_str(&root)?.to_owned();
        let record = Record {
            path: path.clone(),
            config: digest,
            files: Some(bound_files(&root, bytes.as_deref())),
            trusted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        let rec = record.clone();
        self.update(move |folders| {
            folders.retain(|r| !same_folder(&r.path, &path));
            folders.push(rec);
        })?;
        Ok(record)
    }

    /// Remove `root`'s entry. A folder that no longer exists can be untrusted by its path.
    /// `Ok(false)` when it was not trusted.
    pub fn untrust(&self, root: &Path) -> Result<bool, TrustError> {
        let path = match existing_folder(root) {
            Ok(p) => p,
            Err(TrustError::Path(e)) if e.is_missing() => {
                let abs = std::path::absolute(root).map_err(io_err(root))?;
                lexical_normal(&abs).ok_or(TrustError::Path(e))?
            }
            Err(e) => return Err(e),
        };
        let path = checked_str(&path)?.to_owned();
        let mut removed = false;
        self.update(|folders| {
            let before = folders.len();
            folders.retain(|r| !same_folder(&r.path, &path));
            removed = folders.len() != before;
        })?;
        Ok(removed)
    }

    /// Every trusted folder, and the legacy entries that no longer grant anything.
    pub fn records(&self) -> Result<(Vec<Record>, Vec<PathBuf>), TrustError> {
        Ok((self.read()?.folders, self.legacy()))
    }

    /// Read, change and write the store under the store's lock, atomically.
    fn update(&self, change: impl FnOnce(&mut Vec<Record>)) -> Result<(), TrustError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let lock_path = self.lock_file();
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        // Blocks until another livenote process writing the store is done; released on drop.
        lock.lock().map_err(io_err(&lock_path))?;
        let mut store = self.read()?;
        change(&mut store.folders);
        store.folders.sort_by(|a, b| a.path.cmp(&b.path));
        store.version = FORMAT_VERSION;
        let file = self.file();
        let mut json = serde_json::to_string_pretty(&store)
            .map_err(|e| TrustError::Corrupt(file.display().to_string(), e.to_string()))?;
        json.push('\n');
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(io_err(&self.dir))?;
        tmp.write_all(json.as_bytes()).map_err(io_err(&file))?;
        tmp.as_file().sync_all().map_err(io_err(&file))?;
        tmp.persist(&file).map_err(|e| io_err(&file)(e.error))?;
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        drop(lock);
        Ok(())
    }
}

/// A snapshot of the store.
#[derive(Debug, Clone, Default)]
pub struct TrustList {
    records: Vec<Record>,
    legacy: Vec<PathBuf>,
}

impl TrustList {
    /// Whether `root` is trusted with its configuration as it is now; see [`Trust`].
    pub fn check(&self, root: &Path) -> Trust {
        let Ok(root) = std::fs::canonicalize(root) else { return Trust::Untrusted };
        for dir in root.ancestors() {
            let has_config = dir.join(CONFIG_FILE).exists();
            if let Some(r) = dir.to_str().and_then(|d| self.records.iter().find(|r| same_folder(&r.path, d)))
            {
                // Above `root`, only a folder without its own config on the way is covered.
                return match read_config_bytes(dir) {
                    Ok(bytes) => verdict(r, dir, bytes.as_deref()),
                    Err(_) => Trust::Changed { by: dir.to_path_buf(), file: None },
                };
            }
            if has_config {
                // A folder with its own config is trusted only by its own entry.
                break;
            }
        }
        if self.legacy.iter().any(|l| super::is_within(&root, l)) { Trust::Legacy } else { Trust::Untrusted }
    }

    /// Whether `root`, whose `.livenote.toml` was read and holds `config` (`None`: no file),
    /// is trusted with that content and the files it runs as they are now: only its own entry
    /// counts (a folder with a config is never covered by the folder above it). The caller
    /// parses exactly the bytes it hands in, so a file changing between this check and the
    /// parse cannot slip through.
    pub fn check_content(&self, root: &Path, config: Option<&[u8]>) -> Trust {
        let Ok(root) = std::fs::canonicalize(root) else { return Trust::Untrusted };
        if let Some(r) = root.to_str().and_then(|d| self.records.iter().find(|r| same_folder(&r.path, d))) {
            return verdict(r, &root, config);
        }
        if self.legacy.iter().any(|l| super::is_within(&root, l)) { Trust::Legacy } else { Trust::Untrusted }
    }

    /// Whether `root` is trusted (see [`TrustList::check`]).
    pub fn contains(&self, root: &Path) -> bool {
        self.check(root).is_trusted()
    }
}

/// The one decision of every check: `record` grants trust to `dir` when `dir`'s config now
/// holds `config` (the bytes the record's digest was taken of) and every file that config runs
/// is as it was when trusted, no more and no fewer.
fn verdict(record: &Record, dir: &Path, config: Option<&[u8]>) -> Trust {
    let changed = |file: Option<String>| Trust::Changed { by: dir.to_path_buf(), file };
    if config.map(digest_bytes) != record.config {
        return changed(None);
    }
    let now = bound_files(dir, config);
    let then = record.files.clone().unwrap_or_default();
    match now
        .iter()
        .find(|(path, d)| then.get(*path) != Some(*d))
        .or_else(|| then.iter().find(|(p, _)| !now.contains_key(*p)))
    {
        Some((path, _)) => changed(Some(path.clone())),
        None => Trust::Trusted { by: dir.to_path_buf() },
    }
}

/// The files inside `root` that the configuration `config` runs, with their digests now
/// (`None`: not there): for each `command` of `[providers.*]`, `[mcp.servers.*]`, `[sources.*]` and `[notify]`, the
/// program when it is a path (a bare name is looked up on `PATH`) and every argument that
/// names a file inside the folder, or looks like a path into it (has a `/`, or on Windows a
/// `\`) even when nothing is there yet, except a note (`.md`, `.markdown`): notes are data. A config that does not parse runs nothing (`config/` ignores it whole), so
/// it binds nothing. Read here rather than from the parsed configuration because trust is
/// decided before (and below) the configuration is loaded.
pub fn bound_files(root: &Path, config: Option<&[u8]>) -> BTreeMap<String, Digest> {
    let mut files = BTreeMap::new();
    for (rel, named_as_path) in named_files(root, config) {
        let digest = file_digest(&root.join(&rel));
        if digest.is_some() || named_as_path {
            files.insert(rel, digest);
        }
    }
    files
}

/// Whether `path` (under `root`) is a file `root`'s `.livenote.toml` runs, as it is now: a
/// change to it is a change to what the folder's trust covers (the caller re-checks trust).
pub fn runs_file(root: &Path, path: &Path) -> bool {
    let Some(rel) = super::NotePath::of(root, path) else { return false };
    let Ok(Some(config)) = read_config_bytes(root) else { return false };
    named_files(root, Some(&config))
        .iter()
        .any(|(f, _)| PathStyle::NATIVE.fold(f) == PathStyle::NATIVE.fold(&rel))
}

/// Whether a stored folder and a canonical one are the same folder: the same text on Unix,
/// the same path without case on Windows (`C:\Notes` is `c:\notes`, `\\?\C:\Notes` too).
fn same_folder(stored: &str, dir: &str) -> bool {
    match PathStyle::NATIVE {
        PathStyle::Unix => stored == dir,
        PathStyle::Windows => PathStyle::Windows.same(stored, dir),
    }
}

/// The words of the config's commands that name paths inside `root` (see [`bound_files`]),
/// each with whether it has a `/`.
fn named_files(root: &Path, config: Option<&[u8]>) -> Vec<(String, bool)> {
    let mut files = Vec::new();
    let Some(table) =
        config.and_then(|b| std::str::from_utf8(b).ok()).and_then(|t| toml::from_str::<toml::Table>(t).ok())
    else {
        return files;
    };
    let commands = |t: Option<&toml::Value>| -> Vec<Vec<String>> {
        t.and_then(toml::Value::as_table)
            .into_iter()
            .flat_map(|named| named.values())
            .filter_map(|entry| entry.get("command").and_then(toml::Value::as_array))
            .map(|c| c.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .collect()
    };
    let servers = table.get("mcp").and_then(|m| m.get("servers"));
    // A source's program runs at every poll, as a provider's at every run; `[notify] command`
    // after every run it is told of.
    let sources = commands(table.get("sources"));
    let notify = table
        .get("notify")
        .and_then(|n| n.get("command"))
        .and_then(toml::Value::as_array)
        .map(|c| c.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect::<Vec<_>>());
    for command in
        commands(table.get("providers")).into_iter().chain(commands(servers)).chain(sources).chain(notify)
    {
        for (i, word) in command.iter().enumerate() {
            let Some(rel) = inside(PathStyle::NATIVE, root, word, i == 0) else { continue };
            // A note is data: a command that reads one (a word count of `reading-list.md`)
            // does not run it, and notes change with every save and every run, so binding one
            // would untrust the folder each time the user typed. The program itself is bound
            // whatever its name.
            if i > 0 && super::is_markdown(Path::new(&rel)) {
                continue;
            }
            files.push((rel, word.contains(|c| PathStyle::NATIVE.is_separator(c))));
        }
    }
    files
}

/// `word` of a command as a `/`-separated path relative to `root`, when it names something
/// inside it: an absolute path under `root`, or a relative one (from the folder, where
/// programs start) that stays inside. A program without a `/` is found on `PATH`, not here.
/// On Windows `\` separates too and `C:\ws\x.cmd` under `c:\WS` is inside.
fn inside(style: PathStyle, root: &Path, word: &str, program: bool) -> Option<String> {
    if word.is_empty() || word.starts_with('-') || (program && !word.contains(|c| style.is_separator(c))) {
        return None;
    }
    if style == PathStyle::Windows {
        let split = style.split(word);
        let names = match split.head {
            Head::Relative => split.parts,
            Head::DriveRoot(_) | Head::Unc { .. } => style.relative(&root.to_string_lossy(), word)?,
            Head::Root | Head::Drive(_) | Head::Device(_) => return None,
        };
        let mut parts: Vec<&str> = Vec::new();
        for name in names {
            match style.bad_part(name) {
                Some(super::path_style::BadPart::Parent) => {
                    parts.pop()?;
                }
                _ => parts.push(name),
            }
        }
        return (!parts.is_empty()).then(|| parts.join("/"));
    }
    let path = Path::new(word);
    let rel = if path.is_absolute() { path.strip_prefix(root).ok()? } else { path };
    let mut parts: Vec<&str> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The digest of the file at `path` (links followed) as stored: `None` when there is nothing
/// or a folder; a FIFO or device is never opened, only named, so its kind is what is bound.
fn file_digest(path: &Path) -> Digest {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        return None;
    }
    if !meta.is_file() {
        return Some("not a regular file".to_owned());
    }
    let hashed = || -> std::io::Result<String> {
        let mut file = crate::platform::nonblocking(std::fs::OpenOptions::new().read(true)).open(path)?;
        if !file.metadata()?.is_file() {
            return Ok("not a regular file".to_owned());
        }
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match file.read(&mut buf)? {
                0 => break,
                n => ctx.update(buf.get(..n).unwrap_or_default()),
            }
        }
        Ok(hex_digest(ctx.finish().as_ref()))
    };
    // Unreadable is a state of its own: it changes when the file becomes readable again.
    Some(hashed().unwrap_or_else(|e| format!("unreadable: {}", e.kind())))
}

/// The nearest folder holding `note` strictly inside `root` that has its own `.livenote.toml`:
/// the trust of `root` does not extend to it (its notes run on their own only when it is
/// trusted itself). `None` when the note is under no such folder.
pub fn nested_config_dir(root: &Path, note: &Path) -> Option<PathBuf> {
    note.parent()?
        .ancestors()
        .take_while(|d| super::is_within(d, root) && !super::is_within(root, d))
        .find(|d| d.join(CONFIG_FILE).exists())
        .map(Path::to_path_buf)
}

/// `path` as a canonical, existing folder the store can hold, or why not. Never its parent.
fn existing_folder(path: &Path) -> Result<PathBuf, TrustError> {
    if let Some(s) = path.to_str()
        && s.chars().any(char::is_control)
    {
        return Err(TrustError::ControlCharacter(path.display().to_string()));
    }
    let canonical = super::given::folder(path)?;
    checked_str(&canonical)?;
    Ok(canonical)
}

/// The path as UTF-8 without control characters (what the store may hold).
fn checked_str(path: &Path) -> Result<&str, TrustError> {
    let s = path.to_str().ok_or_else(|| TrustError::NotUtf8(path.display().to_string()))?;
    if s.chars().any(char::is_control) {
        return Err(TrustError::ControlCharacter(s.to_owned()));
    }
    Ok(s)
}

fn valid_record_path(p: &str) -> bool {
    let path = Path::new(p);
    path.is_absolute()
        && !p.chars().any(char::is_control)
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_) | Component::Prefix(_)))
}

/// An absolute path without `.` and `..` (for untrusting a folder that is gone).
fn lexical_normal(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = self.config.as_deref().unwrap_or("no .livenote.toml");
        let files = self.files.as_ref().map_or(0, BTreeMap::len);
        write!(
            f,
            "{}  ({config}, {}, trusted {})",
            self.path,
            crate::text::count(files, "bound file"),
            self.trusted_at
        )
    }
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
