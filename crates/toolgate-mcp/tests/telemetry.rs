//! A `tools/call` inside the client's trace: the `traceparent` in the
//! request's `params._meta` makes toolgate's span a child of the client's,
//! the call forwarded to the server carries toolgate's span in its `_meta`
//! (the server's span becomes toolgate's child), and the decision log names
//! the trace without the call's argument values.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::{Arc, Mutex};

use tokio::io::{BufReader, DuplexStream, Lines};
use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_mcp::{Proxy, ProxyOptions};
use toolgate_store::{open_config_store, StoreGate, StoreOptions};

mod in_process;

use in_process::send;
use toolgate_telemetry::{LogSink, Telemetry};

const CONFIG: &str = r#"
[store]
url = "sqlite::memory:"

[authorization]
mode = "none"

[[tool]]
name = "add"
risk = "read"
schema = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } }, required = ["a", "b"], additionalProperties = false }

[telemetry]
log_format = "json"
decision_log = "info"
"#;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

async fn recv(r: &mut Lines<BufReader<DuplexStream>>) -> Value<'static> {
    in_process::json(&in_process::recv(r).await)
}

fn text(v: &Value<'_>, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_joins_the_clients_trace_and_passes_toolgates_span_on() {
    let config = Config::parse(CONFIG, "toolgate.toml").unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = StoreGate::from_config(&config, store).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let telemetry = Telemetry::start_with(
        &config,
        &toolgate_edge::config::TelemetryConfig::from_config(&config).unwrap(),
        LogSink::Buffer(Arc::clone(&log)),
    )
    .unwrap();
    let proxy = Proxy::new(gate, "alice", "s-1", ProxyOptions::default()).with_telemetry(telemetry);
    let in_process::Ends {
        mut to_proxy,
        mut from_proxy,
        mut server_in,
        mut server_out,
        ..
    } = in_process::start(proxy);

    // The first catalog, trusted on first use.
    send(
        &mut to_proxy,
        r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#,
    )
    .await;
    recv(&mut server_in).await;
    send(
        &mut server_out,
        r#"{"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}}"#,
    )
    .await;
    recv(&mut from_proxy).await;

    send(
        &mut to_proxy,
        &format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"add","arguments":{{"a":40961,"b":2}},"_meta":{{"traceparent":"00-{TRACE}-{CLIENT_SPAN}-01","progressToken":"p1"}}}}}}"#
        ),
    )
    .await;
    let forwarded = recv(&mut server_in).await;
    let tp = text(&forwarded, "/params/_meta/traceparent");
    let parts: Vec<&str> = tp.split('-').collect();
    assert_eq!(parts.len(), 4, "{tp}");
    assert_eq!(
        parts[1], TRACE,
        "the server's parent is in the client's trace"
    );
    assert_ne!(
        parts[2], CLIENT_SPAN,
        "the server's parent is toolgate's span"
    );
    assert_eq!(parts[3], "01");
    // The rest of `_meta` goes on as the client sent it.
    assert_eq!(text(&forwarded, "/params/_meta/progressToken"), "p1");

    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(
        !log.contains("40961"),
        "an argument value was logged: {log}"
    );
    let event = toolgate_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(text(&event, "/surface"), "mcp");
    assert_eq!(text(&event, "/tool"), "add");
    assert_eq!(text(&event, "/call_id"), "7");
    assert_eq!(text(&event, "/verdict"), "allow");
    assert_eq!(text(&event, "/trace_id"), TRACE);
}
