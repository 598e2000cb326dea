//! The walk that verifies the hash chain ([`crate::Store::verify`]).
//!
//! The backend reads the chain's head and the rows by ascending `seq` in
//! one consistent snapshot; [`walk`] decides, row by row, where the chain
//! first breaks:
//!
//! 1. a row whose `seq` cannot be read: `malformed`, at the `seq` expected;
//! 2. a row whose `seq` is not the next one: `missing`, at the `seq`
//!    expected (the record was deleted);
//! 3. a row that cannot be read as a record: `malformed`;
//! 4. a record whose `prev` is not the previous record's hash: `relinked`;
//! 5. a record whose hash is not the hash of its own body: `changed`.
//!
//! Then the head: a head past the last record is `missing` (records cut
//! from the end), a record past the head is `unexpected` (appended around
//! the store), and a head whose hash is not the last record's is
//! `changed`.

use toolgate_json::Digest;

use crate::audit::{AuditRecord, BreakKind, ChainBreak, Verification, GENESIS};
use crate::error::{Error, ErrorCode};
use crate::rules::record::digest;

/// One stored row of the chain, read lazily: its `seq`, then (only if the
/// walk gets that far) the whole record.
pub(crate) trait StoredRow {
    /// The row's `seq`, or `None` if it cannot be read.
    fn seq(&self) -> Option<u64>;
    /// The row as a record, or `None` if it cannot be read as one.
    fn record(self) -> Option<AuditRecord>;
}

/// The chain's head as stored (`seq`, hash), checked.
pub(crate) fn head(seq: i64, hash: &[u8]) -> Result<(u64, Digest), Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "the audit chain's head is malformed");
    Ok((
        u64::try_from(seq).map_err(|_| corrupt())?,
        digest(hash).ok_or_else(corrupt)?,
    ))
}

/// Walks `rows` (by ascending `seq`) against the stored `head`; the first
/// error reading a row is returned as it is.
pub(crate) fn walk<R: StoredRow, E>(
    head: (u64, Digest),
    rows: impl IntoIterator<Item = Result<R, E>>,
) -> Result<Verification, E> {
    let (head_seq, head_hash) = head;
    let mut expected: u64 = 1;
    let mut prev = GENESIS;
    let mut records: u64 = 0;
    let broken = |seq, kind| Some(ChainBreak { seq, kind });
    let mut result = None;
    for row in rows {
        let row = row?;
        let Some(seq) = row.seq() else {
            result = broken(expected, BreakKind::Malformed);
            break;
        };
        if seq != expected {
            result = broken(expected, BreakKind::Missing);
            break;
        }
        let Some(record) = row.record() else {
            result = broken(seq, BreakKind::Malformed);
            break;
        };
        if record.prev != prev {
            result = broken(seq, BreakKind::Relinked);
            break;
        }
        if record.expected_hash() != record.hash {
            result = broken(seq, BreakKind::Changed);
            break;
        }
        prev = record.hash;
        records += 1;
        expected += 1;
    }
    let last = expected - 1;
    if result.is_none() {
        if head_seq > last {
            result = broken(expected, BreakKind::Missing);
        } else if head_seq < last {
            result = broken(head_seq + 1, BreakKind::Unexpected);
        } else if head_hash != prev {
            result = broken(last, BreakKind::Changed);
        }
    }
    Ok(Verification {
        records,
        head: (records, prev),
        broken: result,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]
    use super::*;
    use crate::approval::ApprovalId;
    use crate::audit::{chain_hash, AuditEntry, AuditVerdict, Place, RECORD_VERSION};
    use crate::time::Timestamp;

    /// A row as the walk sees it: an unreadable `seq` or record is `None`.
    #[derive(Clone)]
    struct Row {
        seq: Option<u64>,
        record: Option<AuditRecord>,
    }

    impl StoredRow for Row {
        fn seq(&self) -> Option<u64> {
            self.seq
        }
        fn record(self) -> Option<AuditRecord> {
            self.record
        }
    }

    /// An intact chain of `n` records (odd ones version 1, even ones the
    /// current version) and its head.
    fn chain(n: u64) -> (Vec<Row>, (u64, Digest)) {
        let mut prev = GENESIS;
        let mut rows = Vec::new();
        for seq in 1..=n {
            let entry =
                AuditEntry::new(Timestamp::from_unix_millis(seq as i64), AuditVerdict::Allow)
                    .approval(ApprovalId::new(seq));
            let version = if seq % 2 == 1 { 1 } else { RECORD_VERSION };
            let hash = chain_hash(&prev, Place::single(seq), version, &entry);
            rows.push(Row {
                seq: Some(seq),
                record: Some(AuditRecord {
                    version,
                    seq,
                    segment: 0,
                    sseq: seq,
                    prev,
                    hash,
                    entry,
                }),
            });
            prev = hash;
        }
        (rows, (n, prev))
    }

    fn verify(rows: Vec<Row>, head: (u64, Digest)) -> Verification {
        walk(head, rows.into_iter().map(Ok::<_, ()>)).unwrap()
    }

    fn broken(rows: Vec<Row>, head: (u64, Digest)) -> (u64, BreakKind) {
        let b = verify(rows, head).broken.expect("the chain must be broken");
        (b.seq, b.kind)
    }

    #[test]
    fn an_intact_chain_verifies_and_reports_its_head() {
        let (rows, head) = chain(6);
        let v = verify(rows, head);
        assert!(v.is_intact());
        assert_eq!((v.records, v.head), (6, head));
        let v = verify(Vec::new(), (0, GENESIS));
        assert!(v.is_intact());
        assert_eq!((v.records, v.head), (0, (0, GENESIS)));
    }

    #[test]
    fn a_deleted_record_is_missing() {
        let (mut rows, head) = chain(6);
        rows.remove(2);
        assert_eq!(broken(rows, head), (3, BreakKind::Missing));
    }

    #[test]
    fn records_cut_from_the_end_are_missing() {
        let (mut rows, head) = chain(6);
        rows.truncate(4);
        assert_eq!(broken(rows, head), (5, BreakKind::Missing));
        // Every record cut: the first is missing.
        assert_eq!(broken(Vec::new(), head), (1, BreakKind::Missing));
    }

    #[test]
    fn a_record_linked_to_another_predecessor_is_relinked() {
        let (mut rows, head) = chain(6);
        rows.swap(2, 3);
        rows[2].seq = Some(3);
        rows[3].seq = Some(4);
        assert_eq!(broken(rows, head), (3, BreakKind::Relinked));
        // Rehashed after a change: its successor no longer links to it.
        let (mut rows, head) = chain(6);
        let r = rows[1].record.as_mut().unwrap();
        r.entry.verdict = AuditVerdict::Deny;
        r.hash = r.expected_hash();
        assert_eq!(broken(rows, head), (3, BreakKind::Relinked));
    }

    #[test]
    fn a_changed_record_is_changed() {
        let (mut rows, head) = chain(6);
        rows[3].record.as_mut().unwrap().entry.user = Some("mallory".into());
        assert_eq!(broken(rows, head), (4, BreakKind::Changed));
        // Its format version is under the hash: relabelled either way.
        for i in [0, 1] {
            let (mut rows, head) = chain(6);
            let r = rows[i].record.as_mut().unwrap();
            r.version = if r.version == 1 { RECORD_VERSION } else { 1 };
            assert_eq!(broken(rows, head), (i as u64 + 1, BreakKind::Changed));
        }
    }

    #[test]
    fn a_head_whose_hash_differs_is_a_changed_last_record() {
        let (rows, (seq, _)) = chain(6);
        assert_eq!(
            broken(rows, (seq, Digest::of(b"x"))),
            (6, BreakKind::Changed)
        );
    }

    #[test]
    fn an_unreadable_row_is_malformed() {
        let (mut rows, head) = chain(6);
        rows[4].record = None;
        assert_eq!(broken(rows, head), (5, BreakKind::Malformed));
        // An unreadable seq: malformed at the seq expected there.
        let (mut rows, head) = chain(6);
        rows[1].seq = None;
        assert_eq!(broken(rows, head), (2, BreakKind::Malformed));
        // A gap is found before the record is read.
        let (mut rows, head) = chain(6);
        rows[1].seq = Some(9);
        rows[1].record = None;
        assert_eq!(broken(rows, head), (2, BreakKind::Missing));
    }

    #[test]
    fn a_record_past_the_head_is_unexpected() {
        let (rows, head) = chain(6);
        let (_, old_head) = chain(4);
        assert_eq!(broken(rows, old_head), (5, BreakKind::Unexpected));
        assert_ne!(old_head, head);
    }

    #[test]
    fn only_the_first_break_is_named_and_counted_up_to() {
        let (mut rows, head) = chain(6);
        rows[1].record.as_mut().unwrap().entry.tool = Some("x".into());
        rows[4].record = None;
        let v = verify(rows.clone(), head);
        assert_eq!(
            v.broken,
            Some(ChainBreak {
                seq: 2,
                kind: BreakKind::Changed
            })
        );
        let first = rows[0].record.as_ref().unwrap().hash;
        assert_eq!((v.records, v.head), (1, (1, first)));
    }

    #[test]
    fn a_read_error_is_returned_as_it_is() {
        let (rows, head) = chain(3);
        let mut items: Vec<Result<Row, &str>> = rows.into_iter().map(Ok).collect();
        items.insert(1, Err("gone"));
        assert_eq!(walk(head, items).unwrap_err(), "gone");
    }

    #[test]
    fn a_stored_head_is_checked() {
        let h = Digest::of(b"h");
        assert_eq!(head(3, h.as_bytes()).unwrap(), (3, h));
        assert_eq!(
            head(-1, h.as_bytes()).unwrap_err().code(),
            ErrorCode::Corrupt
        );
        assert_eq!(head(3, b"short").unwrap_err().code(), ErrorCode::Corrupt);
    }
}
