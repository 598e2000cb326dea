//! An approval is bound to the upstream its call goes to (the context's
//! `upstream`, set by the MCP proxy) and names it, on both backends: the
//! same user, session, tool and arguments routed to another upstream (or
//! to none) are not covered by it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::Arc;
use std::time::Duration;

mod common;

use common::Db;
use toolgate::{Context, Format, Gate, Verdict};
use toolgate_store::{ApprovalId, ManualClock, StoreGate, Timestamp};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "refund"
risk = "destructive"
schema_json = '{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"],"additionalProperties":false}'
"#;

fn gate() -> Gate {
    let config =
        toolgate::config::Config::parse(CONFIG, std::path::Path::new("/x/toolgate.toml")).unwrap();
    Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

/// An MCP `tools/call` frame of refund; `id` is its JSON-RPC id.
fn call(id: u32) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"refund","arguments":{{"amount":5}}}}}}"#
    )
    .into_bytes()
}

fn context(upstream: Option<&str>) -> Context {
    let c = Context::new("alice", "s-1", 1);
    match upstream {
        Some(u) => c.with_upstream(u),
        None => c,
    }
}

/// The verdict of one call, and the approval it names.
fn decide(gate: &StoreGate, id: u32, upstream: Option<&str>) -> (Verdict, Option<ApprovalId>) {
    let ds = gate.decide_and_record(&call(id), Format::Mcp, &context(upstream));
    let d = &ds.decisions()[0];
    (
        d.verdict(),
        d.approval().map(|a| a.as_str().parse().unwrap()),
    )
}

fn an_approval_covers_its_upstream_only(db: &Db) {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(1_767_225_600));
    let store: Arc<dyn toolgate_store::Store> = Arc::from(db.open(&clock));
    let gate = StoreGate::new(gate(), Arc::clone(&store))
        .with_clock(Arc::new(clock.clone()))
        .with_approval_expiry(Duration::from_secs(600));

    let (verdict, billing) = decide(&gate, 1, Some("billing"));
    assert_eq!(verdict, Verdict::NeedsApproval);
    let billing = billing.unwrap();
    let asked = store.get_approval(billing).unwrap().unwrap();
    assert_eq!(asked.upstream.as_deref(), Some("billing"));
    store.approve(billing, "bob", "ok").unwrap();

    // Routed elsewhere, or nowhere: not covered, each waits for its own.
    let (verdict, shop) = decide(&gate, 2, Some("shop"));
    assert_eq!(verdict, Verdict::NeedsApproval);
    let shop = shop.unwrap();
    assert_ne!(shop, billing);
    assert_eq!(
        store
            .get_approval(shop)
            .unwrap()
            .unwrap()
            .upstream
            .as_deref(),
        Some("shop")
    );
    let (verdict, plain) = decide(&gate, 3, None);
    assert_eq!(verdict, Verdict::NeedsApproval);
    let plain = plain.unwrap();
    assert!(plain != billing && plain != shop);
    assert_eq!(store.get_approval(plain).unwrap().unwrap().upstream, None);
    assert_eq!(store.get_approval(billing).unwrap().unwrap().uses, 0);

    // Routed to billing: the approval lets it through, once.
    assert_eq!(decide(&gate, 4, Some("billing")).0, Verdict::Allow);
    assert_eq!(store.get_approval(billing).unwrap().unwrap().uses, 1);
}

on_both_backends!(an_approval_covers_its_upstream_only);
