//! Backward pages over filtered records (`before`, `newest_first`), the
//! verdict set filter, and the service's event verdicts in the chain.
#![allow(clippy::unwrap_used, reason = "test code")]

use toolgate_store::{AuditEntry, AuditFilter, AuditVerdict, SqliteStore, Store, Timestamp};

fn seqs(records: &[toolgate_store::AuditRecord]) -> Vec<u64> {
    records.iter().map(|r| r.seq).collect()
}

fn filled() -> SqliteStore {
    let store = SqliteStore::open_in_memory().unwrap();
    let entries = (1..=20)
        .map(|i: i64| {
            let verdict = match i % 4 {
                0 => AuditVerdict::Deny,
                1 => AuditVerdict::Unauthorized,
                2 => AuditVerdict::Forbidden,
                _ => AuditVerdict::Allow,
            };
            AuditEntry::new(Timestamp::from_unix_millis(1_000 + i), verdict)
                .user(if i % 2 == 0 { "alice" } else { "bob" })
                .note(format!("POST /v1/decide #{i}"))
        })
        .collect();
    store.append_all(entries).unwrap();
    store
}

#[test]
fn newest_first_pages_backward_over_matches_only() {
    let store = filled();
    // alice has the even seqs: the newest three, then the three before.
    let page = store
        .list(&AuditFilter::new().user("alice").limit(3).newest_first())
        .unwrap();
    assert_eq!(seqs(&page), [16, 18, 20]);
    let page = store
        .list(
            &AuditFilter::new()
                .user("alice")
                .limit(3)
                .newest_first()
                .before(16),
        )
        .unwrap();
    assert_eq!(seqs(&page), [10, 12, 14]);
    let page = store
        .list(
            &AuditFilter::new()
                .user("alice")
                .limit(3)
                .newest_first()
                .before(4),
        )
        .unwrap();
    assert_eq!(seqs(&page), [2]);
    // Forward with both cursors: a window.
    let page = store
        .list(&AuditFilter::new().after(5).before(9).limit(100))
        .unwrap();
    assert_eq!(seqs(&page), [6, 7, 8]);
}

#[test]
fn verdict_sets() {
    let store = filled();
    let page = store
        .list(
            &AuditFilter::new()
                .verdicts([AuditVerdict::Unauthorized, AuditVerdict::Forbidden])
                .limit(100),
        )
        .unwrap();
    assert_eq!(seqs(&page), [1, 2, 5, 6, 9, 10, 13, 14, 17, 18]);
    let page = store
        .list(
            &AuditFilter::new()
                .verdicts([AuditVerdict::Unauthorized, AuditVerdict::Forbidden])
                .user("alice")
                .limit(2)
                .newest_first(),
        )
        .unwrap();
    assert_eq!(seqs(&page), [14, 18]);
    assert!(page
        .iter()
        .all(|r| r.entry.verdict == AuditVerdict::Forbidden));
}

#[test]
fn service_verdicts_round_trip_and_verify() {
    let store = filled();
    store
        .append(
            AuditEntry::new(
                Timestamp::from_unix_millis(5_000),
                AuditVerdict::ConfigReload,
            )
            .actor("ops")
            .reason("applied"),
        )
        .unwrap();
    assert!(store.verify().unwrap().is_intact());
    let mut out = Vec::new();
    assert_eq!(store.export_jsonl(&mut out).unwrap(), 21);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#""verdict":"unauthorized""#));
    assert!(text.contains(r#""verdict":"forbidden""#));
    assert!(text.contains(r#""verdict":"config_reload""#));
    for v in [
        AuditVerdict::Unauthorized,
        AuditVerdict::Forbidden,
        AuditVerdict::ConfigReload,
        AuditVerdict::ToolOffered,
    ] {
        assert_eq!(AuditVerdict::parse(v.as_str()), Some(v));
    }
}
