//! What only the PostgreSQL store has: replicas migrating one database at
//! once, connections lost and regained without a restart, several stores
//! (as replicas) writing one chain, and URLs that never leak a password.
//!
//! Without a reachable PostgreSQL these tests say so and pass, unless
//! `TOOLGATE_REQUIRE_EXTERNAL=1` (CI).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::PgDatabase;
use toolgate_store::{
    AuditEntry, AuditVerdict, ErrorCode, KillMode, PgOptions, PgStore, Store, Timestamp,
};

fn entry(i: u64) -> AuditEntry {
    AuditEntry::new(
        Timestamp::from_unix_millis(1_000 + i as i64),
        AuditVerdict::Allow,
    )
    .user("alice")
    .session(format!("s-{}", i % 5))
    .tool("refund")
    .call_id(format!("call_{i}"))
}

fn open(db: &PgDatabase) -> PgStore {
    PgOptions::new()
        .lock_timeout(Duration::from_secs(30))
        .open(db.url())
        .unwrap()
}

#[test]
fn replicas_starting_together_migrate_once() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let barrier = Barrier::new(4);
    let keys: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let store = open(&db);
                    store.append(entry(1)).unwrap();
                    store.redaction_key().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // One redaction key, created with the schema, shared by every replica.
    assert!(keys.iter().all(|k| *k == keys[0]));
    let store = open(&db);
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 4);
    let mut c = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    let versions: i64 = c
        .query_one("SELECT count(*) FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(versions, i64::from(toolgate_store::PG_SCHEMA_VERSION));
}

#[test]
fn three_stores_writing_concurrently_keep_one_chain() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let stores = [open(&db), open(&db), open(&db)];
    let acknowledged: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..12u64)
            .map(|t| {
                let store = &stores[(t % 3) as usize];
                s.spawn(move || {
                    let mut n = 0u64;
                    for i in 0..50 {
                        store.append(entry(t * 1000 + i)).unwrap();
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let v = stores[0].verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, acknowledged);
    assert_eq!(acknowledged, 600);
}

#[test]
fn lost_connections_deny_then_recover_without_a_restart() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let store = open(&db);
    // Warm several connections of the pool.
    std::thread::scope(|s| {
        for i in 0..6 {
            let store = &store;
            s.spawn(move || store.append(entry(i)).unwrap());
        }
    });
    // Connections killed while the database still accepts new ones: a call
    // either fails as unavailable (never as a success) or reconnects.
    assert!(db.terminate_connections() > 0);
    recovers(&store);
    // The database away: nothing connects, every call fails as unavailable.
    db.set_allow_connections(false);
    db.terminate_connections();
    for _ in 0..5 {
        assert_eq!(
            store.append(entry(100)).unwrap_err().code(),
            ErrorCode::Unavailable
        );
        assert_eq!(
            store.kill_switch().unwrap_err().code(),
            ErrorCode::Unavailable
        );
        assert_eq!(store.ping().unwrap_err().code(), ErrorCode::Unavailable);
    }
    // Back: the same store works again.
    db.set_allow_connections(true);
    recovers(&store);
    for _ in 0..20 {
        store.append(entry(200)).unwrap();
        assert_eq!(store.kill_switch().unwrap().mode, KillMode::Off);
    }
    store.ping().unwrap();
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
}

/// Calls until one succeeds; every failure on the way is `unavailable`.
fn recovers(store: &PgStore) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match store.append(entry(100)) {
            Ok(_) => return,
            Err(e) => assert_eq!(e.code(), ErrorCode::Unavailable, "{e}"),
        }
        assert!(Instant::now() < deadline, "the store did not recover");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_absent_server_is_unavailable_and_the_password_is_not_repeated() {
    // A port where nothing listens.
    let err = PgOptions::new()
        .connect_timeout(Duration::from_secs(2))
        .open("postgres://tg:hunter2-secret@127.0.0.1:9/toolgate")
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable);
    let text = format!("{err} {err:?}");
    assert!(!text.contains("hunter2"), "{text}");
    let err = PgOptions::new()
        .open("postgres://tg:hunter2-secret@127.0.0.1:notaport/toolgate")
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(!format!("{err} {err:?}").contains("hunter2"), "{err}");
}

#[test]
fn read_only_store_refuses_writes_and_an_unmigrated_database() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let err = PgOptions::new().read_only(true).open(db.url()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable);
    assert!(err.message().contains("toolgate migrate"), "{err}");
    open(&db).append(entry(1)).unwrap();
    let ro = PgOptions::new().read_only(true).open(db.url()).unwrap();
    assert!(ro.verify().unwrap().is_intact());
    assert_eq!(ro.append(entry(2)).unwrap_err().code(), ErrorCode::ReadOnly);
    assert_eq!(ro.ping().unwrap_err().code(), ErrorCode::ReadOnly);
    assert_eq!(
        ro.set_kill_switch(KillMode::DenyAll, "", "x")
            .unwrap_err()
            .code(),
        ErrorCode::ReadOnly
    );
}

/// The changes store `b` hears, as they arrive.
fn subscribed(b: &PgStore) -> std::sync::mpsc::Receiver<toolgate_store::Change> {
    let (send, receive) = std::sync::mpsc::channel();
    let send = std::sync::Mutex::new(send);
    assert!(
        b.subscribe(std::sync::Arc::new(move |c: &toolgate_store::Change| {
            send.lock().unwrap().send(c.clone()).is_ok()
        }))
    );
    receive
}

/// The next change other than `Resync` within `within`, if any.
fn next_change(
    r: &std::sync::mpsc::Receiver<toolgate_store::Change>,
    within: Duration,
) -> Option<toolgate_store::Change> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        match r.recv_timeout(left) {
            Ok(toolgate_store::Change::Resync) => {}
            Ok(c) => return Some(c),
            Err(_) => return None,
        }
    }
}

#[test]
fn approvals_and_kill_switch_flips_are_pushed_to_other_stores_and_survive_a_lost_connection() {
    use toolgate_store::Change;
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let a = open(&db);
    let b = open(&db);
    let heard = subscribed(&b);
    // The listening connection comes up in the background: flip until one
    // is heard (the store pushes nothing it committed before listening).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        a.set_kill_switch(KillMode::DenyWrites, "drill", "ops")
            .unwrap();
        if next_change(&heard, Duration::from_millis(500)) == Some(Change::KillSwitch) {
            break;
        }
        assert!(Instant::now() < deadline, "no kill switch flip was pushed");
    }
    // Pushed at commit: well under a poll's 200 ms on this machine, given
    // a generous bound for a busy one.
    let flipped = Instant::now();
    a.set_kill_switch(KillMode::Off, "", "ops").unwrap();
    assert_eq!(
        next_change(&heard, Duration::from_secs(5)),
        Some(Change::KillSwitch)
    );
    let latency = flipped.elapsed();
    assert!(latency < Duration::from_secs(1), "pushed after {latency:?}");

    let digest = toolgate_json::canonical::digest(&toolgate_json::from_str("{}").unwrap());
    let until = Timestamp::from_unix_millis(i64::MAX / 2);
    let id = a
        .request_approval("alice", "s-1", "refund", &digest, until)
        .unwrap();
    a.approve(id, "bob", "").unwrap();
    assert_eq!(
        next_change(&heard, Duration::from_secs(5)),
        Some(Change::ApprovalDecided(id))
    );
    // A decision that fails (no such approval) is rolled back, and so is
    // any notification.
    assert!(a
        .deny(toolgate_store::ApprovalId::new(999_999), "bob", "")
        .is_err());
    assert_eq!(next_change(&heard, Duration::from_millis(700)), None);

    // The listening connection is killed: the store reconnects, listens
    // again, says it may have missed changes, and hears the next ones.
    assert!(db.terminate_connections() >= 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match heard.recv_timeout(Duration::from_millis(500)) {
            Ok(Change::Resync) => break,
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => assert!(
                Instant::now() < deadline,
                "no resync after the connection was lost"
            ),
        }
    }
    // Store `a`'s pooled connections were cut as well: its next write
    // finds that out and runs on a fresh connection (issue 29, item 1).
    a.set_kill_switch(KillMode::DenyAll, "again", "ops")
        .unwrap();
    assert_eq!(
        next_change(&heard, Duration::from_secs(5)),
        Some(Change::KillSwitch)
    );
    // A listener that wants no more (its receiver is gone) is called once
    // more and then forgotten.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&calls);
    assert!(b.subscribe(std::sync::Arc::new(move |_: &Change| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        false
    })));
    for mode in [KillMode::Off, KillMode::DenyWrites] {
        a.set_kill_switch(mode, "", "ops").unwrap();
        assert_eq!(
            next_change(&heard, Duration::from_secs(5)),
            Some(Change::KillSwitch)
        );
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    // SQLite pushes nothing: it says so, and the caller polls.
    let sqlite = toolgate_store::SqliteOptions::new()
        .open_in_memory()
        .unwrap();
    assert!(!sqlite.subscribe(std::sync::Arc::new(|_: &Change| true)));
}

/// One call of every kind a route makes (decide, results, approvals, kill
/// switch, audit pages, readiness), the `k`th of worker `w`; returns the
/// receipt of the allow it appended.
fn every_route_once(
    store: &PgStore,
    w: u64,
    k: u64,
) -> Result<toolgate_store::AppendReceipt, toolgate_store::Error> {
    let session = format!("w{w}");
    store.kill_switch()?;
    store.record_call(&session, k + 1, AuditVerdict::Allow, &[])?;
    assert!(store.claim_call(&session, &format!("call_{k}"))?);
    let receipt = store.append(entry(w * 1_000_000 + k))?;
    store.count_response(&session)?;
    store.session(&session)?;
    let digest = toolgate_json::canonical::digest(
        &toolgate_json::from_str(&format!("{{\"k\":{k}}}")).unwrap(),
    );
    let until = Timestamp::from_unix_millis(i64::MAX / 2);
    let id = store.request_approval(&format!("u{w}"), &session, "refund", &digest, until)?;
    store.approve(id, "bob", "")?;
    store.get_approval(id)?;
    store.list_approvals(&toolgate_store::ApprovalFilter::new())?;
    store.tail(5)?;
    store.ping()?;
    Ok(receipt)
}

/// Issue 29, item 1: all backends of two replicas are ended (as a failover
/// or `pg_terminate_backend` does) while they serve calls of every kind.
/// The database stays up, so no call may fail, and every allow the store
/// acknowledged is in the chain.
#[test]
fn issue_29_ended_backends_cost_no_call_of_any_kind_on_two_replicas() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let stores = [open(&db), open(&db)];
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let workers = 6u64;
    let (receipts, failures): (Vec<_>, Vec<_>) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let store = &stores[(w % 2) as usize];
                let (stop, done) = (&stop, &done);
                s.spawn(move || {
                    let mut receipts = Vec::new();
                    let mut failures = Vec::new();
                    let mut k = 0;
                    while !stop.load(Ordering::SeqCst) {
                        match every_route_once(store, w, k) {
                            Ok(r) => receipts.push(r),
                            Err(e) => failures.push(e.to_string()),
                        }
                        k += 1;
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                    (receipts, failures)
                })
            })
            .collect();
        // Cut every backend five times, each after the workers got going
        // again (every worker's pooled connections are in use by then).
        for _ in 0..5 {
            let before = done.load(Ordering::SeqCst);
            while done.load(Ordering::SeqCst) < before + 4 * workers {
                std::thread::yield_now();
            }
            assert!(db.terminate_connections() > 0);
        }
        let before = done.load(Ordering::SeqCst);
        while done.load(Ordering::SeqCst) < before + 4 * workers {
            std::thread::yield_now();
        }
        stop.store(true, Ordering::SeqCst);
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let receipts = results.iter().flat_map(|r| r.0.clone()).collect();
        let failures = results.into_iter().flat_map(|r| r.1).collect();
        (receipts, failures)
    });
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
    let v = stores[0].verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    let chain: std::collections::HashMap<u64, _> = stores[1]
        .tail(u32::MAX)
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, r.hash))
        .collect();
    assert!(!receipts.is_empty());
    for r in &receipts {
        assert_eq!(
            chain.get(&r.seq),
            Some(&r.hash),
            "allow {} has no record",
            r.seq
        );
    }
}
