//! What the policies that held a call read, as the approver sees it
//! through `GET /v1/approvals/{id}` (the page shows the same object;
//! `ui_browser` checks it there): the order's total that made a Cedar
//! policy ask for a human, with an argument the config marks secret
//! redacted, from the attacker's side (the secret never reaches the
//! approver, whatever the policy reads).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use axum::http::StatusCode;
use toolgate::config::Config;
use toolgate_json::Value;

mod shop_copy;

use shop_copy::{s, with_test_server, Fixture, AGENT, APPROVER};

/// The refund's reason (one of the schema's enum), which the config marks
/// secret here.
const SECRET: &str = "damaged";

/// The shop, with refunds of orders over 30.00 held for a human by a
/// policy that also reads the refund's `reason`, which the config marks
/// secret.
fn fixture() -> Fixture {
    let (dir, config) = configured("", "");
    Fixture::on(dir, &config)
}

/// [`fixture`]'s folder and config, with `server_extra` in `[server]` and
/// `extra` tables added.
fn configured(server_extra: &str, extra: &str) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let mut policies = std::fs::read_to_string(dir.path().join("policies.cedar")).unwrap();
    policies.push_str(
        "\n@id(\"big-refunds-need-a-human\")\n@approval(\"required\")\n\
         forbid(principal, action == Action::\"refund\", resource)\n\
         when { resource.total_cents > 3000 && context.args.reason != \"\" };\n",
    );
    std::fs::write(dir.path().join("policies.cedar"), policies).unwrap();
    let path = dir.path().join("toolgate.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace(
        "redact = []                   # no secret arguments",
        "redact = [\"/reason\"]",
    );
    let text = with_test_server(&text, server_extra, "", extra);
    std::fs::write(&path, &text).unwrap();
    let config = Config::load(&path).unwrap();
    (dir, config)
}

fn decide_body(user: &str, order: &str, cents: u32) -> String {
    let args = format!(r#"{{"order_id":"{order}","amount_cents":{cents},"reason":"{SECRET}"}}"#);
    let mut call = toolgate_json::Object::new();
    call.insert("name", Value::String("refund".into()));
    call.insert("arguments", Value::String(args.into()));
    let response = format!(
        r#"{{"id":"chatcmpl-f-1","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_refund_f","type":"function","function":{}}}]}}}}]}}"#,
        toolgate_json::canonical::to_string(&Value::Object(call))
    );
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(response.into()));
    let ctx = format!(r#"{{"user":"{user}","session":"s-f","turn":2,"entities":[]}}"#);
    o.insert(
        "context",
        toolgate_json::from_str(&ctx).unwrap().into_owned(),
    );
    toolgate_json::canonical::to_string(&Value::Object(o))
}

#[tokio::test]
async fn the_approver_sees_the_total_that_held_the_refund_and_not_the_secret() {
    let f = fixture();
    // alice refunds 1.00 of her order ord_1001 (total 49.99): the policy
    // holds it for a human because of the total.
    let (status, v) = shop_copy::call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body("alice", "ord_1001", 100),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/decisions/0/verdict"), "needs_approval", "{v:?}");
    let model_sees = v.to_canonical_string();
    assert!(!model_sees.contains("4999"), "{model_sees}");
    assert!(!model_sees.contains("total_cents"), "{model_sees}");
    let id = s(&v, "/decisions/0/approval").to_owned();

    let (status, a) = shop_copy::call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{id}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{a:?}");
    assert_eq!(s(&a, "/policies/0"), "big-refunds-need-a-human");
    let facts = a.pointer("/facts").map(Value::to_canonical_string);
    assert_eq!(
        facts.as_deref(),
        Some(
            r#"[{"path":"resource.total_cents","value":"4999"},{"path":"context.args.reason","value":"[redacted]"}]"#
        )
    );
    let shown = a.to_canonical_string();
    assert!(!shown.contains(SECRET), "{shown}");

    // A refund of a smaller order (25.99) is not held by the policy (only
    // by the tool's risk): no facts.
    let (_, v) = shop_copy::call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body("alice", "ord_1002", 100),
    )
    .await;
    assert_eq!(s(&v, "/decisions/0/verdict"), "needs_approval", "{v:?}");
    let other = s(&v, "/decisions/0/approval").to_owned();
    let (_, a) = shop_copy::call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{other}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(
        a.pointer("/facts")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("[]")
    );
}

/// A Slack-compatible receiver on a port of its own: its URL, and the
/// bodies it received.
async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handler = move |body: axum::body::Bytes| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(body.to_vec());
            StatusCode::OK
        }
    };
    let app = axum::Router::new().route("/hook", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

#[tokio::test]
async fn the_notice_says_what_the_policy_read_and_not_the_secret() {
    let (url, mut got) = receiver().await;
    // The store is polled once a minute: the notice goes out when the
    // decision that held the call, facts kept, wakes the sender.
    let (_dir, config) = configured(
        "store_poll_ms = 60000",
        &format!("\n[[approvals.notify]]\nname = \"chat\"\nkind = \"slack\"\nurl = \"{url}\"\n"),
    );
    let state = toolgate_server::AppState::from_config(&config).unwrap();
    let app = toolgate_server::app(state.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let sender = tokio::spawn(toolgate_server::notify::run(state, stop_rx));
    let (status, v) = shop_copy::call(
        &app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body("alice", "ord_1001", 100),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/decisions/0/verdict"), "needs_approval", "{v:?}");
    let body = tokio::time::timeout(std::time::Duration::from_secs(30), got.recv())
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains("Policy read: `resource.total_cents` = `4999`"),
        "{text}"
    );
    assert!(
        text.contains("Policy read: `context.args.reason` = `[redacted]`"),
        "{text}"
    );
    assert!(!text.contains(SECRET), "{text}");
    stop_tx.send(true).unwrap();
    sender.await.unwrap();
}
