//! What `toolgate mcp` adds to an MCP `tools/call`, over stdio pipes: the
//! same upstream, a tiny MCP server of our own that answers at once (this
//! program run with `--echo-server`), called directly and through
//! `target/release/toolgate mcp` in front of it, in alternating rounds.
//! The proxy runs the full gate on the shop's config (its `search` tool and
//! schema, Cedar authorization as alice) over a SQLite store on disk by
//! default (every decision's audit record, and the result's, committed
//! before the answer: WAL, `synchronous=FULL`), or the store URL given.
//!
//! Prints p50 and p99 of a `tools/call` round trip (request written to the
//! child's standard input to its answer read from its standard output),
//! direct and proxied, at concurrency 1 and 32 (that many requests in
//! flight on the one connection, each client sending its next request when
//! its answer came).
//!
//! `cargo run --release -p toolgate-bench --example mcp_overhead -- [CALLS_PER_ROUND] [ROUNDS] [STORE_URL] [TOOLGATE_BIN]`
//!
//! With `--count CALLS [STORE_URL] [TOOLGATE_BIN]` it only makes `CALLS`
//! proxied calls at concurrency 1 after the warm-up and prints nothing: run
//! twice with `TOOLGATE_BIN` a script that starts toolgate under
//! `valgrind --tool=callgrind`, the difference of the two runs'
//! instructions over the difference of their calls is the proxy's own
//! instructions per call (its start-up cancels out).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark program: a failed setup should stop it loudly"
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tool call every client sends (the shop's `search` tool).
const ARGUMENTS: &str = r#"{"query":"waterproof hiking boots","limit":5}"#;

/// The upstream: an MCP server over stdio that answers `initialize`,
/// `tools/list` (one tool, `search`) and every `tools/call` at once with a
/// fixed text result. Notifications are read and dropped.
fn echo_server() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (v.get("id"), v.get("method").and_then(|m| m.as_str()))
        else {
            continue;
        };
        let result = match method {
            "initialize" => serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo", "version": "1"}
            }),
            "tools/list" => serde_json::json!({"tools": [{
                "name": "search",
                "description": "Search the product catalogue.",
                "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}
            }]}),
            "tools/call" => serde_json::json!({
                "content": [{"type": "text", "text": "3 results"}],
                "isError": false
            }),
            _ => serde_json::json!({}),
        };
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
        serde_json::to_writer(&mut out, &answer).unwrap();
        out.write_all(b"\n").unwrap();
        out.flush().unwrap();
    }
}

/// One MCP server over pipes (direct or through the proxy), with the
/// thread that reads its answers and hands each to the client waiting for
/// its id.
struct Peer {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    waiting: Arc<Mutex<HashMap<u64, mpsc::Sender<String>>>>,
    next_id: Arc<AtomicU64>,
}

impl Peer {
    fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let stdout = child.stdout.take().unwrap();
        let waiting: Arc<Mutex<HashMap<u64, mpsc::Sender<String>>>> = Arc::default();
        let w = Arc::clone(&waiting);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let Some(id) = v.get("id").and_then(serde_json::Value::as_u64) else {
                    continue;
                };
                if let Some(tx) = w.lock().unwrap().remove(&id) {
                    let _ = tx.send(line);
                }
            }
        });
        let peer = Self {
            child,
            stdin,
            waiting,
            next_id: Arc::new(AtomicU64::new(1)),
        };
        peer.request(
            "initialize",
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#,
        );
        peer.notify("notifications/initialized");
        let list = peer.request("tools/list", "{}");
        assert!(list.contains("\"search\""), "{list}");
        peer
    }

    fn notify(&self, method: &str) {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n");
        let mut w = self.stdin.lock().unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// One request, its answer.
    fn request(&self, method: &str, params: &str) -> String {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        self.waiting.lock().unwrap().insert(id, tx);
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n"
        );
        {
            let mut w = self.stdin.lock().unwrap();
            w.write_all(line.as_bytes()).unwrap();
            w.flush().unwrap();
        }
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no answer to {method} {id}"))
    }

    /// One `tools/call`, timed from the write to the answer.
    fn call(&self) -> Duration {
        let params = format!(r#"{{"name":"search","arguments":{ARGUMENTS}}}"#);
        let started = Instant::now();
        let answer = self.request("tools/call", &params);
        let took = started.elapsed();
        // The proxied answer is the server's: the call was allowed.
        assert!(
            answer.contains("3 results") && answer.contains("\"isError\":false"),
            "{answer}"
        );
        took
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// `calls` calls from `concurrency` clients at once.
fn round(peer: &Arc<Peer>, calls: usize, concurrency: usize) -> Vec<Duration> {
    let next = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..concurrency)
        .map(|_| {
            let (peer, next) = (Arc::clone(peer), Arc::clone(&next));
            std::thread::spawn(move || {
                let mut out = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < calls {
                    out.push(peer.call());
                }
                out
            })
        })
        .collect();
    threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect()
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A folder with the shop's config (its policies, entities and schemas)
/// and `[mcp] user = "alice"`.
fn shop_config(dir: &Path) -> PathBuf {
    let shop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    for f in ["policies.cedar", "shop.cedarschema", "entities.json"] {
        std::fs::copy(shop.join(f), dir.join(f)).unwrap();
    }
    std::fs::create_dir(dir.join("schemas")).unwrap();
    for e in std::fs::read_dir(shop.join("schemas")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join("schemas").join(e.file_name())).unwrap();
    }
    let toml = std::fs::read_to_string(shop.join("toolgate.toml"))
        .unwrap()
        .replace("max_turns = 20", "max_turns = 100000000");
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, format!("{toml}\n[mcp]\nuser = \"alice\"\n")).unwrap();
    path
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--echo-server") {
        return echo_server();
    }
    // `--count CALLS …`: the proxied calls alone, for an instruction count.
    let counting = args.get(1).map(String::as_str) == Some("--count");
    let args: Vec<String> = if counting {
        let mut a = args.clone();
        a.remove(1);
        a.insert(2, "1".to_owned());
        a
    } else {
        args
    };
    let calls: usize = args.get(1).map_or(2000, |a| a.parse().unwrap());
    let rounds: usize = args.get(2).map_or(5, |a| a.parse().unwrap());
    let store_url = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "sqlite://toolgate.db".to_owned());
    let toolgate = args.get(4).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/toolgate"),
        PathBuf::from,
    );
    assert!(
        toolgate.exists(),
        "no {} (cargo build --release -p toolgate-cli)",
        toolgate.display()
    );
    let me = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config(dir.path());

    let mut direct = Command::new(&me);
    direct.arg("--echo-server");
    let mut proxied = Command::new(&toolgate);
    proxied
        .current_dir(dir.path())
        .arg("mcp")
        .arg("--config")
        .arg(&config)
        .arg("--store")
        .arg(&store_url)
        .arg("--session")
        .arg("bench")
        .arg("--")
        .arg(&me)
        .arg("--echo-server");
    if counting {
        let proxied = Arc::new(Peer::start(proxied));
        round(&proxied, 200, 1);
        round(&proxied, calls, 1);
        if let Ok(peer) = Arc::try_unwrap(proxied) {
            peer.stop();
        }
        return;
    }
    let direct = Arc::new(Peer::start(direct));
    let proxied = Arc::new(Peer::start(proxied));
    // Warm both paths.
    round(&direct, 200, 4);
    round(&proxied, 200, 4);

    println!("store: {store_url}");
    println!("| concurrency | direct p50 | proxied p50 | added p50 | direct p99 | proxied p99 | added p99 | proxied/direct p50 |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for concurrency in [1, 32] {
        let (mut d, mut p) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            d.extend(round(&direct, calls, concurrency));
            p.extend(round(&proxied, calls, concurrency));
        }
        d.sort();
        p.sort();
        let (d50, p50) = (pct(&d, 0.5), pct(&p, 0.5));
        let (d99, p99) = (pct(&d, 0.99), pct(&p, 0.99));
        println!(
            "| {concurrency} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.1}× |",
            us(d50),
            us(p50),
            us(p50) - us(d50),
            us(d99),
            us(p99),
            us(p99) - us(d99),
            us(p50) / us(d50)
        );
    }
    for peer in [direct, proxied] {
        if let Ok(peer) = Arc::try_unwrap(peer) {
            peer.stop();
        }
    }
}
