//! Regression tests of issue 13, "the service under attack": each test
//! drives the attack through the HTTP service (`oneshot`, no sockets) and
//! checks the service holds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use toolgate_json::Value;
use tower::ServiceExt as _;

mod shop_copy;

use shop_copy::{send, Fixture, ADMIN, AGENT, APPROVER};

async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: &str,
) -> (StatusCode, String) {
    let content_type = (!body.is_empty()).then_some("application/json");
    let (status, bytes) = send(app, method, uri, token, content_type, body).await;
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn json(text: &str) -> Value<'static> {
    toolgate_json::from_str(text).unwrap().into_owned()
}

/// An OpenAI response with one call of `tool` with `arguments` (JSON).
fn openai(tool: &str, arguments: &str) -> String {
    let mut call = toolgate_json::Object::new();
    call.insert("id", Value::String("call_1".into()));
    call.insert("type", Value::String("function".into()));
    let mut function = toolgate_json::Object::new();
    function.insert("name", Value::String(tool.to_owned().into()));
    function.insert("arguments", Value::String(arguments.to_owned().into()));
    call.insert("function", Value::Object(function));
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        toolgate_json::canonical::to_string(&Value::Object(call))
    );
    body
}

/// A decide request body for `response` as `user` in `session`.
fn decide_body(response: &str, user: &str, session: &str) -> String {
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(response.to_owned().into()));
    o.insert("format", Value::String("openai".into()));
    let ctx = json(&format!(
        r#"{{"user":"{user}","session":"{session}","roles":["customer"],"turn":1,"entities":[]}}"#
    ));
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// The string at `pointer`.
fn text(v: &Value<'_>, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer}"))
        .to_owned()
}

fn refund(cents: u32) -> String {
    openai(
        "refund",
        &format!(r#"{{"order_id":"ord_1002","amount_cents":{cents},"reason":"late"}}"#),
    )
}

/// The first decision's verdict and reason codes.
fn verdict(answer: &str) -> (String, Vec<String>) {
    let v = json(answer);
    let verdict = text(&v, "/decisions/0/verdict");
    let reasons = v
        .pointer("/decisions/0/reasons")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|r| text(r, "/code"))
        .collect();
    (verdict, reasons)
}

/// Item 8: one agent cannot bury the approvers' queue; the call over the
/// cap is denied with its own code, the same call asked again is not a new
/// approval.
#[tokio::test]
async fn item8_pending_approvals_are_capped_per_session_and_user() {
    let f = Fixture::new(
        "",
        "",
        "\n[approvals]\nmax_pending_per_session = 2\nmax_pending_per_user = 3\n",
    );
    let decide = |cents: u32, session: &'static str| {
        let app = f.app.clone();
        async move {
            let (status, body) = call(
                &app,
                "POST",
                "/v1/decide",
                Some(AGENT),
                &decide_body(&refund(cents), "alice", session),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            verdict(&body)
        }
    };
    assert_eq!(decide(1, "s-1").await.0, "needs_approval");
    assert_eq!(decide(2, "s-1").await.0, "needs_approval");
    assert_eq!(decide(1, "s-1").await.0, "needs_approval", "the same call");
    let (v, reasons) = decide(3, "s-1").await;
    assert_eq!(
        (v.as_str(), reasons),
        ("deny", vec!["approval_queue_full".to_owned()])
    );
    assert_eq!(decide(4, "s-2").await.0, "needs_approval");
    let (v, reasons) = decide(5, "s-3").await;
    assert_eq!(
        (v.as_str(), reasons),
        ("deny", vec!["approval_queue_full".to_owned()])
    );
    let (status, body) = call(&f.app, "GET", "/v1/approvals", Some(APPROVER), "").await;
    assert_eq!(status, StatusCode::OK);
    let listed = json(&body);
    assert_eq!(
        listed
            .pointer("/approvals")
            .and_then(Value::as_array)
            .unwrap()
            .len(),
        3
    );
    let _ = ADMIN;
}

/// Item 1: tool names the model invents never become label values: a
/// flood of long, unique unknown names leaves the scrape small.
#[tokio::test]
async fn item1_metrics_labels_come_from_the_configured_tools_only() {
    let f = Fixture::new("max_body_bytes = 1048576", "", "");
    for i in 0..200 {
        let name = format!("{i}{}", "x".repeat(8 * 1024));
        let (status, body) = call(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            &decide_body(&openai(&name, "{}"), "alice", "s-1"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(verdict(&body).0, "deny");
    }
    let (status, body) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        &decide_body(&openai("search", r#"{"query":"mug"}"#), "alice", "s-2"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, text) = call(&f.app, "GET", "/metrics", None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.len() < 8 * 1024, "{} bytes", text.len());
    assert!(!text.contains("xxxx"));
    assert!(
        text.contains("toolgate_decisions_total{verdict=\"deny\",tool=\"(other)\"} 200"),
        "{text}"
    );
    assert!(
        text.contains("toolgate_decisions_total{verdict=\"allow\",tool=\"search\"} 1"),
        "{text}"
    );
}

/// Item 2: the config can require a token for `/metrics`, and the pending
/// gauge counts unexpired pending approvals with one query.
#[tokio::test]
async fn item2_metrics_can_require_a_token_and_count_pending_approvals() {
    let f = Fixture::new("metrics_auth = \"token\"", "", "");
    for cents in [1, 2, 3] {
        let (status, body) = call(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            &decide_body(&refund(cents), "alice", "s-1"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(verdict(&body).0, "needs_approval");
    }
    let (status, body) = call(&f.app, "GET", "/metrics", None, "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(!body.contains("toolgate_"));
    let (status, text) = call(&f.app, "GET", "/metrics", Some(AGENT), "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("toolgate_pending_approvals 3\n"), "{text}");
    assert!(text.contains("toolgate_refused_requests_total{status=\"401\"} 1"));
    // Without the setting, anyone may scrape (the default).
    let open = Fixture::new("", "", "");
    let (status, _) = call(&open.app, "GET", "/metrics", None, "").await;
    assert_eq!(status, StatusCode::OK);
}

/// Item 10: a token bound to users speaks for them only; others are 403,
/// audited, for deciding and for waiting.
#[tokio::test]
async fn item10_a_token_speaks_only_for_its_users() {
    let f = Fixture::new("", "users = [\"alice\", \"team-*\"]", "");
    let decide = |user: &'static str, token: &'static str| {
        let app = f.app.clone();
        async move {
            call(
                &app,
                "POST",
                "/v1/decide",
                Some(token),
                &decide_body(&refund(7), user, "s-1"),
            )
            .await
        }
    };
    assert_eq!(decide("alice", AGENT).await.0, StatusCode::OK);
    assert_eq!(decide("team-7", AGENT).await.0, StatusCode::OK);
    for user in ["bob", "alice2", "", "team"] {
        let (status, body) = decide(user, AGENT).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{user}: {body}");
        assert_eq!(text(&json(&body), "/error/code"), "forbidden");
    }
    // The admin token (no `users`) speaks for anyone: bob's approval.
    let bobs = openai(
        "refund",
        r#"{"order_id":"ord_2001","amount_cents":100,"reason":"late"}"#,
    );
    let (status, body) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(ADMIN),
        &decide_body(&bobs, "bob", "s-9"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let id = json(&body)
        .pointer("/decisions/0/approval")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let (status, _) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{id}/wait?timeout=0"),
        Some(AGENT),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "waiting on bob's approval");
    let (status, _) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{id}/wait?timeout=0"),
        Some(APPROVER),
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = call(&f.app, "GET", "/v1/audit?kind=auth", Some(ADMIN), "").await;
    assert_eq!(status, StatusCode::OK);
    let records = json(&body);
    let refused: Vec<_> = records
        .pointer("/records")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter(|r| r.pointer("/reasons/0").and_then(Value::as_str) == Some("user"))
        .collect();
    assert_eq!(refused.len(), 5, "{body}");
    assert_eq!(text(refused[0], "/actor"), "agent-1");
}

/// The page's state with a fresh approver session.
async fn page_state(app: &Router) -> Value<'static> {
    let req = Request::builder()
        .method("POST")
        .uri("/ui/login")
        .header("content-type", "application/json")
        .body(Body::from(format!(r#"{{"token":"{APPROVER}"}}"#)))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let cookie = res
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let req = Request::builder()
        .uri("/ui/api/state")
        .header("cookie", cookie)
        .body(Body::empty())
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    json(std::str::from_utf8(&bytes).unwrap())
}

fn ids(v: &Value<'_>, pointer: &str) -> Vec<u64> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|a| text(a, "/id").parse().unwrap())
        .collect()
}

fn number(v: &Value<'_>, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_number)
        .and_then(toolgate_json::Number::as_u64)
        .unwrap_or_else(|| panic!("no number at {pointer}"))
}

/// Item 8: the newest approvals first with the true count, in the API and
/// the page; expired ones are pending nowhere (API, page, gauge).
#[tokio::test]
async fn item8_the_queue_shows_the_newest_first_and_nothing_expired() {
    // On a manual clock: the approvals expire when the test moves it.
    let clock = shop_copy::manual_clock();
    let f = Fixture::new_on("", "", "\n[approvals]\nexpiry_seconds = 2\n", &clock);
    for cents in 1..=4 {
        let (status, body) = call(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            &decide_body(&refund(cents), "alice", "s-1"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(verdict(&body).0, "needs_approval");
    }
    let (status, body) = call(&f.app, "GET", "/v1/approvals?limit=3", Some(APPROVER), "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v = json(&body);
    assert_eq!(ids(&v, "/approvals"), [4, 3, 2]);
    assert_eq!(number(&v, "/total"), 4);
    let (_, body) = call(&f.app, "GET", "/v1/approvals?before=2", Some(APPROVER), "").await;
    assert_eq!(ids(&json(&body), "/approvals"), [1]);
    let (_, body) = call(&f.app, "GET", "/v1/approvals?after=2", Some(APPROVER), "").await;
    assert_eq!(ids(&json(&body), "/approvals"), [3, 4], "forward pages");
    let page = page_state(&f.app).await;
    assert_eq!(ids(&page, "/approvals"), [4, 3, 2, 1]);
    assert_eq!(number(&page, "/pending_total"), 4);

    clock.advance(std::time::Duration::from_millis(2001));
    let (_, body) = call(&f.app, "GET", "/v1/approvals", Some(APPROVER), "").await;
    let v = json(&body);
    assert!(ids(&v, "/approvals").is_empty(), "{body}");
    assert_eq!(number(&v, "/total"), 0);
    let (_, body) = call(
        &f.app,
        "GET",
        "/v1/approvals?state=expired",
        Some(APPROVER),
        "",
    )
    .await;
    let v = json(&body);
    assert_eq!(ids(&v, "/approvals"), [4, 3, 2, 1]);
    assert_eq!(text(&v, "/approvals/0/state"), "expired");
    let (_, body) = call(&f.app, "GET", "/v1/approvals/1", Some(APPROVER), "").await;
    assert_eq!(text(&json(&body), "/state"), "expired");
    let page = page_state(&f.app).await;
    assert!(ids(&page, "/approvals").is_empty());
    assert_eq!(number(&page, "/pending_total"), 0);
    let (_, text) = call(&f.app, "GET", "/metrics", None, "").await;
    assert!(text.contains("toolgate_pending_approvals 0\n"), "{text}");
}

/// The context is read from the value the request's reader parsed, not
/// written back to text and read again: a context string the body's
/// limits allow (here 1 MiB and more, under a 4 MiB body cap) is not
/// refused by a second reader's tighter default string limit.
#[tokio::test]
async fn the_context_is_read_once_under_the_bodys_limits() {
    let f = Fixture::new("max_body_bytes = 4194304", "", "");
    let long = "x".repeat((1 << 20) + 16);
    let context = format!(
        r#"{{"user":"alice","session":"s-1","roles":["customer"],"turn":1,"allowed_calls":["{long}"]}}"#
    );
    let body = format!(
        r#"{{"body":{},"format":"openai","context":{context}}}"#,
        toolgate_json::canonical::to_string(&Value::String(
            openai("search", r#"{"query":"mug"}"#).into()
        ))
    );
    let (status, answer) = call(&f.app, "POST", "/v1/decide", Some(AGENT), &body).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        &answer[..answer.len().min(300)]
    );
    let v = json(&answer);
    assert_eq!(
        text(&v, "/decisions/0/verdict"),
        "allow",
        "{}",
        &answer[..answer.len().min(300)]
    );
}

/// Item 9: the context over HTTP is read by the same strict reader as
/// `toolgate check --context`, on the numbers as they were written.
#[tokio::test]
async fn item9_the_context_is_as_strict_over_http_as_on_the_command_line() {
    let f = Fixture::new("", "", "");
    for turn in ["1.0", "1e0", "10E-1", "-0", "1.5"] {
        let context =
            format!(r#"{{"user":"alice","session":"s-1","roles":["customer"],"turn":{turn}}}"#);
        let local = toolgate::Context::from_json(context.as_bytes()).unwrap_err();
        let body = format!(
            r#"{{"body":{},"format":"openai","context":{context}}}"#,
            toolgate_json::canonical::to_string(&Value::String(
                openai("search", r#"{"query":"mug"}"#).into()
            ))
        );
        let (status, answer) = call(&f.app, "POST", "/v1/decide", Some(AGENT), &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "turn {turn}: {answer}");
        let v = json(&answer);
        assert_eq!(text(&v, "/error/code"), "invalid_request");
        assert_eq!(
            text(&v, "/error/pointer"),
            format!("/context{}", local.pointer())
        );
        assert_eq!(text(&v, "/error/message"), format!("context: {local}"));
    }
    // What the command line accepts, HTTP accepts.
    let context = r#"{"user":"alice","session":"s-1","roles":["customer"],"turn":1}"#;
    toolgate::Context::from_json(context.as_bytes()).unwrap();
    let (status, answer) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        &decide_body(&openai("search", r#"{"query":"mug"}"#), "alice", "s-1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}
