//! Telemetry received by a real OTLP receiver (`toolgate_testkit::OtlpReceiver`,
//! the official protobuf definitions and their generated gRPC services):
//! over OTLP/gRPC (the `grpc` feature; `.ci/run` builds and runs it), the
//! request's span inside the caller's trace, its decision's child span and
//! the metrics, with no argument value in any request sent; over
//! OTLP/HTTP, the store's gauges (approvals pending, the kill switch, the
//! store's read latency).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::sync::Arc;

use http::{HeaderMap, HeaderValue};
use serde_json::Value;
use toolgate::config::Config;
use toolgate::{Context, Format, Gate};
use toolgate_store::{SqliteOptions, Store, StoreGate};
use toolgate_telemetry::{LogSink, Telemetry};
#[cfg(feature = "grpc")]
use toolgate_testkit::otlp_spans;
use toolgate_testkit::{OtlpReceiver, OtlpTransport};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
/// An argument value: never exported.
#[cfg(feature = "grpc")]
const VALUE: &str = "Zanzibar-7f3a";

fn config(endpoint: &str, protocol: &str) -> Config {
    Config::parse(
        &format!(
            r#"
[[tool]]
name = "get_weather"
risk = "read"
schema = {{ type = "object", properties = {{ city = {{ type = "string" }} }}, required = ["city"], additionalProperties = false }}

[[tool]]
name = "wipe"
risk = "destructive"
schema = {{ type = "object" }}

[telemetry]
endpoint = "{endpoint}"
protocol = "{protocol}"
service_name = "toolgate-test"
metrics_seconds = 3600
"#
        ),
        "/tmp/toolgate.toml",
    )
    .unwrap()
}

fn gate(config: &Config) -> StoreGate {
    let gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteOptions::new().open_in_memory().unwrap());
    StoreGate::new(gate, store)
}

fn body(calls: &[(&str, &str, &str)]) -> Vec<u8> {
    toolgate_testkit::openai_tool_calls(calls).into_bytes()
}

/// One request inside the caller's trace, deciding `calls`.
fn request(t: &Telemetry, g: &StoreGate, calls: &[(&str, &str, &str)]) {
    let mut headers = HeaderMap::new();
    headers.insert(
        "traceparent",
        HeaderValue::from_str(&format!("00-{TRACE}-{CALLER_SPAN}-01")).unwrap(),
    );
    let span = t.request("proxy request", &headers);
    let started = std::time::SystemTime::now();
    let d = g.decide_and_record(
        &body(calls),
        Format::OpenAiChat,
        &Context::new("alice", "s1", 1),
    );
    span.decisions("proxy", &d, started);
}

fn metric<'a>(lines: &'a [Value], name: &str) -> Option<&'a Value> {
    lines.iter().find(|l| l["metric"] == name)
}

#[cfg(feature = "grpc")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_metrics_go_over_grpc() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Grpc) else {
        return;
    };
    let c = config(&receiver.endpoint(), "grpc");
    let g = gate(&c);
    let t = Telemetry::start_with(
        &c,
        &toolgate_edge::config::TelemetryConfig::from_config(&c).unwrap(),
        LogSink::Buffer(Arc::default()),
    )
    .unwrap();
    request(
        &t,
        &g,
        &[("call_w", "get_weather", &format!(r#"{{"city":"{VALUE}"}}"#))],
    );
    t.shutdown().await;
    let lines = receiver.collect(|seen| {
        otlp_spans(seen).len() >= 2 && metric(seen, "toolgate.decisions").is_some()
    });
    for l in &lines {
        assert!(l.get("error").is_none(), "the receiver refused: {l}");
        if let Some(raw) = l["raw"].as_str() {
            assert!(!raw.contains(VALUE), "an argument value was exported");
        }
    }
    assert!(
        lines.iter().any(|l| l["path"] == "grpc:traces"),
        "no gRPC trace export in {lines:?}"
    );
    let spans = otlp_spans(&lines);
    let request = spans
        .iter()
        .find(|s| s["span"] == "proxy request")
        .unwrap_or_else(|| panic!("no request span in {lines:?}"));
    assert_eq!(request["trace_id"], TRACE);
    assert_eq!(request["parent_span_id"], CALLER_SPAN);
    assert_eq!(request["service"], "toolgate-test");
    let decision = spans
        .iter()
        .find(|s| s["span"] == "execute_tool get_weather")
        .unwrap_or_else(|| panic!("no decision span in {lines:?}"));
    assert_eq!(decision["parent_span_id"], request["span_id"]);
    assert_eq!(decision["attributes"]["gen_ai.tool.call.id"], "call_w");
    assert_eq!(decision["attributes"]["toolgate.verdict"], "allow");
    assert_eq!(t.exported_spans(), 2);
    assert_eq!(t.failed_spans(), 0);
    let decisions = metric(&lines, "toolgate.decisions").unwrap();
    assert_eq!(decisions["type"], "sum");
    assert!(
        decisions["points"].as_array().unwrap().iter().any(|p| {
            p["attributes"]["tool"] == "get_weather" && p["attributes"]["verdict"] == "allow"
        }),
        "{decisions}"
    );
    assert!(
        lines.iter().any(|l| l["path"] == "grpc:metrics"),
        "no gRPC metrics export in {lines:?}"
    );
}

#[cfg(not(feature = "grpc"))]
#[tokio::test]
async fn grpc_without_the_feature_is_refused_at_start() {
    let c = config("http://127.0.0.1:4317", "grpc");
    let why = Telemetry::start_with(
        &c,
        &toolgate_edge::config::TelemetryConfig::from_config(&c).unwrap(),
        LogSink::Buffer(Arc::default()),
    )
    .unwrap_err()
    .to_string();
    assert!(why.contains("`grpc` feature"), "{why}");
}

fn point<'a>(m: &'a Value, attribute: Option<(&str, &str)>) -> &'a Value {
    m["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| attribute.is_none_or(|(k, v)| p["attributes"][k] == v))
        .unwrap_or_else(|| panic!("no point {attribute:?} in {m}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_gauges_reach_the_receiver() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    let c = config(&receiver.endpoint(), "http/protobuf");
    let g = gate(&c);
    let t = Telemetry::start_with(
        &c,
        &toolgate_edge::config::TelemetryConfig::from_config(&c).unwrap(),
        LogSink::Buffer(Arc::default()),
    )
    .unwrap();
    t.observe_store(Arc::clone(g.store()));
    // Two calls held for a human, and the kill switch on for writes.
    request(&t, &g, &[("call_1", "wipe", r#"{"n":1}"#)]);
    request(&t, &g, &[("call_2", "wipe", r#"{"n":2}"#)]);
    g.store()
        .set_kill_switch(toolgate_store::KillMode::DenyWrites, "drill", "ops")
        .unwrap();
    // The metrics are exported once more at shutdown.
    t.shutdown().await;
    let names = [
        "toolgate.approvals.pending",
        "toolgate.approvals.oldest_pending.age",
        "toolgate.kill_switch",
        "toolgate.store.read.duration",
    ];
    let lines = receiver.collect(|seen| names.iter().all(|n| metric(seen, n).is_some()));
    for n in names {
        assert_eq!(
            metric(&lines, n).unwrap_or_else(|| panic!("no {n} in {lines:?}"))["type"],
            "gauge"
        );
    }
    assert_eq!(
        point(metric(&lines, "toolgate.approvals.pending").unwrap(), None)["value"],
        2
    );
    let age = &point(
        metric(&lines, "toolgate.approvals.oldest_pending.age").unwrap(),
        None,
    )["value"];
    assert!(age.as_u64().is_some_and(|a| a < 3600), "{age}");
    let kill = metric(&lines, "toolgate.kill_switch").unwrap();
    // One series per mode, and no other attribute: bounded.
    assert_eq!(kill["points"].as_array().unwrap().len(), 3, "{kill}");
    for (mode, on) in [("off", 0), ("deny_writes", 1), ("deny_all", 0)] {
        assert_eq!(point(kill, Some(("mode", mode)))["value"], on, "{kill}");
    }
    let took = &point(
        metric(&lines, "toolgate.store.read.duration").unwrap(),
        None,
    )["value"];
    assert!(
        took.as_f64().is_some_and(|s| (0.0..10.0).contains(&s)),
        "{took}"
    );
}
