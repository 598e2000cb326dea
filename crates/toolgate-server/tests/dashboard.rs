//! The Grafana dashboard in `deploy/grafana/toolgate.json` queries only
//! metrics the service exposes: every `toolgate_*` name in its queries is
//! a series family of a real `/metrics` scrape (decisions by verdict and
//! by code, approvals pending and their age, store and decide latency, the
//! kill switch, the trace export).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::http::StatusCode;
use toolgate_json::Value;
use toolgate_server::{app, AppState};

mod shop_copy;

use shop_copy::{config_in, send, AGENT};

/// Every `expr` string anywhere in `v`.
fn exprs(v: &Value<'_>, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter() {
                match (k, v) {
                    ("expr", Value::String(s)) => out.push(s.to_string()),
                    _ => exprs(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| exprs(v, out)),
        _ => {}
    }
}

/// The `toolgate_*` metric names in a query.
fn names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("toolgate_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        out.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    out
}

/// The names of `wanted` that are no series family of `scrape` (a
/// histogram's `_bucket`, `_sum` and `_count` belong to its family).
fn missing(wanted: &[String], scrape: &str) -> Vec<String> {
    wanted
        .iter()
        .filter(|name| {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .filter(|base| scrape.contains(&format!("# TYPE {base} histogram\n")))
                .unwrap_or(name);
            !scrape.contains(&format!("# TYPE {family} "))
        })
        .cloned()
        .collect()
}

fn dashboard_names() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/grafana/toolgate.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let v = toolgate_json::from_str(&text).unwrap();
    let mut all = Vec::new();
    exprs(&v, &mut all);
    assert!(!all.is_empty(), "the dashboard has no queries");
    let mut names: Vec<String> = all.iter().flat_map(|e| names(e)).collect();
    names.sort();
    names.dedup();
    names
}

fn decide_body(tool: &str, arguments: &str) -> String {
    let call = format!(
        r#"{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{}}}}}"#,
        toolgate_json::canonical::to_string(&Value::String(arguments.into()))
    );
    let response = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{call}]}}}}]}}"#
    );
    format!(
        r#"{{"body":{},"format":"openai","context":{{"user":"alice","session":"s-1","roles":["customer"],"turn":1,"entities":[]}}}}"#,
        toolgate_json::canonical::to_string(&Value::String(response.into()))
    )
}

#[tokio::test]
async fn the_dashboard_queries_only_metrics_the_service_exposes() {
    let dir = tempfile::tempdir().unwrap();
    // Telemetry on (towards a port nothing listens on: the export fails
    // and is counted), so that its series are in the scrape too.
    let config = config_in(
        dir.path(),
        "",
        "",
        "\n[telemetry]\nendpoint = \"http://127.0.0.1:9\"\nmetrics_seconds = 0\n",
    );
    let telemetry = toolgate_telemetry::Telemetry::start(&config).unwrap();
    let state = AppState::from_config(&config)
        .unwrap()
        .with_telemetry(telemetry);
    let app = app(state);
    // A denial (its code is counted) and a held call (an approval pends).
    for (tool, args) in [
        ("drop_tables", "{}"),
        (
            "refund",
            r#"{"order_id":"ord_1002","amount_cents":1,"reason":"late"}"#,
        ),
    ] {
        let (status, body) = send(
            &app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            Some("application/json"),
            &decide_body(tool, args),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    }
    let (status, scrape) = send(&app, "GET", "/metrics", None, None, "").await;
    assert_eq!(status, StatusCode::OK);
    let scrape = String::from_utf8(scrape.to_vec()).unwrap();
    assert!(
        scrape.contains("toolgate_decision_codes_total{code=\"unknown_tool\"} 1"),
        "{scrape}"
    );
    assert!(
        scrape.contains("toolgate_pending_approvals 1\n"),
        "{scrape}"
    );
    assert!(
        scrape.contains("# TYPE toolgate_oldest_pending_approval_seconds gauge"),
        "{scrape}"
    );

    let names = dashboard_names();
    // What an operator must see is on the dashboard.
    for needed in [
        "toolgate_decisions_total",
        "toolgate_decision_codes_total",
        "toolgate_pending_approvals",
        "toolgate_oldest_pending_approval_seconds",
        "toolgate_store_seconds_bucket",
        "toolgate_kill_switch",
    ] {
        assert!(
            names.iter().any(|n| n == needed),
            "no panel queries {needed}"
        );
    }
    assert_eq!(missing(&names, &scrape), Vec::<String>::new(), "{scrape}");
    // And the check can fail: a name the service does not expose is named.
    assert_eq!(
        missing(&["toolgate_no_such_metric".to_owned()], &scrape),
        vec!["toolgate_no_such_metric".to_owned()]
    );
}
