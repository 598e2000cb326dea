//! Signed checkpoints (issue 29, item 10): deleting the newest records and
//! rewriting the head row (`audit_head`, or a segment's head) still
//! verified as intact. A checkpoint signs the chain's heads with an
//! Ed25519 key and is kept outside the store; verifying the log against
//! the checkpoints finds the cut. Each body runs on SQLite and on
//! PostgreSQL (segments).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use common::Db;
use toolgate_store::{
    verify_checkpoints, write_checkpoint, AuditEntry, AuditVerdict, CheckpointKey, ManualClock,
    Timestamp,
};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

fn entry(i: u64) -> AuditEntry {
    AuditEntry::new(T0, AuditVerdict::Allow)
        .user("alice")
        .session("s-1")
        .tool("refund")
        .call_id(format!("call_{i}"))
}

/// What an attacker with write access to the database does: removes the
/// newest `n` records and rewrites the head rows to the new last record,
/// so that the chain verifies as intact.
fn cut_newest(db: &Db, n: u64) {
    if db.is_postgres() {
        db.execute(&format!(
            "DELETE FROM audit WHERE seq IN (SELECT seq FROM audit ORDER BY seq DESC LIMIT {n});
             UPDATE audit_segments s SET sseq = t.sseq, hash = t.hash
               FROM (SELECT DISTINCT ON (segment) segment, sseq, hash FROM audit
                     ORDER BY segment, sseq DESC) t
              WHERE s.id = t.segment;"
        ));
    } else {
        db.execute(&format!(
            "DELETE FROM audit WHERE seq IN (SELECT seq FROM audit ORDER BY seq DESC LIMIT {n});
             UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit),
                hash = (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1) WHERE id = 1;"
        ));
    }
}

fn truncation_and_head_rewrite_is_found_by_the_checkpoints(db: &Db) {
    let dir = tempfile::tempdir().unwrap();
    let sink = dir.path().join("checkpoints.jsonl");
    let key = CheckpointKey::from_seed([7; 32]);
    let store = db.open(&ManualClock::new(T0));
    for i in 0..10 {
        store.append(entry(i)).unwrap();
    }
    let first = write_checkpoint(&*store, &key, &sink, T0).unwrap();
    assert_eq!(first.records, 10);
    for i in 10..15 {
        store.append(entry(i)).unwrap();
    }
    write_checkpoint(&*store, &key, &sink, T0).unwrap();
    let text = std::fs::read_to_string(&sink).unwrap();
    assert_eq!(text.lines().count(), 2);
    // Intact: every checkpoint holds (the checkpoints' own records
    // included).
    let report = verify_checkpoints(&*store, &key.verifying(), &text).unwrap();
    assert_eq!(report.checked, 2);
    assert!(report.failures.is_empty(), "{:?}", report.failures);

    // The attacker cuts the newest records and rewrites the head rows.
    cut_newest(db, 4);
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "the hole this closes: {v:?}");
    let report = verify_checkpoints(&*store, &key.verifying(), &text).unwrap();
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(
        report.failures[0].contains("checkpoint 2"),
        "{:?}",
        report.failures
    );

    // Deeper: the first checkpoint fails too.
    cut_newest(db, 5);
    assert!(store.verify().unwrap().is_intact());
    let report = verify_checkpoints(&*store, &key.verifying(), &text).unwrap();
    assert_eq!(report.failures.len(), 2, "{:?}", report.failures);

    // A checkpoint line edited (its count lowered) or signed by another
    // key is refused, not believed.
    let forged = text.replacen("\"records\":16", "\"records\":3", 1);
    assert_ne!(forged, text);
    let report = verify_checkpoints(&*store, &key.verifying(), &forged).unwrap();
    assert!(
        report.failures.iter().any(|f| f.contains("signature")),
        "{:?}",
        report.failures
    );
    let other = CheckpointKey::from_seed([8; 32]);
    let report = verify_checkpoints(&*store, &other.verifying(), &text).unwrap();
    assert_eq!(report.failures.len(), 2);
    assert!(report.failures.iter().all(|f| f.contains("signature")));
}

fn a_checkpoint_is_recorded_in_the_log_too(db: &Db) {
    let dir = tempfile::tempdir().unwrap();
    let sink = dir.path().join("checkpoints.jsonl");
    let key = CheckpointKey::from_seed([9; 32]);
    let store = db.open(&ManualClock::new(T0));
    store.append(entry(1)).unwrap();
    let c = write_checkpoint(&*store, &key, &sink, T0).unwrap();
    let last = store.tail(1).unwrap().pop().unwrap();
    assert_eq!(last.entry.verdict, AuditVerdict::Checkpoint);
    assert_eq!(last.entry.verdict.kind(), "checkpoint");
    assert!(
        last.entry
            .note
            .as_deref()
            .unwrap()
            .contains(&c.digest().to_string()),
        "{last:?}"
    );
    assert!(store.verify().unwrap().is_intact());
}

on_both_backends!(
    truncation_and_head_rewrite_is_found_by_the_checkpoints,
    a_checkpoint_is_recorded_in_the_log_too,
);
