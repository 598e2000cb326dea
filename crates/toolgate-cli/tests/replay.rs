//! `toolgate replay`, driven from outside over HTTP: the recordings of
//! `examples/replay` served by the documented matching rule (JSON and event
//! streams, three routes) to the official SDKs, and every request it does
//! not know refused with a clear error; a folder that breaks a bound does
//! not load.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn root() -> PathBuf {
    toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR")).unwrap()
}

/// A running `toolgate replay`, killed when dropped.
struct Replay {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Replay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `toolgate replay --dir DIR --listen 127.0.0.1:0 EXTRA…` and reads
/// its address from the line it writes once it listens.
fn start(dir: &Path, extra: &[&str]) -> Replay {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("replay")
        .arg("--dir")
        .arg(dir)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let addr = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("toolgate replay did not start: {seen}");
        };
        if let Some((_, rest)) = line.split_once(" on http://") {
            break rest.parse::<SocketAddr>().unwrap();
        }
        seen.push_str(&line);
        seen.push('\n');
    };
    std::thread::spawn(move || for _ in lines {});
    Replay { child, addr }
}

/// One request on a new connection: status, content type and body.
fn call(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or_default()
        .to_owned();
    (status, content_type, body.to_owned())
}

fn chat(user: &str, extra: &str) -> Vec<u8> {
    format!(
        "{{\"model\":\"gpt-4.1\",{extra}\"messages\":[{{\"role\":\"user\",\"content\":{}}}]}}",
        toolgate_json::canonical::to_string(&toolgate_json::Value::String(user.to_owned().into()))
    )
    .into_bytes()
}

#[test]
fn recordings_are_served_as_recorded_by_the_matching_rule() {
    let dir = root().join("examples/replay");
    let r = start(&dir, &[]);
    let recorded = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();

    let (status, kind, body) = call(
        r.addr,
        "POST",
        "/v1/chat/completions",
        &chat("Find waterproof hiking boots", ""),
    );
    assert_eq!((status, kind.as_str()), (200, "application/json"));
    assert_eq!(body, recorded("chat-search.json"));

    // The same message streamed: the event stream, byte for byte.
    let (status, kind, body) = call(
        r.addr,
        "POST",
        "/v1/chat/completions",
        &chat("Find trail socks", "\"stream\":true,"),
    );
    assert_eq!((status, kind.as_str()), (200, "text/event-stream"));
    assert_eq!(body, recorded("chat-stream-search.sse"));

    // A recorded error status, matched by model alone.
    let req = b"{\"model\":\"rate-limited\",\"messages\":[]}";
    let (status, _, body) = call(r.addr, "POST", "/v1/chat/completions", req);
    assert_eq!(status, 429);
    assert_eq!(body, recorded("chat-rate-limited.json"));

    // Text parts count as the message's text; the last user message wins.
    let parts = br#"{"model":"x","messages":[{"role":"user","content":"Find trail socks"},
        {"role":"user","content":[{"type":"text","text":"Refund my late order ord_1002"}]}]}"#;
    let (status, _, body) = call(r.addr, "POST", "/v1/messages", parts);
    assert_eq!(status, 200);
    assert_eq!(body, recorded("messages-refund-own.json"));
}

#[test]
fn what_is_not_recorded_is_refused_with_the_reason() {
    let r = start(
        &root().join("examples/replay"),
        &["--max-request-bytes", "2048"],
    );

    // No recording: 404 in the provider's shape, saying what was matched.
    let (status, _, body) = call(
        r.addr,
        "POST",
        "/v1/chat/completions",
        &chat("Find waterproof hiking boots", "\"stream\":true,"),
    );
    assert_eq!(status, 404, "{body}");
    let v = toolgate_json::from_str(&body).unwrap();
    assert_eq!(
        v.pointer("/error/code").and_then(|c| c.as_str()),
        Some("no_recording")
    );
    let message = v.pointer("/error/message").unwrap().as_str().unwrap();
    assert!(
        message.contains(
            "matches POST /v1/chat/completions with stream true, model \"gpt-4.1\" and \
             last user message \"Find waterproof hiking boots\""
        ),
        "{message}"
    );
    assert!(message.contains("replay.toml"), "{message}");

    // Anthropic's route answers in Anthropic's shape.
    let (status, _, body) = call(r.addr, "POST", "/v1/messages", &chat("never", ""));
    assert_eq!(status, 404);
    assert!(
        body.starts_with("{\"error\":{\"message\":\"no recording")
            && body.contains("\"type\":\"error\""),
        "{body}"
    );

    for (method, path) in [
        ("GET", "/v1/models"),
        ("GET", "/v1/chat/completions"),
        ("POST", "/v1/embeddings"),
    ] {
        let (status, _, body) = call(r.addr, method, path, b"{}");
        assert_eq!(status, 404, "{method} {path}: {body}");
        assert!(body.contains("unknown_route"), "{body}");
        assert!(body.contains(&format!("not {method} {path}")), "{body}");
    }

    for (req, why) in [
        (&b"{\"a\":1,\"a\":2}"[..], "not strict JSON"),
        (b"[1]", "not a JSON object"),
        (
            b"{\"stream\":\"yes\",\"messages\":[]}",
            "`stream` must be true or false",
        ),
    ] {
        let (status, _, body) = call(r.addr, "POST", "/v1/responses", req);
        assert_eq!(status, 400, "{body}");
        assert!(
            body.contains("invalid_request") && body.contains(why),
            "{body}"
        );
    }

    let big = chat(&"x".repeat(4096), "");
    let (status, _, body) = call(r.addr, "POST", "/v1/chat/completions", &big);
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("larger than 2048 bytes"), "{body}");
}

#[test]
fn a_folder_that_breaks_a_bound_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("replay.toml"),
        "[[recording]]\nroute = \"POST /v1/chat/completions\"\nbody = \"../secret.json\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("replay")
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot load the recordings"), "{err}");
    assert!(
        err.contains("replay.toml: recording 1: `body` is \"../secret.json\""),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let missing = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["replay", "--dir", "/nonexistent/recordings"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/recordings/replay.toml")
    );
}

/// A Python with `openai` and `anthropic`: `TOOLGATE_PROXY_PYTHON`, else
/// the workspace's `target/py/venv`.
fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("TOOLGATE_PROXY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/py/venv/bin/python"));
    Command::new(&candidate)
        .args(["-c", "import openai, anthropic"])
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(candidate)
}

#[test]
fn the_official_sdks_read_the_recordings() {
    let Some(python) = python() else {
        toolgate_testkit::skip("no Python with openai and anthropic (TOOLGATE_PROXY_PYTHON)");
        return;
    };
    let r = start(&root().join("examples/replay"), &[]);
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replay/sdk_replay.py"))
        .arg(format!("http://{}", r.addr))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = [
        "chat chatcmpl-replay-01 search {\"query\":\"waterproof hiking boots\", \"limit\":5}",
        "chat stream Searching.  search {\"query\":\"trail socks\"}",
        "responses resp_replay_05 search {\"query\":\"trail socks\"}",
        "messages msg_replay_06 I'll refund the late order. refund [('amount_cents', 2599), ('order_id', 'ord_1002'), ('reason', 'late')]",
        "messages stream Searching the catalogue. search {'query': 'trail socks'}",
        "chat miss 404 no_recording",
        "messages miss 404 no_recording",
        "rate limited 429 rate_limit_exceeded",
    ];
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected, "{stdout}");
}

#[test]
fn the_proxy_refuses_an_upstream_that_is_not_a_base_url() {
    for bad in [
        "ftp://127.0.0.1:8089",
        "http://",
        "http://host/v1?x=1",
        "127.0.0.1:8089",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["proxy", "--config"])
            .arg(root().join("examples/shop/toolgate.toml"))
            .args(["--listen", "127.0.0.1:0", "--upstream", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("--upstream: `{bad}` is not a base URL")),
            "{bad}: {err}"
        );
    }
}
