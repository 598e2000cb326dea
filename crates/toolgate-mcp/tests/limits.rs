//! Limits and session labels through the MCP proxy, in process over
//! in-memory pipes with a scripted server: a session that read a labelled
//! tool's results acquires its labels (the trifecta rule then holds the
//! egress call, which never reaches the server), and the narrowed
//! `tools/list` hides a tool whose limit the session has used up.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_mcp::{Proxy, ProxyOptions};
use toolgate_store::{open_config_store, StoreGate, StoreOptions};

mod in_process;

use in_process::{json, recv, send, Ends};

/// A proxy's ends and the folder its config lives in.
struct Flow {
    ends: Ends,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Flow {
    type Target = Ends;

    fn deref(&self) -> &Ends {
        &self.ends
    }
}

impl std::ops::DerefMut for Flow {
    fn deref_mut(&mut self) -> &mut Ends {
        &mut self.ends
    }
}

/// The proxy over the flow config, as alice in `session`, its list
/// narrowed by the policies (as `[mcp] narrow_tools` does).
fn start(session: &str) -> Flow {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "[store]\nurl = \"sqlite::memory:\"\n{}",
        toolgate_testkit::flow_config(dir.path())
    );
    let path = dir.path().join("toolgate.toml");
    std::fs::write(&path, &toml).unwrap();
    let config = Config::load(&path).unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = StoreGate::from_config(&config, store).unwrap();
    let cedar = match toolgate::authz::from_config(&config).unwrap() {
        toolgate::authz::ConfiguredAuthorizer::Cedar(c) => c,
        _ => panic!("the flow config has Cedar policies"),
    };
    let narrowed = cedar
        .narrow(
            config.registry(),
            &toolgate::Context::new("alice", session, 1),
        )
        .unwrap();
    let proxy = Proxy::new(gate, "alice", session, ProxyOptions::default()).with_narrowed(narrowed);
    Flow {
        ends: in_process::start(proxy),
        _dir: dir,
    }
}

const TOOLS: &str = r#"[{"name":"read_page","inputSchema":{"type":"object"}},{"name":"read_record","inputSchema":{"type":"object"}},{"name":"post","inputSchema":{"type":"object"}}]"#;

/// A `tools/list` round trip; the names the client is shown.
async fn list(e: &mut Ends, id: u32) -> Vec<String> {
    let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    send(&mut e.to_proxy, &request).await;
    assert_eq!(recv(&mut e.server_in).await, request);
    send(
        &mut e.server_out,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{TOOLS}}}}}"#),
    )
    .await;
    let list = json(&recv(&mut e.from_proxy).await);
    list.pointer("/result/tools")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|t| {
            t.pointer("/name")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// A call the proxy must forward: the server answers it, the client gets
/// the answer.
async fn forwarded(e: &mut Ends, id: u32, tool: &str, args: &str) {
    send(
        &mut e.to_proxy,
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        ),
    )
    .await;
    let at_server = json(&recv(&mut e.server_in).await);
    assert_eq!(
        at_server.pointer("/params/name").and_then(Value::as_str),
        Some(tool)
    );
    send(
        &mut e.server_out,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#),
    )
    .await;
    let answer = json(&recv(&mut e.from_proxy).await);
    assert_eq!(
        answer
            .pointer("/result/content/0/text")
            .and_then(Value::as_str),
        Some("ok"),
        "{answer:?}"
    );
}

/// A call the proxy answers itself; its text.
async fn answered(e: &mut Ends, id: u32, tool: &str, args: &str) -> String {
    send(
        &mut e.to_proxy,
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        ),
    )
    .await;
    let answer = json(&recv(&mut e.from_proxy).await);
    assert_eq!(answer.pointer("/result/isError"), Some(&Value::Bool(true)));
    answer
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_read_both_labels_has_its_egress_call_held() {
    let mut e = start("s-trifecta");
    assert_eq!(list(&mut e, 0).await, ["read_page", "read_record", "post"]);
    // Each label alone: the post would still run (checked in another
    // session below); here the session reads both.
    forwarded(&mut e, 1, "read_page", r#"{"url":"https://example.com/a"}"#).await;
    forwarded(&mut e, 2, "read_record", r#"{"id":"r-1"}"#).await;
    let text = answered(&mut e, 3, "post", r#"{"url":"https://example.com/b"}"#).await;
    assert!(
        text.starts_with("held by toolgate for human approval: approval "),
        "{text}"
    );
    // The held call never reached the server: the next line it reads is
    // the next request.
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_label_is_not_the_trifecta_and_a_used_up_tool_leaves_the_list() {
    let mut e = start("s-posts");
    assert_eq!(list(&mut e, 1).await, ["read_page", "read_record", "post"]);
    forwarded(&mut e, 2, "read_page", r#"{"url":"https://example.com/a"}"#).await;
    // Only untrusted content: the post runs, and uses the session's one.
    forwarded(&mut e, 3, "post", r#"{"url":"https://example.com/b"}"#).await;
    assert_eq!(list(&mut e, 4).await, ["read_page", "read_record"]);
    // Proposed anyway, it is denied by the gate.
    let text = answered(&mut e, 5, "post", r#"{"url":"https://example.com/c"}"#).await;
    assert!(
        text.starts_with("denied by toolgate: rate_limited"),
        "{text}"
    );
}
