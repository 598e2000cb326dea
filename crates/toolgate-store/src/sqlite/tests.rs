//! The SQLite store's own unit tests.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use super::*;
use std::sync::mpsc;

/// A decision's reads answer while every general reader is held (by long
/// listings or scans, say): they have connections of their own.
#[test]
fn a_decisions_reads_do_not_wait_for_scans() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    assert_eq!(store.readers.len(), READERS);
    let held: Vec<_> = store.readers.iter().map(|m| m.lock().unwrap()).collect();
    let (tx, rx) = mpsc::channel();
    let reader = Arc::clone(&store);
    std::thread::spawn(move || {
        let answered = reader.kill_switch().is_ok() && reader.session("s").is_ok();
        tx.send(answered).unwrap();
    });
    let answered = rx.recv_timeout(Duration::from_secs(10));
    drop(held);
    assert_eq!(answered, Ok(true));
}

/// The decision's three reads in one transaction say what the three
/// single reads say, for a session with history and for a new one,
/// and the connection is left usable (no transaction left open).
#[test]
fn decision_reads_agree_with_the_single_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    store.count_response("s").unwrap();
    store.count_response("s").unwrap();
    store
        .record_call("s", 1, AuditVerdict::Deny, &["schema_type", "repeat:t:x"])
        .unwrap();
    store
        .set_kill_switch(KillMode::DenyWrites, "drill", "ops")
        .unwrap();
    for session in ["s", "new"] {
        for _ in 0..3 {
            let reads = store.decision_reads(session);
            assert_eq!(reads.responses.unwrap(), store.responses(session).unwrap());
            assert_eq!(reads.counters.unwrap(), store.session(session).unwrap());
            assert_eq!(reads.kill_switch.unwrap(), store.kill_switch().unwrap());
        }
    }
    let reads = store.decision_reads("s");
    assert_eq!(reads.responses.unwrap(), 2);
    assert_eq!(reads.counters.unwrap().consecutive("repeat:t:x"), 1);
    assert_eq!(reads.kill_switch.unwrap().mode, KillMode::DenyWrites);
    // A write after the reads: no read transaction was left open on a
    // connection that would pin an old snapshot.
    store.count_response("s").unwrap();
    assert_eq!(store.decision_reads("s").responses.unwrap(), 3);
    store.set_kill_switch(KillMode::Off, "", "ops").unwrap();
    assert_eq!(
        store.decision_reads("s").kill_switch.unwrap().mode,
        KillMode::Off
    );
}
