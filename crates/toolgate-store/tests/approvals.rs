//! Approvals bound to (user, session, tool, digest), standing approvals,
//! session counters and the kill switch: each test body runs on a real
//! SQLite file and on a real PostgreSQL database (see `common`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::{Arc, Barrier};
use std::time::Duration;

mod common;

use common::Db;
use toolgate_json::{canonical, Digest};
use toolgate_store::{
    ApprovalFilter, ApprovalKind, ApprovalState, AuditFilter, AuditVerdict, ErrorCode, KillMode,
    ManualClock, PendingLimits, SqliteOptions, Store, Timestamp,
};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

fn store(db: &Db) -> (Box<dyn Store>, ManualClock) {
    let clock = ManualClock::new(T0);
    let store = db.open(&clock);
    (store, clock)
}

fn digest(json: &str) -> Digest {
    canonical::digest(&toolgate_json::from_str(json).unwrap())
}

fn later(s: u64) -> Timestamp {
    T0.saturating_add(Duration::from_secs(s))
}

/// An approved single approval for alice/s-1/refund over `args`, valid 1 h.
fn approved(store: &dyn Store, args: &str) -> toolgate_store::ApprovalId {
    let id = store
        .request_approval("alice", "s-1", "refund", &digest(args), later(3600))
        .unwrap();
    store.approve(id, "bob", "ok").unwrap();
    id
}

const ARGS: &str = r#"{"order_id":"o-1","amount":30}"#;

fn approval_lets_exactly_one_identical_call_through(db: &Db) {
    let (store, _) = store(db);
    let id = approved(&*store, ARGS);
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
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalUsed))
        .unwrap();
    assert_eq!(used_records.len(), 1);
    assert_eq!(used_records[0].entry.approval, Some(id));
    assert_eq!(used_records[0].seq, used.seq);
}

fn approval_does_not_cover_other_arguments_session_user_or_tool(db: &Db) {
    let (store, _) = store(db);
    approved(&*store, ARGS);
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

/// `may_cover` is the read before `consume`: true exactly where `consume`
/// would use something, and it uses nothing.
fn may_cover_reads_what_consume_would_use(db: &Db) {
    let (store, _) = store(db);
    let d = digest(ARGS);
    let may = |user: &str, session: &str, tool: &str, d: &Digest, at: Timestamp| {
        store.may_cover(user, session, tool, d, at).unwrap()
    };
    // Nothing yet; a pending approval covers nothing either.
    assert!(!may("alice", "s-1", "refund", &d, later(10)));
    let id = store
        .request_approval("alice", "s-1", "refund", &d, later(3600))
        .unwrap();
    assert!(!may("alice", "s-1", "refund", &d, later(10)));
    store.approve(id, "bob", "ok").unwrap();
    assert!(may("alice", "s-1", "refund", &d, later(10)));
    // Bound like `consume`: other arguments, session, user, tool; expired.
    let other = digest(r#"{"order_id":"o-1","amount":31}"#);
    assert!(!may("alice", "s-1", "refund", &other, later(10)));
    assert!(!may("alice", "s-2", "refund", &d, later(10)));
    assert!(!may("mallory", "s-1", "refund", &d, later(10)));
    assert!(!may("alice", "s-1", "refund_all", &d, later(10)));
    assert!(!may("alice", "s-1", "refund", &d, later(3600)));
    // Reading used nothing: the call still goes through, once.
    assert!(may("alice", "s-1", "refund", &d, later(10)));
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(10))
        .unwrap()
        .is_some());
    assert!(!may("alice", "s-1", "refund", &d, later(10)));
    // A standing approval covers the user's calls of the tool anywhere.
    store
        .grant_standing("alice", "refund", later(100), "bob", "")
        .unwrap();
    assert!(may("alice", "s-9", "refund", &other, later(10)));
    assert!(!may("alice", "s-9", "refund", &other, later(100)));
    assert!(!may("mallory", "s-9", "refund", &other, later(10)));
}

fn expired_pending_and_denied_approvals_cover_nothing(db: &Db) {
    let (store, clock) = store(db);
    let d = digest(ARGS);
    approved(&*store, ARGS);
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

fn an_approved_unused_approval_can_be_revoked(db: &Db) {
    let (store, _) = store(db);
    let id = approved(&*store, ARGS);
    store.deny(id, "carol", "changed my mind").unwrap();
    assert!(store
        .consume("alice", "s-1", "refund", &digest(ARGS), later(1))
        .unwrap()
        .is_none());
    // A used one cannot be revoked.
    let id = approved(&*store, ARGS);
    store
        .consume("alice", "s-1", "refund", &digest(ARGS), later(1))
        .unwrap()
        .unwrap();
    assert_eq!(
        store.deny(id, "carol", "").unwrap_err().code(),
        ErrorCode::Conflict
    );
}

fn double_consume_racing_in_threads_passes_once(db: &Db) {
    let clock = ManualClock::new(T0);
    let first = db.open(&clock);
    for round in 0..20 {
        let args = format!(r#"{{"round":{round}}}"#);
        let id = first
            .request_approval("alice", "s-1", "refund", &digest(&args), later(3600))
            .unwrap();
        first.approve(id, "bob", "").unwrap();
    }
    // Two threads, each with its own store (connections), as two gates
    // (or two replicas) would.
    let barrier = Barrier::new(2);
    let mut wins: Vec<u32> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let barrier = &barrier;
                let clock = &clock;
                scope.spawn(move || {
                    let store = db.open(clock);
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
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    wins.sort_unstable();
    assert_eq!(wins, (0..20).collect::<Vec<_>>());
    assert_eq!(
        first
            .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalUsed))
            .unwrap()
            .len(),
        20
    );
    assert!(first.verify().unwrap().is_intact());
}

fn standing_approval_covers_the_tool_until_its_end_and_is_audited(db: &Db) {
    let (store, _) = store(db);
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
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalUsed))
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

fn standing_grants_cover_only_their_upstream(db: &Db) {
    let (store, _) = store(db);
    let billing = store
        .grant_standing_for("alice", "refund", Some("billing"), later(100), "bob", "")
        .unwrap();
    let d = digest("{}");
    let used = |upstream: Option<&str>| {
        store
            .consume_routed("alice", "s-1", "refund", &d, upstream, later(10))
            .unwrap()
            .map(|u| u.id)
    };
    assert_eq!(used(Some("shop")), None, "another upstream");
    assert_eq!(used(None), None, "no upstream");
    assert_eq!(used(Some("billing")), Some(billing));
    let a = store.get_approval(billing).unwrap().unwrap();
    assert_eq!((a.upstream.as_deref(), a.uses), (Some("billing"), 1));
    // A grant without an upstream covers calls routed to none only.
    let plain = store
        .grant_standing("alice", "refund", later(100), "bob", "")
        .unwrap();
    assert_eq!(used(Some("shop")), None);
    assert_eq!(used(None), Some(plain));
    assert_eq!(store.get_approval(plain).unwrap().unwrap().upstream, None);
    let granted = store
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalGranted))
        .unwrap();
    assert_eq!(granted[0].entry.note.as_deref(), Some("upstream billing"));
    assert!(store.verify().unwrap().is_intact());
}

fn approvals_are_listed_and_decisions_audited(db: &Db) {
    let (store, _) = store(db);
    let a = approved(&*store, ARGS);
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
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalGranted))
        .unwrap();
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0].entry.actor.as_deref(), Some("bob"));
    assert_eq!(granted[0].entry.digest, Some(digest(ARGS)));
}

fn session_counters_and_escalation(db: &Db) {
    let (store, clock) = store(db);
    let c = store
        .record_call("s-1", 1, AuditVerdict::Allow, &[])
        .unwrap();
    assert_eq!((c.turns, c.calls, c.rejections), (1, 1, 0));
    store
        .record_call("s-1", 1, AuditVerdict::Deny, &["not_owner"])
        .unwrap();
    let c = store
        .record_call(
            "s-1",
            2,
            AuditVerdict::Deny,
            &["not_owner", "over_total", "not_owner"],
        )
        .unwrap();
    assert_eq!((c.turns, c.last_turn, c.calls), (2, 2, 3));
    assert_eq!(c.consecutive("not_owner"), 2);
    assert_eq!(c.consecutive("over_total"), 1);
    assert!(!c.is_escalated());
    store
        .record_call("s-1", 2, AuditVerdict::NeedsApproval, &[])
        .unwrap();
    clock.advance(Duration::from_secs(5));
    let c = store
        .record_call("s-1", 3, AuditVerdict::Deny, &["over_total"])
        .unwrap();
    assert_eq!(c.consecutive("not_owner"), 0);
    assert_eq!(c.consecutive("over_total"), 2);
    assert_eq!(c.consecutive_rejections, 3);
    assert_eq!(c.escalated_at, Some(later(5)));
    let c = store
        .record_call("s-1", 3, AuditVerdict::Allow, &[])
        .unwrap();
    assert_eq!(c.consecutive_rejections, 0);
    assert!(c.consecutive_by_reason.is_empty());
    assert!(c.is_escalated(), "escalation is for good");
    assert_eq!(store.session("s-1").unwrap(), c);
    assert_eq!(store.session("s-2").unwrap().calls, 0);
    assert_eq!(
        store
            .record_call("s-1", 3, AuditVerdict::KillSwitch, &[])
            .unwrap_err()
            .code(),
        ErrorCode::InvalidInput
    );
}

fn escalation_threshold_is_configurable(db: &Db) {
    let store = db.open_with(&ManualClock::new(T0), 1);
    assert!(store
        .record_call("s", 1, AuditVerdict::Deny, &["x"])
        .unwrap()
        .is_escalated());
}

fn kill_switch_flips_are_stored_and_audited(db: &Db) {
    let (store, _) = store(db);
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
        .list(&AuditFilter::new().verdict(AuditVerdict::KillSwitch))
        .unwrap();
    assert_eq!(flips.len(), 2);
    assert_eq!(flips[0].entry.reasons, ["deny_writes"]);
    assert_eq!(flips[0].entry.note.as_deref(), Some("incident 12"));
    assert_eq!(flips[1].entry.reasons, ["off"]);
}

#[test]
fn sqlite_store_is_usable_as_a_trait_object() {
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

/// Issue 13 item 3: identical held calls arriving at the same moment, on
/// as many stores (connections, replicas) as threads, get one pending
/// approval; approved once, it lets the call through once.
fn identical_held_calls_racing_share_one_pending_approval(db: &Db) {
    const THREADS: usize = 8;
    let clock = ManualClock::new(T0);
    let stores: Vec<Box<dyn Store>> = (0..THREADS).map(|_| db.open(&clock)).collect();
    for round in 0..8 {
        let d = digest(&format!(r#"{{"round":{round}}}"#));
        let barrier = Barrier::new(THREADS);
        let ids: Vec<_> = std::thread::scope(|scope| {
            let workers: Vec<_> = stores
                .iter()
                .map(|store| {
                    let (barrier, d) = (&barrier, &d);
                    scope.spawn(move || {
                        barrier.wait();
                        store
                            .request_approval("alice", "s-1", "refund", d, later(3600))
                            .unwrap()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| *id == ids[0]), "round {round}: {ids:?}");
        let pending = ApprovalFilter::new()
            .state(ApprovalState::Pending)
            .session("s-1");
        let listed = stores[0].list_approvals(&pending).unwrap();
        assert_eq!(listed.len(), 1, "round {round}");
        assert_eq!(stores[0].count_approvals(&pending).unwrap(), 1);
        stores[0].approve(ids[0], "bob", "").unwrap();
        let barrier = Barrier::new(THREADS);
        let used: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = stores
                .iter()
                .map(|store| {
                    let (barrier, d) = (&barrier, &d);
                    scope.spawn(move || {
                        barrier.wait();
                        store
                            .consume("alice", "s-1", "refund", d, later(5))
                            .unwrap()
                            .is_some()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| usize::from(w.join().unwrap()))
                .sum()
        });
        assert_eq!(used, 1, "round {round}: one approval, one allowed call");
    }
    assert!(stores[0].verify().unwrap().is_intact());
}

/// Issue 13 item 8: pending approvals are capped per session and per user
/// (the same call asked again is not a new one); expired ones count for
/// nothing and read as expired.
fn pending_approvals_are_capped_and_expire_everywhere(db: &Db) {
    let (store, clock) = store(db);
    let limits = PendingLimits::new(2, 3);
    let ask = |session: &str, n: u32| {
        use toolgate_store::Clock as _;
        store.request_approval_within(
            "alice",
            session,
            "refund",
            &digest(&format!(r#"{{"n":{n}}}"#)),
            clock.now().saturating_add(Duration::from_secs(600)),
            limits,
            None,
            None,
        )
    };
    let first = ask("s-1", 1).unwrap();
    ask("s-1", 2).unwrap();
    let full = ask("s-1", 3).unwrap_err();
    assert_eq!(full.code(), ErrorCode::QueueFull);
    assert_eq!(full.code().as_str(), "approval_queue_full");
    // The same call again is the approval it already has.
    assert_eq!(ask("s-1", 1).unwrap(), first);
    ask("s-2", 4).unwrap();
    assert_eq!(ask("s-3", 5).unwrap_err().code(), ErrorCode::QueueFull);
    // Another user has a queue of their own.
    store
        .request_approval_within(
            "dave",
            "s-9",
            "refund",
            &digest("{}"),
            later(600),
            limits,
            None,
            None,
        )
        .unwrap();
    // A decided one frees its place.
    store.deny(first, "bob", "").unwrap();
    ask("s-1", 3).unwrap();
    let pending = ApprovalFilter::new().state(ApprovalState::Pending);
    assert_eq!(store.count_approvals(&pending).unwrap(), 4);
    // Newest first, with the true count.
    let newest = store
        .list_approvals(&pending.clone().newest_first().limit(2))
        .unwrap();
    assert_eq!(newest.len(), 2);
    assert!(newest[0].id > newest[1].id);
    assert_eq!(newest[0].user, "alice");
    let older = store
        .list_approvals(&pending.clone().newest_first().before(newest[1].id))
        .unwrap();
    assert_eq!(older.len(), 2);
    assert!(older[0].id < newest[1].id);

    // Past their expiry, pending approvals are expired: not listed, not
    // counted, not in anyone's cap, and a new one can be asked for.
    clock.set(later(600));
    assert_eq!(store.count_approvals(&pending).unwrap(), 0);
    assert!(store.list_approvals(&pending).unwrap().is_empty());
    let expired = ApprovalFilter::new().state(ApprovalState::Expired);
    assert_eq!(store.count_approvals(&expired).unwrap(), 4);
    assert!(store
        .list_approvals(&expired)
        .unwrap()
        .iter()
        .all(|a| a.state == ApprovalState::Expired));
    let old = newest[0].id;
    assert_eq!(
        store.get_approval(old).unwrap().unwrap().state,
        ApprovalState::Expired
    );
    let again = ask("s-1", 3).unwrap();
    assert_ne!(again, old, "an expired approval is not handed out again");
    ask("s-1", 1).unwrap();
    assert_eq!(store.count_approvals(&pending).unwrap(), 2);
    assert_eq!(
        store.get_approval(old).unwrap().unwrap().state,
        ApprovalState::Expired
    );
}

/// Issue 29, item 4: one agent token naming a new user on each call made
/// 20,000 pending approvals in 42 s; the per-session and per-user caps
/// never saw it. The approvals one requester asked for are capped too,
/// whatever users it names, also when its requests race from threads;
/// another requester keeps its own queue, and a decided one frees a place.
fn issue_29_4_pending_approvals_are_capped_per_requester(db: &Db) {
    let (store, _clock) = store(db);
    let limits = PendingLimits::new(20, 100).with_per_requester(12);
    let ask = |requester: &str, user: &str, n: u32| {
        store.request_approval_within(
            user,
            "s-1",
            "refund",
            &digest(&format!(r#"{{"n":{n}}}"#)),
            later(600),
            limits,
            Some(requester),
            None,
        )
    };
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|t| {
                let ask = &ask;
                s.spawn(move || {
                    (0..10u32)
                        .map(|i| ask("flood", &format!("user-{t}-{i}"), t * 100 + i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let granted: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(granted.len(), 12);
    assert!(results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .all(|e| e.code() == ErrorCode::QueueFull));
    // Another requester (and a caller without one) are not held back.
    ask("reviewer", "carol", 1).unwrap();
    store
        .request_approval("carol", "s-2", "refund", &digest("{}"), later(600))
        .unwrap();
    // A decided approval frees a place.
    store.deny(*granted[0], "bob", "").unwrap();
    ask("flood", "user-new", 999).unwrap();
    assert_eq!(
        ask("flood", "user-newer", 1000).unwrap_err().code(),
        ErrorCode::QueueFull
    );
}

/// A pending approval whose call is gone is withdrawn (audited); a human's
/// approval afterwards is refused and covers nothing, and only a pending
/// approval can be withdrawn.
fn a_withdrawn_approval_is_never_approved_or_used(db: &Db) {
    let (store, _) = store(db);
    let d = digest(ARGS);
    let id = store
        .request_approval("alice", "s-1", "refund", &d, later(3600))
        .unwrap();
    let withdrawn = store
        .withdraw(id, "toolgate mcp", "the client cancelled the call")
        .unwrap();
    assert_eq!(withdrawn.state, ApprovalState::Withdrawn);
    assert_eq!(withdrawn.decided_by.as_deref(), Some("toolgate mcp"));
    let e = store.approve(id, "bob", "").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(e.message().contains("withdrawn"), "{}", e.message());
    assert!(store
        .consume("alice", "s-1", "refund", &d, later(10))
        .unwrap()
        .is_none());
    assert_eq!(
        store.withdraw(id, "toolgate mcp", "").unwrap_err().code(),
        ErrorCode::Conflict
    );
    let listed = store
        .list_approvals(&ApprovalFilter::new().state(ApprovalState::Withdrawn))
        .unwrap();
    assert_eq!(listed.iter().map(|a| a.id).collect::<Vec<_>>(), [id]);
    let records = store
        .list(&AuditFilter::new().verdict(AuditVerdict::ApprovalWithdrawn))
        .unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].entry.approval, Some(id));
    assert_eq!(
        records[0].entry.note.as_deref(),
        Some("the client cancelled the call")
    );
    // A decided approval is not withdrawn: the human was first.
    let other = approved(&*store, r#"{"order_id":"o-9","amount":1}"#);
    assert_eq!(
        store
            .withdraw(other, "toolgate mcp", "")
            .unwrap_err()
            .code(),
        ErrorCode::Conflict
    );
    assert_eq!(
        store.get_approval(other).unwrap().unwrap().state,
        ApprovalState::Approved
    );
}

on_both_backends!(
    issue_29_4_pending_approvals_are_capped_per_requester,
    a_withdrawn_approval_is_never_approved_or_used,
    identical_held_calls_racing_share_one_pending_approval,
    pending_approvals_are_capped_and_expire_everywhere,
    approval_lets_exactly_one_identical_call_through,
    approval_does_not_cover_other_arguments_session_user_or_tool,
    may_cover_reads_what_consume_would_use,
    expired_pending_and_denied_approvals_cover_nothing,
    an_approved_unused_approval_can_be_revoked,
    double_consume_racing_in_threads_passes_once,
    standing_approval_covers_the_tool_until_its_end_and_is_audited,
    standing_grants_cover_only_their_upstream,
    approvals_are_listed_and_decisions_audited,
    session_counters_and_escalation,
    escalation_threshold_is_configurable,
    kill_switch_flips_are_stored_and_audited,
);
