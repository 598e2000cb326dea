//! Issue 29: the service under attack, third round. One test per hole,
//! named by its item: reload, bounded identifiers, floods of approvals,
//! ids in paths read exactly as issued, audit filters for every record
//! kind, idle anonymous connections, duplicate credentials, signed
//! checkpoints.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::http::StatusCode;
use toolgate_json::{Digest, Value};
use toolgate_store::{PinFirst, SeenTool, SqliteOptions, Store};

mod shop_copy;

use shop_copy::{call, s, Fixture, ADMIN, AGENT, APPROVER};
use toolgate_testkit::shop_dir;

/// A decide request for `user` on the shop's response `file`.
fn decide_body(file: &str, user: &str) -> String {
    let response = std::fs::read_to_string(shop_dir().join("responses").join(file)).unwrap();
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(response.into()));
    o.insert("format", Value::String("auto".into()));
    let ctx = toolgate_json::from_str(&format!(
        r#"{{"user":"{user}","session":"sess-1","roles":["customer"],"turn":3,"entities":[]}}"#
    ))
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// A `needs_approval` decision through `/v1/decide`: the approval's id.
async fn held_call(f: &Fixture) -> String {
    let body = decide_body("openai-refund-needs-approval.json", "alice");
    let (status, v) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &body,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    s(&v, "/decisions/1/approval").to_owned()
}

/// A pending tool pin in the fixture's store: its id.
fn pending_pin(f: &Fixture) -> u64 {
    let store = SqliteOptions::new()
        .open(f.dir.path().join("toolgate.db"))
        .unwrap();
    let def = r#"{"description":"Add.","name":"add"}"#;
    let states = store
        .observe_catalog(
            "calc",
            &Digest::of(b"c1"),
            &[SeenTool::new(
                "add",
                Digest::of(def.as_bytes()),
                def,
                vec![],
            )],
            PinFirst::Approve,
        )
        .unwrap();
    assert_eq!(states.len(), 1);
    store.list_pins(&Default::default()).unwrap()[0].id.get()
}

/// Item 5: `/v1/pins/02/approve` and `/v1/approvals/+1/...` acted on pin 2
/// and approval 1. An id is read exactly as it was issued (decimal digits,
/// no leading zero, sign or space), anything else is 404 and changes
/// nothing.
#[tokio::test]
async fn issue_29_5_ids_in_paths_are_read_exactly_as_issued() {
    let f = Fixture::copied(|t| t);
    let approval = held_call(&f).await;
    let pin = pending_pin(&f).to_string();
    for (id, kind) in [(&approval, "approvals"), (&pin, "pins")] {
        for spelled in [
            format!("0{id}"),
            format!("00{id}"),
            format!("+{id}"),
            format!("%2B{id}"),
            format!("%20{id}"),
            format!("{id}%20"),
            format!("-{id}"),
            format!("{id}.0"),
            format!("{id}%00"),
            "0".to_owned(),
            "18446744073709551617".to_owned(),
        ] {
            let mut routes = vec![
                ("GET", format!("/v1/{kind}/{spelled}")),
                ("POST", format!("/v1/{kind}/{spelled}/approve")),
            ];
            if kind == "approvals" {
                routes.push(("POST", format!("/v1/{kind}/{spelled}/deny")));
                routes.push(("GET", format!("/v1/{kind}/{spelled}/wait?timeout=0")));
            } else {
                routes.push(("POST", format!("/v1/{kind}/{spelled}/reject")));
            }
            for (method, uri) in routes {
                let body = if method == "POST" { "{}" } else { "" };
                let ct = (method == "POST").then_some("application/json");
                let (status, v) = call(&f.app, method, &uri, Some(APPROVER), ct, body).await;
                assert_eq!(
                    (status, s(&v, "/error/code")),
                    (StatusCode::NOT_FOUND, "not_found"),
                    "{method} {uri}"
                );
            }
        }
        // Still pending; the id as issued reads and decides it.
        let (status, v) = call(
            &f.app,
            "GET",
            &format!("/v1/{kind}/{id}"),
            Some(APPROVER),
            None,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v:?}");
        assert_eq!(s(&v, "/state"), "pending", "{kind}");
        let (status, v) = call(
            &f.app,
            "POST",
            &format!("/v1/{kind}/{id}/approve"),
            Some(APPROVER),
            Some("application/json"),
            "{}",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v:?}");
    }
}

/// One request with exactly these headers: the status and the body as
/// JSON.
async fn raw(
    f: &Fixture,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, Value<'static>) {
    use tower::ServiceExt as _;
    let mut req = axum::http::Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(axum::body::Body::from(body.to_owned())).unwrap();
    let res = f.app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    let v = toolgate_json::from_slice(&bytes)
        .map(Value::into_owned)
        .unwrap_or(Value::Null);
    (status, v)
}

/// Item 8: with two `Authorization` headers the first one won, and a hop
/// in front that reads the last one sees another caller. Two are refused
/// (`400 duplicate_header`) whichever they are, on every authenticated
/// route; the login page compares the token it is given as given.
#[tokio::test]
async fn issue_29_8_duplicate_authorization_is_refused_and_login_does_not_trim() {
    let f = Fixture::new("metrics_auth = \"token\"", "", "");
    let bearer = |t: &str| format!("Bearer {t}");
    let pairs = [
        (bearer(ADMIN), bearer(ADMIN)),
        (bearer(ADMIN), bearer("nobody")),
        (bearer("nobody"), bearer(ADMIN)),
        (bearer(ADMIN), String::new()),
    ];
    let routes = [
        ("POST", "/v1/decide"),
        ("GET", "/v1/approvals"),
        ("GET", "/v1/approvals/1"),
        ("GET", "/v1/pins"),
        ("GET", "/v1/kill"),
        ("POST", "/v1/kill"),
        ("GET", "/v1/audit"),
        ("POST", "/v1/results"),
        ("POST", "/v1/reload"),
        ("GET", "/metrics"),
    ];
    for (first, second) in &pairs {
        for (method, uri) in routes {
            let headers = [
                ("authorization", first.as_str()),
                ("authorization", second.as_str()),
                ("content-type", "application/json"),
            ];
            let (status, v) = raw(&f, method, uri, &headers, "{}").await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{method} {uri}: {v:?}");
            assert_eq!(s(&v, "/error/code"), "duplicate_header", "{method} {uri}");
        }
    }
    // One header still works.
    let (status, _) = raw(
        &f,
        "GET",
        "/v1/kill",
        &[("authorization", &bearer(ADMIN))],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // The page's login: a token with spaces around it is another token.
    let login = |token: String| {
        let body = format!("{{\"token\":\"{token}\"}}");
        let f = &f;
        async move {
            raw(
                f,
                "POST",
                "/ui/login",
                &[
                    ("host", "toolgate.test:8080"),
                    ("origin", "http://toolgate.test:8080"),
                    ("content-type", "application/json"),
                ],
                &body,
            )
            .await
        }
    };
    for padded in [
        format!(" {APPROVER}"),
        format!("{APPROVER} "),
        format!("{APPROVER}\\n"),
        format!("\\t{APPROVER}"),
    ] {
        let (status, v) = login(padded.clone()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{padded:?}: {v:?}");
    }
    let (status, v) = login(APPROVER.to_owned()).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
}

/// Item 6: `/v1/audit?kind=pin` was a 400 and no kind returned the
/// `pin_*` records. Every verdict a record can carry is filterable by its
/// kind and by itself, and the OpenAPI document lists every kind and
/// every verdict.
#[tokio::test]
async fn issue_29_6_every_record_kind_is_filterable_and_documented() {
    let f = Fixture::copied(|t| t);
    pending_pin(&f);
    let (status, doc) = call(&f.app, "GET", "/openapi.json", None, None, "").await;
    assert_eq!(status, StatusCode::OK);
    let params = doc
        .pointer("/paths/~1v1~1audit/get/parameters")
        .and_then(Value::as_array)
        .unwrap();
    let enum_of = |name: &str| -> Vec<String> {
        let p = params
            .iter()
            .find(|p| p.pointer("/name").and_then(Value::as_str) == Some(name))
            .unwrap();
        p.pointer("/schema/enum")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let kinds = enum_of("kind");
    let verdicts = enum_of("verdict");
    assert!(kinds.iter().any(|k| k == "pin"), "{kinds:?}");
    for v in ["pin_pending", "pin_approved", "pin_rejected", "tool_result"] {
        assert!(verdicts.iter().any(|x| x == v), "{v} in {verdicts:?}");
    }
    // Every documented kind and verdict is accepted.
    for k in &kinds {
        let (status, v) = call(
            &f.app,
            "GET",
            &format!("/v1/audit?kind={k}"),
            Some(ADMIN),
            None,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "kind {k}: {v:?}");
    }
    for x in &verdicts {
        let (status, v) = call(
            &f.app,
            "GET",
            &format!("/v1/audit?verdict={x}"),
            Some(ADMIN),
            None,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "verdict {x}: {v:?}");
    }
    // The pin's record is found by its kind, and only by it.
    let (_, page) = call(&f.app, "GET", "/v1/audit?kind=pin", Some(ADMIN), None, "").await;
    let records = page.pointer("/records").and_then(Value::as_array).unwrap();
    assert_eq!(records.len(), 1, "{page:?}");
    assert_eq!(s(&records[0], "/verdict"), "pin_pending");
    for k in kinds.iter().filter(|k| *k != "pin") {
        let (_, page) = call(
            &f.app,
            "GET",
            &format!("/v1/audit?kind={k}"),
            Some(ADMIN),
            None,
            "",
        )
        .await;
        let records = page.pointer("/records").and_then(Value::as_array).unwrap();
        assert!(
            records
                .iter()
                .all(|r| !s(r, "/verdict").starts_with("pin_")),
            "{k}"
        );
    }
}

/// Item 2: `POST /v1/reload` answered `applied` after a token was removed,
/// a token's `users` or `metrics_auth` changed, and the old token kept
/// working. A reload applies the tokens (their roles and users, the page's
/// sessions included) and `metrics_auth`, and refuses what it cannot apply
/// (`409 restart_required`, naming the keys) without applying anything.
#[tokio::test]
async fn issue_29_2_reload_applies_server_tokens_or_refuses_naming_the_keys() {
    let f = Fixture::copied(|t| t);
    let path = f.dir.path().join("toolgate.toml");
    let original = std::fs::read_to_string(&path).unwrap();
    let decide_as = |token: &'static str, user: &'static str| {
        let app = f.app.clone();
        async move {
            call(
                &app,
                "POST",
                "/v1/decide",
                Some(token),
                Some("application/json"),
                &decide_body("openai-search.json", user),
            )
            .await
            .0
        }
    };
    let reload = |text: String| {
        let app = f.app.clone();
        let path = path.clone();
        async move {
            std::fs::write(&path, text).unwrap();
            call(&app, "POST", "/v1/reload", Some(ADMIN), None, "").await
        }
    };
    let page_login = |token: &'static str| {
        let f = &f;
        async move {
            let body = format!("{{\"token\":\"{token}\"}}");
            let res = {
                use tower::ServiceExt as _;
                let req = axum::http::Request::builder()
                    .method("POST")
                    .uri("/ui/login")
                    .header("host", "toolgate.test:8080")
                    .header("origin", "http://toolgate.test:8080")
                    .header("content-type", "application/json")
                    .body(axum::body::Body::from(body))
                    .unwrap();
                f.app.clone().oneshot(req).await.unwrap()
            };
            assert_eq!(res.status(), StatusCode::OK);
            let cookie = res.headers()["set-cookie"].to_str().unwrap();
            cookie.split(';').next().unwrap().to_owned()
        }
    };
    let page_state = |cookie: String| {
        let f = &f;
        async move {
            raw(
                f,
                "GET",
                "/ui/api/state",
                &[("host", "toolgate.test:8080"), ("cookie", &cookie)],
                "",
            )
            .await
            .0
        }
    };
    assert_eq!(decide_as(AGENT, "carol").await, StatusCode::OK);
    let approver_page = page_login(APPROVER).await;
    assert_eq!(page_state(approver_page.clone()).await, StatusCode::OK);

    // The agent's token bound to alice: carol is refused at once.
    let bound = original.replace(
        "role = \"agent\"\n",
        "role = \"agent\"\nusers = [\"alice\"]\n",
    );
    assert_ne!(bound, original);
    let (status, v) = reload(bound.clone()).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/status"), "applied");
    assert_eq!(decide_as(AGENT, "carol").await, StatusCode::FORBIDDEN);
    assert_eq!(decide_as(AGENT, "alice").await, StatusCode::OK);

    // Metrics behind a token.
    let (status, _) = call(&f.app, "GET", "/metrics", None, None, "").await;
    assert_eq!(status, StatusCode::OK);
    let with_metrics = bound.replace(
        "listen = \"127.0.0.1:0\"\n",
        "listen = \"127.0.0.1:0\"\nmetrics_auth = \"token\"\n",
    );
    assert_ne!(with_metrics, bound);
    let (status, v) = reload(with_metrics.clone()).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    let (status, _) = call(&f.app, "GET", "/metrics", None, None, "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Revoking tokens: the agent's and the approver's (whose page session
    // ends with it).
    let block = |role: &str, rest: &str| {
        let start = rest.find(&format!("name = \"{role}-1\"")).unwrap();
        let start = rest[..start].rfind("[[server.token]]").unwrap();
        let end = rest[start + 1..]
            .find("[[server.token]]")
            .map_or(rest.len(), |e| start + 1 + e);
        format!("{}{}", &rest[..start], &rest[end..])
    };
    let revoked = block("approver", &block("agent", &with_metrics));
    let (status, v) = reload(revoked.clone()).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(decide_as(AGENT, "alice").await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        page_state(approver_page).await,
        StatusCode::UNAUTHORIZED,
        "a revoked token's page session"
    );

    // What a reload cannot apply: refused, naming the keys, and nothing
    // of the file applied (the agent's token stays revoked).
    let restart = with_metrics
        .replace("listen = \"127.0.0.1:0\"", "listen = \"127.0.0.1:1\"")
        .replace(
            "metrics_auth = \"token\"\n",
            "metrics_auth = \"token\"\nmax_connections = 7\n",
        );
    let (status, v) = reload(restart).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v:?}");
    assert_eq!(s(&v, "/error/code"), "restart_required");
    let message = s(&v, "/error/message");
    for key in ["listen", "max_connections"] {
        assert!(message.contains(&format!("`{key}`")), "{message}");
    }
    assert_eq!(decide_as(AGENT, "alice").await, StatusCode::UNAUTHORIZED);
    let (_, page) = call(
        &f.app,
        "GET",
        "/v1/audit?kind=reload&limit=1",
        Some(ADMIN),
        None,
        "",
    )
    .await;
    let last = &page.pointer("/records").and_then(Value::as_array).unwrap()[0];
    assert_eq!(s(last, "/reasons/0"), "refused");
    assert!(s(last, "/note").contains("`listen`"), "{last:?}");
    // Back to the original file: every token works again.
    let (status, v) = reload(original).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(decide_as(AGENT, "carol").await, StatusCode::OK);
}

/// A decide request with this raw response `body` and context members.
fn decide_raw(body: &str, user: &str, session: &str) -> String {
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(body.to_owned().into()));
    o.insert("format", Value::String("auto".into()));
    let mut ctx = toolgate_json::Object::new();
    ctx.insert("user", Value::String(user.to_owned().into()));
    ctx.insert("session", Value::String(session.to_owned().into()));
    ctx.insert(
        "roles",
        Value::Array(vec![Value::String("customer".into())]),
    );
    ctx.insert("turn", Value::Number(toolgate_json::Number::from(1u64)));
    ctx.insert("entities", Value::Array(vec![]));
    o.insert("context", Value::Object(ctx));
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// Item 3: call ids (the model's) and sessions and users (the caller's) of
/// any length up to the parser's limits were stored and shown, so records
/// and pages grew with them. Each identifier is bounded (256 bytes, notes
/// 4,096) with the refusal code `identifier_too_long`, and what is
/// recorded of a refused one has a fixed size.
#[tokio::test]
async fn issue_29_3_identifiers_are_bounded_with_their_own_code() {
    let f = Fixture::copied(|t| t);
    let search = std::fs::read_to_string(shop_dir().join("responses/openai-search.json")).unwrap();
    let long = "x".repeat(100_000);
    let at_bound = "y".repeat(toolgate::identifier::MAX_IDENTIFIER_BYTES);
    let cases = [
        // (call id, user, session)
        (long.as_str(), "alice", "s-1"),
        ("call_1", "alice", long.as_str()),
        ("call_2", long.as_str(), "s-2"),
    ];
    for (call_id, user, session) in cases {
        let body = search.replace("call_search_1", call_id);
        let (status, v) = call(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            Some("application/json"),
            &decide_raw(&body, user, session),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(s(&v, "/verdict"), "deny");
        assert_eq!(s(&v, "/decisions/0/reasons/0/code"), "identifier_too_long");
        assert!(v.to_canonical_string().len() < 10_000);
    }
    // At the bound: decided as usual.
    let body = search.replace("call_search_1", &at_bound);
    let (_, v) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_raw(&body, "alice", &at_bound),
    )
    .await;
    assert_eq!(s(&v, "/verdict"), "allow", "{v:?}");
    // The records name the refused identifiers by digest: the page stays
    // small.
    let (status, page) = call(&f.app, "GET", "/v1/audit", Some(ADMIN), None, "").await;
    assert_eq!(status, StatusCode::OK);
    let text = page.to_canonical_string();
    assert!(text.len() < 20_000, "{} bytes", text.len());
    assert_eq!(text.matches("oversized:").count(), 3, "{text}");

    // Results: the caller's session and call id.
    for member in ["session", "call_id"] {
        let body = format!(r#"{{"tool":"search","result":"ok","{member}":"{long}"}}"#);
        let (status, v) = call(
            &f.app,
            "POST",
            "/v1/results",
            Some(AGENT),
            Some("application/json"),
            &body,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{member}");
        assert_eq!(s(&v, "/error/code"), "identifier_too_long");
        assert_eq!(s(&v, "/error/pointer"), format!("/{member}"));
    }
    // An approval's note.
    let id = held_call(&f).await;
    let note = "n".repeat(toolgate::identifier::MAX_NOTE_BYTES + 1);
    let (status, v) = call(
        &f.app,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        Some(APPROVER),
        Some("application/json"),
        &format!(r#"{{"note":"{note}"}}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v:?}");
    assert_eq!(s(&v, "/error/code"), "identifier_too_long");
    assert_eq!(s(&v, "/error/pointer"), "/note");

    // The store refuses them whichever front end writes.
    let store = SqliteOptions::new()
        .open(f.dir.path().join("toolgate.db"))
        .unwrap();
    let entry = toolgate_store::AuditEntry::new(
        toolgate_store::Timestamp::from_unix_millis(1),
        toolgate_store::AuditVerdict::ToolResult,
    )
    .session(long.clone());
    assert_eq!(
        store.append(entry).unwrap_err().code(),
        toolgate_store::ErrorCode::InvalidInput
    );
    let digest = Digest::of(b"{}");
    let until = toolgate_store::Timestamp::from_unix_millis(i64::MAX / 2);
    assert_eq!(
        store
            .request_approval("alice", &long, "refund", &digest, until)
            .unwrap_err()
            .code(),
        toolgate_store::ErrorCode::InvalidInput
    );
    let (status, v) = call(
        &f.app,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        Some(APPROVER),
        Some("application/json"),
        &format!(r#"{{"note":"{}"}}"#, &note[1..]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
}

/// Item 4: one agent token naming a new user (or session) on each call
/// filled the approvals queue. The pending approvals a token asked for are capped
/// (`[approvals] max_pending_per_token`); past it a held call is denied
/// `approval_queue_full`, and the approvals page still shows the others.
#[tokio::test]
async fn issue_29_4_one_token_naming_new_users_is_capped() {
    let f = Fixture::new("", "", "\n[approvals]\nmax_pending_per_token = 3\n");
    // A new session on each call (the store test names a new user on
    // each: the shop's refund is only alice's to ask for).
    let refund =
        std::fs::read_to_string(shop_dir().join("responses/openai-refund-needs-approval.json"))
            .unwrap();
    let mut verdicts = Vec::new();
    for i in 0..6 {
        let (status, v) = call(
            &f.app,
            "POST",
            "/v1/decide",
            Some(AGENT),
            Some("application/json"),
            &decide_raw(&refund, "alice", &format!("s-{i}")),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        verdicts.push(s(&v, "/decisions/1/verdict").to_owned());
        if i >= 3 {
            assert_eq!(s(&v, "/decisions/1/reasons/0/code"), "approval_queue_full");
        }
    }
    assert_eq!(
        verdicts,
        [
            "needs_approval",
            "needs_approval",
            "needs_approval",
            "deny",
            "deny",
            "deny"
        ]
    );
    let (_, page) = call(
        &f.app,
        "GET",
        "/v1/approvals?state=pending",
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(
        page.pointer("/approvals")
            .and_then(Value::as_array)
            .map(<[Value]>::len),
        Some(3),
        "{page:?}"
    );
}

/// Item 4: a real request pushed off the page by 150 others stays
/// findable: `/v1/approvals` and the page's state filter pending calls by
/// exact user, session or tool.
#[tokio::test]
async fn issue_29_4_a_real_request_stays_findable_on_a_flooded_queue() {
    let f = Fixture::copied(|t| t);
    let store = SqliteOptions::new()
        .open(f.dir.path().join("toolgate.db"))
        .unwrap();
    let until = toolgate_store::Timestamp::from_unix_millis(i64::MAX / 2);
    let real = store
        .request_approval("carol", "real", "refund", &Digest::of(b"r"), until)
        .unwrap();
    for i in 0..150 {
        store
            .request_approval(
                &format!("bot-{i}"),
                "flood",
                "search",
                &Digest::of(format!("{i}").as_bytes()),
                until,
            )
            .unwrap();
    }
    let ids = |page: &Value<'_>| -> Vec<String> {
        page.pointer("/approvals")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|a| s(a, "/id").to_owned())
            .collect()
    };
    let (_, page) = call(
        &f.app,
        "GET",
        "/v1/approvals?limit=100",
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert!(!ids(&page).contains(&real.to_string()));
    for q in ["user=carol", "session=real", "tool=refund"] {
        let (status, page) = call(
            &f.app,
            "GET",
            &format!("/v1/approvals?{q}"),
            Some(APPROVER),
            None,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{page:?}");
        assert_eq!(ids(&page), [real.to_string()], "{q}");
    }
    let (status, v) = call(
        &f.app,
        "GET",
        "/v1/approvals?user=",
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(
        (status, s(&v, "/error/code")),
        (StatusCode::BAD_REQUEST, "invalid_query")
    );
    let long = "u".repeat(300);
    let (status, v) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals?user={long}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(
        (status, s(&v, "/error/code")),
        (StatusCode::BAD_REQUEST, "identifier_too_long")
    );
    // The page's state, searched the same way.
    let res = {
        use tower::ServiceExt as _;
        let req = axum::http::Request::builder()
            .method("POST")
            .uri("/ui/login")
            .header("host", "toolgate.test:8080")
            .header("origin", "http://toolgate.test:8080")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(format!(
                "{{\"token\":\"{APPROVER}\"}}"
            )))
            .unwrap();
        f.app.clone().oneshot(req).await.unwrap()
    };
    let cookie = res.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let (status, state) = raw(
        &f,
        "GET",
        "/ui/api/state?session=real",
        &[("host", "toolgate.test:8080"), ("cookie", &cookie)],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{state:?}");
    assert_eq!(ids(&state), [real.to_string()]);
    assert_eq!(
        state
            .pointer("/pending_total")
            .and_then(Value::as_number)
            .and_then(toolgate_json::Number::as_u64),
        Some(1)
    );
}

/// Item 7: idle anonymous connections took every connection the service
/// serves, so decides waited in the backlog (3.7 s at 150 new idle
/// connections a second). Connections that have not authenticated have a
/// budget of their own: past it the oldest is closed, and an agent's new
/// connection is served at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_29_7_idle_anonymous_connections_do_not_starve_callers() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let config = shop_copy::config_in(
        dir.path(),
        "max_connections = 16\nheader_timeout_seconds = 30",
        "",
        "",
    );
    let state = toolgate_server::AppState::from_config(&config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolgate_server::serve(listener, state, async {
        let _ = stopped.await;
    }));
    let body = decide_body("openai-search.json", "alice");
    let took = tokio::task::spawn_blocking(move || {
        // Twice as many idle connections as the service serves.
        let idle: Vec<_> = (0..32)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        let started = std::time::Instant::now();
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let request = format!(
            "POST /v1/decide HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {AGENT}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        let took = started.elapsed();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        drop(idle);
        took
    })
    .await
    .unwrap();
    let _ = stop.send(());
    let _ = server.await;
    assert!(
        took < std::time::Duration::from_secs(5),
        "the decide waited {took:?} behind idle connections"
    );
}

/// Item 10: the service writes a signed checkpoint when it starts (and
/// every `checkpoint_seconds`); a key it cannot read stops the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_29_10_serve_writes_checkpoints_and_needs_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let sink = dir.path().join("checkpoints.jsonl");
    let key = dir.path().join("audit.key");
    let extra = format!(
        "checkpoint_key = \"{}\"\ncheckpoint_sink = \"{}\"\ncheckpoint_seconds = 3600\n",
        key.display(),
        sink.display()
    );
    let config_with = |extra: &str| {
        let text = std::fs::read_to_string(shop_dir().join("toolgate.toml")).unwrap();
        let db = dir.path().join("toolgate.db");
        let text = text.replace(
            "url = \"sqlite://toolgate.db\"",
            &format!("url = \"sqlite://{}\"\n{extra}", db.display()),
        );
        let text = shop_copy::with_test_server(&text, "", "", "");
        toolgate::config::Config::parse(&text, shop_dir().join("toolgate.toml")).unwrap()
    };
    // No key file: the service does not start.
    let err = toolgate_server::AppState::from_config(&config_with(&extra))
        .err()
        .unwrap();
    assert!(err.to_string().contains("checkpoint key"), "{err}");
    std::fs::write(&key, "cd".repeat(32)).unwrap();
    let state = toolgate_server::AppState::from_config(&config_with(&extra)).unwrap();
    let mut tries = state.checkpoint_tries();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolgate_server::serve(listener, state, async {
        let _ = stopped.await;
    }));
    // The first checkpoint is written at start: to the sink, then to the
    // log (wait for the whole try, or the server may stop between the two).
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        tries.wait_for(|n| *n >= 1),
    )
    .await
    .expect("no checkpoint")
    .unwrap();
    let logged = SqliteOptions::new()
        .open(dir.path().join("toolgate.db"))
        .unwrap()
        .list(&toolgate_store::AuditFilter::new().verdict(toolgate_store::AuditVerdict::Checkpoint))
        .unwrap();
    assert!(!logged.is_empty(), "no checkpoint in the log");
    let text = std::fs::read_to_string(&sink).unwrap();
    assert!(text.ends_with('\n'), "{text:?}");
    let _ = stop.send(());
    let _ = server.await;
    let store = SqliteOptions::new()
        .open(dir.path().join("toolgate.db"))
        .unwrap();
    let public = toolgate_store::CheckpointKey::from_file(&key)
        .unwrap()
        .verifying();
    let report = toolgate_store::verify_checkpoints(&store, &public, &text).unwrap();
    assert_eq!(report.checked, 1);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let page = store
        .list(&toolgate_store::AuditFilter::new().verdict(toolgate_store::AuditVerdict::Checkpoint))
        .unwrap();
    assert_eq!(page.len(), 1);
}
