//! The servers this process runs: one instance per server configuration and workspace folder
//! (where a program runs), started by the first run that needs it and kept for the next ones
//! until it has been idle for [`IDLE`] (measured with the pool's clock). A server that crashed
//! is started again at its next use. A call that is abandoned (the run was stopped, or hit its
//! own time limit) or that outlives the server's `timeout` kills the server's process group:
//! its state is unknown, and the next use starts it afresh. [`Pool::shutdown`] kills every
//! server when the process ends.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::cache::{CachedTool, ToolCache};
use super::client::{self, CallError, Connection};
use crate::config::{McpServerConfig, McpTransport, format_duration};
use crate::schedule::{Clock, SystemClock};

/// How long a server may sit unused before it is stopped.
pub const IDLE: Duration = Duration::from_secs(5 * 60);
/// How often, in real time, a long-lived process looks for idle servers.
const REAP_EVERY: Duration = Duration::from_secs(30);

/// What makes one instance: the server (command or URL, environment) and the folder a program
/// runs for (and whether it is trusted, which decides where it starts). Its name, `events` and
/// `timeout` do not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    transport: McpTransport,
    env: BTreeMap<String, String>,
    root: PathBuf,
    trusted: bool,
}

struct Slot {
    /// The instance, behind an async lock so that two runs needing it start it once.
    current: tokio::sync::Mutex<Option<Arc<Instance>>>,
}

/// A started server and its tools.
pub struct Instance {
    name: String,
    conn: Connection,
    tools: Vec<Tool>,
    last_used: Mutex<DateTime<Utc>>,
    in_flight: AtomicUsize,
}

impl Instance {
    /// The tools its `tools/list` gave when it started.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Its process group, when livenote started it.
    pub fn process_group(&self) -> Option<i32> {
        self.conn.process_group()
    }

    fn touch(&self, now: DateTime<Utc>) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = now;
        }
    }

    fn idle_since(&self) -> DateTime<Utc> {
        self.last_used.lock().map(|t| *t).unwrap_or_default()
    }
}

pub struct Pool {
    clock: Arc<dyn Clock>,
    idle: Duration,
    cache: Option<ToolCache>,
    slots: Mutex<HashMap<Key, Arc<Slot>>>,
    /// Every instance started, to kill them all at exit whatever their slots are doing.
    started: Mutex<Vec<Weak<Instance>>>,
    reaper: AtomicBool,
}

impl Pool {
    /// A pool whose idle time is measured with `clock`, keeping tool lists in `cache`.
    pub fn new(clock: Arc<dyn Clock>, cache: Option<ToolCache>) -> Arc<Pool> {
        Arc::new(Pool {
            clock,
            idle: IDLE,
            cache,
            slots: Mutex::default(),
            started: Mutex::default(),
            reaper: AtomicBool::new(false),
        })
    }

    /// This process's pool: the system clock, the user's tool-list cache.
    pub fn global() -> Arc<Pool> {
        static GLOBAL: OnceLock<Arc<Pool>> = OnceLock::new();
        Arc::clone(GLOBAL.get_or_init(|| Pool::new(Arc::new(SystemClock), ToolCache::user())))
    }

    /// The tool-list cache it writes to.
    pub fn cache(&self) -> Option<&ToolCache> {
        self.cache.as_ref()
    }

    fn slot(&self, cfg: &McpServerConfig, root: &Path, trusted: bool) -> Arc<Slot> {
        let key =
            Key { transport: cfg.transport.clone(), env: cfg.env.clone(), root: root.to_path_buf(), trusted };
        let mut slots = self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            slots.entry(key).or_insert_with(|| Arc::new(Slot { current: tokio::sync::Mutex::new(None) })),
        )
    }

    /// The running instance of server `name`, started (or started again, after a crash) if
    /// need be, within its `timeout`. The error says why it is not available.
    pub async fn acquire(
        self: &Arc<Self>,
        name: &str,
        cfg: &McpServerConfig,
        root: &Path,
        trusted: bool,
    ) -> Result<Arc<Instance>, String> {
        self.spawn_reaper();
        self.reap_idle();
        let slot = self.slot(cfg, root, trusted);
        let mut current = slot.current.lock().await;
        if let Some(inst) = current.as_ref() {
            if inst.conn.is_alive() {
                inst.touch(self.clock.now());
                return Ok(Arc::clone(inst));
            }
            tracing::info!("restart mcp {name}: {}", inst.conn.exit_reason());
            inst.conn.kill();
            *current = None;
        }
        let conn = client::connect(name, cfg, root, trusted).await?;
        let tools = match tokio::time::timeout(cfg.start_timeout(), conn.list_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(CallError::Closed(why) | CallError::Protocol(why))) => {
                conn.kill();
                return Err(format!("listing its tools failed: {why}"));
            }
            Err(_) => {
                conn.kill();
                return Err(format!(
                    "it did not list its tools within {}",
                    format_duration(cfg.start_timeout())
                ));
            }
        };
        tracing::info!("start mcp {name}: {}", crate::text::count(tools.len(), "tool"));
        self.remember(name, cfg, &tools);
        let inst = Arc::new(Instance {
            name: name.to_owned(),
            conn,
            tools,
            last_used: Mutex::new(self.clock.now()),
            in_flight: AtomicUsize::new(0),
        });
        if let Ok(mut started) = self.started.lock() {
            started.retain(|w| w.strong_count() > 0);
            started.push(Arc::downgrade(&inst));
        }
        *current = Some(Arc::clone(&inst));
        Ok(inst)
    }

    /// Keep the tool list for the editor and `livenote check` (best effort).
    fn remember(&self, name: &str, cfg: &McpServerConfig, tools: &[Tool]) {
        let Some(cache) = &self.cache else { return };
        let listed: Vec<CachedTool> = tools.iter().map(super::cache::listed).collect();
        if let Err(e) = cache.store(name, cfg, &listed, self.clock.now()) {
            tracing::warn!("write the tool list of mcp {name}: {e}");
        }
    }

    /// Call `tool` on `inst` with `arguments`, within `timeout`. A call that times out, or is
    /// dropped before it ends, kills the server. The error is for the model.
    pub async fn call(
        &self,
        inst: &Arc<Instance>,
        tool: &str,
        arguments: JsonObject,
        timeout: Duration,
    ) -> Result<CallToolResult, String> {
        inst.in_flight.fetch_add(1, Ordering::Relaxed);
        let mut flight = InFlight { inst, ended: false };
        let result = tokio::time::timeout(timeout, inst.conn.call(tool, arguments)).await;
        flight.ended = true;
        drop(flight);
        inst.touch(self.clock.now());
        match result {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(CallError::Protocol(message))) => Err(message),
            Ok(Err(CallError::Closed(why))) => {
                inst.conn.kill();
                Err(format!("{why}; it starts again at the next call"))
            }
            Err(_) => {
                tracing::info!("stop mcp {}: no answer within {}", inst.name, format_duration(timeout));
                inst.conn.kill();
                Err(format!(
                    "no answer within {}; the server was stopped and starts again at the next call",
                    format_duration(timeout)
                ))
            }
        }
    }

    /// Stop the servers unused for [`IDLE`] by the pool's clock.
    pub fn reap_idle(&self) {
        let now = self.clock.now();
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(s) => s.values().cloned().collect(),
            Err(_) => return,
        };
        for slot in slots {
            // A slot being started or used is not idle.
            let Ok(mut current) = slot.current.try_lock() else { continue };
            let idle = current.as_ref().is_some_and(|i| {
                i.in_flight.load(Ordering::Relaxed) == 0
                    && (now - i.idle_since()).to_std().is_ok_and(|d| d >= self.idle)
            });
            if idle && let Some(inst) = current.take() {
                tracing::info!("stop mcp {}: idle for {}", inst.name, format_duration(self.idle));
                inst.conn.kill();
            }
        }
    }

    /// Kill every server (at exit).
    pub fn shutdown(&self) {
        let started: Vec<Weak<Instance>> = self.started.lock().map(|s| s.clone()).unwrap_or_default();
        for inst in started.iter().filter_map(Weak::upgrade) {
            inst.conn.kill();
        }
    }

    /// In a long-lived process, idle servers are stopped even when no run comes.
    fn spawn_reaper(self: &Arc<Self>) {
        if self.reaper.swap(true, Ordering::Relaxed) {
            return;
        }
        let pool = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(REAP_EVERY).await;
                match pool.upgrade() {
                    Some(p) => p.reap_idle(),
                    None => return,
                }
            }
        });
    }
}

/// Counts a call in flight; a call dropped before it ended (Stop, the run's time limit)
/// kills the server, which may be stuck in it.
struct InFlight<'a> {
    inst: &'a Instance,
    ended: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.inst.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.ended {
            tracing::info!("stop mcp {}: its call was abandoned", self.inst.name);
            self.inst.conn.kill();
        }
    }
}
