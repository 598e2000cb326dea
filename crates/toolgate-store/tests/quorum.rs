//! The two-person rule, from the attacker's side: an approval requested
//! with a quorum of N is approved only by N distinct approvers (one
//! identity counts once, however often it approves and from whichever
//! replica), never by the call's own user when the quorum says so, and lets
//! its call through only once approved. Each body runs on SQLite and on
//! PostgreSQL (see `common`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::Barrier;
use std::time::Duration;

mod common;

use common::Db;
use toolgate_json::{canonical, Digest};
use toolgate_store::{
    ApprovalId, ApprovalState, AuditFilter, AuditVerdict, ErrorCode, ManualClock, PendingLimits,
    Quorum, Store, Timestamp,
};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);
const ARGS: &str = r#"{"order_id":"o-1","amount":900}"#;

fn digest(json: &str) -> Digest {
    canonical::digest(&toolgate_json::from_str(json).unwrap())
}

fn later(s: u64) -> Timestamp {
    T0.saturating_add(Duration::from_secs(s))
}

/// A pending approval of alice's refund over `args` needing `quorum`.
fn held(store: &dyn Store, args: &str, quorum: Quorum) -> ApprovalId {
    store
        .request_approval_with(
            "alice",
            "s-1",
            "refund",
            &digest(args),
            later(3600),
            PendingLimits::unlimited(),
            Some("agent-token"),
            None,
            quorum,
        )
        .unwrap()
}

fn runs(store: &dyn Store, args: &str, at: u64) -> bool {
    store
        .consume("alice", "s-1", "refund", &digest(args), later(at))
        .unwrap()
        .is_some()
}

fn two_distinct_approvers_are_needed_and_one_approving_twice_counts_once(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    let id = held(&*store, ARGS, Quorum::new(2, false));
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!((a.quorum.approvers, a.votes), (2, 0));

    let a = store.approve(id, "bob", "checked the order").unwrap();
    assert_eq!(a.state, ApprovalState::Pending, "one of two approvers");
    assert_eq!(a.votes, 1);
    assert!(
        !runs(&*store, ARGS, 1),
        "a call never runs below its quorum"
    );

    // Bob again (another token, the page, the CLI: one identity).
    let e = store.approve(id, "bob", "me again").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(
        e.message().contains("already approved by `bob`"),
        "{}",
        e.message()
    );
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!((a.state, a.votes), (ApprovalState::Pending, 1));
    assert!(!runs(&*store, ARGS, 2));

    let a = store.approve(id, "carol", "").unwrap();
    assert_eq!(a.state, ApprovalState::Approved);
    assert_eq!((a.votes, a.decided_by.as_deref()), (2, Some("carol")));
    let votes = store.approval_votes(id).unwrap();
    let who: Vec<&str> = votes.iter().map(|v| v.approver.as_str()).collect();
    assert_eq!(who, ["bob", "carol"]);
    assert_eq!(votes[0].note.as_deref(), Some("checked the order"));

    // Each approval is audited: bob's vote, then carol's grant.
    let voted = store
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalVoted))
        .unwrap();
    assert_eq!(voted.len(), 1);
    assert_eq!(voted[0].entry.actor.as_deref(), Some("bob"));
    assert_eq!(
        voted[0].entry.note.as_deref(),
        Some("1 of 2: checked the order")
    );
    assert_eq!(voted[0].entry.approval, Some(id));
    let granted = store
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalGranted))
        .unwrap();
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0].entry.actor.as_deref(), Some("carol"));

    // Approved: the call runs once; a third approver changes nothing.
    assert!(runs(&*store, ARGS, 3));
    assert!(!runs(&*store, ARGS, 4));
    let e = store.approve(id, "dave", "").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(store.verify().unwrap().is_intact());
}

fn the_calls_own_user_cannot_approve_it_when_the_quorum_says_so(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    let id = held(&*store, ARGS, Quorum::new(1, true));
    let e = store.approve(id, "alice", "my own refund").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(e.message().contains("own"), "{}", e.message());
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!((a.state, a.votes), (ApprovalState::Pending, 0));
    assert!(store.approval_votes(id).unwrap().is_empty());
    assert!(!runs(&*store, ARGS, 1));
    // Someone else may; alone, since one approver is the quorum.
    assert_eq!(
        store.approve(id, "bob", "").unwrap().state,
        ApprovalState::Approved
    );
    assert!(runs(&*store, ARGS, 2));

    // Without `not_own` the user may approve (the operator chose so).
    let other = r#"{"order_id":"o-2","amount":5}"#;
    let id = held(&*store, other, Quorum::new(1, false));
    assert_eq!(
        store.approve(id, "alice", "").unwrap().state,
        ApprovalState::Approved
    );

    // With two needed and `not_own`, the user's vote is refused and does
    // not count towards the two.
    let third = r#"{"order_id":"o-3","amount":7}"#;
    let id = held(&*store, third, Quorum::new(2, true));
    assert_eq!(store.approve(id, "bob", "").unwrap().votes, 1);
    assert!(store.approve(id, "alice", "").is_err());
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!((a.state, a.votes), (ApprovalState::Pending, 1));
}

fn one_denial_denies_and_an_expired_quorum_is_never_reached(db: &Db) {
    let clock = ManualClock::new(T0);
    let store = db.open(&clock);
    let id = held(&*store, ARGS, Quorum::new(3, false));
    store.approve(id, "bob", "").unwrap();
    store.approve(id, "carol", "").unwrap();
    assert_eq!(
        store.deny(id, "dave", "too much").unwrap().state,
        ApprovalState::Denied
    );
    assert_eq!(
        store.approve(id, "erin", "").unwrap_err().code(),
        ErrorCode::Conflict
    );
    assert!(!runs(&*store, ARGS, 1));

    let other = r#"{"order_id":"o-2","amount":5}"#;
    let id = held(&*store, other, Quorum::new(2, false));
    store.approve(id, "bob", "").unwrap();
    clock.set(later(3600));
    let e = store.approve(id, "carol", "").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(e.message().contains("expired"), "{}", e.message());
    assert_eq!(
        store.get_approval(id).unwrap().unwrap().state,
        ApprovalState::Expired
    );
}

fn an_approval_without_a_rule_needs_one_approver(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    let id = store
        .request_approval("alice", "s-1", "refund", &digest(ARGS), later(3600))
        .unwrap();
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!(a.quorum, Quorum::ONE);
    let a = store.approve(id, "alice", "").unwrap();
    assert_eq!((a.state, a.votes), (ApprovalState::Approved, 1));
    assert!(store
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalVoted))
        .unwrap()
        .is_empty());
}

/// Replicas (a store each, one database) approving at the same moment: one
/// approver on every replica counts once; many approvers reach the quorum
/// exactly, and the call runs once.
fn approvals_racing_on_replicas_count_each_approver_once(db: &Db) {
    const REPLICAS: usize = 6;
    let clock = ManualClock::new(T0);
    let stores: Vec<Box<dyn Store>> = (0..REPLICAS).map(|_| db.open(&clock)).collect();
    for round in 0..4 {
        let args = format!(r#"{{"round":{round}}}"#);
        let id = held(&*stores[0], &args, Quorum::new(2, false));

        // Bob approves on every replica at once (two tokens, two pages…).
        let barrier = Barrier::new(REPLICAS);
        let ok: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = stores
                .iter()
                .map(|store| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        match store.approve(id, "bob", "") {
                            Ok(_) => 1,
                            Err(e) => {
                                assert_eq!(e.code(), ErrorCode::Conflict, "{}", e.message());
                                0
                            }
                        }
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(ok, 1, "round {round}: bob counts once");
        let a = stores[0].get_approval(id).unwrap().unwrap();
        assert_eq!(
            (a.state, a.votes),
            (ApprovalState::Pending, 1),
            "round {round}"
        );
        assert!(!runs(&*stores[1], &args, 1));

        // Then everyone else at once: exactly one more vote reaches it.
        let barrier = Barrier::new(REPLICAS);
        let ok: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = stores
                .iter()
                .enumerate()
                .map(|(i, store)| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        usize::from(store.approve(id, &format!("approver-{i}"), "").is_ok())
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(ok, 1, "round {round}: the quorum is reached once");
        let a = stores[0].get_approval(id).unwrap().unwrap();
        assert_eq!(
            (a.state, a.votes),
            (ApprovalState::Approved, 2),
            "round {round}"
        );
        assert_eq!(stores[2].approval_votes(id).unwrap().len(), 2);

        let barrier = Barrier::new(REPLICAS);
        let ran: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = stores
                .iter()
                .map(|store| {
                    let (barrier, args) = (&barrier, &args);
                    scope.spawn(move || {
                        barrier.wait();
                        usize::from(runs(&**store, args, 5))
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(ran, 1, "round {round}: one approval, one call");
    }
    assert!(stores[0].verify().unwrap().is_intact());
}

on_both_backends!(
    two_distinct_approvers_are_needed_and_one_approving_twice_counts_once,
    the_calls_own_user_cannot_approve_it_when_the_quorum_says_so,
    one_denial_denies_and_an_expired_quorum_is_never_reached,
    an_approval_without_a_rule_needs_one_approver,
    approvals_racing_on_replicas_count_each_approver_once,
);
