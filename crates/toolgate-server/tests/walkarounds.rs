//! Issue 12 through `/v1/decide` and `/v1/audit`: a caller that always says
//! turn 1, a replayed call id, a body over `[gate] max_body_bytes`, and the
//! audit of refused arguments with the tool's risk tier.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::http::StatusCode;
use axum::Router;
use toolgate_json::Value;

mod shop_copy;

use shop_copy::{send, Fixture, ADMIN, AGENT};

/// The shop, with `gate` added to its `[gate]` table.
fn fixture(gate: &str) -> Fixture {
    Fixture::copied(|text| {
        let text = text.replacen("[gate]\n", &format!("[gate]\n{gate}\n"), 1);
        // run_tests, a write tool, runs without a human here.
        text.replacen(
            "risk = \"write\"",
            "risk = \"write\"\napproval = \"none\"",
            1,
        )
    })
}

async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: &str,
    body: Option<String>,
) -> Value<'static> {
    let content_type = body.as_ref().map(|_| "application/json");
    let body = body.as_deref().unwrap_or_default();
    let (status, bytes) = send(app, method, uri, Some(token), content_type, body).await;
    assert_eq!(status, StatusCode::OK);
    toolgate_json::from_slice(&bytes).unwrap().into_owned()
}

/// A `/v1/decide` body: one OpenAI chat call of `tool` with `args` (the
/// arguments string) and call id `id`, as alice in `session` at turn 1.
fn decide_body(tool: &str, id: &str, args: &str, session: &str) -> String {
    let args = toolgate_json::canonical::to_string(&Value::String(args.into()));
    let response = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    );
    let response = toolgate_json::canonical::to_string(&Value::String(response.into()));
    format!(
        r#"{{"body":{response},"format":"openai","context":{{"user":"alice","session":"{session}","roles":["customer"],"turn":1}}}}"#
    )
}

fn first_code(v: &Value<'_>) -> Option<String> {
    v.pointer("/decisions/0/reasons/0/code")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[tokio::test]
async fn turn_1_every_time_is_counted_and_cut_off() {
    let f = fixture("");
    let search = r#"{"query":"boots"}"#;
    for n in 0..20 {
        let v = call(
            &f.app,
            "POST",
            "/v1/decide",
            AGENT,
            Some(decide_body("search", &format!("c{n}"), search, "s-t")),
        )
        .await;
        assert_eq!(
            v.pointer("/verdict").unwrap().as_str(),
            Some("allow"),
            "{n}: {v:?}"
        );
    }
    let v = call(
        &f.app,
        "POST",
        "/v1/decide",
        AGENT,
        Some(decide_body("search", "c20", search, "s-t")),
    )
    .await;
    assert_eq!(first_code(&v).as_deref(), Some("loop_limit"));
}

#[tokio::test]
async fn a_replayed_call_id_is_denied_and_refused_arguments_are_audited() {
    let f = fixture("");
    // A write call runs once: the same call id again is a replay.
    let run = decide_body("run_tests", "c-1", r#"{"suite":"unit"}"#, "s-r");
    let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(run.clone())).await;
    assert_eq!(
        v.pointer("/verdict").unwrap().as_str(),
        Some("allow"),
        "{v:?}"
    );
    for _ in 0..2 {
        let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(run.clone())).await;
        assert_eq!(first_code(&v).as_deref(), Some("replayed_call"));
    }
    // In another session the id is new.
    let other = decide_body("run_tests", "c-1", r#"{"suite":"unit"}"#, "s-r2");
    let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(other)).await;
    assert_eq!(v.pointer("/verdict").unwrap().as_str(), Some("allow"));
    // Arguments cut off: denied, and audited with what was sent and the
    // tool's tier.
    let cut = decide_body("run_tests", "c-2", r#"{"suite": "un"#, "s-r");
    let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(cut)).await;
    assert_eq!(first_code(&v).as_deref(), Some("truncated"));
    let page = call(&f.app, "GET", "/v1/audit?session=s-r&limit=1", ADMIN, None).await;
    let record = page.pointer("/records/0").unwrap();
    assert_eq!(record.pointer("/risk").unwrap().as_str(), Some("write"));
    assert_eq!(
        record.pointer("/refused_arguments/text").unwrap().as_str(),
        Some(r#"{"suite": "un"#)
    );
    assert_eq!(
        record
            .pointer("/refused_arguments/bytes")
            .unwrap()
            .to_canonical_string(),
        "13"
    );
}

#[tokio::test]
async fn the_gate_body_limit_applies_to_decide() {
    let f = fixture("max_body_bytes = 400");
    let small = decide_body("search", "c1", r#"{"query":"boots"}"#, "s-b");
    let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(small)).await;
    assert_eq!(v.pointer("/verdict").unwrap().as_str(), Some("allow"));
    let big = decide_body(
        "search",
        "c2",
        &format!("{{\"query\":\"boots\"{}}}", " ".repeat(400)),
        "s-b",
    );
    let v = call(&f.app, "POST", "/v1/decide", AGENT, Some(big)).await;
    assert_eq!(v.pointer("/verdict").unwrap().as_str(), Some("deny"));
    assert_eq!(
        v.pointer("/rejected/detail").and_then(Value::as_str),
        Some("too_large"),
        "{v:?}"
    );
}
