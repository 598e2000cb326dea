//! The audit log: appends, group commit, reading back, export, and tamper
//! detection; each test body runs on a real SQLite file and on a real
//! PostgreSQL database (see `common`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use common::Db;
use toolgate_json::{canonical, Digest, Value};
use toolgate_store::audit::{parse_digest, RECORD_VERSION, SEGMENT_RECORD_VERSION};
use toolgate_store::{
    ApprovalId, AuditEntry, AuditFilter, AuditVerdict, BreakKind, ErrorCode, ManualClock,
    RedactionKey, SqliteStore, Store, Timestamp, PG_SCHEMA_VERSION, SCHEMA_VERSION,
};

fn open(db: &Db) -> Box<dyn Store> {
    db.open(&ManualClock::new(Timestamp::from_unix_seconds(
        1_767_225_600,
    )))
}

fn entry(i: u64) -> AuditEntry {
    let text = format!(r#"{{"order_id":"o-{i}","amount":{i}}}"#);
    let args = toolgate_json::from_str(&text).unwrap();
    AuditEntry::new(
        Timestamp::from_unix_millis(1_000 + i as i64),
        AuditVerdict::Allow,
    )
    .user(if i % 2 == 0 { "alice" } else { "bob" })
    .session(format!("s-{}", i % 3))
    .tool("refund")
    .call_id(format!("call_{i}"))
    .policy("owner-may-refund")
    .arguments(&args, &[], &RedactionKey::from_bytes([0; 32]))
    .unwrap()
}

/// The version new records are written with: PostgreSQL keeps a
/// segmented log (each store its own segment), SQLite a single chain.
fn current_version(db: &Db) -> u32 {
    if db.is_postgres() {
        SEGMENT_RECORD_VERSION
    } else {
        RECORD_VERSION
    }
}

/// The columns after `v` that place a PostgreSQL record in its segment
/// (none in SQLite), as a copy of a row selects them.
fn place_columns(db: &Db, sseq: &str) -> String {
    if db.is_postgres() {
        format!(", segment, {sseq}")
    } else {
        String::new()
    }
}

fn filled(db: &Db, n: u64) {
    open(db).append_all((1..=n).map(entry).collect()).unwrap();
}

/// `bytes` as an SQL literal of the database's binary type.
fn blob(db: &Db, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if db.is_postgres() {
        format!("'\\x{hex}'::bytea")
    } else {
        format!("X'{hex}'")
    }
}

fn appends_form_a_chain_that_verifies(db: &Db) {
    let store = open(db);
    let mut prev = toolgate_store::GENESIS;
    for i in 1..=5 {
        let r = store.append(entry(i)).unwrap();
        assert_eq!(r.seq, i);
        let rec = store.tail(1).unwrap().pop().unwrap();
        assert_eq!(rec.prev, prev);
        assert_eq!(rec.hash, r.hash);
        prev = r.hash;
    }
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 5);
    assert_eq!(v.head, (5, prev));
}

fn group_commit_gives_every_thread_its_own_committed_record(db: &Db) {
    let store = open(db);
    let mut seqs: Vec<u64> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let store = &store;
                scope.spawn(move || {
                    (0..25)
                        .map(|i| store.append(entry(t * 100 + i)).unwrap().seq)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=400).collect::<Vec<_>>());
    let v = store.verify().unwrap();
    assert!(v.is_intact());
    assert_eq!(v.records, 400);
    // Each acknowledged record is the one its thread sent.
    let all = store.list(&AuditFilter::new().limit(1000)).unwrap();
    for r in &all {
        assert_eq!(r.expected_hash(), r.hash);
    }
}

fn tail_list_and_filters(db: &Db) {
    let store = open(db);
    store.append_all((1..=30).map(entry).collect()).unwrap();
    let tail = store.tail(3).unwrap();
    assert_eq!(tail.iter().map(|r| r.seq).collect::<Vec<_>>(), [28, 29, 30]);

    let page1 = store
        .list(&AuditFilter::new().user("alice").limit(5))
        .unwrap();
    assert_eq!(
        page1.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [2, 4, 6, 8, 10]
    );
    let page2 = store
        .list(&AuditFilter::new().user("alice").limit(5).after(10))
        .unwrap();
    assert_eq!(page2.first().unwrap().seq, 12);

    let s1 = store
        .list(&AuditFilter::new().session("s-1").tool("refund").limit(100))
        .unwrap();
    assert_eq!(s1.len(), 10);
    assert!(s1.iter().all(|r| r.entry.session.as_deref() == Some("s-1")));

    let timed = store
        .list(&AuditFilter::new().between(
            Timestamp::from_unix_millis(1_005),
            Timestamp::from_unix_millis(1_008),
        ))
        .unwrap();
    assert_eq!(timed.iter().map(|r| r.seq).collect::<Vec<_>>(), [5, 6, 7]);
    assert!(store
        .list(&AuditFilter::new().verdict(AuditVerdict::Deny))
        .unwrap()
        .is_empty());
}

fn secret_fields_are_replaced_by_their_digest(db: &Db) {
    let store = open(db);
    let args = toolgate_json::from_str(r#"{"card":{"number":"4111111111111111"},"n":1}"#).unwrap();
    let key = store.redaction_key().unwrap();
    let e = AuditEntry::new(Timestamp::EPOCH, AuditVerdict::Deny)
        .reason("not_owner")
        .arguments(&args, &["/card/number"], &key)
        .unwrap();
    assert_eq!(e.digest, Some(canonical::digest(&args)));
    store.append(e).unwrap();
    let rec = store.tail(1).unwrap().pop().unwrap();
    let stored = rec.entry.arguments.unwrap();
    let keyed = key.digest(br#""4111111111111111""#);
    // The keyed digest's hex may spell "4111" by chance: look past it.
    assert!(!stored.replace(keyed.as_str(), "").contains("4111"));
    assert!(stored.contains(&keyed));
    // The unkeyed digest of the secret is nowhere: a reader of the log
    // cannot test guesses without the store's key.
    let secret = toolgate_json::from_str(r#""4111111111111111""#).unwrap();
    let plain = canonical::digest(&secret).to_string();
    assert!(!stored.contains(&plain["sha256:".len()..]));
    // The key is the store's: stable across opens, another store's differs.
    assert_eq!(open(db).redaction_key().unwrap(), key);
    assert_ne!(
        SqliteStore::open_in_memory()
            .unwrap()
            .redaction_key()
            .unwrap(),
        key
    );
    let bad =
        AuditEntry::new(Timestamp::EPOCH, AuditVerdict::Deny).arguments(&args, &["card"], &key);
    assert_eq!(bad.unwrap_err().code(), ErrorCode::InvalidInput);
}

fn export_lines_can_be_checked_without_the_store(db: &Db) {
    filled(db, 12);
    let store = open(db);
    let mut out = Vec::new();
    assert_eq!(store.export_jsonl(&mut out).unwrap(), 12);
    let text = String::from_utf8(out).unwrap();
    let mut prev = [0u8; 32];
    for (i, line) in text.lines().enumerate() {
        let v = toolgate_json::from_str(line).unwrap();
        assert_eq!(canonical::to_string(&v), line, "line {i} is canonical");
        let Value::Object(mut o) = v else { panic!() };
        let hash = parse_digest(o.remove("hash").unwrap().as_str().unwrap()).unwrap();
        let p = parse_digest(o.remove("prev").unwrap().as_str().unwrap()).unwrap();
        assert_eq!(p.as_bytes(), &prev);
        let body = canonical::to_string(&Value::Object(o));
        let mut pre = prev.to_vec();
        pre.extend_from_slice(body.as_bytes());
        assert_eq!(Digest::of(&pre), hash, "line {i}");
        prev = *hash.as_bytes();
    }
}

fn a_newer_schema_is_refused(db: &Db) {
    filled(db, 1);
    let newer = SCHEMA_VERSION.max(PG_SCHEMA_VERSION) + 1;
    db.execute(&format!(
        "INSERT INTO schema_version (version, applied_at) VALUES ({newer}, 0)"
    ));
    for read_only in [false, true] {
        let Err(err) = db.try_open(read_only) else {
            panic!("a newer schema opened (read-only: {read_only})");
        };
        assert_eq!(
            err.code(),
            ErrorCode::SchemaTooNew,
            "read-only: {read_only}"
        );
    }
}

fn reopening_keeps_the_chain_going(db: &Db) {
    filled(db, 3);
    let store = open(db);
    assert_eq!(store.append(entry(4)).unwrap().seq, 4);
    assert!(store.verify().unwrap().is_intact());
}

// ---- tamper ----

fn broken(db: &Db) -> (u64, BreakKind) {
    let v = open(db).verify().unwrap();
    let b = v.broken.expect("the chain must be broken");
    (b.seq, b.kind)
}

fn tamper_changed_field_is_named(db: &Db) {
    filled(db, 10);
    db.execute("UPDATE audit SET verdict = 'deny' WHERE seq = 4");
    assert_eq!(broken(db), (4, BreakKind::Changed));
}

fn tamper_changed_arguments_is_named(db: &Db) {
    filled(db, 10);
    db.execute(
        "UPDATE audit SET arguments = '{\"amount\":9999,\"order_id\":\"o-7\"}' WHERE seq = 7",
    );
    assert_eq!(broken(db), (7, BreakKind::Changed));
}

fn tamper_rehashed_record_breaks_the_next_link(db: &Db) {
    filled(db, 10);
    let store = open(db);
    let mut rec = store
        .list(&AuditFilter::new().after(5).limit(1))
        .unwrap()
        .pop()
        .unwrap();
    drop(store);
    rec.entry.verdict = AuditVerdict::Deny;
    let forged = rec.expected_hash();
    db.execute(&format!(
        "UPDATE audit SET verdict = 'deny', hash = {} WHERE seq = 6",
        blob(db, forged.as_bytes())
    ));
    assert_eq!(broken(db), (7, BreakKind::Relinked));
}

fn tamper_deleted_record_is_named(db: &Db) {
    filled(db, 10);
    db.execute("DELETE FROM audit WHERE seq = 5");
    assert_eq!(broken(db), (5, BreakKind::Missing));
}

fn tamper_deleted_last_record_is_named(db: &Db) {
    filled(db, 10);
    db.execute("DELETE FROM audit WHERE seq = 10");
    assert_eq!(broken(db), (10, BreakKind::Missing));
}

fn tamper_reordered_records_are_named(db: &Db) {
    filled(db, 10);
    db.execute(
        "UPDATE audit SET seq = -1 WHERE seq = 3;
         UPDATE audit SET seq = 3 WHERE seq = 4;
         UPDATE audit SET seq = 4 WHERE seq = -1;",
    );
    // In PostgreSQL's segmented log a record's place in its segment
    // (`sseq`) does not move with `seq`: walking by `seq`, the segment's
    // fourth record comes where its third was due, which is named missing.
    let kind = if db.is_postgres() {
        BreakKind::Missing
    } else {
        BreakKind::Relinked
    };
    assert_eq!(broken(db), (3, kind));
}

fn tamper_inserted_record_is_named(db: &Db) {
    filled(db, 10);
    // Make room after record 6 and copy record 2 there, hash and all (in
    // PostgreSQL, with its place in the segment; the head there is the
    // segment's).
    let head = if db.is_postgres() {
        "UPDATE audit_segments SET sseq = 11"
    } else {
        "UPDATE audit_head SET seq = 11"
    };
    db.execute(&format!(
        "UPDATE audit SET seq = seq + 1000 WHERE seq > 6;
         UPDATE audit SET seq = seq - 999 WHERE seq > 1000;
         INSERT INTO audit SELECT 7, time, verdict, \"user\", session, tool, call_id, reasons, policies,
             digest, arguments, approval, actor, note, prev, hash, refused, risk, v{} FROM audit WHERE seq = 2;
         {head};",
        place_columns(db, "sseq")
    ));
    assert_eq!(broken(db), (7, BreakKind::Relinked));
}

fn tamper_appended_record_around_the_store_is_named(db: &Db) {
    filled(db, 10);
    let last = open(db).tail(1).unwrap().pop().unwrap();
    // A copy of the last record linked after it, written past the store's head.
    db.execute(&format!(
        "INSERT INTO audit SELECT 11, time, verdict, \"user\", session, tool, call_id, reasons, policies,
             digest, arguments, approval, actor, note, {}, hash, refused, risk, v{} FROM audit WHERE seq = 10",
        blob(db, last.hash.as_bytes()),
        place_columns(db, "sseq + 1")
    ));
    let (seq, _) = broken(db);
    assert_eq!(seq, 11);
}

fn tamper_garbage_is_named_malformed(db: &Db) {
    filled(db, 10);
    db.execute("UPDATE audit SET hash = 'x' WHERE seq = 8");
    assert_eq!(broken(db), (8, BreakKind::Malformed));
    // Reading it back is a typed error too.
    let store = open(db);
    assert_eq!(store.tail(5).unwrap_err().code(), ErrorCode::Corrupt);
}

/// Records of refused arguments and risk tiers: kept and read back on both
/// backends, chained like every member, and a record without them hashes
/// as it always did.
fn refused_arguments_and_risk_are_recorded_and_chained(db: &Db) {
    let store = open(db);
    let t = Timestamp::from_unix_millis(5_000);
    // 5,000 bytes with a 3-byte character across the 4,096-byte cut.
    let mut raw = "a".repeat(4_095);
    raw.push('€');
    raw.push_str(&"b".repeat(5_000 - raw.len()));
    let key = RedactionKey::from_bytes([9; 32]);
    let entries = vec![
        AuditEntry::new(t, AuditVerdict::Deny)
            .tool("refund")
            .risk("destructive")
            .reason("truncated")
            .refused_text(&raw),
        AuditEntry::new(t, AuditVerdict::Deny)
            .tool("refund")
            .risk("destructive")
            .refused_text(r#"{"amount": 30, "card":"#),
        AuditEntry::new(t, AuditVerdict::Deny)
            .tool("refund")
            .risk("destructive")
            .refused_digest(raw.as_bytes(), &key),
        AuditEntry::new(t, AuditVerdict::Deny).tool("nope"),
    ];
    store.append_all(entries).unwrap();
    let records = store.tail(4).unwrap();
    let json: Vec<Value<'static>> = records
        .iter()
        .map(|r| toolgate_json::from_str(&r.to_json()).unwrap().into_owned())
        .collect();
    let cut = json[0].pointer("/refused_arguments").unwrap();
    assert_eq!(cut.pointer("/bytes").unwrap().to_canonical_string(), "5000");
    assert_eq!(cut.pointer("/truncated").unwrap().as_bool(), Some(true));
    assert_eq!(
        cut.pointer("/text").unwrap().as_str(),
        Some("a".repeat(4_095).as_str()),
        "cut before the character that does not fit"
    );
    assert_eq!(
        json[0].pointer("/risk").unwrap().as_str(),
        Some("destructive")
    );
    let whole = json[1].pointer("/refused_arguments").unwrap();
    assert_eq!(
        whole.pointer("/text").unwrap().as_str(),
        Some(r#"{"amount": 30, "card":"#)
    );
    assert_eq!(whole.pointer("/truncated").unwrap().as_bool(), Some(false));
    let hmac = json[2].pointer("/refused_arguments").unwrap();
    assert!(hmac.pointer("/text").is_none());
    assert_eq!(
        hmac.pointer("/hmac").unwrap().as_str(),
        Some(key.digest(raw.as_bytes()).as_str())
    );
    // No risk, no refused text: the members are absent, not null, and the
    // record is the one older versions wrote.
    assert!(json[3].pointer("/risk").is_none());
    assert!(json[3].pointer("/refused_arguments").is_none());
    assert_eq!(records[3].entry.risk, None);
    assert!(store.verify().unwrap().is_intact());

    // The new members are under the hash.
    let seq = records[1].seq;
    db.execute(&format!(
        "UPDATE audit SET refused = '{{\"bytes\":1,\"text\":\"x\",\"truncated\":false}}' WHERE seq = {seq}"
    ));
    assert_eq!(broken(db), (seq, BreakKind::Changed));
}

/// The hash of a record without the new members is the hash of the body
/// without them: SHA-256 of the genesis and the body in the format of
/// record version 2, with no `refused_arguments` or `risk` member.
#[test]
fn a_record_without_the_new_members_keeps_its_hash() {
    let store = toolgate_store::SqliteOptions::new()
        .open_in_memory()
        .unwrap();
    let receipt = store
        .append(
            AuditEntry::new(Timestamp::from_unix_millis(1_000), AuditVerdict::Allow)
                .user("alice")
                .tool("refund"),
        )
        .unwrap();
    let body = r#"{"actor":null,"approval":null,"arguments":null,"call_id":null,"digest":null,"note":null,"policies":[],"reasons":[],"seq":1,"session":null,"time":1000,"tool":"refund","user":"alice","v":2,"verdict":"allow"}"#;
    let mut pre = vec![0u8; 32];
    pre.extend_from_slice(body.as_bytes());
    assert_eq!(receipt.hash, Digest::of(&pre));
    assert!(!store.tail(1).unwrap()[0].to_json().contains("risk"));
}

// ---- record versions ----

/// The bodies of two records as a build of record version 1 wrote them:
/// `approval` an integer.
const V1_BODIES: [&str; 2] = [
    r#"{"actor":"bob","approval":7,"arguments":null,"call_id":null,"digest":null,"note":"ok","policies":[],"reasons":[],"seq":1,"session":"s-1","time":1000,"tool":"refund","user":"alice","v":1,"verdict":"approval_granted"}"#,
    r#"{"actor":null,"approval":7,"arguments":null,"call_id":null,"digest":null,"note":null,"policies":[],"reasons":[],"seq":2,"session":"s-1","time":2000,"tool":"refund","user":"alice","v":1,"verdict":"approval_used"}"#,
];

/// Writes [`V1_BODIES`] around the store, as the version-1 code stored
/// them (no `v` column given: the migration's default), with their hashes
/// computed here from the literal bodies; the chain's head follows them.
/// Returns their hashes.
fn write_v1_records(db: &Db) -> [Digest; 2] {
    drop(open(db)); // create and migrate the database
    let mut prev = toolgate_store::GENESIS;
    let mut hashes = [prev; 2];
    for (i, (body, (verdict, time, actor, note))) in V1_BODIES
        .iter()
        .zip([
            ("approval_granted", 1000, "'bob'", "'ok'"),
            ("approval_used", 2000, "NULL", "NULL"),
        ])
        .enumerate()
    {
        let mut pre = prev.as_bytes().to_vec();
        pre.extend_from_slice(body.as_bytes());
        let hash = Digest::of(&pre);
        db.execute(&format!(
            "INSERT INTO audit (seq, time, verdict, \"user\", session, tool, call_id, reasons, \
             policies, digest, arguments, approval, actor, note, prev, hash) VALUES \
             ({seq}, {time}, '{verdict}', 'alice', 's-1', 'refund', NULL, '[]', '[]', NULL, NULL, \
             7, {actor}, {note}, {prev}, {hash});
             UPDATE audit_head SET seq = {seq}, hash = {hash} WHERE id = 1;",
            seq = i + 1,
            prev = blob(db, prev.as_bytes()),
            hash = blob(db, hash.as_bytes()),
        ));
        hashes[i] = hash;
        prev = hash;
    }
    hashes
}

/// A chain of version-1 records (written by an older build) followed by
/// version-2 records verifies; each renders in its own format.
fn version_1_records_then_version_2_records_verify(db: &Db) {
    let hashes = write_v1_records(db);
    let store = open(db);
    let e = AuditEntry::new(
        Timestamp::from_unix_millis(3_000),
        AuditVerdict::ApprovalDenied,
    )
    .user("alice")
    .tool("refund")
    .approval(ApprovalId::new(7))
    .actor("carol");
    let receipts = store.append_all(vec![e.clone(), e]).unwrap();
    assert_eq!(receipts[0].seq, 3);
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 4);
    assert_eq!(v.head, (4, receipts[1].hash));

    let records = store.tail(4).unwrap();
    let new = current_version(db);
    assert_eq!(
        records.iter().map(|r| r.version).collect::<Vec<_>>(),
        [1, 1, new, new]
    );
    assert_eq!(RECORD_VERSION, 2);
    assert_eq!(records[0].hash, hashes[0]);
    assert_eq!(records[2].prev, hashes[1]);
    // A version-1 record renders exactly as it was written.
    let mut line = V1_BODIES[0].to_owned();
    line = line.replace(
        ",\"note\":",
        &format!(",\"hash\":\"{}\",\"note\":", hashes[0]),
    );
    line = line.replace(
        ",\"reasons\":",
        &format!(",\"prev\":\"{}\",\"reasons\":", toolgate_store::GENESIS),
    );
    assert_eq!(records[0].to_json(), line);
    let json: Vec<Value<'static>> = records
        .iter()
        .map(|r| toolgate_json::from_str(&r.to_json()).unwrap().into_owned())
        .collect();
    assert_eq!(
        json[1].pointer("/approval").unwrap().to_canonical_string(),
        "7"
    );
    assert_eq!(json[1].pointer("/v").unwrap().to_canonical_string(), "1");
    // Version 2: the id as a string, the same one the approvals API gives.
    assert_eq!(json[2].pointer("/approval").unwrap().as_str(), Some("7"));
    assert_eq!(
        json[2].pointer("/v").unwrap().to_canonical_string(),
        new.to_string()
    );
    assert!(records[2].to_json().contains(r#""approval":"7""#));

    // The export of the mixed chain checks line by line, without the store.
    let mut out = Vec::new();
    assert_eq!(store.export_jsonl(&mut out).unwrap(), 4);
    let mut prev = toolgate_store::GENESIS;
    for line in String::from_utf8(out).unwrap().lines() {
        let Value::Object(mut o) = toolgate_json::from_str(line).unwrap() else {
            panic!()
        };
        let hash = parse_digest(o.remove("hash").unwrap().as_str().unwrap()).unwrap();
        assert_eq!(
            parse_digest(o.remove("prev").unwrap().as_str().unwrap()),
            Some(prev)
        );
        let mut pre = prev.as_bytes().to_vec();
        pre.extend_from_slice(canonical::to_string(&Value::Object(o)).as_bytes());
        assert_eq!(Digest::of(&pre), hash);
        prev = hash;
    }
}

/// Relabelling a version-1 record as version 2 changes its body: named.
fn tamper_version_1_relabelled_2_is_named(db: &Db) {
    write_v1_records(db);
    open(db).append(entry(3)).unwrap();
    db.execute("UPDATE audit SET v = 2 WHERE seq = 2");
    assert_eq!(broken(db), (2, BreakKind::Changed));
}

/// Relabelling a version-2 record as version 1 changes its body: named.
fn tamper_version_2_relabelled_1_is_named(db: &Db) {
    let store = open(db);
    let e = AuditEntry::new(
        Timestamp::from_unix_millis(3_000),
        AuditVerdict::ApprovalUsed,
    )
    .approval(ApprovalId::new(7));
    store.append_all(vec![entry(1), e, entry(3)]).unwrap();
    drop(store);
    db.execute("UPDATE audit SET v = 1 WHERE seq = 2");
    assert_eq!(broken(db), (2, BreakKind::Changed));
    // Without an approval the two formats differ in `v` alone: named too.
    let new = current_version(db);
    db.execute(&format!(
        "UPDATE audit SET v = {new} WHERE seq = 2; UPDATE audit SET v = 1 WHERE seq = 3"
    ));
    assert_eq!(broken(db), (3, BreakKind::Changed));
}

/// A stored version this build does not know is malformed, not guessed at.
fn an_unknown_record_version_is_malformed(db: &Db) {
    filled(db, 5);
    let new = current_version(db);
    // Version 3 needs a segment, which SQLite's single chain has not.
    let unknown = [0, -1, i64::from(SEGMENT_RECORD_VERSION) + 1, 3];
    for bad in unknown.into_iter().filter(|v| *v != i64::from(new)) {
        db.execute(&format!("UPDATE audit SET v = {bad} WHERE seq = 4"));
        assert_eq!(broken(db), (4, BreakKind::Malformed), "v = {bad}");
        assert_eq!(open(db).tail(5).unwrap_err().code(), ErrorCode::Corrupt);
    }
    db.execute(&format!("UPDATE audit SET v = {new} WHERE seq = 4"));
    assert!(open(db).verify().unwrap().is_intact());
}

on_both_backends!(
    version_1_records_then_version_2_records_verify,
    tamper_version_1_relabelled_2_is_named,
    tamper_version_2_relabelled_1_is_named,
    an_unknown_record_version_is_malformed,
    refused_arguments_and_risk_are_recorded_and_chained,
    appends_form_a_chain_that_verifies,
    group_commit_gives_every_thread_its_own_committed_record,
    tail_list_and_filters,
    secret_fields_are_replaced_by_their_digest,
    export_lines_can_be_checked_without_the_store,
    a_newer_schema_is_refused,
    reopening_keeps_the_chain_going,
    tamper_changed_field_is_named,
    tamper_changed_arguments_is_named,
    tamper_rehashed_record_breaks_the_next_link,
    tamper_deleted_record_is_named,
    tamper_deleted_last_record_is_named,
    tamper_reordered_records_are_named,
    tamper_inserted_record_is_named,
    tamper_appended_record_around_the_store_is_named,
    tamper_garbage_is_named_malformed,
);
