//! `POST /v1/decide` inside the caller's trace: the `traceparent` a caller
//! sends makes the request's span (and each decision's) part of its trace,
//! and the decision log's JSON lines name those ids, never argument values.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use toolgate_server::{app, AppState};
use toolgate_telemetry::{LogSink, Telemetry};
use tower::ServiceExt as _;

mod shop_copy;

use shop_copy::{config_in, AGENT};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn decide_body(tool: &str, arguments: &str) -> String {
    let call = format!(
        r#"{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{}}}}}"#,
        toolgate_json::canonical::to_string(&toolgate_json::Value::String(arguments.into()))
    );
    let response = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{call}]}}}}]}}"#
    );
    format!(
        r#"{{"body":{},"format":"openai","context":{{"user":"alice","session":"s-1","roles":["customer"],"turn":1,"entities":[]}}}}"#,
        toolgate_json::canonical::to_string(&toolgate_json::Value::String(response.into()))
    )
}

#[tokio::test]
async fn a_decide_request_joins_the_callers_trace_in_the_decision_log() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(
        dir.path(),
        "",
        "",
        "\n[telemetry]\nlog_format = \"json\"\ndecision_log = \"debug\"\n",
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let telemetry = Telemetry::start_with(
        &config,
        &toolgate_edge::config::TelemetryConfig::from_config(&config).unwrap(),
        LogSink::Buffer(Arc::clone(&log)),
    )
    .unwrap();
    let app = app(AppState::from_config(&config)
        .unwrap()
        .with_telemetry(telemetry));
    let secret = "mug-7f3a-query";
    let req = Request::post("/v1/decide")
        .header("authorization", format!("Bearer {AGENT}"))
        .header("content-type", "application/json")
        .header("traceparent", format!("00-{TRACE}-{CALLER_SPAN}-01"))
        .body(Body::from(decide_body(
            "search",
            &format!(r#"{{"query":"{secret}"}}"#),
        )))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(!log.contains(secret), "an argument value was logged: {log}");
    let line = log
        .lines()
        .next()
        .unwrap_or_else(|| panic!("no decision event"));
    let v = toolgate_json::from_str(line).unwrap();
    let text = |p: &str| {
        v.pointer(p)
            .and_then(|s| s.as_str())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(text("/event"), "decision");
    assert_eq!(text("/level"), "debug");
    assert_eq!(text("/surface"), "api");
    assert_eq!(text("/tool"), "search");
    assert_eq!(text("/verdict"), "allow");
    assert_eq!(text("/trace_id"), TRACE, "{line}");
    assert_eq!(text("/span_id").len(), 16, "{line}");
    assert_ne!(text("/span_id"), CALLER_SPAN, "{line}");
    assert_eq!(log.lines().count(), 1, "{log}");
}
