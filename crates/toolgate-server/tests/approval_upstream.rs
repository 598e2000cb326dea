//! An approval the MCP proxy requested names the upstream its call goes
//! to: `GET /v1/approvals/{id}`, the list and the page's state show it
//! (`null` for an approval without one).

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
use toolgate_store::{PendingLimits, SqliteOptions, Store, Timestamp};

mod shop_copy;

use shop_copy::{call, s, Fixture, APPROVER};

#[tokio::test]
async fn an_approval_shows_the_upstream_its_call_goes_to() {
    let f = Fixture::new("", "", "");
    let store = SqliteOptions::new()
        .open(f.dir.path().join("toolgate.db"))
        .unwrap();
    let later = Timestamp::from_unix_millis(i64::MAX / 2);
    let routed = store
        .request_approval_within(
            "alice",
            "s-1",
            "refund",
            &Digest::of(b"routed"),
            later,
            PendingLimits::unlimited(),
            None,
            Some("billing"),
        )
        .unwrap();
    let plain = store
        .request_approval("alice", "s-1", "refund", &Digest::of(b"plain"), later)
        .unwrap();

    let (status, v) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{routed}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/upstream"), "billing");
    let (status, v) = call(
        &f.app,
        "GET",
        &format!("/v1/approvals/{plain}"),
        Some(APPROVER),
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(v.pointer("/upstream"), Some(&Value::Null));

    let (status, v) = call(&f.app, "GET", "/v1/approvals", Some(APPROVER), None, "").await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    let listed = v
        .pointer("/approvals")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("a list: {v:?}"));
    let upstreams: Vec<Option<&str>> = listed
        .iter()
        .map(|a| a.pointer("/upstream").and_then(Value::as_str))
        .collect();
    // Newest first.
    assert_eq!(upstreams, [None, Some("billing")]);
}
