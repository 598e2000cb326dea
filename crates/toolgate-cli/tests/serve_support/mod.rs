//! What the tests of `toolgate serve` share: a copy of the shop example in a
//! temporary folder, the real `toolgate` binary serving it on a free port,
//! and a small HTTP/1.1 client over raw TCP (one request per connection).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    dead_code,
    reason = "test code; each test binary uses part of it"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::cli_support::toolgate_cli;
use toolgate_json::Value;

/// The demo tokens of `examples/shop/toolgate.toml`.
pub const AGENT: &str = "agent-demo-token";
/// The approver's demo token.
pub const APPROVER: &str = "approver-demo-token";
/// The admin's demo token.
pub const ADMIN: &str = "admin-demo-token";

/// A copy of the shop example (config, policies, schemas, sample
/// responses) in a temporary folder, with its store there too.
pub struct Shop {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
}

impl Shop {
    /// Copies the shop; `server` is added to its `[server]` table.
    pub fn new(server: &str) -> Self {
        Self::new_in(&std::env::temp_dir(), server)
    }

    /// [`Shop::new`] in a temporary folder under `parent`.
    pub fn new_in(parent: &Path, server: &str) -> Self {
        let dir = tempfile::tempdir_in(parent).unwrap();
        toolgate_testkit::copy_shop(dir.path());
        let config = dir.path().join("toolgate.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        let marker = "[server]";
        assert!(
            text.contains(marker),
            "the shop config has a [server] table"
        );
        let mut text = text;
        if server.contains("max_body_bytes") {
            // The given cap replaces the shop's.
            text = text.replacen("max_body_bytes = 8388608", "", 1);
        }
        let text = text.replacen(
            "listen = \"127.0.0.1:8080\"",
            &format!("listen = \"127.0.0.1:0\"\n{server}"),
            1,
        );
        std::fs::write(&config, text).unwrap();
        Self { dir, config }
    }

    /// The SQLite store file.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("toolgate.db")
    }

    /// `toolgate ARGS…` (with `--config` of this copy appended), its
    /// status and standard output.
    pub fn toolgate(&self, args: &[&str]) -> (ExitStatus, String, String) {
        let out = toolgate_cli()
            .args(args)
            .arg("--config")
            .arg(&self.config)
            .run();
        (
            out.status,
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// `toolgate audit verify` passes; the number of records.
    pub fn verify(&self) -> u64 {
        let (status, out, err) = self.toolgate(&["audit", "verify"]);
        assert!(status.success(), "audit verify: {out}{err}");
        assert!(out.starts_with("audit log intact: "), "{out}");
        out["audit log intact: ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Every audit record, from `toolgate audit export --jsonl`.
    pub fn export(&self) -> Vec<Value<'static>> {
        let (status, out, err) = self.toolgate(&["audit", "export", "--jsonl"]);
        assert!(status.success(), "audit export: {err}");
        out.lines()
            .map(|l| toolgate_json::from_str(l).unwrap().into_owned())
            .collect()
    }
}

/// A running `toolgate serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// Its standard error so far, whether that has ended (the process
    /// exited), and a signal for each change.
    log: Arc<(Mutex<(String, bool)>, Condvar)>,
}

impl Server {
    /// Starts `toolgate serve --config CONFIG` and waits for its address.
    pub fn start(config: &Path) -> Self {
        let mut child = toolgate_cli()
            .arg("serve")
            .arg("--config")
            .arg(config)
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new((Mutex::new((String::new(), false)), Condvar::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            let (held, changed) = &*sink;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("toolgate: serving on http://") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(rest.parse::<SocketAddr>().unwrap());
                    }
                }
                let mut l = held.lock().unwrap();
                l.0.push_str(&line);
                l.0.push('\n');
                changed.notify_all();
            }
            held.lock().unwrap().1 = true;
            changed.notify_all();
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolgate serve did not start: {}", log.0.lock().unwrap().0);
        };
        Self { child, addr, log }
    }

    /// What the server wrote to standard error so far.
    pub fn log(&self) -> String {
        self.log.0.lock().unwrap().0.clone()
    }

    /// Sends a signal (`KILL`, `TERM`) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let st = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(st.success(), "kill -{name}");
    }

    /// Waits for the process to exit (at most `limit`): for the end of its
    /// standard error, which it closes as it exits, then for its status.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let (held, changed) = &*self.log;
        let (held, waited) = changed
            .wait_timeout_while(held.lock().unwrap(), limit, |(_, ended)| !*ended)
            .unwrap();
        assert!(
            !waited.timed_out(),
            "the server did not exit within {limit:?}: {}",
            held.0
        );
        drop(held);
        self.child.wait().unwrap()
    }

    /// Waits (on each new line's signal, at most `limit`) until standard
    /// error holds `needle`.
    pub fn wait_for_log(&self, needle: &str, limit: Duration) {
        let (held, changed) = &*self.log;
        let (held, waited) = changed
            .wait_timeout_while(held.lock().unwrap(), limit, |(text, ended)| {
                !*ended && !text.contains(needle)
            })
            .unwrap();
        assert!(
            !waited.timed_out() && held.0.contains(needle),
            "no `{needle}` in: {}",
            held.0
        );
    }

    /// A request to this server.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        content_type: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<Response> {
        request(self.addr, method, path, token, content_type, body)
    }

    /// `POST /v1/decide` as the agent.
    pub fn decide(&self, body: &str) -> std::io::Result<Response> {
        self.call(
            "POST",
            "/v1/decide",
            Some(AGENT),
            Some("application/json"),
            body.as_bytes(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    /// The body as JSON.
    pub fn json(&self) -> Value<'static> {
        match toolgate_json::from_str(&self.body) {
            Ok(v) => v.into_owned(),
            Err(e) => panic!("not JSON ({e}): {} {}", self.status, self.body),
        }
    }

    /// The error code of an error body.
    pub fn error_code(&self) -> String {
        self.json()
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("not an error: {} {}", self.status, self.body))
            .to_owned()
    }
}

/// The head of a request (with `Connection: close` and the body's length).
pub fn head(
    method: &str,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    length: usize,
) -> String {
    let mut h = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {length}\r\n"
    );
    if let Some(t) = token {
        h.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(c) = content_type {
        h.push_str(&format!("Content-Type: {c}\r\n"));
    }
    h.push_str("\r\n");
    h
}

/// One request on a new connection; the answer read to the end.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: &[u8],
) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    s.set_nodelay(true)?;
    let mut out = head(method, path, token, content_type, body.len()).into_bytes();
    out.extend_from_slice(body);
    s.write_all(&out)?;
    read_response(&mut s)
}

/// Reads a response until the server closes the connection.
pub fn read_response(s: &mut TcpStream) -> std::io::Result<Response> {
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    parse_response(&raw)
}

/// Parses `HTTP/1.1 STATUS …\r\n…\r\n\r\nBODY` (a `Content-Length` body).
pub fn parse_response(raw: &[u8]) -> std::io::Result<Response> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| bad(&format!("no complete head in {} bytes", raw.len())))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    if body.len() < length {
        return Err(bad("the body is cut off"));
    }
    Ok(Response {
        status,
        body: body[..length].to_owned(),
    })
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    toolgate_json::canonical::to_string(&Value::String(s.to_owned().into()))
}

/// An OpenAI Chat Completions response with one `search` call (allowed for
/// any user) whose id is `call_id`.
pub fn search_response(call_id: &str) -> String {
    format!(
        "{{\"id\":\"chatcmpl-load\",\"object\":\"chat.completion\",\"created\":1767225600,\"model\":\"gpt-4.1\",\
         \"choices\":[{{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{{\"role\":\"assistant\",\"content\":null,\
         \"tool_calls\":[{{\"id\":{},\"type\":\"function\",\"function\":{{\"name\":\"search\",\
         \"arguments\":\"{{\\\"query\\\":\\\"boots\\\",\\\"limit\\\":5}}\"}}}}]}}}}]}}",
        json_string(call_id)
    )
}

/// A `/v1/decide` body: `response` decided as alice in `session`.
pub fn decide_body(response: &str, session: &str) -> String {
    format!(
        "{{\"body\":{},\"format\":\"openai\",\"context\":{{\"user\":\"alice\",\"session\":{},\"roles\":[\"customer\"],\"turn\":1}}}}",
        json_string(response),
        json_string(session)
    )
}

/// The first decision of a decide answer: (call id, verdict, reasons' codes).
pub fn first_decision(r: &Response) -> (String, String, Vec<String>) {
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    let d = v
        .pointer("/decisions/0")
        .unwrap_or_else(|| panic!("{}", r.body));
    let s = |p: &str| {
        d.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let reasons = d
        .pointer("/reasons")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|r| {
            r.pointer("/code")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect();
    (s("/call_id"), s("/verdict"), reasons)
}

/// A signal a test's own threads raise after each step, so that a waiting
/// thread re-checks its condition then instead of polling on a timer.
#[derive(Default)]
pub struct Signal {
    steps: Mutex<u64>,
    raised: Condvar,
}

impl Signal {
    /// One more step was taken.
    pub fn raise(&self) {
        *self.steps.lock().unwrap() += 1;
        self.raised.notify_all();
    }

    /// Waits (at most `limit`) until `done` holds, checking it at each
    /// step; `done` must not wait on the stepping threads.
    pub fn wait_until(&self, what: &str, limit: Duration, done: impl Fn() -> bool) {
        let held = self.steps.lock().unwrap();
        let (held, waited) = self
            .raised
            .wait_timeout_while(held, limit, |_| !done())
            .unwrap();
        drop(held);
        assert!(!waited.timed_out(), "timed out waiting for {what}");
    }
}
