//! `Store::ping`, the readiness probe: it fails while the store cannot take
//! a write, and changes nothing.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::time::Duration;

use toolgate_store::{ErrorCode, SqliteOptions, Store};

#[test]
fn ping_reports_a_held_write_lock_and_a_read_only_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let store = SqliteOptions::new()
        .busy_timeout(Duration::from_millis(100))
        .open(&path)
        .unwrap();
    store.ping().unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    assert_eq!(store.ping().unwrap_err().code(), ErrorCode::Busy);
    other.execute_batch("ROLLBACK").unwrap();
    store.ping().unwrap();
    // Nothing was written.
    assert_eq!(store.verify().unwrap().records, 0);

    let ro = SqliteOptions::new().read_only(true).open(&path).unwrap();
    assert_eq!(ro.ping().unwrap_err().code(), ErrorCode::ReadOnly);
}

/// Issue 13, item 4: once an audit append fails for want of space, the
/// probe fails too (it writes as much as a record, then takes it back).
#[test]
fn ping_fails_when_an_append_would_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteOptions::new()
        .max_database_bytes(256 * 1024)
        .open(dir.path().join("audit.db"))
        .unwrap();
    store.ping().unwrap();
    let entry = || {
        toolgate_store::AuditEntry::new(
            toolgate_store::Timestamp::from_unix_seconds(1_767_225_600),
            toolgate_store::AuditVerdict::Deny,
        )
        .user("alice")
        .note("x".repeat(2000))
    };
    let mut full = None;
    for _ in 0..1000 {
        if let Err(e) = store.append(entry()) {
            full = Some(e);
            break;
        }
    }
    assert_eq!(full.expect("the limit is reached").code(), ErrorCode::Full);
    assert_eq!(store.ping().unwrap_err().code(), ErrorCode::Full);
    assert!(store.verify().unwrap().is_intact());
}
