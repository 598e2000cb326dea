//! The gate's own turn count ([`Store::count_response`]) and the call ids
//! allowed per session ([`Store::claim_call`]): counted by the store, never
//! taken from a caller, atomic across threads and across stores sharing one
//! database (replicas). Each body runs on SQLite and on PostgreSQL.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::collections::HashSet;
use std::sync::{Arc, Barrier};

mod common;

use common::Db;
use toolgate_store::{AuditEntry, AuditVerdict, ManualClock, Store, Timestamp};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

fn responses_are_counted_per_session(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    for n in 1..=5 {
        assert_eq!(store.count_response("s-1").unwrap(), n);
    }
    assert_eq!(store.count_response("s-2").unwrap(), 1);
    assert_eq!(store.count_response("s-1").unwrap(), 6);
    // The counters of calls are a separate thing: counting a response
    // records no call.
    assert_eq!(store.session("s-1").unwrap().calls, 0);
    // Another process or replica opening the same database sees the count.
    let other = db.open(&ManualClock::new(T0));
    assert_eq!(other.count_response("s-1").unwrap(), 7);
}

fn concurrent_responses_each_get_their_own_turn(db: &Db) {
    let clock = ManualClock::new(T0);
    // Two stores on one database: two replicas, four threads each.
    let stores: Vec<Arc<dyn Store>> = (0..2).map(|_| Arc::from(db.open(&clock))).collect();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&stores[i % 2]);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                (0..5)
                    .map(|_| store.count_response("race").unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (1..=40).collect::<Vec<u64>>());
}

fn a_call_id_is_claimed_once_per_session(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    assert!(store.claim_call("s-1", "call_1").unwrap());
    assert!(!store.claim_call("s-1", "call_1").unwrap());
    assert!(!store.claim_call("s-1", "call_1").unwrap());
    // Ids are scoped by session, and compared byte for byte.
    assert!(store.claim_call("s-2", "call_1").unwrap());
    assert!(store.claim_call("s-1", "call_1 ").unwrap());
    assert!(store.claim_call("s-1", "CALL_1").unwrap());
    let other = db.open(&ManualClock::new(T0));
    assert!(!other.claim_call("s-1", "call_1").unwrap());
}

fn concurrent_claims_of_one_id_let_exactly_one_through(db: &Db) {
    let clock = ManualClock::new(T0);
    let stores: Vec<Arc<dyn Store>> = (0..2).map(|_| Arc::from(db.open(&clock))).collect();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&stores[i % 2]);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                (0..4)
                    .filter(|n| store.claim_call("s", &format!("id-{n}")).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let won: Vec<i32> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(won.len(), 4, "{won:?}");
    assert_eq!(won.iter().collect::<HashSet<_>>().len(), 4);
}

fn a_record_that_counts_its_response_counts_it_with_its_commit(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    assert_eq!(store.responses("s-1").unwrap(), 0);
    let entry = AuditEntry::new(T0, AuditVerdict::Allow).session("s-1");
    store.append(entry.clone().counting_response()).unwrap();
    assert_eq!(store.responses("s-1").unwrap(), 1);
    // A record that does not say so counts nothing; reading counts nothing.
    store.append(entry.clone()).unwrap();
    assert_eq!(store.responses("s-1").unwrap(), 1);
    assert_eq!(store.count_response("s-1").unwrap(), 2);
    // Through the deferred path too (the committer thread on SQLite).
    let (tx, rx) = std::sync::mpsc::channel();
    store.append_deferred(
        entry.counting_response(),
        Box::new(move |r| tx.send(r.is_ok()).unwrap()),
    );
    assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap());
    assert_eq!(store.responses("s-1").unwrap(), 3);
    assert_eq!(store.responses("s-2").unwrap(), 0);
    // The record is an ordinary one: the chain holds.
    assert!(store.verify().unwrap().is_intact());
}

fn an_allowed_call_id_is_known_without_claiming_it(db: &Db) {
    let store = db.open(&ManualClock::new(T0));
    assert!(!store.call_allowed("s-1", "call_1").unwrap());
    assert!(store.claim_call("s-1", "call_1").unwrap());
    assert!(store.call_allowed("s-1", "call_1").unwrap());
    assert!(!store.call_allowed("s-2", "call_1").unwrap());
    assert!(!store.call_allowed("s-1", "call_2").unwrap());
    // Asking claims nothing.
    assert!(store.claim_call("s-1", "call_2").unwrap());
}

/// A SQLite database whose response counts were kept before version 15
/// (a rowid table and its key's index) moves them to the table keyed by
/// session: each session's count carries on where it was.
#[test]
fn sqlite_response_counts_kept_before_the_keyed_table_carry_on() {
    let db = Db::sqlite();
    let clock = ManualClock::new(T0);
    {
        let store = db.open(&clock);
        for n in 1..=3 {
            assert_eq!(store.count_response("s-1").unwrap(), n);
        }
        assert_eq!(store.count_response("s-2").unwrap(), 1);
    }
    // Back to version 14's layout, with its rows.
    db.execute(
        "CREATE TABLE v14 (session TEXT PRIMARY KEY, responses INTEGER NOT NULL);
         INSERT INTO v14 SELECT session, responses FROM session_responses;
         DROP TABLE session_responses;
         ALTER TABLE v14 RENAME TO session_responses;
         DELETE FROM schema_version WHERE version >= 15;",
    );
    let version = "SELECT max(version) FROM schema_version";
    let keyed = "SELECT count(*) FROM sqlite_master \
                 WHERE name = 'session_responses' AND sql LIKE '%WITHOUT ROWID%'";
    assert_eq!(db.query_i64(version), Some(14));
    assert_eq!(db.query_i64(keyed), Some(0));
    let store = db.open(&clock);
    assert_eq!(
        db.query_i64(version),
        Some(i64::from(toolgate_store::SCHEMA_VERSION))
    );
    assert_eq!(db.query_i64(keyed), Some(1));
    assert_eq!(store.responses("s-1").unwrap(), 3);
    assert_eq!(store.count_response("s-1").unwrap(), 4);
    assert_eq!(store.count_response("s-2").unwrap(), 2);
    assert_eq!(store.count_response("s-3").unwrap(), 1);
    let entry = AuditEntry::new(T0, AuditVerdict::Allow).session("s-1");
    store.append(entry.counting_response()).unwrap();
    assert_eq!(store.responses("s-1").unwrap(), 5);
}

on_both_backends!(
    a_record_that_counts_its_response_counts_it_with_its_commit,
    an_allowed_call_id_is_known_without_claiming_it,
    responses_are_counted_per_session,
    concurrent_responses_each_get_their_own_turn,
    a_call_id_is_claimed_once_per_session,
    concurrent_claims_of_one_id_let_exactly_one_through,
);
