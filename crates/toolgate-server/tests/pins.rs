//! `/v1/pins` (issue 17): the tool definitions MCP servers showed
//! `toolgate mcp`, pinned in the store: listed with their findings and the
//! diff from the approved definition, approved or rejected by an approver
//! (audited with the caller's identity), refused to agents.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use toolgate_json::{Digest, Value};
use toolgate_store::{
    AuditFilter, AuditVerdict, PinFirst, PinState, SeenTool, SqliteOptions, Store,
};

mod shop_copy;

use shop_copy::{s, Fixture, ADMIN, AGENT, APPROVER};

fn seen(def: &str, findings: &[&str]) -> SeenTool {
    SeenTool::new(
        "add",
        Digest::of(def.as_bytes()),
        def,
        findings.iter().map(|f| (*f).to_owned()).collect(),
    )
}

const D1: &str = r#"{"annotations":{"readOnlyHint":true},"description":"Add.","name":"add"}"#;
const D2: &str = r#"{"annotations":{"readOnlyHint":false},"description":"Add.","name":"add"}"#;

async fn call(
    f: &Fixture,
    method: &str,
    uri: &str,
    token: &str,
    body: Option<&str>,
) -> (axum::http::StatusCode, Value<'static>) {
    shop_copy::call(
        &f.app,
        method,
        uri,
        Some(token),
        body.map(|_| "application/json"),
        body.unwrap_or_default(),
    )
    .await
}

#[tokio::test]
async fn approvers_list_read_and_decide_pins_with_a_diff() {
    let f = Fixture::copied(|t| t);
    let store = SqliteOptions::new()
        .open(f.dir.path().join("toolgate.db"))
        .unwrap();
    store
        .observe_catalog(
            "calc",
            &Digest::of(b"c1"),
            &[seen(D1, &[])],
            PinFirst::Trust,
        )
        .unwrap();
    store
        .observe_catalog(
            "calc",
            &Digest::of(b"c2"),
            &[seen(D2, &["hidden:/description:zero_width"])],
            PinFirst::Trust,
        )
        .unwrap();

    // Agents may not read or decide pins.
    let (status, _) = call(&f, "GET", "/v1/pins", AGENT, None).await;
    assert_eq!(status, 403);

    let (status, page) = call(&f, "GET", "/v1/pins", APPROVER, None).await;
    assert_eq!(status, 200, "{}", page.to_canonical_string());
    let pins = page.pointer("/pins").and_then(Value::as_array).unwrap();
    assert_eq!(pins.len(), 1);
    let p = &pins[0];
    let id = s(p, "/id").to_owned();
    assert_eq!(s(p, "/state"), "pending");
    assert_eq!(s(p, "/upstream"), "calc");
    assert_eq!(s(p, "/findings/0"), "hidden:/description:zero_width");
    assert_eq!(s(p, "/diff/members/0/member"), "annotations");
    assert_eq!(s(p, "/diff/members/0/change"), "changed");
    let lines: Vec<String> = p
        .pointer("/diff/lines")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|l| format!("{}{}", s(l, "/op"), s(l, "/text")))
        .collect();
    assert!(
        lines.contains(&"-    \"readOnlyHint\": true".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"+    \"readOnlyHint\": false".to_owned()),
        "{lines:?}"
    );
    assert_eq!(
        p.pointer("/definition/annotations/readOnlyHint"),
        Some(&Value::Bool(false))
    );

    let (status, all) = call(&f, "GET", "/v1/pins?state=all&upstream=calc", ADMIN, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        all.pointer("/pins")
            .and_then(Value::as_array)
            .unwrap()
            .len(),
        2
    );
    let (status, err) = call(&f, "GET", "/v1/pins?state=maybe", APPROVER, None).await;
    assert_eq!(status, 400, "{}", err.to_canonical_string());
    let (status, _) = call(&f, "GET", "/v1/pins?colour=red", APPROVER, None).await;
    assert_eq!(status, 400);
    let (status, _) = call(&f, "GET", "/v1/pins/999999", APPROVER, None).await;
    assert_eq!(status, 404);
    let (status, _) = call(&f, "GET", "/v1/pins/x", APPROVER, None).await;
    assert_eq!(status, 404);

    // Approved by the approver, audited as them; again is a conflict.
    let uri = format!("/v1/pins/{id}/approve");
    let (status, _) = call(&f, "POST", &uri, AGENT, Some(r#"{"note":"x"}"#)).await;
    assert_eq!(status, 403);
    let (status, p) = call(&f, "POST", &uri, APPROVER, Some(r#"{"note":"looked"}"#)).await;
    assert_eq!(status, 200, "{}", p.to_canonical_string());
    assert_eq!(s(&p, "/state"), "approved");
    let (status, _) = call(&f, "POST", &uri, APPROVER, None).await;
    assert_eq!(status, 409);
    assert_eq!(
        store
            .pin_state("calc", "add", &Digest::of(D2.as_bytes()))
            .unwrap(),
        Some(PinState::Approved)
    );
    let (status, p) = call(&f, "POST", &format!("/v1/pins/{id}/reject"), ADMIN, None).await;
    assert_eq!(status, 200);
    assert_eq!(s(&p, "/state"), "rejected");
    let records = store.list(&AuditFilter::new().limit(1000)).unwrap();
    let decided: Vec<(AuditVerdict, Option<&str>)> = records
        .iter()
        .filter(|r| {
            matches!(
                r.entry.verdict,
                AuditVerdict::PinApproved | AuditVerdict::PinRejected
            )
        })
        .map(|r| (r.entry.verdict, r.entry.actor.as_deref()))
        .collect();
    assert_eq!(decided.len(), 3, "{decided:?}");
    assert_eq!(decided[0].1, Some("trust-on-first-use"));
    assert_eq!(decided[1], (AuditVerdict::PinApproved, Some("approver-1")));
    assert_eq!(decided[2].0, AuditVerdict::PinRejected);
}
