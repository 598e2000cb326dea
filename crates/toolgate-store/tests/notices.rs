//! Notices of held calls: claimed once per (approval, sink) however many
//! replicas try at once, then recorded with each delivery's outcome; a
//! claim whose sender died is taken over once its lease has run out. Each
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
    ApprovalId, Clock as _, ManualClock, NoticeState, Store, Timestamp, MAX_NOTICE_OUTCOME_BYTES,
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

/// A replica claims a notice and dies while it is `sending` (it never
/// records an attempt): once its lease has run out on the manual clock,
/// exactly one of the other replicas takes the notice over; the dead
/// claimer's claim no longer renews; a live sender that records its
/// attempts keeps its notice; settled notices are never taken.
fn a_notice_whose_claimer_died_is_taken_over_once_after_its_lease(db: &Db) {
    const REPLICAS: usize = 4;
    const LEASE_SECONDS: i64 = 300;
    let clock = ManualClock::new(T0);
    let stores: Vec<Box<dyn Store>> = (0..REPLICAS).map(|_| db.open(&clock)).collect();
    let (dead, live, done) = (
        ApprovalId::new(11),
        ApprovalId::new(12),
        ApprovalId::new(13),
    );
    // The dead claimer: claims and is never heard of again.
    assert!(stores[0].claim_notice(dead, "ops", clock.now()).unwrap());
    // A live sender: claims, renews when its delivery starts, then
    // records an attempt now and then.
    assert!(stores[1].claim_notice(live, "ops", clock.now()).unwrap());
    assert!(stores[1].claim_notice(done, "ops", clock.now()).unwrap());
    stores[1]
        .record_notice(done, "ops", NoticeState::Delivered, 1, "204", clock.now())
        .unwrap();
    let stale_before =
        |now: Timestamp| Timestamp::from_unix_millis(now.unix_millis() - LEASE_SECONDS * 1000);

    // Within the lease nothing is taken.
    clock.advance(std::time::Duration::from_secs(200));
    assert!(stores[1]
        .renew_notice(live, "ops", T0, clock.now())
        .unwrap());
    let now = clock.now();
    assert!(stores[2]
        .reclaim_notices(now, stale_before(now), 100)
        .unwrap()
        .is_empty());

    // Past the dead claimer's lease (the live one renewed at +200 s):
    // replicas look together, and one of them takes the notice.
    clock.advance(std::time::Duration::from_secs(150));
    stores[1]
        .record_notice(live, "ops", NoticeState::Sending, 1, "500", clock.now())
        .unwrap();
    let now = clock.now();
    let barrier = Barrier::new(REPLICAS - 1);
    let taken: Vec<Vec<(ApprovalId, String)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = stores[1..]
            .iter()
            .map(|store| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    store.reclaim_notices(now, stale_before(now), 100).unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let all: Vec<&(ApprovalId, String)> = taken.iter().flatten().collect();
    assert_eq!(
        all,
        [&(dead, "ops".to_owned())],
        "taken over once: {taken:?}"
    );
    // The dead claimer's claim is gone (were it alive after all, it would
    // not send); the new claim renews.
    assert!(!stores[0].renew_notice(dead, "ops", T0, now).unwrap());
    assert!(stores[3].renew_notice(dead, "ops", now, now).unwrap());
    let listed = stores[0].list_notices(10).unwrap();
    let of = |id: ApprovalId| listed.iter().find(|n| n.approval == id).unwrap();
    assert_eq!(
        (of(dead).state, of(dead).claimed_at),
        (NoticeState::Sending, now)
    );
    assert_eq!(of(live).claimed_at, T0, "the live sender keeps its notice");
    assert_eq!(of(done).state, NoticeState::Delivered);
    // A settled notice never renews.
    assert!(!stores[1].renew_notice(done, "ops", T0, now).unwrap());
}

on_both_backends!(
    a_notice_is_claimed_once_across_replicas_and_records_its_outcome,
    a_notice_whose_claimer_died_is_taken_over_once_after_its_lease,
);
