//! Rate limits, budgets and session labels on a store (issue 32): counted
//! in the audit record's transaction, atomic across replicas, exact
//! decimal sums, windows judged by the store gate's manual clock. Every
//! body runs on SQLite and on PostgreSQL.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::Db;
use toolgate::config::Config;
use toolgate::{Context, Decisions, Format, Verdict};
use toolgate_json::{canonical, Value};
use toolgate_store::{AuditFilter, AuditVerdict as AV, ManualClock, Store, StoreGate, Timestamp};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "search"
risk = "read"
labels = ["untrusted_content"]
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}'

[[tool]]
name = "refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number","minimum":0}},"required":["order_id","amount"],"additionalProperties":false}'

[[tool]]
name = "big_refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"amount":{"type":"number","minimum":0}},"required":["amount"],"additionalProperties":false}'

[[limit]]
name = "searches"
tools = ["search"]
per = "user"
calls = 3
window_seconds = 60

[[limit]]
name = "refund_total"
tools = ["refund"]
per = "user"
sum = "/amount"
max = "100.00"
window_seconds = 3600

[[limit]]
name = "big_total"
tools = ["big_refund"]
per = "session"
sum = "/amount"
max = "10"
over = "approval"
window_seconds = 3600
"#;

const T0: i64 = 1_767_225_600;

fn config() -> Config {
    Config::parse(CONFIG, Path::new("/nonexistent/toolgate.toml")).unwrap()
}

fn clock() -> ManualClock {
    ManualClock::new(Timestamp::from_unix_seconds(T0))
}

fn store_gate(store: Box<dyn Store>, clock: &ManualClock) -> StoreGate {
    StoreGate::from_config(&config(), Arc::from(store))
        .unwrap()
        .with_clock(Arc::new(clock.clone()))
}

fn body(calls: &[(&str, &str)]) -> Vec<u8> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, args)| {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let args = canonical::to_string(&Value::String(Cow::Borrowed(args)));
            format!(
                r#"{{"id":"call_{i}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    )
    .into_bytes()
}

fn decide(g: &StoreGate, user: &str, session: &str, calls: &[(&str, &str)]) -> Decisions {
    g.decide_and_record(&body(calls), Format::Auto, &Context::new(user, session, 1))
}

fn one(d: &Decisions) -> (Verdict, Vec<&str>, &str) {
    let d = &d.decisions()[0];
    (
        d.verdict(),
        d.reasons().iter().map(|r| r.code.as_str()).collect(),
        d.feedback(),
    )
}

/// A rate limit per user: the fourth search in a minute is denied
/// `rate_limited` with when to retry (from the user's own calls); another
/// user is not affected; at the window's edge (the manual clock) the first
/// call slides out and a retry succeeds exactly when the feedback said.
fn a_rate_limit_counts_per_user_and_frees_up_at_the_window_edge(db: &Db) {
    let clock = clock();
    let g = store_gate(db.open(&clock), &clock);
    for i in 0..3 {
        assert_eq!(
            one(&decide(&g, "alice", "s1", &[("search", r#"{"q":"a"}"#)])).0,
            Verdict::Allow
        );
        clock.advance(Duration::from_secs(10 + i));
    }
    // t0 + 33 s: three searches at t0, t0+10, t0+21.
    let d = decide(&g, "alice", "s2", &[("search", r#"{"q":"a"}"#)]);
    let (verdict, reasons, feedback) = one(&d);
    assert_eq!((verdict, reasons), (Verdict::Deny, vec!["rate_limited"]));
    assert_eq!(
        feedback,
        "denied by toolgate: rate_limited; retry after 27 s"
    );
    assert_eq!(d.decisions()[0].retry_after(), Some(27));
    // Another user has a count of their own.
    assert_eq!(
        one(&decide(&g, "bob", "s3", &[("search", r#"{"q":"a"}"#)])).0,
        Verdict::Allow
    );
    // One millisecond before the edge: still limited; at the edge: allowed.
    clock.set(Timestamp::from_unix_millis(T0 * 1000 + 59_999));
    assert_eq!(
        one(&decide(&g, "alice", "s2", &[("search", r#"{"q":"a"}"#)])).1,
        vec!["rate_limited"]
    );
    clock.set(Timestamp::from_unix_seconds(T0 + 60));
    assert_eq!(
        one(&decide(&g, "alice", "s2", &[("search", r#"{"q":"a"}"#)])).0,
        Verdict::Allow
    );
    // Denied calls never counted: exactly one more fits before t0+70.
    assert_eq!(
        one(&decide(&g, "alice", "s2", &[("search", r#"{"q":"a"}"#)])).1,
        vec!["rate_limited"]
    );
}

/// A budget sums the exact decimal amounts: ten refunds of 9.99 and one of
/// 0.10 reach exactly 100.00; 0.01 more is denied `budget_exceeded` at the
/// amount's pointer, also when split across sessions; the audit records
/// the deny.
fn a_budget_sums_exact_decimals_across_sessions(db: &Db) {
    let clock = clock();
    let g = store_gate(db.open(&clock), &clock);
    for i in 0..10 {
        let session = format!("s{i}");
        let d = decide(
            &g,
            "alice",
            &session,
            &[("refund", r#"{"order_id":"o","amount":9.99}"#)],
        );
        assert_eq!(one(&d).0, Verdict::Allow, "refund {i}");
        assert_eq!(d.decisions()[0].charges()[0].amount.to_string(), "9.99");
    }
    let d = decide(
        &g,
        "alice",
        "x",
        &[("refund", r#"{"order_id":"o","amount":0.11}"#)],
    );
    let (verdict, reasons, feedback) = one(&d);
    assert_eq!((verdict, reasons), (Verdict::Deny, vec!["budget_exceeded"]));
    assert_eq!(d.decisions()[0].reasons()[0].pointer, "/amount");
    assert!(feedback.starts_with("denied by toolgate: budget_exceeded at /amount; retry after "));
    assert!(!feedback.contains("0.11"), "{feedback}");
    assert_eq!(
        one(&decide(
            &g,
            "alice",
            "y",
            &[("refund", r#"{"order_id":"o","amount":0.10}"#)]
        ))
        .0,
        Verdict::Allow
    );
    assert_eq!(
        one(&decide(
            &g,
            "alice",
            "z",
            &[("refund", r#"{"order_id":"o","amount":0.01}"#)]
        ))
        .1,
        vec!["budget_exceeded"]
    );
    // Two calls of one response are summed together.
    let d = decide(
        &g,
        "carol",
        "c",
        &[
            ("refund", r#"{"order_id":"o","amount":60}"#),
            ("refund", r#"{"order_id":"p","amount":40.01}"#),
        ],
    );
    let verdicts: Vec<Verdict> = d.decisions().iter().map(|d| d.verdict()).collect();
    assert_eq!(verdicts, [Verdict::Allow, Verdict::Deny]);
    let store = g.store();
    let events = store
        .limit_events("refund_total/user/alice", Timestamp::from_unix_seconds(0))
        .unwrap();
    assert_eq!(events.len(), 11);
    let denied = store
        .list(&AuditFilter::new().verdict(AV::Deny).limit(10))
        .unwrap();
    assert!(denied
        .iter()
        .all(|r| r.entry.reasons == ["budget_exceeded"]));
}

/// A budget with `over = "approval"` holds the call that would exceed it;
/// once approved and used, it runs and counts over the cap.
fn an_approval_budget_holds_and_an_approved_call_counts(db: &Db) {
    let clock = clock();
    let g = store_gate(db.open(&clock), &clock);
    assert_eq!(
        one(&decide(
            &g,
            "alice",
            "s",
            &[("big_refund", r#"{"amount":8}"#)]
        ))
        .0,
        Verdict::Allow
    );
    let d = decide(&g, "alice", "s", &[("big_refund", r#"{"amount":5}"#)]);
    let (verdict, reasons, _) = one(&d);
    assert_eq!(
        (verdict, reasons),
        (Verdict::NeedsApproval, vec!["budget_exceeded"])
    );
    let id: toolgate_store::ApprovalId = d.decisions()[0]
        .approval()
        .unwrap()
        .as_str()
        .parse()
        .unwrap();
    g.store().approve(id, "bob", "checked").unwrap();
    let d = decide(&g, "alice", "s", &[("big_refund", r#"{"amount":5}"#)]);
    assert_eq!(one(&d).0, Verdict::Allow);
    assert!(!d.decisions()[0].charges()[0].enforce);
    let events = g
        .store()
        .limit_events("big_total/session/s", Timestamp::from_unix_seconds(0))
        .unwrap();
    let total = events
        .iter()
        .fold(toolgate::limit::Amount::ZERO, |s, (_, a)| {
            s.checked_add(*a).unwrap()
        });
    assert_eq!(total.to_string(), "13");
}

/// 50 parallel refunds of 3.00 against a budget of 100.00, through two
/// stores on one database (two replicas, or two processes on one SQLite
/// file): at most 33 run, exactly 33 are counted, and every other is
/// denied `budget_exceeded`, whether the gate's read or the commit found
/// it crossed.
fn no_limit_is_crossed_by_50_parallel_calls_on_two_replicas(db: &Db) {
    let clock = clock();
    let a = store_gate(db.open(&clock), &clock);
    let b = store_gate(db.open(&clock), &clock);
    const CALLS: usize = 50;
    let barrier = Barrier::new(CALLS);
    let verdicts: Vec<(Verdict, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CALLS)
            .map(|i| {
                let (g, barrier) = (if i % 2 == 0 { &a } else { &b }, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let d = decide(
                        g,
                        "alice",
                        &format!("p{i}"),
                        &[("refund", r#"{"order_id":"o","amount":3.00}"#)],
                    );
                    let d = &d.decisions()[0];
                    (
                        d.verdict(),
                        d.reasons()
                            .iter()
                            .map(|r| r.code.as_str().to_owned())
                            .collect(),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let allowed = verdicts
        .iter()
        .filter(|(v, _)| *v == Verdict::Allow)
        .count();
    assert_eq!(allowed, 33, "{verdicts:?}");
    for (v, reasons) in &verdicts {
        if *v != Verdict::Allow {
            assert_eq!(reasons, &["budget_exceeded"], "{verdicts:?}");
        }
    }
    let events = a
        .store()
        .limit_events("refund_total/user/alice", Timestamp::from_unix_seconds(0))
        .unwrap();
    assert_eq!(events.len(), 33);
    let allows = a
        .store()
        .list(&AuditFilter::new().verdict(AV::Allow).limit(100))
        .unwrap();
    assert_eq!(allows.len(), 33);
}

/// A search brings its tool's label into the session, committed with its
/// record; a denied call brings none; another session holds none.
fn labels_are_acquired_by_calls_that_run(db: &Db) {
    let clock = clock();
    let g = store_gate(db.open(&clock), &clock);
    assert!(g.store().session_labels("s").unwrap().is_empty());
    let d = decide(&g, "alice", "s", &[("search", r#"{"q":"x"}"#)]);
    assert_eq!(d.decisions()[0].labels(), ["untrusted_content"]);
    assert_eq!(
        g.store().session_labels("s").unwrap(),
        ["untrusted_content"]
    );
    let d = decide(&g, "alice", "t", &[("search", r#"{"q":1}"#)]);
    assert_eq!(one(&d).0, Verdict::Deny);
    assert!(g.store().session_labels("t").unwrap().is_empty());
}

/// The store judges every charge again when the record commits: records
/// carrying charges the gate judged against no usage at all (as a stale
/// read would) are refused once the cap is reached, written as denies, and
/// their charges are not stored.
fn the_commit_refuses_what_a_stale_read_let_through(db: &Db) {
    let clock = clock();
    let store = db.open(&clock);
    let gate = toolgate::Gate::from_config(&config()).unwrap();
    let mut ctx = Context::new("alice", "s", 1);
    ctx.now = Some(T0.unsigned_abs());
    let d = gate.decide(
        &body(&[("refund", r#"{"order_id":"o","amount":30}"#)]),
        Format::Auto,
        &ctx,
        &ctx,
    );
    let decision = &d.decisions()[0];
    assert_eq!(decision.verdict(), Verdict::Allow);
    let mut refused = Vec::new();
    // Call ids c0..c4, then c0 again: an id is counted once per key.
    for i in [0, 1, 2, 3, 4, 0] {
        let mut entry =
            toolgate_store::AuditEntry::new(Timestamp::from_unix_seconds(T0), AV::Allow)
                .user("alice")
                .session("s")
                .tool("refund");
        entry.charges = decision.charges().to_vec();
        entry.charges[0].call_id = Some(format!("c{i}"));
        entry.labels = vec!["private_data".to_owned()];
        refused.push(store.append(entry).unwrap().refused);
    }
    assert_eq!(
        refused,
        [
            None,
            None,
            None,
            Some("budget_exceeded"),
            Some("budget_exceeded"),
            None
        ]
    );
    let denied = store
        .list(&AuditFilter::new().verdict(AV::Deny).limit(10))
        .unwrap();
    assert_eq!(denied.len(), 2);
    assert_eq!(denied[0].entry.reasons, ["budget_exceeded"]);
    assert_eq!(
        store
            .limit_events("refund_total/user/alice", Timestamp::from_unix_seconds(0))
            .unwrap()
            .len(),
        3
    );
    assert!(store.verify().unwrap().is_intact());
}

/// An operator's reset forgets a key's counted calls, audited
/// `limit_reset` in the same transaction; the user's next call fits again.
fn an_audited_reset_forgets_a_keys_usage(db: &Db) {
    let clock = clock();
    let g = store_gate(db.open(&clock), &clock);
    let full = [("refund", r#"{"order_id":"o","amount":100}"#)];
    assert_eq!(one(&decide(&g, "alice", "s", &full)).0, Verdict::Allow);
    assert_eq!(one(&decide(&g, "alice", "s", &full)).0, Verdict::Deny);
    let n = g
        .store()
        .reset_limit("refund_total/user/alice", "bob", "duplicate order")
        .unwrap();
    assert_eq!(n, 1);
    let resets = g
        .store()
        .list(&AuditFilter::new().verdict(AV::LimitReset))
        .unwrap();
    assert_eq!(resets.len(), 1);
    assert_eq!(resets[0].entry.reasons, ["refund_total/user/alice"]);
    assert_eq!(resets[0].entry.actor.as_deref(), Some("bob"));
    assert_eq!(one(&decide(&g, "alice", "s2", &full)).0, Verdict::Allow);
    assert!(g.store().verify().unwrap().is_intact());
}

on_both_backends!(
    an_audited_reset_forgets_a_keys_usage,
    the_commit_refuses_what_a_stale_read_let_through,
    a_rate_limit_counts_per_user_and_frees_up_at_the_window_edge,
    a_budget_sums_exact_decimals_across_sessions,
    an_approval_budget_holds_and_an_approved_call_counts,
    no_limit_is_crossed_by_50_parallel_calls_on_two_replicas,
    labels_are_acquired_by_calls_that_run,
);

/// The trifecta template: Cedar reads the session's labels and the tool's
/// `egress`. With a store, a session that ran a search (untrusted content)
/// and read an order (private data) has its egress call denied, while a
/// session holding one label is not; without a store, the context's
/// `labels` say the same.
#[test]
fn the_trifecta_rule_denies_egress_after_untrusted_content_and_private_data() {
    trifecta(
        r#"@code("not_authorized")"#,
        Verdict::Deny,
        "not_authorized",
    );
}

/// The template as shipped: `@approval("required")` holds the egress call
/// for a human instead of denying it, in the same places.
#[test]
fn the_trifecta_rule_holds_egress_for_a_human_with_approval_required() {
    trifecta(
        r#"@approval("required")"#,
        Verdict::NeedsApproval,
        "approval_required",
    );
}

/// The trifecta rule with the forbid annotated `annotation`: the egress
/// call of a session holding both labels gets `verdict` with `code`.
fn trifecta(annotation: &str, verdict: Verdict, code: &str) {
    let dir = tempfile::tempdir().unwrap();
    let schema = r#"
entity User;
entity Tool;
action search appliesTo { principal: [User], resource: [Tool],
  context: { args: { q: String }, turn: Long, risk: String, labels: Set<String>, egress: Bool } };
action get_order appliesTo { principal: [User], resource: [Tool],
  context: { args: { id: String }, turn: Long, risk: String, labels: Set<String>, egress: Bool } };
action send_email appliesTo { principal: [User], resource: [Tool],
  context: { args: { to: String }, turn: Long, risk: String, labels: Set<String>, egress: Bool } };
"#;
    let policies = r#"
@id("anyone")
permit(principal, action, resource);

@id("trifecta-egress")
ANNOTATION
forbid(principal, action, resource)
when {
  context.egress &&
  context.labels.contains("untrusted_content") &&
  context.labels.contains("private_data")
};
"#;
    let config = r#"
[authorization]
policies = "p.cedar"
schema = "s.cedarschema"

[[tool]]
name = "search"
risk = "read"
labels = ["untrusted_content"]
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}'

[[tool]]
name = "get_order"
risk = "read"
labels = ["private_data"]
schema_json = '{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}'

[[tool]]
name = "send_email"
risk = "write"
approval = "none"
egress = true
schema_json = '{"type":"object","properties":{"to":{"type":"string"}},"required":["to"],"additionalProperties":false}'
"#;
    std::fs::write(dir.path().join("s.cedarschema"), schema).unwrap();
    std::fs::write(
        dir.path().join("p.cedar"),
        policies.replace("ANNOTATION", annotation),
    )
    .unwrap();
    let path = dir.path().join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let config = Config::load(&path).unwrap();
    let clock = clock();
    let store = toolgate_store::SqliteOptions::new()
        .clock(Arc::new(clock.clone()))
        .open_in_memory()
        .unwrap();
    let g = StoreGate::from_config(&config, Arc::new(store))
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    let email = [("send_email", r#"{"to":"eve@example.com"}"#)];
    assert_eq!(one(&decide(&g, "alice", "s", &email)).0, Verdict::Allow);
    assert_eq!(
        one(&decide(&g, "alice", "s", &[("search", r#"{"q":"x"}"#)])).0,
        Verdict::Allow
    );
    assert_eq!(one(&decide(&g, "alice", "s", &email)).0, Verdict::Allow);
    assert_eq!(
        one(&decide(
            &g,
            "alice",
            "s",
            &[("get_order", r#"{"id":"o1"}"#)]
        ))
        .0,
        Verdict::Allow
    );
    let d = decide(&g, "alice", "s", &email);
    assert_eq!(one(&d).0, verdict);
    assert_eq!(one(&d).1, vec![code]);
    assert_eq!(d.decisions()[0].policies(), ["trifecta-egress"]);
    // Another session holds nothing.
    assert_eq!(one(&decide(&g, "alice", "t", &email)).0, Verdict::Allow);
    // Without a store the context carries the labels.
    let gate = toolgate::Gate::from_config(&config).unwrap();
    let mut ctx = Context::new("alice", "u", 1);
    ctx.labels = vec!["private_data".into()];
    let decided = gate.decide(&body(&email), Format::Auto, &ctx, &ctx);
    assert_eq!(decided.decisions()[0].verdict(), Verdict::Allow);
    ctx.labels.push("untrusted_content".into());
    let decided = gate.decide(&body(&email), Format::Auto, &ctx, &ctx);
    assert_eq!(decided.decisions()[0].verdict(), verdict);
}
