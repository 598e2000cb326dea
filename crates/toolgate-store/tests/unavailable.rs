//! A store that cannot be written fails with a typed error, so the gate
//! denies with `store_unavailable`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::time::{Duration, Instant};

use toolgate_store::{
    AuditEntry, AuditVerdict, ErrorCode, SqliteOptions, SqliteStore, Store, Timestamp,
};

fn entry() -> AuditEntry {
    AuditEntry::new(Timestamp::EPOCH, AuditVerdict::Allow)
        .user("alice")
        .tool("refund")
        .note("x".repeat(2000))
}

#[test]
fn unwritable_directory_cannot_be_opened() {
    // `/proc` refuses new files even to root.
    let err = SqliteStore::open("/proc/toolgate-store-test/audit.db").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err}");
    let err = SqliteStore::open("/proc/toolgate-store-test.db").unwrap_err();
    assert!(
        matches!(err.code(), ErrorCode::Unavailable | ErrorCode::ReadOnly),
        "{err}"
    );
    // A directory that is a file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let err = SqliteStore::open(file.join("audit.db")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err}");
}

#[test]
fn not_a_database_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    std::fs::write(&path, vec![0x42; 8192]).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Corrupt, "{err}");
}

#[test]
fn read_only_store_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    SqliteStore::open(&path).unwrap().append(entry()).unwrap();
    let ro = SqliteOptions::new().read_only(true).open(&path).unwrap();
    assert_eq!(ro.append(entry()).unwrap_err().code(), ErrorCode::ReadOnly);
    assert_eq!(
        ro.set_kill_switch(toolgate_store::KillMode::DenyAll, "", "x")
            .unwrap_err()
            .code(),
        ErrorCode::ReadOnly
    );
    // Reading still works.
    assert!(ro.verify().unwrap().is_intact());
    assert_eq!(ro.tail(10).unwrap().len(), 1);
}

#[test]
fn read_only_file_refuses_writes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    drop(SqliteStore::open(&path).unwrap());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
        // Root (CAP_DAC_OVERRIDE) writes through file modes; the read-only
        // store above covers this case.
        toolgate_testkit::skip_note(
            "this process writes through read-only file modes (root); the read-only store case covers it",
        );
        return;
    }
    let err = match SqliteStore::open(&path) {
        Err(e) => e,
        Ok(store) => store.append(entry()).unwrap_err(),
    };
    assert!(
        matches!(err.code(), ErrorCode::ReadOnly | ErrorCode::Unavailable),
        "{err}"
    );
}

#[test]
fn missing_file_opened_read_only_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let err = SqliteOptions::new()
        .read_only(true)
        .open(dir.path().join("none.db"))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err}");
}

#[test]
fn locked_beyond_the_busy_timeout_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let store = SqliteOptions::new()
        .busy_timeout(Duration::from_millis(200))
        .open(&path)
        .unwrap();
    store.append(entry()).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let start = Instant::now();
    let err = store.append(entry()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Busy, "{err}");
    assert!(start.elapsed() >= Duration::from_millis(150));
    assert_eq!(
        store
            .record_call("s", 1, AuditVerdict::Deny, &["x"])
            .unwrap_err()
            .code(),
        ErrorCode::Busy
    );
    // Reads go on (WAL), and writes recover once the lock is gone.
    assert_eq!(store.tail(5).unwrap().len(), 1);
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(store.append(entry()).unwrap().seq, 2);
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn full_database_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let store = SqliteOptions::new()
        .max_database_bytes(256 * 1024)
        .open(&path)
        .unwrap();
    let mut last = None;
    for _ in 0..1000 {
        if let Err(e) = store.append(entry()) {
            last = Some(e);
            break;
        }
    }
    let err = last.expect("the size limit must be reached");
    assert_eq!(err.code(), ErrorCode::Full, "{err}");
    // What was committed is intact.
    assert!(store.verify().unwrap().is_intact());
}
