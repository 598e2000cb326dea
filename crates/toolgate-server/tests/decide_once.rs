#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! `StoreGate::decide_async`, the service's one entry point for "decide,
//! record, then answer": a deny is decided once (the pipeline does not run
//! again to record it), and is written before it is returned, with the
//! response counted, the session's counters and the audit record; an
//! allowed response keeps the one-record path.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use toolgate::config::Config;
use toolgate::{Authorization, Authorizer, AuthzRequest, Code, Context, Format, Gate, Verdict};
use toolgate_store::{ApprovalFilter, ApprovalState, SqliteOptions, Store, StoreGate};

/// Denies `get_order` (not the owner), permits everything else, and counts
/// how often it was asked.
struct Counting(Arc<AtomicUsize>);

impl Authorizer for Counting {
    fn authorize(&self, request: &AuthzRequest<'_>) -> Authorization {
        self.0.fetch_add(1, Ordering::SeqCst);
        if request.tool.name() == "get_order" {
            Authorization::deny(Code::NotOwner, vec!["pol-owner".into()])
        } else {
            Authorization::permit(vec!["pol-any".into()])
        }
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    gate: Arc<StoreGate>,
    asked: Arc<AtomicUsize>,
}

fn fixture(max_turns: u32) -> Fixture {
    let shop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(shop).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let gate = Gate::builder(config.registry().clone())
        .max_turns(max_turns)
        .authorizer(Counting(Arc::clone(&asked)))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteOptions::new().open(dir.path().join("t.db")).unwrap());
    assert!(store.quick_reads(), "the test is about the read-only path");
    let gate = Arc::new(StoreGate::new(gate, Arc::clone(&store)));
    Fixture {
        _dir: dir,
        store,
        gate,
        asked,
    }
}

fn body(name: &str, args: &str, id: &str) -> Vec<u8> {
    toolgate_testkit::openai_tool_calls(&[(id, name, args)]).into_bytes()
}

const ORDER: &str = r#"{"order_id":"ord_1"}"#;
const SEARCH: &str = r#"{"query":"boots","limit":5}"#;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_deny_is_decided_once_and_written_before_it_is_returned() {
    let f = fixture(20);
    let rt = runtime();
    let ctx = Context::new("alice", "s-1", 1);
    let d = rt
        .block_on(
            f.gate
                .decide_async(body("get_order", ORDER, "c1"), Format::Auto, ctx),
        )
        .unwrap();
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    assert_eq!(d.decisions()[0].reasons()[0].code.as_str(), "not_owner");
    // The pipeline ran once: the authorizer was asked once.
    assert_eq!(f.asked.load(Ordering::SeqCst), 1);
    // Written: the audit record, the response counted, the rejection.
    let tail = f.store.tail(10).unwrap();
    assert_eq!(tail.len(), 1, "{tail:?}");
    assert_eq!(tail[0].entry.verdict.as_str(), "deny");
    assert_eq!(tail[0].entry.reasons, ["not_owner"]);
    assert_eq!(f.store.responses("s-1").unwrap(), 1);
    let counters = f.store.session("s-1").unwrap();
    assert_eq!(counters.rejections, 1);
    assert_eq!(counters.consecutive_rejections, 1);
    assert_eq!(f.store.verify().unwrap().broken, None);
}

#[test]
fn an_allow_after_a_deny_clears_the_run_and_each_response_is_counted_once() {
    let f = fixture(20);
    let rt = runtime();
    let deny = rt
        .block_on(f.gate.decide_async(
            body("get_order", ORDER, "c1"),
            Format::Auto,
            Context::new("alice", "s-1", 1),
        ))
        .unwrap();
    assert_eq!(deny.verdict(), Verdict::Deny);
    let allow = rt
        .block_on(f.gate.decide_async(
            body("search", SEARCH, "c2"),
            Format::Auto,
            Context::new("alice", "s-1", 2),
        ))
        .unwrap();
    assert_eq!(allow.verdict(), Verdict::Allow, "{allow:?}");
    assert_eq!(
        f.asked.load(Ordering::SeqCst),
        2,
        "each response decided once"
    );
    assert_eq!(f.store.responses("s-1").unwrap(), 2);
    let counters = f.store.session("s-1").unwrap();
    assert_eq!(counters.rejections, 1);
    assert_eq!(counters.consecutive_rejections, 0, "the allow ends the run");
    assert_eq!(f.store.tail(10).unwrap().len(), 2);
}

#[test]
fn denied_responses_count_toward_the_turn_cap() {
    // Three turns allowed: the fourth response is over the cap whatever the
    // context claims, because denied responses were counted too.
    let f = fixture(3);
    let rt = runtime();
    for i in 1..=3 {
        let d = rt
            .block_on(f.gate.decide_async(
                body("get_order", ORDER, &format!("c{i}")),
                Format::Auto,
                Context::new("alice", "s-1", 1),
            ))
            .unwrap();
        assert_eq!(
            d.decisions()[0].reasons()[0].code.as_str(),
            "not_owner",
            "{d:?}"
        );
    }
    let d = rt
        .block_on(f.gate.decide_async(
            body("search", SEARCH, "c4"),
            Format::Auto,
            Context::new("alice", "s-1", 1),
        ))
        .unwrap();
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    assert_eq!(d.decisions()[0].reasons()[0].code.as_str(), "loop_limit");
    assert_eq!(f.store.responses("s-1").unwrap(), 4);
}

#[test]
fn a_held_call_is_decided_once_with_one_pending_approval_and_concurrent_denies_all_land() {
    let f = fixture(100);
    let rt = runtime();
    let asked = f.asked.load(Ordering::SeqCst);
    let refund = r#"{"order_id":"ord_1","amount_cents":100,"reason":"late"}"#;
    let d = rt
        .block_on(f.gate.decide_async(
            body("refund", refund, "r1"),
            Format::Auto,
            Context::new("alice", "s-2", 1),
        ))
        .unwrap();
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    assert_eq!(
        f.asked.load(Ordering::SeqCst) - asked,
        1,
        "the hold was decided once"
    );
    let id = d.decisions()[0].approval().unwrap().as_str().to_owned();
    let pending = f
        .store
        .list_approvals(&ApprovalFilter::new().state(ApprovalState::Pending))
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id.to_string(), id);
    // Sixteen denies at once in one session: each written, each counted.
    let before = f.asked.load(Ordering::SeqCst);
    let all = rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..16 {
            let gate = Arc::clone(&f.gate);
            tasks.push(tokio::spawn(async move {
                gate.decide_async(
                    body("get_order", ORDER, &format!("g{i}")),
                    Format::Auto,
                    Context::new("alice", "s-3", 1),
                )
                .await
                .unwrap()
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    assert!(all.iter().all(|d| d.verdict() == Verdict::Deny));
    assert_eq!(
        f.asked.load(Ordering::SeqCst) - before,
        16,
        "decided once each"
    );
    assert_eq!(f.store.responses("s-3").unwrap(), 16);
    assert_eq!(f.store.session("s-3").unwrap().rejections, 16);
    assert_eq!(f.store.verify().unwrap().broken, None);
}

#[test]
fn issue_32_a_rate_limit_holds_through_decide_async() {
    let shop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(shop).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let gate = Gate::builder(config.registry().clone())
        .limits([toolgate::limit::Limit::calls(
            "searches",
            &["search"],
            toolgate::limit::Scope::Session,
            2,
            3600,
        )])
        .authorizer(Counting(Arc::clone(&asked)))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteOptions::new().open(dir.path().join("t.db")).unwrap());
    let gate = Arc::new(StoreGate::new(gate, Arc::clone(&store)));
    let rt = runtime();
    let verdicts: Vec<(Verdict, String)> = (0..3)
        .map(|i| {
            let d = rt
                .block_on(gate.decide_async(
                    body("search", SEARCH, &format!("c{i}")),
                    Format::Auto,
                    Context::new("alice", "s-1", 1),
                ))
                .unwrap();
            let d = &d.decisions()[0];
            (d.verdict(), d.feedback().to_owned())
        })
        .collect();
    assert_eq!(verdicts[0].0, Verdict::Allow);
    assert_eq!(verdicts[1].0, Verdict::Allow);
    assert_eq!(verdicts[2].0, Verdict::Deny);
    assert!(
        verdicts[2]
            .1
            .starts_with("denied by toolgate: rate_limited; retry after "),
        "{verdicts:?}"
    );
    let counted = store
        .limit_events(
            "searches/session/s-1",
            toolgate_store::Timestamp::from_unix_seconds(0),
        )
        .unwrap();
    assert_eq!(counted.len(), 2);
}
