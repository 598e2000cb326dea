//! The `[[limit]]` gauges of `GET /metrics`: each configured limit's cap
//! and window, and what counts in a `global` limit's window; labelled by
//! the configured limits' names only, never by a user or session a caller
//! chose.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

mod shop_copy;

use shop_copy::{send, Fixture, AGENT};

fn decide_body(user: &str, session: &str, id: &str) -> String {
    let response = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"search","arguments":"{{\"query\":\"mug\"}}"}}}}]}}}}]}}"#
    );
    let mut o = toolgate_json::Object::new();
    o.insert("body", toolgate_json::Value::String(response.into()));
    o.insert("format", toolgate_json::Value::String("openai".into()));
    let mut c = toolgate_json::Object::new();
    c.insert("user", toolgate_json::Value::String(user.to_owned().into()));
    c.insert(
        "session",
        toolgate_json::Value::String(session.to_owned().into()),
    );
    c.insert("turn", toolgate_json::Value::from(1_i64));
    o.insert("context", toolgate_json::Value::Object(c));
    toolgate_json::canonical::to_string(&toolgate_json::Value::Object(o))
}

const GLOBAL_SEARCHES: &str = "\n[[limit]]\nname = \"searches_global\"\ntools = [\"search\"]\nper = \"global\"\ncalls = 100\nwindow_seconds = 3600\n";

#[tokio::test]
async fn limit_gauges_name_configured_limits_only() {
    let f = Fixture::copied(|text| format!("{text}{GLOBAL_SEARCHES}"));
    // Users and sessions chosen by callers, long and many.
    for i in 0..3 {
        let user = format!("user-{i}-{}", "u".repeat(100));
        let session = format!("session-{i}-{}", "s".repeat(100));
        let (status, body) = send(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            Some("application/json"),
            &decide_body(&user, &session, &format!("call_{i}")),
        )
        .await;
        assert_eq!(status.as_u16(), 200, "{}", String::from_utf8_lossy(&body));
    }
    let (status, bytes) = send(&f.app, "GET", "/metrics", None, None, "").await;
    assert_eq!(status.as_u16(), 200);
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    for line in [
        "toolgate_limit_cap{limit=\"fetches_per_session\",per=\"session\"} 3",
        "toolgate_limit_cap{limit=\"refund_total\",per=\"user\"} 6000",
        "toolgate_limit_cap{limit=\"searches_global\",per=\"global\"} 100",
        "toolgate_limit_window_seconds{limit=\"refund_total\"} 86400",
        "toolgate_limit_global_used{limit=\"searches_global\"} 3",
    ] {
        assert!(text.contains(line), "no `{line}` in\n{text}");
    }
    // Only global limits have a usage gauge; no caller's value is a label.
    assert!(!text.contains("toolgate_limit_global_used{limit=\"refund_total\"}"));
    assert!(!text.contains("uuuu") && !text.contains("ssss"), "{text}");
}
