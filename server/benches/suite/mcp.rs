//! What an MCP-using run adds (issue 15): starting a server once, then each call. Measured
//! with the real `mcp-server-time` (PyPI) and tests/e2e/mcp/fake_server.py (its `echo`: the
//! protocol round trip alone), both from the venv of tests/e2e/mcp/install.sh named by
//! `LIVENOTE_MCP_VENV` (skipped without it, and said so):
//! - in process, through the pool the runs use (`livenote::mcp::Pool`): *start* (spawn, the MCP
//!   handshake and `tools/list`, on a fresh pool each time), *reuse* (the next run's acquire of
//!   the running server) and *call* (one `tools/call`, round trip);
//! - end to end, `livenote run` (a new process, so the server starts in every run) against the
//!   scripted model: a run whose model calls `mcp__time__get_current_time` once, beside the same
//!   run calling the built-in `read_note` instead, with no MCP server configured. The
//!   difference is what MCP adds to a run of the CLI; in `livenote lsp` and `watch` the server
//!   is started once and kept, so a run after the first adds only the calls.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use livenote::config::{McpServerConfig, McpTransport, Origin};
use livenote::mcp::Pool;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use livenote::schedule::SystemClock;
use serde_json::{Value, json};

use crate::{median, ms, progress};

pub fn bench(bin: &Path, samples: usize, manifest: &Path) -> Value {
    let Some(venv) = std::env::var_os("LIVENOTE_MCP_VENV").filter(|v| !v.is_empty()).map(PathBuf::from)
    else {
        progress("mcp: skipped (LIVENOTE_MCP_VENV is not set; see tests/e2e/mcp/install.sh)");
        return Value::Null;
    };
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("tokio: {e}"));
    let marks = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let time = server(vec![venv.join("bin/mcp-server-time").display().to_string()], &[]);
    let fake = server(
        vec![
            venv.join("bin/python").display().to_string(),
            manifest.join("../tests/e2e/mcp/fake_server.py").display().to_string(),
        ],
        &[("FAKE_MCP_DIR", &marks.path().display().to_string())],
    );
    let time_pool = pool_figures(&rt, "time", &time, "get_current_time", json!({"timezone": "UTC"}), samples);
    let fake_pool = pool_figures(&rt, "fake", &fake, "echo", json!({"text": "x"}), samples);
    let runs = run_figures(&rt, bin, &venv, samples);
    json!({"pool": {"mcp-server-time": time_pool, "fake echo": fake_pool}, "run": runs})
}

fn server(command: Vec<String>, env: &[(&str, &str)]) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::Stdio { command },
        env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        events: false,
        timeout: Duration::from_secs(30),
        origin: Origin::User,
    }
}

fn pool_figures(
    rt: &tokio::runtime::Runtime,
    name: &str,
    cfg: &McpServerConfig,
    tool: &str,
    args: Value,
    samples: usize,
) -> Value {
    let root = std::env::temp_dir();
    let arguments = args.as_object().cloned().unwrap_or_default();
    let mut start = Vec::new();
    for _ in 0..samples.max(3) {
        let pool = Pool::new(Arc::new(SystemClock), None);
        let t = Instant::now();
        let inst =
            rt.block_on(pool.acquire(name, cfg, &root, true)).unwrap_or_else(|e| panic!("start {name}: {e}"));
        start.push(ms(t.elapsed()));
        drop(inst);
        pool.shutdown();
    }
    let pool = Pool::new(Arc::new(SystemClock), None);
    let inst =
        rt.block_on(pool.acquire(name, cfg, &root, true)).unwrap_or_else(|e| panic!("start {name}: {e}"));
    let (mut reuse, mut call) = (Vec::new(), Vec::new());
    for i in 0..=(samples * 20) {
        let t = Instant::now();
        let again =
            rt.block_on(pool.acquire(name, cfg, &root, true)).unwrap_or_else(|e| panic!("reuse {name}: {e}"));
        let r = t.elapsed();
        let t = Instant::now();
        let result = rt.block_on(pool.call(&again, tool, arguments.clone(), Duration::from_secs(30)));
        let c = t.elapsed();
        assert!(result.is_ok(), "{name} {tool}: {result:?}");
        if i > 0 {
            reuse.push(ms(r));
            call.push(ms(c));
        }
    }
    drop(inst);
    pool.shutdown();
    progress(&format!(
        "mcp {name}: start {:.0} ms, reuse {:.3} ms, {tool} call {:.2} ms (medians)",
        median(&start),
        median(&reuse),
        median(&call)
    ));
    json!({"start_ms": start, "reuse_ms": reuse, "call_ms": call, "tool": tool})
}

/// `livenote run` with one tool call: the time server's, or `read_note` without MCP.
fn run_figures(rt: &tokio::runtime::Runtime, bin: &Path, venv: &Path, samples: usize) -> Value {
    let model = rt.block_on(MockModelServer::start(Flavor::OpenAi, Vec::new()));
    let provider = format!(
        "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key_env = \"LIVENOTE_BENCH_KEY\"\n",
        model.base_url()
    );
    let with_mcp = format!(
        "{provider}[mcp.servers.time]\ncommand = [{:?}]\n",
        venv.join("bin/mcp-server-time").display().to_string()
    );
    let plain = measure_runs(bin, &model, &provider, ("read_note", json!({})), samples);
    let mcp = measure_runs(
        bin,
        &model,
        &with_mcp,
        ("mcp__time__get_current_time", json!({"timezone": "UTC"})),
        samples,
    );
    progress(&format!(
        "mcp: livenote run with one tool call: {:.0} ms with read_note, {:.0} ms with mcp__time__get_current_time (medians)",
        median(&plain),
        median(&mcp)
    ));
    json!({"read_note_ms": plain, "mcp_time_ms": mcp})
}

fn measure_runs(
    bin: &Path,
    model: &MockModelServer,
    config: &str,
    call: (&str, Value),
    samples: usize,
) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let root = dir.path();
    let data = root.join(".data");
    std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("config: {e}"));
    std::fs::write(root.join("n.md"), "---\nlive:\n  objective: Keep the time.\n---\n# Time\n\nold\n")
        .unwrap_or_else(|e| panic!("note: {e}"));
    let livenote = |args: &[&str]| {
        let mut c = Command::new(bin);
        c.args(args)
            .current_dir(root)
            .env("LIVENOTE_DATA_DIR", &data)
            .env("LIVENOTE_CONFIG_DIR", &data)
            .env("LIVENOTE_BENCH_KEY", "k")
            .env("LIVENOTE_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    assert!(livenote(&["trust", "."]).status().is_ok_and(|s| s.success()), "livenote trust failed");
    let mut out = Vec::new();
    for i in 0..=samples {
        model.push(ScriptedReply::ToolCalls(vec![(call.0.to_owned(), call.1.clone())]));
        model.push(ScriptedReply::Text("Done.".to_owned()));
        let t = Instant::now();
        let status = livenote(&["run", "n.md"]).status().unwrap_or_else(|e| panic!("livenote run: {e}"));
        let wall = t.elapsed();
        assert!(status.success(), "livenote run failed: {status}");
        if i > 0 {
            out.push(ms(wall));
        }
    }
    out
}
