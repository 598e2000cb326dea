//! Notices of held calls: claimed once per (approval, sink) however many
//! replicas try at once, then recorded with each delivery's outcome. Each
//! body runs on SQLite and on PostgreSQL (see `common`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::Barrier;

mod common;

use common::Db;
use toolgate_store::{
    ApprovalId, ManualClock, NoticeState, Store, Timestamp, MAX_NOTICE_OUTCOME_BYTES,
};

const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

fn a_notice_is_claimed_once_across_replicas_and_records_its_outcome(db: &Db) {
    const REPLICAS: usize = 6;
    let clock = ManualClock::new(T0);
    let stores: Vec<Box<dyn Store>> = (0..REPLICAS).map(|_| db.open(&clock)).collect();
    let id = ApprovalId::new(7);
    let barrier = Barrier::new(REPLICAS);
    let won: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = stores
            .iter()
            .map(|store| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    usize::from(store.claim_notice(id, "ops", T0).unwrap())
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert_eq!(won, 1, "one replica sends each notice");
    // Another sink is another notice.
    assert!(stores[0].claim_notice(id, "slack", T0).unwrap());
    assert!(!stores[1].claim_notice(id, "slack", T0).unwrap());

    let later = Timestamp::from_unix_seconds(1_767_225_660);
    let long = "é".repeat(MAX_NOTICE_OUTCOME_BYTES);
    stores[2]
        .record_notice(id, "ops", NoticeState::Failed, 4, &long, later)
        .unwrap();
    stores[3]
        .record_notice(id, "slack", NoticeState::Delivered, 1, "200", T0)
        .unwrap();
    let listed = stores[4].list_notices(10).unwrap();
    assert_eq!(listed.len(), 2);
    let ops = &listed[0];
    assert_eq!(
        (ops.sink.as_str(), ops.state, ops.attempts),
        ("ops", NoticeState::Failed, 4)
    );
    assert_eq!((ops.claimed_at, ops.updated_at), (T0, later));
    let outcome = ops.outcome.as_deref().unwrap();
    assert!(outcome.len() <= MAX_NOTICE_OUTCOME_BYTES && outcome.starts_with('é'));
    assert_eq!(listed[1].state, NoticeState::Delivered);
    assert_eq!(stores[0].list_notices(1).unwrap().len(), 1);
}

on_both_backends!(a_notice_is_claimed_once_across_replicas_and_records_its_outcome);
