//! The service through `tower::ServiceExt::oneshot` (no sockets), plus one
//! round trip over a real socket.

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
use std::io::{Read, Write};
use std::time::Duration;
use toolgate_json::Value;
use toolgate_server::AppState;

mod shop_copy;

use shop_copy::{call, config_in, s, Fixture, ADMIN, AGENT, APPROVER};
use toolgate_testkit::shop_dir;

fn fixture_with(max_body_bytes: usize) -> Fixture {
    Fixture::new(&format!("max_body_bytes = {max_body_bytes}"), "", "")
}

fn fixture() -> Fixture {
    fixture_with(1 << 20)
}

fn response_body(name: &str) -> String {
    std::fs::read_to_string(shop_dir().join("responses").join(name)).unwrap()
}

fn decide_body(response: &str) -> String {
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(response.to_owned().into()));
    o.insert("format", Value::String("auto".into()));
    let ctx = toolgate_json::from_str(
        r#"{"user":"alice","session":"sess-1","roles":["customer"],"turn":3,"entities":[]}"#,
    )
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

async fn decide(app: &Router, response: &str) -> Value<'static> {
    let (status, v) = call(
        app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body(&response_body(response)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    v
}

async fn error_code(
    app: &Router,
    uri: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, String, String) {
    let (status, v) = call(app, "POST", uri, token, content_type, body).await;
    (
        status,
        s(&v, "/error/code").to_owned(),
        s(&v, "/error/pointer").to_owned(),
    )
}

#[tokio::test]
async fn decide_allow_deny_and_needs_approval() {
    let f = fixture();
    let v = decide(&f.app, "openai-search.json").await;
    assert_eq!(s(&v, "/verdict"), "allow");
    assert_eq!(s(&v, "/decisions/0/tool"), "search");
    assert!(v.pointer("/input").is_none());

    let v = decide(&f.app, "openai-refund-other-users-order.json").await;
    assert_eq!(s(&v, "/verdict"), "deny");

    let v = decide(&f.app, "openai-refund-needs-approval.json").await;
    assert_eq!(s(&v, "/verdict"), "needs_approval");
    assert!(!s(&v, "/decisions/1/approval").is_empty());

    // The metrics count them.
    let (status, m) = call(&f.app, "GET", "/metrics", None, None, "").await;
    assert_eq!(status, StatusCode::OK);
    let text = m.as_str().unwrap();
    assert!(
        text.contains("toolgate_decisions_total{verdict=\"allow\",tool=\"search\"} 1"),
        "{text}"
    );
    assert!(text.contains("toolgate_decision_seconds_count 3"), "{text}");
    assert!(text.contains("toolgate_pending_approvals 1"), "{text}");
    assert!(
        text.contains("toolgate_kill_switch{mode=\"off\"} 1"),
        "{text}"
    );
}

#[tokio::test]
async fn every_error_is_json_with_a_stable_code() {
    let f = fixture_with(4096);
    let json = Some("application/json");
    let d = "/v1/decide";
    let e = |token, ct, body: String| {
        let app = f.app.clone();
        async move { error_code(&app, d, token, ct, &body).await }
    };
    assert_eq!(
        e(Some(AGENT), json, "{\"body\": ".into()).await.1,
        "invalid_json"
    );
    let (status, code, _) = e(Some(AGENT), json, r#"{"body":"a","body":"b"}"#.into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "duplicate_key")
    );
    let (status, code, _) = e(Some(AGENT), Some("text/plain"), "{}".into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
    );
    let (status, code, _) = e(Some(AGENT), None, "{}".into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
    );
    let big = format!("{{\"body\":\"{}\"}}", "a".repeat(5000));
    let (status, code, _) = e(Some(AGENT), json, big).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    let (status, code, pointer) = e(Some(AGENT), json, r#"{"body":"{}","extra":1}"#.into()).await;
    assert_eq!(
        (status, code.as_str(), pointer.as_str()),
        (StatusCode::BAD_REQUEST, "unknown_field", "/extra")
    );
    let (_, code, pointer) = e(
        Some(AGENT),
        json,
        r#"{"body":"{}","context":{"user":"a","session":"b","turn":1,"sudo":true}}"#.into(),
    )
    .await;
    assert_eq!(
        (code.as_str(), pointer.as_str()),
        ("unknown_field", "/context/sudo")
    );
    let (_, code, pointer) = e(Some(AGENT), json, r#"{"format":"openai"}"#.into()).await;
    assert_eq!(
        (code.as_str(), pointer.as_str()),
        ("invalid_request", "/body")
    );
    let (status, code, _) = e(None, json, r#"{"body":"{}"}"#.into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, code, _) = e(Some("wrong-token"), json, r#"{"body":"{}"}"#.into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, code, _) = e(Some(APPROVER), json, r#"{"body":"{}"}"#.into()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    // An agent may not flip the kill switch.
    let (status, code, _) = error_code(
        &f.app,
        "/v1/kill",
        Some(AGENT),
        json,
        r#"{"mode":"deny_all"}"#,
    )
    .await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let (status, v) = call(&f.app, "GET", "/v1/nothing", Some(ADMIN), None, "").await;
    assert_eq!(
        (status, s(&v, "/error/code")),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let (status, v) = call(&f.app, "GET", "/v1/approvals/999", Some(APPROVER), None, "").await;
    assert_eq!(
        (status, s(&v, "/error/code")),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let (status, v) = call(&f.app, "GET", "/v1/audit?bogus=1", Some(ADMIN), None, "").await;
    assert_eq!(
        (status, s(&v, "/error/code")),
        (StatusCode::BAD_REQUEST, "invalid_query")
    );
    assert_eq!(s(&v, "/error/message"), "unknown parameter `bogus`");
    // The framework's own wording never reaches the caller, nor the value.
    for (uri, says) in [
        (
            "/v1/approvals/1/wait?timeout=abc",
            "parameter `timeout` must be a number",
        ),
        (
            "/v1/approvals?limit=-5",
            "parameter `limit` must be a whole number in range",
        ),
        (
            "/v1/approvals?limit=1&limit=2",
            "parameter given twice: `limit`",
        ),
    ] {
        let (status, v) = call(&f.app, "GET", uri, Some(ADMIN), None, "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(s(&v, "/error/code"), "invalid_query", "{uri}");
        assert_eq!(s(&v, "/error/message"), says, "{uri}");
    }
}

#[tokio::test]
async fn approve_then_wait_returns_approved_and_the_call_is_allowed() {
    let f = fixture();
    let v = decide(&f.app, "openai-refund-needs-approval.json").await;
    let id = s(&v, "/decisions/1/approval").to_owned();

    let (status, v) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{id}/wait?timeout=0"),
        Some(AGENT),
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s(&v, "/state"), "pending");
    assert_eq!(v.pointer("/timed_out").and_then(Value::as_bool), Some(true));

    let (status, v) = call(&f.app, "GET", "/v1/approvals", Some(APPROVER), None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s(&v, "/approvals/0/id"), id);

    // One approval carries what the approver decides on: the call's
    // arguments (canonical, as JSON text: escaped), its call id and risk.
    let (status, v) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{id}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s(&v, "/call_id"), "call_refund_2");
    assert_eq!(s(&v, "/risk"), "destructive");
    assert_eq!(
        s(&v, "/arguments"),
        "{\n  \"amount_cents\": 2599,\n  \"order_id\": \"ord_1002\",\n  \"reason\": \"late\"\n}"
    );

    // A waiter blocks until the approver decides.
    let app = f.app.clone();
    let uri = format!("/v1/approvals/{id}/wait?timeout=10");
    let mut waits = f.state.approval_waits();
    let waiter = tokio::spawn(async move { call(&app, "GET", &uri, Some(AGENT), None, "").await });
    // Decided once the waiter waits (the store found it pending).
    tokio::time::timeout(Duration::from_secs(30), waits.wait_for(|n| *n >= 1))
        .await
        .expect("the waiter never waited")
        .unwrap();
    let (status, v) = call(
        &f.app,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        Some(APPROVER),
        Some("application/json"),
        r#"{"note":"checked the order"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/decided_by"), "approver-1");
    let (status, v) = waiter.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(s(&v, "/state"), "approved");
    assert_eq!(
        v.pointer("/timed_out").and_then(Value::as_bool),
        Some(false)
    );

    let v = decide(&f.app, "openai-refund-needs-approval.json").await;
    assert_eq!(s(&v, "/verdict"), "allow");

    // The audit log holds it all; pages go backwards.
    let (status, v) = call(&f.app, "GET", "/v1/audit?limit=2", Some(ADMIN), None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        v.pointer("/records")
            .and_then(Value::as_array)
            .map(<[_]>::len),
        Some(2)
    );
    let before = v
        .pointer("/next_before")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap();
    let (_, v) = call(
        &f.app,
        "GET",
        &format!("/v1/audit?limit=100&before={before}"),
        Some(ADMIN),
        None,
        "",
    )
    .await;
    let n = v
        .pointer("/records")
        .and_then(Value::as_array)
        .map(<[_]>::len)
        .unwrap();
    assert_eq!(u64::try_from(n).unwrap(), before - 1);
}

#[tokio::test]
async fn kill_switch_denies_and_readyz() {
    let f = fixture();
    let (status, _) = call(&f.app, "GET", "/readyz", None, None, "").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&f.app, "GET", "/healthz", None, None, "").await;
    assert_eq!(status, StatusCode::OK);

    let (status, v) = call(
        &f.app,
        "POST",
        "/v1/kill",
        Some(ADMIN),
        Some("application/json"),
        r#"{"mode":"deny_all","reason":"incident 42"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/mode"), "deny_all");
    let (_, v) = call(&f.app, "GET", "/v1/kill", Some(ADMIN), None, "").await;
    assert_eq!(s(&v, "/actor"), "admin-1");

    let v = decide(&f.app, "openai-search.json").await;
    assert_eq!(s(&v, "/verdict"), "deny");
    assert_eq!(s(&v, "/decisions/0/reasons/0/code"), "kill_switch");
}

/// One HTTP/1.1 request over a plain socket; the status and the body.
fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let (head, rest) = response.split_once("\r\n\r\n").unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        // One chunk is enough for these small answers.
        let (_, chunk) = rest.split_once("\r\n").unwrap();
        chunk.split("\r\n").next().unwrap().to_owned()
    } else {
        rest.to_owned()
    };
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_server_decides_and_waits() {
    let dir = tempfile::tempdir().unwrap();
    let state =
        AppState::from_config(&config_in(dir.path(), "max_body_bytes = 1048576", "", "")).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut waits = state.approval_waits();
    let runtime = tokio::runtime::Handle::current();
    let server = tokio::spawn(toolgate_server::serve(listener, state, async {
        let _ = stopped.await;
    }));

    let body = decide_body(&response_body("openai-refund-needs-approval.json"));
    let client = tokio::task::spawn_blocking(move || {
        let (status, text) = http(addr, "POST", "/v1/decide", AGENT, &body);
        assert_eq!(status, 200, "{text}");
        let v = toolgate_json::from_str(&text).unwrap().into_owned();
        assert_eq!(s(&v, "/verdict"), "needs_approval");
        let id = s(&v, "/decisions/1/approval").to_owned();
        let waiter = {
            let id = id.clone();
            std::thread::spawn(move || {
                http(
                    addr,
                    "GET",
                    &format!("/v1/approvals/{id}/wait?timeout=10"),
                    AGENT,
                    "",
                )
            })
        };
        // Approved once the waiter waits (the store found it pending).
        runtime
            .block_on(tokio::time::timeout(
                Duration::from_secs(30),
                waits.wait_for(|n| *n >= 1),
            ))
            .expect("the waiter never waited")
            .unwrap();
        let (status, text) = http(
            addr,
            "POST",
            &format!("/v1/approvals/{id}/approve"),
            APPROVER,
            "",
        );
        assert_eq!(status, 200, "{text}");
        let (status, text) = waiter.join().unwrap();
        assert_eq!(status, 200, "{text}");
        let v = toolgate_json::from_str(&text).unwrap().into_owned();
        assert_eq!(s(&v, "/state"), "approved");
    });
    client.await.unwrap();
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}
