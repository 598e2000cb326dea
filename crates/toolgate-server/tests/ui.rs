//! The approvals page's routes through `tower::ServiceExt::oneshot`: the
//! static files and their headers, login, sessions, CSRF refusals, the
//! page's state and its approve/deny/kill actions.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use toolgate_json::Value;
use toolgate_server::ui;
use tower::ServiceExt as _;

mod shop_copy;

use shop_copy::{s, Fixture, ADMIN, AGENT, APPROVER};
use toolgate_testkit::shop_dir;

const HOST: &str = "toolgate.test:8080";

fn fixture() -> Fixture {
    Fixture::new("", "", "")
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Answer {
    fn json(&self) -> Value<'static> {
        toolgate_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
            .into_owned()
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .unwrap()
    }

    fn error_code(&self) -> String {
        s(&self.json(), "/error/code").to_owned()
    }
}

/// One request as a browser on the page's origin sends it.
async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", HOST);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req.body(Body::from(body.unwrap_or("").to_owned())).unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        text: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

/// A logged-in page: the cookie header and the CSRF token.
struct Page {
    cookie: String,
    csrf: String,
}

impl Page {
    fn read(&self) -> Vec<(&str, &str)> {
        vec![("cookie", self.cookie.as_str())]
    }

    fn write(&self) -> Vec<(&str, &str)> {
        vec![
            ("cookie", self.cookie.as_str()),
            ("x-csrf-token", self.csrf.as_str()),
            ("origin", "http://toolgate.test:8080"),
            ("sec-fetch-site", "same-origin"),
        ]
    }
}

async fn login(app: &Router, token: &str) -> Page {
    let a = send(
        app,
        "POST",
        "/ui/login",
        &[("origin", "http://toolgate.test:8080")],
        Some(&format!("{{\"token\":\"{token}\"}}")),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let set_cookie = a.header("set-cookie").to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    assert!(cookie.starts_with("toolgate_ui="), "{cookie}");
    let v = a.json();
    Page {
        cookie,
        csrf: s(&v, "/csrf").to_owned(),
    }
}

fn decide_body(response: &str) -> String {
    let body = std::fs::read_to_string(shop_dir().join("responses").join(response)).unwrap();
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(body.into()));
    let ctx = toolgate_json::from_str(
        r#"{"user":"alice","session":"sess-1","roles":["customer"],"turn":3}"#,
    )
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// Decides the shop's refund that needs approval; the approval's id.
async fn pending_refund(app: &Router) -> String {
    let auth = format!("Bearer {AGENT}");
    let a = send(
        app,
        "POST",
        "/v1/decide",
        &[("authorization", auth.as_str())],
        Some(&decide_body("openai-refund-needs-approval.json")),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let v = a.json();
    assert_eq!(s(&v, "/verdict"), "needs_approval");
    s(&v, "/decisions/1/approval").to_owned()
}

async fn approval_state(app: &Router, id: &str) -> String {
    let auth = format!("Bearer {ADMIN}");
    let a = send(
        app,
        "GET",
        &format!("/v1/approvals/{id}"),
        &[("authorization", auth.as_str())],
        None,
    )
    .await;
    s(&a.json(), "/state").to_owned()
}

/// The audit records (as `GET /v1/audit` writes them) with this verdict.
async fn audited(app: &Router, verdict: &str) -> Vec<Value<'static>> {
    let auth = format!("Bearer {ADMIN}");
    let a = send(
        app,
        "GET",
        "/v1/audit?limit=1000",
        &[("authorization", auth.as_str())],
        None,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    a.json()
        .pointer("/records")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter(|r| r.pointer("/verdict").and_then(Value::as_str) == Some(verdict))
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_page_is_served_with_a_strict_policy_and_no_inline_code() {
    let f = fixture();
    let a = send(&f.app, "GET", "/ui/", &[], None).await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.header("content-type").starts_with("text/html"));
    assert_eq!(a.header("content-security-policy"), ui::CSP);
    assert!(ui::CSP.contains("script-src 'self'"));
    assert!(!ui::CSP.contains("unsafe"));
    assert_eq!(a.header("x-content-type-options"), "nosniff");
    assert_eq!(a.header("referrer-policy"), "no-referrer");
    assert_eq!(a.header("x-frame-options"), "DENY");
    // Scripts and styles come from files only.
    let html = a.text.to_ascii_lowercase();
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(html.contains("<script src=\"/ui/app.js\""));
    assert!(!html.contains("<style") && !html.contains(" style=") && !html.contains(" on"));

    let js = send(&f.app, "GET", "/ui/app.js", &[], None).await;
    assert_eq!(js.status, StatusCode::OK);
    assert!(js.header("content-type").starts_with("text/javascript"));
    assert_eq!(js.header("content-security-policy"), ui::CSP);
    // The page escapes the one table of hidden characters, written in.
    assert!(!js.text.contains("/*toolgate:hidden*/"));
    assert!(js.text.contains(&format!(
        "/[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F{}]/gu",
        toolgate::hidden::javascript_class()
    )));
    // Values are written as text, never parsed as HTML.
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
    ] {
        assert!(!js.text.contains(sink), "app.js uses {sink}");
    }
    let css = send(&f.app, "GET", "/ui/app.css", &[], None).await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.header("content-type").starts_with("text/css"));

    let icon = send(&f.app, "GET", "/ui/favicon.svg", &[], None).await;
    assert_eq!(icon.header("content-type"), "image/svg+xml");

    let bare = send(&f.app, "GET", "/ui", &[], None).await;
    assert_eq!(bare.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(bare.header("location"), "/ui/");
}

#[tokio::test]
async fn login_takes_an_approver_or_admin_token_only() {
    let f = fixture();
    let try_login = |token: &'static str, origin: &'static str| {
        let app = f.app.clone();
        async move {
            send(
                &app,
                "POST",
                "/ui/login",
                &[("origin", origin)],
                Some(&format!("{{\"token\":\"{token}\"}}")),
            )
            .await
        }
    };
    let same = "http://toolgate.test:8080";
    let a = try_login("wrong-token", same).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert_eq!(a.error_code(), "unauthorized");
    assert_eq!(s(&a.json(), "/error/pointer"), "/token");
    assert!(a.headers.get("set-cookie").is_none());

    let a = try_login(AGENT, same).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert_eq!(a.error_code(), "forbidden");
    assert!(a.headers.get("set-cookie").is_none());

    // Another site cannot log a browser in (login CSRF).
    let a = try_login(APPROVER, "https://evil.example").await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert_eq!(a.error_code(), "csrf_rejected");
    assert!(a.headers.get("set-cookie").is_none());

    // Unknown members and non-JSON bodies are refused.
    let a = send(
        &f.app,
        "POST",
        "/ui/login",
        &[],
        Some(r#"{"token":"x","remember":true}"#),
    )
    .await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::BAD_REQUEST, "unknown_field")
    );
    let a = send(
        &f.app,
        "POST",
        "/ui/login",
        &[("content-type", "application/x-www-form-urlencoded")],
        None,
    )
    .await;
    assert_eq!(a.error_code(), "unsupported_media_type");

    let a = send(&f.app, "GET", "/ui/api/me", &[], None).await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (StatusCode::OK, r#"{"me":null}"#)
    );

    // The refused logins are in the audit log.
    let refused = audited(&f.app, "unauthorized").await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(s(&refused[0], "/note"), "POST /ui/login");
    assert_eq!(s(&refused[0], "/reasons/0"), "unknown_token");
    let refused = audited(&f.app, "forbidden").await;
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert_eq!(s(&refused[0], "/reasons/0"), "role:agent");
    assert_eq!(s(&refused[0], "/actor"), "agent-1");
    assert_eq!(s(&refused[1], "/reasons/0"), "csrf");

    let page = login(&f.app, APPROVER).await;
    let a = send(&f.app, "GET", "/ui/api/me", &page.read(), None).await;
    assert_eq!(s(&a.json(), "/me/actor"), "approver-1");
    let a = send(&f.app, "GET", "/ui/api/state", &page.read(), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let v = a.json();
    assert_eq!(s(&v, "/me/actor"), "approver-1");
    assert_eq!(s(&v, "/me/role"), "approver");
    assert_eq!(s(&v, "/me/csrf"), page.csrf);
    assert_eq!(a.header("content-security-policy"), ui::CSP);
    assert_eq!(a.header("cache-control"), "no-store");

    // No session, a made-up session: 401.
    let a = send(&f.app, "GET", "/ui/api/state", &[], None).await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let a = send(
        &f.app,
        "GET",
        "/ui/api/state",
        &[("cookie", "toolgate_ui=00ff")],
        None,
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);

    // Logging out ends the session.
    let a = send(&f.app, "POST", "/ui/logout", &page.write(), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert!(a.header("set-cookie").contains("Max-Age=0"));
    let a = send(&f.app, "GET", "/ui/api/state", &page.read(), None).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_state_lists_pending_calls_with_risk_reasons_and_arguments() {
    let f = fixture();
    let id = pending_refund(&f.app).await;
    let page = login(&f.app, APPROVER).await;
    let a = send(&f.app, "GET", "/ui/api/state", &page.read(), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let v = a.json();
    assert_eq!(s(&v, "/approvals/0/id"), id);
    assert_eq!(s(&v, "/approvals/0/tool"), "refund");
    assert_eq!(s(&v, "/approvals/0/user"), "alice");
    assert_eq!(s(&v, "/approvals/0/session"), "sess-1");
    assert_eq!(s(&v, "/approvals/0/risk"), "destructive");
    assert_eq!(s(&v, "/approvals/0/reasons/0"), "approval_required");
    assert_eq!(s(&v, "/approvals/0/call_id"), "call_refund_2");
    assert_eq!(
        s(&v, "/approvals/0/arguments"),
        "{\n  \"amount_cents\": 2599,\n  \"order_id\": \"ord_1002\",\n  \"reason\": \"late\"\n}"
    );
    assert_eq!(s(&v, "/kill/mode"), "off");
    // The audit summary, newest first, without arguments or hashes.
    assert_eq!(s(&v, "/audit/0/verdict"), "needs_approval");
    assert_eq!(s(&v, "/audit/0/tool"), "refund");
    assert_eq!(s(&v, "/audit/0/user"), "alice");
    assert_eq!(s(&v, "/audit/0/approval"), id);
    assert_eq!(s(&v, "/audit/0/reasons/0"), "approval_required");
    assert!(v.pointer("/audit/0/arguments").is_none());
    assert!(v.pointer("/audit/0/hash").is_none());
    assert_eq!(s(&v, "/audit/1/verdict"), "allow");
    assert_eq!(s(&v, "/audit/1/tool"), "get_order");
}

#[tokio::test]
async fn writes_without_a_valid_csrf_token_or_from_another_site_are_refused() {
    let f = fixture();
    let id = pending_refund(&f.app).await;
    let page = login(&f.app, APPROVER).await;
    let uri = format!("/ui/api/approvals/{id}/approve");
    let body = Some(r#"{"note":"ok"}"#);
    let cookie = ("cookie", page.cookie.as_str());
    let origin = ("origin", "http://toolgate.test:8080");

    // No token.
    let a = send(&f.app, "POST", &uri, &[cookie, origin], body).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert_eq!(a.error_code(), "csrf_rejected");
    assert!(s(&a.json(), "/error/message").contains("X-CSRF-Token"));
    // A wrong token.
    let a = send(
        &f.app,
        "POST",
        &uri,
        &[cookie, origin, ("x-csrf-token", "0123")],
        body,
    )
    .await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::FORBIDDEN, "csrf_rejected")
    );
    // The right token from another origin, or marked cross-site.
    let csrf = ("x-csrf-token", page.csrf.as_str());
    let a = send(
        &f.app,
        "POST",
        &uri,
        &[cookie, csrf, ("origin", "https://evil.example")],
        body,
    )
    .await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::FORBIDDEN, "csrf_rejected")
    );
    let a = send(
        &f.app,
        "POST",
        &uri,
        &[cookie, csrf, ("sec-fetch-site", "cross-site")],
        body,
    )
    .await;
    assert_eq!(a.error_code(), "csrf_rejected");
    // The token of another session.
    let other = login(&f.app, ADMIN).await;
    let a = send(
        &f.app,
        "POST",
        &uri,
        &[cookie, origin, ("x-csrf-token", other.csrf.as_str())],
        body,
    )
    .await;
    assert_eq!(a.error_code(), "csrf_rejected");
    // A token without a session.
    let a = send(&f.app, "POST", &uri, &[origin, csrf], body).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let a = send(&f.app, "POST", "/ui/logout", &[cookie, origin], None).await;
    assert_eq!(a.error_code(), "csrf_rejected");
    let a = send(
        &f.app,
        "POST",
        "/ui/api/kill",
        &[("cookie", other.cookie.as_str()), origin],
        Some(r#"{"mode":"deny_all"}"#),
    )
    .await;
    assert_eq!(a.error_code(), "csrf_rejected");

    // Nothing was decided, and every refusal is in the audit log.
    assert_eq!(approval_state(&f.app, &id).await, "pending");
    let refused = audited(&f.app, "forbidden").await;
    assert_eq!(refused.len(), 7, "{refused:?}");
    assert!(refused.iter().all(|r| s(r, "/reasons/0") == "csrf"));
    assert_eq!(s(&refused[0], "/actor"), "approver-1");
    assert_eq!(
        s(&refused[0], "/note"),
        format!("POST /ui/api/approvals/{id}/approve")
    );
    assert_eq!(s(&refused[6], "/actor"), "admin-1");
    assert_eq!(s(&refused[6], "/note"), "POST /ui/api/kill");

    // With the session's token, from the page's origin.
    let a = send(&f.app, "POST", &uri, &page.write(), body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    let v = a.json();
    assert_eq!(s(&v, "/state"), "approved");
    assert_eq!(s(&v, "/decided_by"), "approver-1");
    assert_eq!(s(&v, "/note"), "ok");
    assert_eq!(approval_state(&f.app, &id).await, "approved");
    // Approving it again is a conflict.
    let a = send(&f.app, "POST", &uri, &page.write(), None).await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::CONFLICT, "conflict")
    );
}

#[tokio::test]
async fn deny_from_the_page_and_the_kill_switch_for_admins_only() {
    let f = fixture();
    let id = pending_refund(&f.app).await;
    let approver = login(&f.app, APPROVER).await;
    let a = send(
        &f.app,
        "POST",
        &format!("/ui/api/approvals/{id}/deny"),
        &approver.write(),
        Some(r#"{"note":"not this one"}"#),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(s(&a.json(), "/state"), "denied");
    assert_eq!(approval_state(&f.app, &id).await, "denied");

    let kill = Some(r#"{"mode":"deny_writes","reason":"incident 7"}"#);
    let a = send(&f.app, "POST", "/ui/api/kill", &approver.write(), kill).await;
    assert_eq!(
        (a.status, a.error_code().as_str()),
        (StatusCode::FORBIDDEN, "forbidden")
    );
    let admin = login(&f.app, ADMIN).await;
    let a = send(&f.app, "POST", "/ui/api/kill", &admin.write(), kill).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text);
    assert_eq!(s(&a.json(), "/mode"), "deny_writes");
    let a = send(&f.app, "GET", "/ui/api/state", &approver.read(), None).await;
    let v = a.json();
    assert_eq!(s(&v, "/kill/mode"), "deny_writes");
    assert_eq!(s(&v, "/kill/actor"), "admin-1");
    assert_eq!(s(&v, "/kill/reason"), "incident 7");
    assert!(v
        .pointer("/approvals")
        .and_then(Value::as_array)
        .unwrap()
        .is_empty());
    let a = send(
        &f.app,
        "POST",
        "/ui/api/kill",
        &admin.write(),
        Some(r#"{"mode":"everything"}"#),
    )
    .await;
    assert_eq!(
        (a.error_code().as_str(), s(&a.json(), "/error/pointer")),
        ("invalid_request", "/mode")
    );
}
