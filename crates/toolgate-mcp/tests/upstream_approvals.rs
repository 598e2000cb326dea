//! An approval names the upstream its call goes to, and covers the call
//! there only: the attacker's move is a human's approval of `refund` for
//! one upstream reused for the same tool name, arguments and definition
//! routed to another upstream (another proxy sharing the store, in the
//! same user's session).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::Arc;
use std::time::Duration;

use toolgate::config::{Config, PinFirst};
use toolgate_json::Value;
use toolgate_mcp::{Ended, Proxy, ProxyOptions};
use toolgate_store::{
    open_config_store, ApprovalFilter, ApprovalId, ApprovalState, StoreGate, StoreOptions,
};

mod in_process;

use in_process::{json, recv, send, Ends};

const CONFIG: &str = r#"
[store]
url = "sqlite::memory:"

[authorization]
mode = "none"

[[tool]]
name = "refund"
risk = "destructive"
schema = { type = "object", properties = { amount = { type = "integer" } }, required = ["amount"], additionalProperties = false }
"#;

/// Both upstreams list the same definition, so the pins cannot tell them
/// apart: only the route can.
const TOOLS: &str = r#"[{"name":"refund","inputSchema":{"type":"object"}}]"#;

fn start(gate: &Arc<StoreGate>, upstream: &str) -> Ends {
    in_process::start(
        Proxy::with_gate(
            Arc::clone(gate),
            "alice",
            "s-1",
            ProxyOptions::default().with_call_timeout(Duration::from_secs(10)),
        )
        .with_pins(upstream, PinFirst::Trust),
    )
}

/// The client lists the tools (the catalog is pinned under the proxy's
/// upstream on first use).
async fn list(e: &mut Ends) {
    in_process::list(e, TOOLS).await;
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":5}}}"#;

/// The approval id of a held call's answer.
fn held_id(answer: &str) -> ApprovalId {
    let v = json(answer);
    let text = v
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("a held call's text: {answer}"));
    let rest = text
        .strip_prefix("held by toolgate for human approval: approval ")
        .unwrap_or_else(|| panic!("held, not {text}"));
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_for_one_upstream_releases_nothing_routed_to_another() {
    let gate = in_process::shared_gate(CONFIG);

    // Through upstream `billing` the call is held; the approval names it.
    let mut billing = start(&gate, "billing");
    list(&mut billing).await;
    send(&mut billing.to_proxy, CALL).await;
    let first = held_id(&recv(&mut billing.from_proxy).await);
    let asked = gate.store().get_approval(first).unwrap().unwrap();
    assert_eq!(asked.upstream.as_deref(), Some("billing"));
    gate.store().approve(first, "bob", "ok").unwrap();

    // The same call routed to upstream `shop`: the approval for `billing`
    // does not cover it; it is held again, under its own approval.
    let mut shop = start(&gate, "shop");
    list(&mut shop).await;
    send(&mut shop.to_proxy, CALL).await;
    let second = held_id(&recv(&mut shop.from_proxy).await);
    assert_ne!(second, first);
    let other = gate.store().get_approval(second).unwrap().unwrap();
    assert_eq!(other.upstream.as_deref(), Some("shop"));
    assert_eq!(other.state, ApprovalState::Pending);
    let first_now = gate.store().get_approval(first).unwrap().unwrap();
    assert_eq!(first_now.uses, 0, "the approval for billing was not used");
    // Nothing reached shop's server: its next line is the client's ping.
    send(
        &mut shop.to_proxy,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut shop.server_in).await,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
    );

    // Through billing the approval lets the call through, once.
    send(&mut billing.to_proxy, CALL).await;
    assert_eq!(
        recv(&mut billing.server_in).await,
        r#"{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"amount":5},"name":"refund"}}"#
    );
    assert_eq!(gate.store().get_approval(first).unwrap().unwrap().uses, 1);

    // Listing by state shows both, each with its upstream.
    let pending = gate
        .store()
        .list_approvals(&ApprovalFilter::new().state(ApprovalState::Pending))
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].upstream.as_deref(), Some("shop"));

    drop(billing.to_proxy);
    drop(shop.to_proxy);
    assert_eq!(billing.run.await.unwrap(), Ended::ClientClosed);
    assert_eq!(shop.run.await.unwrap(), Ended::ClientClosed);
}

/// Now plus `s` seconds, as the gate's clock reads it.
fn from_now(s: u64) -> toolgate_store::Timestamp {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    toolgate_store::Timestamp::from_unix_millis(i64::try_from(now.as_millis()).unwrap())
        .saturating_add(Duration::from_secs(s))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standing_grant_for_one_upstream_releases_nothing_routed_to_another() {
    let config = Config::parse(CONFIG, "toolgate.toml").unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = Arc::new(StoreGate::from_config(&config, store).unwrap());
    // A human grants `refund` to alice for upstream `billing`, and an
    // unbound grant (as for the API proxy) too.
    let grant = gate
        .store()
        .grant_standing_for(
            "alice",
            "refund",
            Some("billing"),
            from_now(3600),
            "bob",
            "",
        )
        .unwrap();
    let unbound = gate
        .store()
        .grant_standing("alice", "refund", from_now(3600), "bob", "")
        .unwrap();
    assert_eq!(
        gate.store()
            .get_approval(grant)
            .unwrap()
            .unwrap()
            .upstream
            .as_deref(),
        Some("billing")
    );

    // Routed to `shop`: neither grant covers it; it is held.
    let mut shop = start(&gate, "shop");
    list(&mut shop).await;
    send(&mut shop.to_proxy, CALL).await;
    let held = held_id(&recv(&mut shop.from_proxy).await);
    let asked = gate.store().get_approval(held).unwrap().unwrap();
    assert_eq!(asked.upstream.as_deref(), Some("shop"));
    send(
        &mut shop.to_proxy,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .await;
    assert_eq!(
        recv(&mut shop.server_in).await,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        "nothing reached shop's server"
    );

    // Routed to `billing`: the grant for billing lets it through.
    let mut billing = start(&gate, "billing");
    list(&mut billing).await;
    send(&mut billing.to_proxy, CALL).await;
    assert_eq!(
        recv(&mut billing.server_in).await,
        r#"{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"amount":5},"name":"refund"}}"#
    );
    assert_eq!(gate.store().get_approval(grant).unwrap().unwrap().uses, 1);
    assert_eq!(gate.store().get_approval(unbound).unwrap().unwrap().uses, 0);

    drop(billing.to_proxy);
    drop(shop.to_proxy);
    assert_eq!(billing.run.await.unwrap(), Ended::ClientClosed);
    assert_eq!(shop.run.await.unwrap(), Ended::ClientClosed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxys_caller_is_the_requester_its_pending_cap_counts() {
    let config = Config::parse(
        &format!("{CONFIG}\n[approvals]\nmax_pending_per_token = 1\n"),
        "toolgate.toml",
    )
    .unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    let gate = Arc::new(StoreGate::from_config(&config, store).unwrap());
    let mut e = start(&gate, "billing");
    list(&mut e).await;
    send(&mut e.to_proxy, CALL).await;
    held_id(&recv(&mut e.from_proxy).await);
    // A second held call of the same caller is past its cap of one.
    send(
        &mut e.to_proxy,
        &CALL.replace(r#""id":1"#, r#""id":2"#).replace("5}", "6}"),
    )
    .await;
    let second = recv(&mut e.from_proxy).await;
    assert!(second.contains("approval_queue_full"), "{second}");
    drop(e.to_proxy);
    assert_eq!(e.run.await.unwrap(), Ended::ClientClosed);
}
