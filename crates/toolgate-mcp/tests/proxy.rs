//! The proxy in process, over in-memory pipes, with a scripted server: what
//! reaches the server, what the client is answered. (The official SDKs on
//! both sides are in `crates/toolgate-mcp/tests/mcp_sdk.rs`.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::time::Duration;

use toolgate_json::Value;
use toolgate_mcp::{Ended, Proxy, ProxyOptions};

mod in_process;

use in_process::{json, recv, send, Ends};

const CONFIG: &str = r#"
[store]
url = "sqlite::memory:"

[authorization]
mode = "none"

[[tool]]
name = "add"
risk = "read"
schema = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } }, required = ["a", "b"], additionalProperties = false }

[[tool]]
name = "refund"
risk = "destructive"
schema = { type = "object", properties = { amount = { type = "integer" } }, required = ["amount"], additionalProperties = false }
"#;

fn start(timeout: Duration) -> Ends {
    let proxy = Proxy::new(
        in_process::gate(CONFIG),
        "alice",
        "s-1",
        ProxyOptions::default().with_call_timeout(timeout),
    );
    in_process::start(proxy)
}

/// The server's tools in these tests.
const TOOLS: &str = r#"[{"name":"add","inputSchema":{"type":"object"}},{"name":"refund","inputSchema":{"type":"object"}}]"#;

/// The client lists the tools first (as SDK clients do): the first
/// catalog, trusted on first use, pinned in the store.
async fn list_first(e: &mut Ends) {
    let list = in_process::list(e, TOOLS).await;
    assert_eq!(
        list.pointer("/result/tools")
            .and_then(Value::as_array)
            .map(<[Value]>::len),
        Some(2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_calls_reach_the_server_canonical_and_others_never() {
    let mut e = start(Duration::from_secs(10));
    list_first(&mut e).await;
    // Denied: answered by the proxy, the server sees nothing.
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"2","b":3}}}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"denied by toolgate: type_mismatch at /a: expected integer","type":"text"}],"isError":true,"resultType":"complete"}}"#
    );
    // Held: answered with the pending approval.
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refund","arguments":{"amount":5}}}"#,
    )
    .await;
    let held = json(&recv(&mut e.from_proxy).await);
    assert_eq!(held.pointer("/result/isError"), Some(&Value::Bool(true)));
    assert!(held
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap()
        .starts_with("held by toolgate for human approval: approval "));
    // Allowed: the server gets the canonical arguments (sorted, `1.5e1`
    // would be refused, `15` stays `15`), with the client's id.
    send(
        &mut e.to_proxy,
        r#"{"params":{"arguments":{"b":3,"a":15},"name":"add"},"jsonrpc":"2.0","id":"x","method":"tools/call"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"id":"x","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"a":15,"b":3},"name":"add"}}"#
    );
    // A second request with the pending id is refused, not forwarded.
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
    )
    .await;
    let refused = json(&recv(&mut e.from_proxy).await);
    assert_eq!(
        refused.pointer("/error/message").and_then(Value::as_str),
        Some("refused by toolgate: duplicate_request_id")
    );
    // The server's answer, its text sanitized.
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"18\u202e"}]}}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"id":"x","jsonrpc":"2.0","result":{"content":[{"text":"18","type":"text"}]}}"#
    );
    // A response to nothing pending is dropped; other requests pass as read.
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","id":"x","result":{"content":[]}}"#,
    )
    .await;
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#
    );
    send(&mut e.server_out, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#
    );
    drop(e.to_proxy);
    assert_eq!(e.run.await.unwrap(), Ended::ClientClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_times_out_and_a_dead_one_fails_every_pending_call() {
    let mut e = start(Duration::from_millis(300));
    list_first(&mut e).await;
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
    )
    .await;
    recv(&mut e.server_in).await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"refused by toolgate: upstream_timeout","type":"text"}],"isError":true,"resultType":"complete"}}"#
    );
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"timed out in toolgate","requestId":1}}"#
    );
    // The late answer is dropped: the client already has one.
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
    )
    .await;

    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
    )
    .await;
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    )
    .await;
    recv(&mut e.server_in).await;
    recv(&mut e.server_in).await;
    drop(e.server_out);
    let mut answers = vec![recv(&mut e.from_proxy).await, recv(&mut e.from_proxy).await];
    answers.sort();
    assert_eq!(
        answers,
        [
            r#"{"error":{"code":-32603,"message":"refused by toolgate: upstream_closed"},"id":3,"jsonrpc":"2.0"}"#,
            r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"refused by toolgate: upstream_closed","type":"text"}],"isError":true,"resultType":"complete"}}"#,
        ]
    );
    assert_eq!(e.run.await.unwrap(), Ended::ServerClosed);
}

/// Issue 17: a call before any list makes the proxy list the tools itself
/// (its own request id) and check them first; `list_changed` from the
/// server makes it list and check again before the client hears of it; a
/// name listed twice is hidden and its calls denied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_lists_itself_before_a_call_and_after_list_changed() {
    let mut e = start(Duration::from_secs(10));
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"id":"toolgate-pins-1","jsonrpc":"2.0","method":"tools/list"}"#
    );
    send(
        &mut e.server_out,
        &format!(r#"{{"jsonrpc":"2.0","id":"toolgate-pins-1","result":{{"tools":{TOOLS}}}}}"#),
    )
    .await;
    // Trusted on first use: the call goes on, canonical.
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"a":1,"b":2},"name":"add"}}"#
    );
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}"#,
    )
    .await;
    recv(&mut e.from_proxy).await;

    // The server says its list changed: the proxy lists first.
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.server_in).await,
        r#"{"id":"toolgate-pins-2","jsonrpc":"2.0","method":"tools/list"}"#
    );
    // add is listed twice now (two definitions under one name).
    send(
        &mut e.server_out,
        r#"{"jsonrpc":"2.0","id":"toolgate-pins-2","result":{"tools":[{"name":"add","inputSchema":{"type":"object"}},{"name":"add","description":"x","inputSchema":{"type":"object"}}]}}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
    );
    send(
        &mut e.to_proxy,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
    )
    .await;
    assert_eq!(
        recv(&mut e.from_proxy).await,
        r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"denied by toolgate: tool_changed","type":"text"}],"isError":true,"resultType":"complete"}}"#
    );
    drop(e.to_proxy);
    assert_eq!(e.run.await.unwrap(), Ended::ClientClosed);
}
