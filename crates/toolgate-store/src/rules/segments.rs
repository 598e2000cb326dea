//! The walk that verifies a segmented log (the PostgreSQL store's; see
//! [`crate::audit#segments`]).
//!
//! The backend reads, in one consistent snapshot, the root chain's head,
//! every segment's head and the rows by ascending `seq`; [`walk`] follows
//! the rows in that order, keeping one chain state per segment, and
//! decides where the log first breaks:
//!
//! 1. a row whose `seq` cannot be read: `malformed`, one past the last
//!    `seq` read; a `seq` read twice: `unexpected`;
//! 2. a row that cannot be read as a record: `malformed`;
//! 3. a record of the root chain (one the log took over from a single
//!    chain, in segment 0, or a segment's first record): its `prev` must be
//!    the root's last hash (`relinked`), a segment's id must be its first
//!    record's `seq` (`relinked`), and it must not be past the root's head
//!    (`unexpected`);
//! 4. any other record: its segment must have been opened (`missing`, at
//!    the first record's `seq`), its `sseq` must be the segment's next one
//!    (`missing` one past the segment's last `seq` when higher, `relinked`
//!    when lower), its `prev` the segment's last hash (`relinked`), and it
//!    must not be past the segment's head (`unexpected`);
//! 5. every record's hash must be the hash of its own body (`changed`).
//!
//! Since rows are read by `seq`, the records of one segment must also come
//! in `sseq` order: a `seq` moved within or across segments breaks a hash
//! or a link. Then the heads: a root head past the root's last record is
//! `missing` at the head's `seq` (a whole segment removed), a segment head
//! past its last record `missing` (its tail cut), a head whose hash is not
//! its chain's last `changed`, and a segment head whose segment has no
//! record `missing` at the segment's id. Gaps in `seq` are not breaks:
//! numbers drawn by transactions that rolled back are never used.

use std::collections::BTreeMap;

use toolgate_json::Digest;

use crate::audit::{BreakKind, ChainBreak, Verification, GENESIS};
use crate::rules::chain::StoredRow;

/// A chain's head as stored: the `seq` (root) or `sseq` (segment) of its
/// last record, and that record's hash.
pub(crate) type Head = (u64, Digest);

/// One segment's state during the walk.
struct Segment {
    next: u64,
    prev: Digest,
    last_seq: u64,
}

/// Walks `rows` (by ascending `seq`) against the root chain's head and the
/// segments' heads (by segment id); the first error reading a row is
/// returned as it is.
pub(crate) fn walk<R: StoredRow, E>(
    root_head: Head,
    heads: &BTreeMap<u64, Head>,
    rows: impl IntoIterator<Item = Result<R, E>>,
) -> Result<Verification, E> {
    let mut root_prev = GENESIS;
    let mut root_last: u64 = 0;
    let mut open: BTreeMap<u64, Segment> = BTreeMap::new();
    let mut last = (0u64, GENESIS);
    let mut records: u64 = 0;
    let broken = |seq, kind| Some(ChainBreak { seq, kind });
    let mut result = None;
    for row in rows {
        let row = row?;
        let Some(seq) = row.seq() else {
            result = broken(last.0 + 1, BreakKind::Malformed);
            break;
        };
        if seq <= last.0 {
            result = broken(seq, BreakKind::Unexpected);
            break;
        }
        let Some(record) = row.record() else {
            result = broken(seq, BreakKind::Malformed);
            break;
        };
        // Where the row stands, as stored; its version only decides how it
        // is hashed (a record relabelled to another version is `changed`).
        let segmented = record.segment != 0;
        let in_root = !segmented || record.sseq == 1;
        let (expected_prev, past_head) = if in_root {
            if segmented && (record.segment != seq || open.contains_key(&record.segment)) {
                result = broken(seq, BreakKind::Relinked);
                break;
            }
            let past = seq > root_head.0
                || (segmented && heads.get(&record.segment).is_none_or(|h| h.0 < 1));
            (root_prev, past)
        } else {
            let Some(state) = open.get(&record.segment) else {
                let at = if record.segment < seq {
                    (record.segment, BreakKind::Missing)
                } else {
                    (seq, BreakKind::Relinked)
                };
                result = broken(at.0, at.1);
                break;
            };
            if record.sseq > state.next {
                result = broken(state.last_seq + 1, BreakKind::Missing);
                break;
            }
            if record.sseq < state.next {
                result = broken(seq, BreakKind::Relinked);
                break;
            }
            let past = heads.get(&record.segment).is_none_or(|h| h.0 < record.sseq);
            (state.prev, past)
        };
        if record.prev != expected_prev {
            result = broken(seq, BreakKind::Relinked);
            break;
        }
        if record.expected_hash() != record.hash {
            result = broken(seq, BreakKind::Changed);
            break;
        }
        if past_head {
            result = broken(seq, BreakKind::Unexpected);
            break;
        }
        if in_root {
            root_prev = record.hash;
            root_last = seq;
        }
        if segmented {
            let state = open.entry(record.segment).or_insert(Segment {
                next: 1,
                prev: GENESIS,
                last_seq: 0,
            });
            state.next += 1;
            state.prev = record.hash;
            state.last_seq = seq;
        }
        last = (seq, record.hash);
        records += 1;
    }
    if result.is_none() {
        result = heads_break(root_head, (root_last, root_prev), heads, &open);
    }
    Ok(Verification {
        records,
        head: last,
        broken: result,
    })
}

/// The first break the stored heads show, after an intact walk.
fn heads_break(
    root_head: Head,
    root: Head,
    heads: &BTreeMap<u64, Head>,
    open: &BTreeMap<u64, Segment>,
) -> Option<ChainBreak> {
    let mut found: Vec<ChainBreak> = Vec::new();
    if root_head.0 > root.0 {
        found.push(ChainBreak {
            seq: root_head.0,
            kind: BreakKind::Missing,
        });
    } else if root_head.1 != root.1 {
        found.push(ChainBreak {
            seq: root.0,
            kind: BreakKind::Changed,
        });
    }
    for (id, (sseq, hash)) in heads {
        let b = match open.get(id) {
            None => ChainBreak {
                seq: *id,
                kind: BreakKind::Missing,
            },
            Some(s) if *sseq >= s.next => ChainBreak {
                seq: s.last_seq + 1,
                kind: BreakKind::Missing,
            },
            Some(s) if *hash != s.prev => ChainBreak {
                seq: s.last_seq,
                kind: BreakKind::Changed,
            },
            Some(_) => continue,
        };
        found.push(b);
    }
    found.into_iter().min_by_key(|b| b.seq)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]
    use super::*;
    use crate::audit::{
        chain_hash, AuditEntry, AuditRecord, AuditVerdict, Place, RECORD_VERSION,
        SEGMENT_RECORD_VERSION,
    };
    use crate::time::Timestamp;

    #[derive(Clone)]
    struct Row(AuditRecord);

    impl StoredRow for Row {
        fn seq(&self) -> Option<u64> {
            Some(self.0.seq)
        }
        fn record(self) -> Option<AuditRecord> {
            Some(self.0)
        }
    }

    struct Log {
        rows: Vec<Row>,
        root: Head,
        heads: BTreeMap<u64, Head>,
    }

    impl Log {
        /// `legacy` single-chain records, then records appended to the
        /// segments named in `plan`, in that order (a segment is opened by
        /// its first record), with `seq` numbers from 1 skipping `gaps`.
        fn new(legacy: u64, plan: &[usize], gaps: &[u64]) -> Self {
            let mut rows = Vec::new();
            let mut root = (0, GENESIS);
            let mut seq = 0;
            let mut next = || {
                seq += 1;
                while gaps.contains(&seq) {
                    seq += 1;
                }
                seq
            };
            for _ in 0..legacy {
                let s = next();
                let e = AuditEntry::new(Timestamp::from_unix_millis(s as i64), AuditVerdict::Allow);
                let hash = chain_hash(&root.1, Place::single(s), RECORD_VERSION, &e);
                rows.push(Row(AuditRecord {
                    version: RECORD_VERSION,
                    seq: s,
                    segment: 0,
                    sseq: s,
                    prev: root.1,
                    hash,
                    entry: e,
                }));
                root = (s, hash);
            }
            let mut ids: BTreeMap<usize, u64> = BTreeMap::new();
            let mut heads: BTreeMap<u64, Head> = BTreeMap::new();
            for p in plan {
                let s = next();
                let segment = *ids.entry(*p).or_insert(s);
                let (sseq, prev) = match heads.get(&segment) {
                    Some((n, h)) => (n + 1, *h),
                    None => (1, root.1),
                };
                let e = AuditEntry::new(Timestamp::from_unix_millis(s as i64), AuditVerdict::Deny);
                let at = Place {
                    seq: s,
                    segment,
                    sseq,
                };
                let hash = chain_hash(&prev, at, SEGMENT_RECORD_VERSION, &e);
                rows.push(Row(AuditRecord {
                    version: SEGMENT_RECORD_VERSION,
                    seq: s,
                    segment,
                    sseq,
                    prev,
                    hash,
                    entry: e,
                }));
                if sseq == 1 {
                    root = (s, hash);
                }
                heads.insert(segment, (sseq, hash));
            }
            Self { rows, root, heads }
        }

        fn verify(&self) -> Verification {
            walk(
                self.root,
                &self.heads,
                self.rows.iter().cloned().map(Ok::<_, ()>),
            )
            .unwrap()
        }

        fn broken(&self) -> (u64, BreakKind) {
            let b = self.verify().broken.expect("the log must be broken");
            (b.seq, b.kind)
        }

        fn at(&mut self, seq: u64) -> &mut AuditRecord {
            &mut self.rows.iter_mut().find(|r| r.0.seq == seq).unwrap().0
        }

        /// Swaps the `seq` of two records, keeping the rows by `seq`.
        fn swap(&mut self, a: u64, b: u64) {
            for r in &mut self.rows {
                if r.0.seq == a {
                    r.0.seq = b;
                } else if r.0.seq == b {
                    r.0.seq = a;
                }
            }
            self.rows.sort_by_key(|r| r.0.seq);
        }

        fn remove(&mut self, seq: u64) {
            self.rows.retain(|r| r.0.seq != seq);
        }
    }

    /// Three segments interleaved after two records of a single chain,
    /// with gaps in `seq`: seq 1-2 legacy, then segments 3, 4 and 6.
    fn three() -> Log {
        Log::new(2, &[0, 1, 0, 2, 1, 2, 0, 1, 2, 0], &[5, 12])
    }

    #[test]
    fn interleaved_segments_with_gaps_verify() {
        let log = three();
        let v = log.verify();
        assert!(v.is_intact(), "{v:?}");
        assert_eq!(v.records, 12);
        let last = log.rows.last().unwrap().0.clone();
        assert_eq!(v.head, (last.seq, last.hash));
        assert_eq!(log.heads.keys().copied().collect::<Vec<_>>(), [3, 4, 7]);
        // A log of segments only, and an empty log.
        assert!(Log::new(0, &[0, 1, 1, 0], &[]).verify().is_intact());
        assert!(Log::new(0, &[], &[]).verify().is_intact());
    }

    #[test]
    fn a_removed_record_in_any_segment_is_missing() {
        for seq in [6, 10, 11] {
            let mut log = three();
            let segment = log.at(seq).segment;
            let before = log
                .rows
                .iter()
                .filter(|r| r.0.segment == segment && r.0.seq < seq)
                .map(|r| r.0.seq)
                .max()
                .unwrap();
            log.remove(seq);
            assert_eq!(log.broken(), (before + 1, BreakKind::Missing), "seq {seq}");
        }
    }

    #[test]
    fn a_removed_whole_segment_is_named() {
        // Segment 4 (seq 4, 8, 11): the next segment opened links to a
        // record that is gone.
        let mut log = three();
        for seq in [4, 8, 11] {
            log.remove(seq);
        }
        log.heads.remove(&4);
        assert_eq!(log.broken(), (7, BreakKind::Relinked));
        // The last segment opened (7, 10, 13): the root's head names it.
        let mut log = three();
        for seq in [7, 10, 13] {
            log.remove(seq);
        }
        log.heads.remove(&7);
        assert_eq!(log.broken(), (7, BreakKind::Missing));
        // Its first record only: the rest have no segment to belong to.
        let mut log = three();
        log.remove(7);
        assert_eq!(log.broken(), (7, BreakKind::Missing));
    }

    #[test]
    fn a_cut_segment_tail_is_missing() {
        let mut log = three();
        log.remove(14);
        assert_eq!(log.broken(), (11, BreakKind::Missing));
    }

    #[test]
    fn a_swapped_seq_is_named() {
        // Within a segment and across two: `seq` is under the hash.
        for (a, b) in [(6, 9), (8, 9)] {
            let mut log = three();
            log.swap(a, b);
            let (seq, kind) = log.broken();
            assert!(
                matches!(
                    kind,
                    BreakKind::Changed | BreakKind::Relinked | BreakKind::Missing
                ),
                "{a}<->{b}: {seq} {kind:?}"
            );
        }
        // Within a segment, rehashed by the attacker: the order along the
        // segment breaks (segment 3 is seq 3, 6, 10, 14).
        let mut log = three();
        log.swap(6, 10);
        for s in [6, 10] {
            let r = log.at(s);
            r.hash = r.expected_hash();
        }
        assert_eq!(log.broken(), (4, BreakKind::Missing));
    }

    #[test]
    fn a_changed_or_relinked_record_is_named() {
        let mut log = three();
        log.at(9).entry.user = Some("mallory".into());
        assert_eq!(log.broken(), (9, BreakKind::Changed));
        let mut log = three();
        log.at(9).sseq = 3;
        assert_eq!(log.broken(), (8, BreakKind::Missing));
        let mut log = three();
        log.at(9).segment = 4;
        assert_eq!(log.broken(), (9, BreakKind::Relinked));
        let mut log = three();
        log.at(8).segment = 7;
        log.at(8).sseq = 2;
        assert_eq!(log.broken(), (8, BreakKind::Relinked));
        // Rehashed after a change: the next record of its segment no
        // longer links to it.
        let mut log = three();
        let r = log.at(9);
        r.entry.verdict = AuditVerdict::Allow;
        r.hash = r.expected_hash();
        assert_eq!(log.broken(), (13, BreakKind::Relinked));
        // A legacy record: the root chain breaks.
        let mut log = three();
        let r = log.at(1);
        r.entry.verdict = AuditVerdict::Deny;
        r.hash = r.expected_hash();
        assert_eq!(log.broken(), (2, BreakKind::Relinked));
    }

    #[test]
    fn a_record_appended_around_the_store_is_unexpected() {
        let mut log = three();
        let last = log.rows.last().unwrap().0.clone();
        let mut forged = last.clone();
        forged.seq = last.seq + 5;
        forged.sseq = last.sseq + 1;
        forged.prev = last.hash;
        forged.hash = forged.expected_hash();
        log.rows.push(Row(forged));
        assert_eq!(log.broken(), (last.seq + 5, BreakKind::Unexpected));
        // A whole segment opened around the store.
        let mut log = three();
        let mut forged = last.clone();
        forged.seq = 30;
        forged.segment = 30;
        forged.sseq = 1;
        forged.prev = log.root.1;
        forged.hash = forged.expected_hash();
        log.rows.push(Row(forged));
        assert_eq!(log.broken(), (30, BreakKind::Unexpected));
    }

    #[test]
    fn a_head_that_differs_is_named() {
        let mut log = three();
        log.heads.insert(4, (3, Digest::of(b"x")));
        assert_eq!(log.broken(), (11, BreakKind::Changed));
        let mut log = three();
        log.root.1 = Digest::of(b"x");
        assert_eq!(log.broken(), (7, BreakKind::Changed));
        let mut log = three();
        log.heads.insert(99, (1, Digest::of(b"x")));
        assert_eq!(log.broken(), (99, BreakKind::Missing));
    }
}
