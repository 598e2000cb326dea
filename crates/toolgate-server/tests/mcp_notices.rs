//! A call the MCP proxy holds (another process, here a `Proxy` on its own
//! connection to the same store) is announced by the `toolgate serve`
//! sharing the store: the held call's approval is the queue, and the
//! service's notifier finds it, claims its notice once and delivers it to
//! the webhook, signed. The proxy itself sends nothing: a setup with
//! `[[approvals.notify]]` runs a `serve` on the store (docs/src/approvals.md).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::mpsc;
use toolgate::config::{Config, PinFirst};
use toolgate_json::Value;
use toolgate_mcp::{Proxy, ProxyOptions};
use toolgate_server::notify;
use toolgate_server::AppState;
use toolgate_store::{open_config_store, StoreGate, StoreOptions};

const KEY: &str = "a-webhook-key-of-32-bytes-or-so!";

fn config(dir: &std::path::Path, hook: &str) -> Config {
    let key = dir.join("webhook.key");
    std::fs::write(&key, format!("{KEY}\n")).unwrap();
    let text = format!(
        r#"
[store]
url = "sqlite://{db}"

[authorization]
mode = "none"

[server]
listen = "127.0.0.1:0"
store_poll_ms = 50

[[approvals.notify]]
name = "ops"
kind = "webhook"
url = "{hook}"
secret_file = "{key}"

[[tool]]
name = "refund"
risk = "destructive"
schema = {{ type = "object", properties = {{ amount = {{ type = "integer" }} }}, required = ["amount"], additionalProperties = false }}
"#,
        db = dir.join("toolgate.db").display(),
        key = key.display(),
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, &text).unwrap();
    Config::load(&path).unwrap()
}

/// A webhook receiver: its URL and the (timestamp, signature, body) of
/// each notice.
async fn receiver() -> (String, mpsc::UnboundedReceiver<(String, String, Vec<u8>)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let handler = move |headers: HeaderMap, body: Bytes| {
        let tx = tx.clone();
        async move {
            let header = |n: &str| {
                headers
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let _ = tx.send((
                header(notify::TIMESTAMP_HEADER),
                header(notify::SIGNATURE_HEADER),
                body.to_vec(),
            ));
            StatusCode::NO_CONTENT
        }
    };
    let app = Router::new().route("/hook", post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

async fn send(w: &mut DuplexStream, line: &str) {
    w.write_all(line.as_bytes()).await.unwrap();
    w.write_all(b"\n").await.unwrap();
}

async fn recv(r: &mut Lines<BufReader<DuplexStream>>) -> String {
    tokio::time::timeout(Duration::from_secs(10), r.next_line())
        .await
        .expect("a line within 10 s")
        .unwrap()
        .expect("a line, not the end")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_the_mcp_proxy_creates_reaches_the_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, mut got) = receiver().await;
    let config = config(dir.path(), &hook);

    // The service with its notifier, as `toolgate serve` runs it.
    let state = AppState::from_config(&config).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let sender = tokio::spawn(notify::run(state, stop_rx));

    // The MCP proxy on its own connection to the store.
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = Arc::new(StoreGate::from_config(&config, store).unwrap());
    let proxy = Proxy::with_gate(Arc::clone(&gate), "alice", "s-1", ProxyOptions::default())
        .with_pins("shop", PinFirst::Trust);
    let (mut to_proxy, client_in) = tokio::io::duplex(1 << 16);
    let (client_out, from_proxy) = tokio::io::duplex(1 << 16);
    let (server_in_w, server_in_r) = tokio::io::duplex(1 << 16);
    let (mut server_out, server_out_r) = tokio::io::duplex(1 << 16);
    let run = tokio::spawn(async move {
        proxy
            .run(
                BufReader::new(client_in),
                client_out,
                BufReader::new(server_out_r),
                server_in_w,
            )
            .await
    });
    let mut from_proxy = BufReader::new(from_proxy).lines();
    let mut server_in = BufReader::new(server_in_r).lines();
    send(
        &mut to_proxy,
        r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#,
    )
    .await;
    recv(&mut server_in).await;
    send(
        &mut server_out,
        r#"{"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"refund","inputSchema":{"type":"object"}}]}}"#,
    )
    .await;
    recv(&mut from_proxy).await;
    send(
        &mut to_proxy,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":5}}}"#,
    )
    .await;
    let answer = recv(&mut from_proxy).await;
    assert!(
        answer.contains("held by toolgate for human approval"),
        "{answer}"
    );

    // The notice arrives at the webhook, signed, naming the approval.
    let (timestamp, signature, body) = tokio::time::timeout(Duration::from_secs(30), got.recv())
        .await
        .expect("the notice within 30 s")
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    notify::verify(KEY.as_bytes(), &timestamp, &body, &signature, now).unwrap();
    let v: Value<'_> = toolgate_json::from_slice(&body).unwrap();
    let id = v.pointer("/approval/id").and_then(Value::as_str).unwrap();
    assert!(
        answer.contains(&format!("approval {id}")),
        "{answer} / {id}"
    );
    assert_eq!(
        v.pointer("/approval/tool").and_then(Value::as_str),
        Some("refund")
    );
    assert_eq!(
        v.pointer("/approval/user").and_then(Value::as_str),
        Some("alice")
    );

    drop(to_proxy);
    run.await.unwrap();
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(10), sender)
        .await
        .unwrap()
        .unwrap();
}
