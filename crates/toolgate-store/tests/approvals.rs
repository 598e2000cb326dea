//! Approvals bound to (user, session, tool, digest), standing approvals,
//! session counters and the kill switch, on a real SQLite file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::{Arc, Barrier};
use std::time::Duration;

use toolgate_json::{canonical, Digest};
use toolgate_store::{
    ApprovalFilter, ApprovalKind, ApprovalState, AuditFilter, ErrorCode, KillMode, ManualClock,
    SqliteOptions, SqliteStore, Store, Timestamp, Verdict,
};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

fn store(dir: &tempfile::TempDir) -> (SqliteStore, ManualClock) {
    let clock = ManualClock::new(T0);
    let store = SqliteOptions::new()
        .clock(Arc::new(clock.clone()))
        .open(dir.path().join("state.db"))
        .unwrap();
    (store, clock)
}

fn digest(json: &str) -> Digest {
    canonical::digest(&toolgate_json::from_str(json).unwrap())
}

fn later(s: u64) -> Timestamp {
    T0.saturating_add(Duration::from_secs(s))
}

/// An approved single approval for alice/s-1/refund over `args`, valid 1 h.
fn approved(store: &SqliteStore, args: &str) -> toolgate_store::ApprovalId {
    let id = store
        .request_approval("alice", "s-1", "refund", &digest(args), later(3600))
        .unwrap();
    store.approve(id, "bob", "ok").unwrap();
    id
}

const ARGS: &str = r#"{"order_id":"o-1","amount":30}"#;

#[test]
fn approval_lets_exactly_one_identical_call_through() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    let id = approved(&store, ARGS);
    // A reordered-but-equal object has the same digest.
    let same = digest(r#"{"amount":30.0,"order_id":"o-1"}"#);
    let used = store
        .consume("alice", "s-1", "refund", &same, later(10))
        .unwrap()
        .unwrap();
    assert_eq!(used.id, id);
    assert_eq!(used.kind, ApprovalKind::Single);
    // Replay.
    assert!(store
        .consume("alice", "s-1", "refund", &same, later(11))
        .unwrap()
        .is_none());
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!(a.used_at, Some(later(10)));
    assert_eq!(a.uses, 1);
    assert!(!a.is_usable_at(later(12)));
    // The use is audited.
    let used_records = store
        .list(&AuditFilter::new().verdict(Verdict::ApprovalUsed))
        .unwrap();
    assert_eq!(used_records.len(), 1);
    assert_eq!(used_records[0].entry.approval, Some(id));
    assert_eq!(used_records[0].seq, used.seq);
}

#[test]
fn approval_does_not_cover_other_arguments_session_user_or_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    approved(&store, ARGS);
    let d = digest(ARGS);
    let now = later(10);
    // One changed byte of an argument.
    let other = digest(r#"{"order_id":"o-1","amount":31}"#);
    assert!(store
        .consume("alice", "s-1", "refund", &other, now)
        .unwrap()
        .is_none());
    assert!(store
        .consume("alice", "s-2", "refund", &d, now)
        .unwrap()
        .is_none());
    assert!(store
        .consume("mallory", "s-1", "refund", &d, now)
        .unwrap()
        .is_none());
    assert!(store
        .consume("alice", "s-1", "refund_all", &d, now)
        .unwrap()
        .is_none());
    // Still usable by the exact call.
    assert!(store
        .consume("alice", "s-1", "refund", &d, now)
        .unwrap()
        .is_some());
}

#[test]
fn expired_pending_and_denied_approvals_cover_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = store(&dir);
    let d = digest(ARGS);
    approved(&store, ARGS);
    // At the expiry instant (exclusive) and after.
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(3600))
        .unwrap()
        .is_none());

    let d = digest(r#"{"order_id":"o-2"}"#);
    let pending = store
        .request_approval("alice", "s-1", "refund", &d, later(7200))
        .unwrap();
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(10))
        .unwrap()
        .is_none());
    let denied = store.deny(pending, "bob", "no").unwrap();
    assert_eq!(denied.state, ApprovalState::Denied);
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(10))
        .unwrap()
        .is_none());
    assert_eq!(
        store.approve(pending, "bob", "").unwrap_err().code(),
        ErrorCode::Conflict
    );

    // Approving after expiry is refused.
    let late = store
        .request_approval("alice", "s-1", "refund", &d, later(60))
        .unwrap();
    clock.set(later(61));
    assert_eq!(
        store.approve(late, "bob", "").unwrap_err().code(),
        ErrorCode::Conflict
    );
    assert_eq!(
        store
            .approve(toolgate_store::ApprovalId::new(999), "bob", "")
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
}

#[test]
fn an_approved_unused_approval_can_be_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    let id = approved(&store, ARGS);
    store.deny(id, "carol", "changed my mind").unwrap();
    assert!(store
        .consume("alice", "s-1", "refund", &digest(ARGS), later(1))
        .unwrap()
        .is_none());
    // A used one cannot be revoked.
    let id = approved(&store, ARGS);
    store
        .consume("alice", "s-1", "refund", &digest(ARGS), later(1))
        .unwrap()
        .unwrap();
    assert_eq!(
        store.deny(id, "carol", "").unwrap_err().code(),
        ErrorCode::Conflict
    );
}

#[test]
fn double_consume_racing_in_threads_passes_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.db");
    let open = |path: &std::path::Path| {
        SqliteOptions::new()
            .clock(Arc::new(ManualClock::new(T0)))
            .open(path)
            .unwrap()
    };
    let first = open(&path);
    for round in 0..20 {
        let args = format!(r#"{{"round":{round}}}"#);
        let id = first
            .request_approval("alice", "s-1", "refund", &digest(&args), later(3600))
            .unwrap();
        first.approve(id, "bob", "").unwrap();
    }
    // Two threads, each with its own store (connection), as two gates would.
    let barrier = Arc::new(Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            let path = path.clone();
            std::thread::spawn(move || {
                let store = open(&path);
                let mut wins = Vec::new();
                for round in 0..20 {
                    barrier.wait();
                    let d = digest(&format!(r#"{{"round":{round}}}"#));
                    if store
                        .consume("alice", "s-1", "refund", &d, later(5))
                        .unwrap()
                        .is_some()
                    {
                        wins.push(round);
                    }
                }
                wins
            })
        })
        .collect();
    let mut wins: Vec<u32> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    wins.sort_unstable();
    assert_eq!(wins, (0..20).collect::<Vec<_>>());
    assert_eq!(
        first
            .list(&AuditFilter::new().verdict(Verdict::ApprovalUsed))
            .unwrap()
            .len(),
        20
    );
}

#[test]
fn standing_approval_covers_the_tool_until_its_end_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    let id = store
        .grant_standing("alice", "fetch_url", later(100), "bob", "weekly report")
        .unwrap();
    for (i, s) in ["s-1", "s-2", "s-3"].iter().enumerate() {
        let d = digest(&format!(r#"{{"i":{i}}}"#));
        let used = store
            .consume("alice", s, "fetch_url", &d, later(10))
            .unwrap()
            .unwrap();
        assert_eq!((used.id, used.kind), (id, ApprovalKind::Standing));
    }
    let d = digest("{}");
    assert!(store
        .consume("bob", "s-1", "fetch_url", &d, later(10))
        .unwrap()
        .is_none());
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(10))
        .unwrap()
        .is_none());
    assert!(store
        .consume("alice", "s-1", "fetch_url", &d, later(100))
        .unwrap()
        .is_none());
    assert_eq!(store.get_approval(id).unwrap().unwrap().uses, 3);
    let used = store
        .list(&AuditFilter::new().verdict(Verdict::ApprovalUsed))
        .unwrap();
    assert_eq!(used.len(), 3);
    assert!(used
        .iter()
        .all(|r| r.entry.note.as_deref() == Some("standing")));
    // Revoked.
    store.deny(id, "bob", "").unwrap();
    assert!(store
        .consume("alice", "s-9", "fetch_url", &d, later(20))
        .unwrap()
        .is_none());
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn approvals_are_listed_and_decisions_audited() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    let a = approved(&store, ARGS);
    let b = store
        .request_approval("alice", "s-2", "refund", &digest("{}"), later(60))
        .unwrap();
    let c = store
        .request_approval("dave", "s-3", "delete", &digest("{}"), later(60))
        .unwrap();
    let pending = store
        .list_approvals(&ApprovalFilter::new().state(ApprovalState::Pending))
        .unwrap();
    assert_eq!(pending.iter().map(|a| a.id).collect::<Vec<_>>(), [b, c]);
    let alice = store
        .list_approvals(&ApprovalFilter::new().user("alice"))
        .unwrap();
    assert_eq!(alice.len(), 2);
    let page = store
        .list_approvals(&ApprovalFilter::new().after(a).limit(1))
        .unwrap();
    assert_eq!(page.iter().map(|a| a.id).collect::<Vec<_>>(), [b]);
    let got = store.get_approval(a).unwrap().unwrap();
    assert_eq!(got.decided_by.as_deref(), Some("bob"));
    assert_eq!(got.digest, Some(digest(ARGS)));
    let granted = store
        .list(&AuditFilter::new().verdict(Verdict::ApprovalGranted))
        .unwrap();
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0].entry.actor.as_deref(), Some("bob"));
    assert_eq!(granted[0].entry.digest, Some(digest(ARGS)));
}

#[test]
fn session_counters_and_escalation() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = store(&dir);
    let c = store.record_call("s-1", 1, Verdict::Allow, &[]).unwrap();
    assert_eq!((c.turns, c.calls, c.rejections), (1, 1, 0));
    store
        .record_call("s-1", 1, Verdict::Deny, &["not_owner"])
        .unwrap();
    let c = store
        .record_call(
            "s-1",
            2,
            Verdict::Deny,
            &["not_owner", "over_total", "not_owner"],
        )
        .unwrap();
    assert_eq!((c.turns, c.last_turn, c.calls), (2, 2, 3));
    assert_eq!(c.consecutive("not_owner"), 2);
    assert_eq!(c.consecutive("over_total"), 1);
    assert!(!c.is_escalated());
    store
        .record_call("s-1", 2, Verdict::NeedsApproval, &[])
        .unwrap();
    clock.advance(Duration::from_secs(5));
    let c = store
        .record_call("s-1", 3, Verdict::Deny, &["over_total"])
        .unwrap();
    assert_eq!(c.consecutive("not_owner"), 0);
    assert_eq!(c.consecutive("over_total"), 2);
    assert_eq!(c.consecutive_rejections, 3);
    assert_eq!(c.escalated_at, Some(later(5)));
    let c = store.record_call("s-1", 3, Verdict::Allow, &[]).unwrap();
    assert_eq!(c.consecutive_rejections, 0);
    assert!(c.consecutive_by_reason.is_empty());
    assert!(c.is_escalated(), "escalation is for good");
    assert_eq!(store.session("s-1").unwrap(), c);
    assert_eq!(store.session("s-2").unwrap().calls, 0);
    assert_eq!(
        store
            .record_call("s-1", 3, Verdict::KillSwitch, &[])
            .unwrap_err()
            .code(),
        ErrorCode::InvalidInput
    );
}

#[test]
fn escalation_threshold_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteOptions::new()
        .escalate_after(1)
        .open(dir.path().join("s.db"))
        .unwrap();
    assert!(store
        .record_call("s", 1, Verdict::Deny, &["x"])
        .unwrap()
        .is_escalated());
}

#[test]
fn kill_switch_flips_are_stored_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store(&dir);
    assert_eq!(store.kill_switch().unwrap().mode, KillMode::Off);
    let s = store
        .set_kill_switch(KillMode::DenyWrites, "incident 12", "oncall")
        .unwrap();
    assert_eq!(s.mode, KillMode::DenyWrites);
    assert_eq!(s.changed_at, Some(T0));
    let s = store.kill_switch().unwrap();
    assert_eq!(
        (s.reason.as_deref(), s.actor.as_deref()),
        (Some("incident 12"), Some("oncall"))
    );
    store.set_kill_switch(KillMode::Off, "", "oncall").unwrap();
    let flips = store
        .list(&AuditFilter::new().verdict(Verdict::KillSwitch))
        .unwrap();
    assert_eq!(flips.len(), 2);
    assert_eq!(flips[0].entry.reasons, ["deny_writes"]);
    assert_eq!(flips[0].entry.note.as_deref(), Some("incident 12"));
    assert_eq!(flips[1].entry.reasons, ["off"]);
}

#[test]
fn store_is_usable_as_a_trait_object() {
    let store: Arc<dyn Store> = Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(ManualClock::new(T0)))
            .open_in_memory()
            .unwrap(),
    );
    let d = digest(ARGS);
    let id = store
        .request_approval("alice", "s-1", "refund", &d, later(60))
        .unwrap();
    store.approve(id, "bob", "").unwrap();
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(1))
        .unwrap()
        .is_some());
    assert!(store.verify().unwrap().is_intact());
}
