//! The two-person rule and what an approver sees, through the service's
//! API, from the attacker's side: one person approving twice under two
//! tokens bound to the same identity, the call's own user approving it, and
//! a call that runs before its quorum.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use axum::http::StatusCode;
use axum::Router;
use sha2::{Digest as _, Sha256};
use toolgate_json::Value;

mod shop_copy;

use shop_copy::{s, Fixture, ADMIN, AGENT, APPROVER};
use toolgate_testkit::shop_dir;

const BOB_LAPTOP: &str = "bob-laptop-secret";
const BOB_PHONE: &str = "bob-phone-secret";
const CAROL: &str = "carol-secret";
const ALICE: &str = "alice-approver-secret";

fn hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The shop with a two-person rule on destructive tools (not the call's
/// own user) and approver tokens: two of bob's, carol's and alice's.
fn fixture() -> Fixture {
    let mut extra = String::from(
        "\n[[approvals.quorum]]\nrisk = \"destructive\"\napprovers = 2\nnot_own = true\n",
    );
    for (token, name, identity) in [
        (BOB_LAPTOP, "bob-laptop", "bob"),
        (BOB_PHONE, "bob-phone", "bob"),
        (CAROL, "carol", "carol"),
        (ALICE, "alice-approver", "alice"),
    ] {
        extra.push_str(&format!(
            "\n[[server.token]]\nname = \"{name}\"\nsha256 = \"{}\"\nrole = \"approver\"\nidentity = \"{identity}\"\n",
            hex(token)
        ));
    }
    Fixture::new("", "", &extra)
}

async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: &str,
    body: Option<&str>,
) -> (StatusCode, Value<'static>) {
    shop_copy::call(
        app,
        method,
        uri,
        Some(token),
        body.map(|_| "application/json"),
        body.unwrap_or_default(),
    )
    .await
}

fn decide_body(response: &str) -> String {
    let text = std::fs::read_to_string(shop_dir().join("responses").join(response)).unwrap();
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(text.into()));
    let ctx = toolgate_json::from_str(
        r#"{"user":"alice","session":"s-1","roles":["customer"],"turn":2,"entities":[]}"#,
    )
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// The refund's verdict and approval id after deciding the shop's response
/// that asks for one.
async fn refund(app: &Router) -> (String, Option<String>) {
    let body = decide_body("openai-refund-needs-approval.json");
    let (status, v) = call(app, "POST", "/v1/decide", AGENT, Some(&body)).await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    let decisions = v.pointer("/decisions").and_then(Value::as_array).unwrap();
    let d = decisions
        .iter()
        .find(|d| d.pointer("/tool").and_then(Value::as_str) == Some("refund"))
        .unwrap();
    (
        s(d, "/verdict").to_owned(),
        d.pointer("/approval")
            .and_then(Value::as_str)
            .map(str::to_owned),
    )
}

fn number(v: &Value<'_>, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or_else(|| panic!("no number at {pointer} in {}", v.to_canonical_string()))
}

#[tokio::test]
async fn two_distinct_approvers_by_identity_and_not_the_calls_own_user() {
    let f = fixture();
    let (verdict, id) = refund(&f.app).await;
    assert_eq!(verdict, "needs_approval");
    let id = id.unwrap();
    let path = format!("/v1/approvals/{id}");

    // What the approver sees: the quorum, the arguments, why it was held
    // and what else the session did.
    let (status, a) = call(&f.app, "GET", &path, APPROVER, None).await;
    assert_eq!(status, StatusCode::OK, "{a:?}");
    assert_eq!(number(&a, "/approvers_needed"), 2);
    assert_eq!(number(&a, "/approvers_so_far"), 0);
    assert_eq!(a.pointer("/not_own"), Some(&Value::Bool(true)));
    assert!(s(&a, "/arguments").contains("ord_1002"), "{a:?}");
    let reasons = a.pointer("/reasons").and_then(Value::as_array).unwrap();
    assert!(!reasons.is_empty(), "why it was held: {a:?}");
    assert!(a.pointer("/policies").and_then(Value::as_array).is_some());
    let recent = a.pointer("/recent").and_then(Value::as_array).unwrap();
    let tools: Vec<&str> = recent.iter().map(|r| s(r, "/tool")).collect();
    assert!(tools.contains(&"get_order"), "{tools:?}");
    assert!(tools.contains(&"refund"), "{tools:?}");
    assert_eq!(s(&recent[0], "/verdict"), "needs_approval", "newest first");
    assert!(a.pointer("/labels").and_then(Value::as_array).is_some());
    assert!(a.pointer("/usage").and_then(Value::as_array).is_some());

    // Bob approves from his laptop: one of two.
    let approve = format!("{path}/approve");
    let (status, a) = call(&f.app, "POST", &approve, BOB_LAPTOP, Some("{}")).await;
    assert_eq!(status, StatusCode::OK, "{a:?}");
    assert_eq!(s(&a, "/state"), "pending");
    assert_eq!(number(&a, "/approvers_so_far"), 1);
    // The call does not run on one approval.
    assert_eq!(refund(&f.app).await.0, "needs_approval");

    // Bob again from his phone (another token, same identity): refused.
    let (status, e) = call(&f.app, "POST", &approve, BOB_PHONE, Some("{}")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{e:?}");
    assert!(s(&e, "/error/message").contains("already approved by `bob`"));

    // Alice approving her own agent's call: refused.
    let (status, e) = call(&f.app, "POST", &approve, ALICE, Some("{}")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{e:?}");
    assert!(s(&e, "/error/message").contains("own"), "{e:?}");
    assert_eq!(refund(&f.app).await.0, "needs_approval");

    // Carol: the second distinct approver; the call runs, once.
    let (status, a) = call(&f.app, "POST", &approve, CAROL, Some(r#"{"note":"ok"}"#)).await;
    assert_eq!(status, StatusCode::OK, "{a:?}");
    assert_eq!(s(&a, "/state"), "approved");
    assert_eq!(s(&a, "/decided_by"), "carol");
    assert_eq!(refund(&f.app).await.0, "allow");

    let (_, a) = call(&f.app, "GET", &path, APPROVER, None).await;
    let approvers: Vec<&str> = a
        .pointer("/approvers")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|v| s(v, "/approver"))
        .collect();
    assert_eq!(approvers, ["bob", "carol"]);

    // Each approval is audited, by identity.
    let (status, page) = call(
        &f.app,
        "GET",
        "/v1/audit?kind=approval&limit=50",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page:?}");
    let records = page.pointer("/records").and_then(Value::as_array).unwrap();
    let voted: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| s(r, "/verdict") == "approval_voted")
        .map(|r| (s(r, "/actor"), s(r, "/note")))
        .collect();
    assert_eq!(voted, [("bob", "1 of 2")]);
    assert!(records
        .iter()
        .any(|r| s(r, "/verdict") == "approval_granted" && s(r, "/actor") == "carol"));
}

#[tokio::test]
async fn a_token_identity_is_checked_like_a_user_name() {
    let extra = "\n[[server.token]]\nname = \"x\"\nsha256 = \"".to_owned()
        + &hex("x")
        + "\"\nrole = \"approver\"\nidentity = \"  \"\n";
    let text = std::fs::read_to_string(shop_dir().join("toolgate.toml")).unwrap();
    let text = shop_copy::with_test_server(&text, "", "", &extra);
    // The core reads the table as written; the edge checks its values, as
    // every front end's load does.
    let config = toolgate::config::Config::parse(&text, shop_dir().join("toolgate.toml")).unwrap();
    let e = toolgate_edge::config::check(&config).unwrap_err();
    assert!(e.to_string().contains("identity"), "{e}");
}
