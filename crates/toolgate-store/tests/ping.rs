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
