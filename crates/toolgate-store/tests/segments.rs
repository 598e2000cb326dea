//! PostgreSQL's segmented audit log from the attacker's side: several
//! stores (as replicas) append concurrently, each to a segment of its own,
//! and the one log they make verifies with the exact record count; then
//! the database is edited around the store (a record changed, removed,
//! moved or relinked in any segment, a whole segment removed, a segment's
//! tail cut, records and segments added) and `verify` names the break. A
//! log written by a schema-7 build migrates and still verifies.
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

use std::time::Duration;

use common::PgDatabase;
use toolgate_store::audit::{RECORD_VERSION, SEGMENT_RECORD_VERSION};
use toolgate_store::{
    ApprovalId, AuditEntry, AuditFilter, AuditRecord, AuditVerdict, BreakKind, ErrorCode, KillMode,
    PgOptions, PgStore, SqliteStore, Store, Timestamp,
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

fn client(db: &PgDatabase) -> postgres::Client {
    postgres::Client::connect(db.url(), postgres::NoTls).unwrap()
}

/// `n` stores, each with `threads` threads appending `per_thread` records
/// (every tenth thread's record goes with a kill switch flip, a write
/// that locks a shared row too); returns how many were acknowledged.
fn concurrent(stores: &[PgStore], threads: u64, per_thread: u64) -> u64 {
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads * stores.len() as u64)
            .map(|t| {
                let store = &stores[(t % stores.len() as u64) as usize];
                s.spawn(move || {
                    let mut n = 0u64;
                    for i in 0..per_thread {
                        if t == 0 && i % 10 == 0 {
                            store
                                .set_kill_switch(KillMode::Off, "drill", "ops")
                                .unwrap();
                        } else {
                            store.append(entry(t * 1000 + i)).unwrap();
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// A database three stores wrote concurrently, with the records of
/// `segment` (by `seq`) for each segment.
struct Log {
    db: PgDatabase,
    segments: Vec<Vec<AuditRecord>>,
    total: u64,
}

fn three_segments() -> Option<Log> {
    let db = PgDatabase::create()?;
    let stores = [open(&db), open(&db), open(&db)];
    let total = concurrent(&stores, 4, 20);
    let all = stores[0].list(&AuditFilter::new().limit(10_000)).unwrap();
    assert_eq!(all.len() as u64, total);
    let mut ids: Vec<u64> = all.iter().map(|r| r.segment).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "one segment per store");
    let segments = ids
        .iter()
        .map(|id| all.iter().filter(|r| r.segment == *id).cloned().collect())
        .collect();
    Some(Log {
        db,
        segments,
        total,
    })
}

impl Log {
    fn broken(&self) -> (u64, BreakKind) {
        let v = open(&self.db).verify().unwrap();
        let b = v.broken.expect("the log must be broken");
        (b.seq, b.kind)
    }

    /// A record in the middle of the second segment opened.
    fn middle(&self) -> &AuditRecord {
        let s = &self.segments[1];
        &s[s.len() / 2]
    }
}

fn hex(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("'\\x{hex}'::bytea")
}

#[test]
fn two_and_three_stores_appending_concurrently_make_one_log() {
    for n in [2, 3] {
        let Some(db) = PgDatabase::create() else {
            return;
        };
        let stores: Vec<PgStore> = (0..n).map(|_| open(&db)).collect();
        let acknowledged = concurrent(&stores, 6, 40);
        assert_eq!(acknowledged, 240 * n as u64);
        let v = stores[0].verify().unwrap();
        assert!(v.is_intact(), "{v:?}");
        assert_eq!(v.records, acknowledged);
        // Each store appended to one segment of its own, whatever the
        // number of its threads.
        let segments: i64 = client(&db)
            .query_one("SELECT count(*) FROM audit_segments", &[])
            .unwrap()
            .get(0);
        assert_eq!(segments, n as i64);
        // Every record is in the current format, `seq` grows along each
        // segment and each segment is numbered 1, 2, 3, … without gaps.
        let all = stores[1].list(&AuditFilter::new().limit(10_000)).unwrap();
        assert_eq!(all.len() as u64, acknowledged);
        for r in &all {
            assert_eq!(r.version, SEGMENT_RECORD_VERSION);
            assert_eq!(r.expected_hash(), r.hash);
        }
        let mut next = std::collections::BTreeMap::new();
        for r in &all {
            let n = next.entry(r.segment).or_insert(1u64);
            assert_eq!(r.sseq, *n, "seq {}", r.seq);
            *n += 1;
        }
        // Read by another process's view: the same.
        assert!(open(&db).verify().unwrap().is_intact());
    }
}

/// Numbers drawn by transactions that rolled back leave gaps in `seq`;
/// they are not breaks, and pages by `seq` step over them.
#[test]
fn gaps_from_rolled_back_writes_are_not_breaks() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let store = open(&db);
    store.append_all((1..=3).map(entry).collect()).unwrap();
    // An approval id the database cannot hold fails the batch after its
    // numbers were drawn: the transaction rolls back.
    let bad = entry(4).approval(ApprovalId::new(u64::MAX));
    let e = store.append_all(vec![entry(5), bad]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidInput);
    let after = store.append_all((6..=8).map(entry).collect()).unwrap();
    assert_eq!(after[0].seq, 6, "the two numbers drawn are skipped");
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 6);
    assert_eq!(v.head, (8, after[2].hash));
    let seqs =
        |f: AuditFilter| -> Vec<u64> { store.list(&f).unwrap().iter().map(|r| r.seq).collect() };
    assert_eq!(seqs(AuditFilter::new().limit(2).after(2)), [3, 6]);
    assert_eq!(seqs(AuditFilter::new().limit(2).before(6)), [1, 2]);
    assert_eq!(
        seqs(AuditFilter::new().limit(2).before(7).newest_first()),
        [3, 6]
    );
    assert_eq!(
        store
            .tail(4)
            .unwrap()
            .iter()
            .map(|r| r.sseq)
            .collect::<Vec<_>>(),
        [3, 4, 5, 6]
    );
}

#[test]
fn a_changed_record_in_any_segment_is_named() {
    let Some(log) = three_segments() else {
        return;
    };
    assert!(open(&log.db).verify().unwrap().is_intact());
    assert_eq!(open(&log.db).verify().unwrap().records, log.total);
    for s in &log.segments {
        let r = &s[s.len() - 2];
        log.db.execute(&format!(
            "UPDATE audit SET \"user\" = 'mallory' WHERE seq = {}",
            r.seq
        ));
        assert_eq!(log.broken(), (r.seq, BreakKind::Changed));
        log.db.execute(&format!(
            "UPDATE audit SET \"user\" = 'alice' WHERE seq = {}",
            r.seq
        ));
    }
    assert!(open(&log.db).verify().unwrap().is_intact());
}

#[test]
fn a_removed_record_in_any_segment_is_missing() {
    let Some(log) = three_segments() else {
        return;
    };
    let r = log.middle();
    let before = log.segments[1]
        .iter()
        .rev()
        .find(|p| p.sseq == r.sseq - 1)
        .unwrap();
    log.db
        .execute(&format!("DELETE FROM audit WHERE seq = {}", r.seq));
    assert_eq!(log.broken(), (before.seq + 1, BreakKind::Missing));
}

#[test]
fn a_swapped_seq_is_named_within_and_across_segments() {
    let Some(log) = three_segments() else {
        return;
    };
    let swap = |a: u64, b: u64| {
        log.db.execute(&format!(
            "UPDATE audit SET seq = -1 WHERE seq = {a};
             UPDATE audit SET seq = {a} WHERE seq = {b};
             UPDATE audit SET seq = {b} WHERE seq = -1;"
        ));
    };
    // Across two segments.
    let (a, b) = (log.segments[0][5].seq, log.segments[2][5].seq);
    swap(a, b);
    // Named at the first of them, or where a record of its segment went
    // missing before it.
    let (seq, _) = log.broken();
    assert!(seq <= a.min(b), "{seq}");
    swap(a, b);
    assert!(open(&log.db).verify().unwrap().is_intact());
    // Within one, `sseq` swapped too: each record's hash covers its place.
    let (a, b) = (log.segments[1][3].clone(), log.segments[1][4].clone());
    log.db.execute(&format!(
        "UPDATE audit SET seq = -1, sseq = -1 WHERE seq = {a};
         UPDATE audit SET seq = {a}, sseq = {sa} WHERE seq = {b};
         UPDATE audit SET seq = {b}, sseq = {sb} WHERE seq = -1;",
        a = a.seq,
        b = b.seq,
        sa = a.sseq,
        sb = b.sseq
    ));
    assert_eq!(log.broken(), (a.seq, BreakKind::Relinked));
}

#[test]
fn a_relinked_record_is_named() {
    let Some(log) = three_segments() else {
        return;
    };
    // Linked to a record of another segment, rehashed: the link is wrong.
    let r = log.middle();
    let mut forged = r.clone();
    forged.prev = log.segments[0][2].hash;
    forged.hash = forged.expected_hash();
    log.db.execute(&format!(
        "UPDATE audit SET prev = {}, hash = {} WHERE seq = {}",
        hex(forged.prev.as_bytes()),
        hex(forged.hash.as_bytes()),
        r.seq
    ));
    assert_eq!(log.broken(), (r.seq, BreakKind::Relinked));
}

#[test]
fn a_removed_whole_segment_is_named() {
    // The last segment opened, its head too: the root chain's head names
    // its first record.
    let Some(log) = three_segments() else {
        return;
    };
    let last = log.segments.iter().map(|s| s[0].seq).max().unwrap();
    log.db.execute(&format!(
        "DELETE FROM audit WHERE segment = {last}; DELETE FROM audit_segments WHERE id = {last}"
    ));
    assert_eq!(log.broken(), (last, BreakKind::Missing));
    // The first one: the next segment's first record links to it.
    let Some(log) = three_segments() else {
        return;
    };
    let mut firsts: Vec<u64> = log.segments.iter().map(|s| s[0].seq).collect();
    firsts.sort_unstable();
    log.db.execute(&format!(
        "DELETE FROM audit WHERE segment = {f}; DELETE FROM audit_segments WHERE id = {f}",
        f = firsts[0]
    ));
    assert_eq!(log.broken(), (firsts[1], BreakKind::Relinked));
    // All but its first record: the segment's head is past its last.
    let Some(log) = three_segments() else {
        return;
    };
    let s = &log.segments[1];
    log.db.execute(&format!(
        "DELETE FROM audit WHERE segment = {} AND sseq > 1",
        s[0].segment
    ));
    assert_eq!(log.broken(), (s[0].seq + 1, BreakKind::Missing));
}

#[test]
fn a_cut_segment_tail_is_missing() {
    let Some(log) = three_segments() else {
        return;
    };
    let s = &log.segments[2];
    let (last, before) = (&s[s.len() - 1], &s[s.len() - 2]);
    log.db
        .execute(&format!("DELETE FROM audit WHERE seq = {}", last.seq));
    assert_eq!(log.broken(), (before.seq + 1, BreakKind::Missing));
}

#[test]
fn records_and_segments_added_around_the_store_are_unexpected() {
    let Some(log) = three_segments() else {
        return;
    };
    let store = open(&log.db);
    let insert =
        |r: &AuditRecord| {
            log.db.execute(&format!(
            "INSERT INTO audit (seq, time, verdict, \"user\", session, tool, call_id, reasons, \
             policies, prev, hash, v, segment, sseq) VALUES ({}, {}, 'allow', 'alice', {}, \
             'refund', {}, '[]', '[]', {}, {}, {}, {}, {})",
            r.seq,
            r.entry.time.unix_millis(),
            r.entry.session.as_ref().map_or("NULL".into(), |s| format!("'{s}'")),
            r.entry.call_id.as_ref().map_or("NULL".into(), |s| format!("'{s}'")),
            hex(r.prev.as_bytes()),
            hex(r.hash.as_bytes()),
            r.version,
            r.segment,
            r.sseq
        ));
        };
    // A copy of a segment's last record, linked after it and hashed right,
    // past the segment's head.
    let last = log.segments[0].last().unwrap();
    let mut forged = last.clone();
    forged.seq = 1_000_000;
    forged.sseq += 1;
    forged.prev = last.hash;
    forged.hash = forged.expected_hash();
    insert(&forged);
    assert_eq!(log.broken(), (forged.seq, BreakKind::Unexpected));
    log.db
        .execute(&format!("DELETE FROM audit WHERE seq = {}", forged.seq));
    assert!(store.verify().unwrap().is_intact());
    // A whole segment opened around the store, linked to the root's head.
    let root: Vec<u8> = client(&log.db)
        .query_one("SELECT hash FROM audit_head", &[])
        .unwrap()
        .get(0);
    let mut forged = last.clone();
    forged.seq = 2_000_000;
    forged.segment = forged.seq;
    forged.sseq = 1;
    forged.prev = toolgate_json::Digest::from_bytes(root.try_into().unwrap());
    forged.hash = forged.expected_hash();
    insert(&forged);
    log.db.execute(&format!(
        "INSERT INTO audit_segments (id, opened_at, sseq, hash) VALUES ({}, 0, 1, {})",
        forged.seq,
        hex(forged.hash.as_bytes())
    ));
    assert_eq!(log.broken(), (forged.seq, BreakKind::Unexpected));
    // Its head moved too: the root's head still names the segment that
    // was really opened last.
    log.db.execute(&format!(
        "UPDATE audit_head SET seq = {}, hash = {}",
        forged.seq,
        hex(forged.hash.as_bytes())
    ));
    assert!(
        store.verify().unwrap().is_intact(),
        "rewriting every head rewrites history: pin it"
    );
}

/// A database written by a build of schema 7 (one chain, version-2
/// records, the chain's head locked by every append) migrates to the
/// segmented log: its records verify as they are, new records follow in
/// segments, and a change to an old record is still named.
#[test]
fn a_schema_7_log_migrates_and_still_verifies() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    // The schema-7 tables: version 8 added these, version 9 the
    // approvals' requester, version 10 the limits' and labels' tables,
    // version 11 the approvals' upstream, version 12 the approvals' quorum,
    // votes and notices, version 13 the approvals' policy facts, version
    // 14 the limit keys' running totals.
    drop(open(&db));
    db.execute(
        "DROP TABLE audit_segments; DROP SEQUENCE audit_seq;
         ALTER TABLE audit DROP COLUMN segment, DROP COLUMN sseq;
         ALTER TABLE approvals DROP COLUMN requester, DROP COLUMN upstream,
             DROP COLUMN quorum, DROP COLUMN not_own, DROP COLUMN votes,
             DROP COLUMN facts;
         DROP TABLE limit_keys, limit_events, session_labels;
         DROP TABLE approval_votes, approval_notices;
         DELETE FROM schema_version WHERE version >= 8;",
    );
    // Records as the schema-7 build wrote them: the single chain SQLite
    // still writes, the same bodies and hashes.
    let single = SqliteStore::open_in_memory().unwrap();
    single.append_all((1..=5).map(entry).collect()).unwrap();
    let old = single.list(&AuditFilter::new()).unwrap();
    for r in &old {
        assert_eq!(r.version, RECORD_VERSION);
        db.execute(&format!(
            "INSERT INTO audit (seq, time, verdict, \"user\", session, tool, call_id, reasons, \
             policies, prev, hash, v) VALUES ({}, {}, 'allow', 'alice', '{}', 'refund', '{}', \
             '[]', '[]', {}, {}, 2);
             UPDATE audit_head SET seq = {0}, hash = {6};",
            r.seq,
            r.entry.time.unix_millis(),
            r.entry.session.as_deref().unwrap(),
            r.entry.call_id.as_deref().unwrap(),
            hex(r.prev.as_bytes()),
            hex(r.hash.as_bytes()),
            hex(r.hash.as_bytes()),
        ));
    }
    let stores = [open(&db), open(&db)];
    let v = stores[0].verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!((v.records, v.head), (5, (5, old[4].hash)));
    let added = concurrent(&stores, 3, 10);
    let v = stores[1].verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 5 + added);
    let all = stores[0].list(&AuditFilter::new().limit(1000)).unwrap();
    assert_eq!(&all[..5], &old[..]);
    assert!(all[5..]
        .iter()
        .all(|r| r.version == SEGMENT_RECORD_VERSION && r.seq > 5));
    // The first segment opened links to the old chain's last record.
    let first = all[5..].iter().find(|r| r.sseq == 1).unwrap();
    assert_eq!(first.prev, old[4].hash);
    db.execute("UPDATE audit SET verdict = 'deny' WHERE seq = 3");
    let b = stores[0].verify().unwrap().broken.unwrap();
    assert_eq!((b.seq, b.kind), (3, BreakKind::Changed));
}

/// An export of a segmented log carries what an offline check needs: each
/// line's hash from its own body, each segment's lines linked in `sseq`
/// order with `seq` growing, and the root chain (each segment's first
/// line, by `seq`) linked from 32 zero bytes. Checked here without the
/// store, as the format's documentation describes.
#[test]
fn an_export_of_segments_checks_without_the_store() {
    use std::collections::BTreeMap;
    use toolgate_json::{canonical, Digest, Value};
    use toolgate_store::audit::parse_digest;
    let Some(log) = three_segments() else {
        return;
    };
    let mut out = Vec::new();
    assert_eq!(open(&log.db).export_jsonl(&mut out).unwrap(), log.total);
    let int = |o: &toolgate_json::Object<'_>, k: &str| -> u64 {
        o.get(k).unwrap().to_canonical_string().parse().unwrap()
    };
    // segment → (next sseq, last hash, last seq); the root's last hash.
    let mut segments: BTreeMap<u64, (u64, Digest, u64)> = BTreeMap::new();
    let mut root = toolgate_store::GENESIS;
    let mut lines = 0;
    for line in String::from_utf8(out).unwrap().lines() {
        let Value::Object(mut o) = toolgate_json::from_str(line).unwrap() else {
            panic!("{line}")
        };
        let hash = parse_digest(o.remove("hash").unwrap().as_str().unwrap()).unwrap();
        let prev = parse_digest(o.remove("prev").unwrap().as_str().unwrap()).unwrap();
        let mut pre = prev.as_bytes().to_vec();
        pre.extend_from_slice(canonical::to_string(&Value::Object(o.clone())).as_bytes());
        assert_eq!(Digest::of(&pre), hash, "{line}");
        let (seq, segment, sseq) = (int(&o, "seq"), int(&o, "segment"), int(&o, "sseq"));
        if sseq == 1 {
            assert_eq!(segment, seq);
            assert_eq!(prev, root, "a segment opens on the root's head");
            root = hash;
            segments.insert(segment, (2, hash, seq));
        } else {
            let s = segments.get_mut(&segment).unwrap();
            assert_eq!((sseq, prev), (s.0, s.1), "{line}");
            assert!(seq > s.2);
            *s = (sseq + 1, hash, seq);
        }
        lines += 1;
    }
    assert_eq!(lines, log.total);
    assert_eq!(segments.len(), 3);
}
