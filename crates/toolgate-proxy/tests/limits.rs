//! Limits and session labels through the API proxy, in process, with a
//! canned model API on loopback: a session whose allowed calls read a
//! labelled tool's results acquires the labels (the trifecta rule then
//! withholds the egress call the model proposes next), and the narrowed
//! `tools` of the next request leave out a tool whose limit the session has
//! used up.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_proxy::Proxy;
use toolgate_store::{open_config_store, StoreGate, StoreOptions};

/// What the canned upstream answers (in order) and what it was sent.
#[derive(Default)]
struct Canned {
    answers: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<String>>,
}

/// Reads one HTTP/1.1 message (headers and a `content-length` or chunked
/// body) to its end of stream; the head and the body.
async fn read_message(stream: &mut TcpStream, to_end: bool) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map(|n| n.trim().parse::<usize>().unwrap());
            let body_start = at + 4;
            match length {
                Some(n) if buf.len() >= body_start + n => {
                    return (head, buf[body_start..body_start + n].to_vec())
                }
                None if !to_end => return (head, Vec::new()),
                _ => {}
            }
        }
        let n = stream.read(&mut chunk).await.unwrap();
        if n == 0 {
            let at = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
            let body = buf[at + 4..].to_vec();
            let body = if head.contains("transfer-encoding: chunked") {
                dechunk(&body)
            } else {
                body
            };
            return (head, body);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let at = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..at]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[at + 2..at + 2 + size]);
        body = &body[at + 2 + size + 2..];
    }
}

/// The canned model API: each request gets the next answer.
async fn upstream(canned: Arc<Canned>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let canned = Arc::clone(&canned);
            tokio::spawn(async move {
                let (_, body) = read_message(&mut s, false).await;
                canned
                    .seen
                    .lock()
                    .unwrap()
                    .push(String::from_utf8(body).unwrap());
                let answer = canned.answers.lock().unwrap().pop_front().unwrap();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                s.write_all(reply.as_bytes()).await.unwrap();
            });
        }
    });
    port
}

/// A chat completion proposing `calls` (`(id, tool, arguments)`).
fn completion(calls: &[(&str, &str, &str)]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(id, name, args)| {
            format!(
                r#"{{"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{}}}}}"#,
                toolgate_json::canonical::to_string(&Value::String((*args).into()))
            )
        })
        .collect();
    format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    )
}

/// The request the application sends: every tool declared.
const REQUEST: &str = r#"{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"read_page","parameters":{"type":"object"}}},{"type":"function","function":{"name":"read_record","parameters":{"type":"object"}}},{"type":"function","function":{"name":"post","parameters":{"type":"object"}}}]}"#;

/// One request through the proxy in `session`: the answer's body.
async fn chat(port: u16, session: &str) -> Value<'static> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-toolgate-session: {session}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{REQUEST}",
        REQUEST.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let (head, body) = read_message(&mut s, true).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    toolgate_json::from_slice(&body).unwrap().into_owned()
}

/// The tool calls an answer passes on, by name.
fn released(answer: &Value<'_>) -> Vec<String> {
    answer
        .pointer("/choices/0/message/tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    c.pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The tool names a request the upstream received declares.
fn declared(request: &str) -> Vec<String> {
    let v = toolgate_json::from_str(request).unwrap();
    v.pointer("/tools")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|t| {
            t.pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The proxy over the flow config, its upstream the canned API.
async fn start(canned: &Arc<Canned>) -> (u16, tempfile::TempDir) {
    let up = upstream(Arc::clone(canned)).await;
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "[store]\nurl = \"sqlite::memory:\"\n\n[proxy]\nopenai = \"http://127.0.0.1:{up}\"\nuser = \"alice\"\nnarrow_tools = true\n{}",
        toolgate_testkit::flow_config(dir.path())
    );
    let path = dir.path().join("toolgate.toml");
    std::fs::write(&path, toml).unwrap();
    let config = Config::load(&path).unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = StoreGate::from_config(&config, store).unwrap();
    let proxy = Proxy::new(&config, gate).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(toolgate_proxy::serve(
        listener,
        proxy,
        std::future::pending(),
    ));
    (port, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_acquires_labels_and_narrows_by_limits() {
    let canned = Arc::new(Canned::default());
    canned.answers.lock().unwrap().extend([
        // Session a: a page and a record read, then a post proposed.
        completion(&[
            ("c1", "read_page", r#"{"url":"https://example.com/a"}"#),
            ("c2", "read_record", r#"{"id":"r-1"}"#),
        ]),
        completion(&[("c3", "post", r#"{"url":"https://example.com/b"}"#)]),
        // Session b: a post after nothing, then another request.
        completion(&[("c4", "post", r#"{"url":"https://example.com/c"}"#)]),
        completion(&[]),
    ]);
    let (port, _dir) = start(&canned).await;

    let first = chat(port, "a").await;
    assert_eq!(released(&first), ["read_page", "read_record"]);
    // The session now holds both labels: the post is withheld (held for a
    // human), its feedback in the text.
    let second = chat(port, "a").await;
    assert!(released(&second).is_empty(), "{second:?}");
    let text = second
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(
        text.contains("held by toolgate for human approval"),
        "{text}"
    );

    // In a session without labels the post runs, and uses its one call.
    let third = chat(port, "b").await;
    assert_eq!(released(&third), ["post"]);
    let _ = chat(port, "b").await;
    let seen = canned.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4);
    // The held post did not count: session a is still offered it; session
    // b's next request no longer declares it.
    assert_eq!(declared(&seen[1]), ["read_page", "read_record", "post"]);
    assert_eq!(declared(&seen[2]), ["read_page", "read_record", "post"]);
    assert_eq!(declared(&seen[3]), ["read_page", "read_record"]);
}
