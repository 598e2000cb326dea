//! An audit row's columns: what a backend stores for an entry, and the
//! checked record it reads back. The columns are the same in every backend
//! (`seq, time, verdict, user, session, tool, call_id, reasons, policies,
//! digest, arguments, approval, actor, note, prev, hash, refused, risk, v`);
//! only their SQL types differ.

use std::io::Write;
use std::sync::OnceLock;

use toolgate_json::Digest;

use crate::approval::ApprovalId;
use crate::audit::{self, AuditEntry, AuditRecord, AuditVerdict, RedactionKey};
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// Fails with `conflict` when `entry` expects its commit to bring its
/// session's responses to a count other than `counted` (the count just
/// written, in the entry's transaction): the transaction is then rolled
/// back and nothing is written ([`AuditEntry::expects_responses`]).
pub(crate) fn check_responses(entry: &AuditEntry, counted: u64) -> Result<(), Error> {
    match entry.expects_responses {
        Some(want) if want != counted => Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "the session's responses were counted meanwhile ({counted}, decided at {want})"
            ),
        )),
        _ => Ok(()),
    }
}

/// The error of a commit whose record claims a call id
/// ([`AuditEntry::claims_call`]) claimed already.
pub(crate) fn call_claimed() -> Error {
    Error::new(
        ErrorCode::Conflict,
        "the call id was claimed already in its session",
    )
}

/// An audit row as stored, before it is checked.
#[derive(Debug, Clone)]
pub(crate) struct RawRecord {
    pub(crate) seq: i64,
    pub(crate) time: i64,
    pub(crate) verdict: String,
    pub(crate) user: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) call_id: Option<String>,
    pub(crate) reasons: String,
    pub(crate) policies: String,
    pub(crate) digest: Option<Vec<u8>>,
    pub(crate) arguments: Option<String>,
    pub(crate) approval: Option<i64>,
    pub(crate) actor: Option<String>,
    pub(crate) note: Option<String>,
    pub(crate) prev: Vec<u8>,
    pub(crate) hash: Vec<u8>,
    pub(crate) refused: Option<String>,
    pub(crate) risk: Option<String>,
    pub(crate) v: i64,
    /// The segment and the place in it (PostgreSQL); `None` in a single
    /// chain, and for the records a segmented log took over from one.
    pub(crate) segment: Option<i64>,
    pub(crate) sseq: Option<i64>,
}

impl RawRecord {
    /// The record, or `None` if a column does not hold what the format
    /// says (a record version this build does not know included).
    pub(crate) fn into_record(self) -> Option<AuditRecord> {
        for text in [&self.arguments, &self.refused].into_iter().flatten() {
            toolgate_json::from_str(text).ok()?;
        }
        let entry = AuditEntry {
            time: Timestamp::from_unix_millis(self.time),
            verdict: AuditVerdict::parse(&self.verdict)?,
            user: self.user,
            session: self.session,
            tool: self.tool,
            call_id: self.call_id,
            reasons: string_list(&self.reasons)?,
            policies: string_list(&self.policies)?,
            digest: match self.digest {
                Some(d) => Some(digest(&d)?),
                None => None,
            },
            arguments: self.arguments,
            approval: match self.approval {
                Some(id) => Some(ApprovalId::new(u64::try_from(id).ok()?)),
                None => None,
            },
            actor: self.actor,
            note: self.note,
            risk: self.risk,
            refused_arguments: self.refused,
            counts_response: false,
            expects_responses: None,
            claims_call: false,
            charges: Vec::new(),
            labels: Vec::new(),
        };
        let version = audit::record_version(self.v)?;
        let seq = u64::try_from(self.seq).ok()?;
        // Version 3 records stand in a segment; older ones in a single
        // chain (a segmented log keeps those it took over as segment 0).
        let (segment, sseq) = match (self.segment, self.sseq) {
            (Some(segment), Some(sseq)) if version >= audit::SEGMENT_RECORD_VERSION => (
                u64::try_from(segment).ok().filter(|s| *s > 0)?,
                u64::try_from(sseq).ok().filter(|s| *s > 0)?,
            ),
            _ if version >= audit::SEGMENT_RECORD_VERSION => return None,
            (segment, sseq) => (
                u64::try_from(segment.unwrap_or(0)).ok()?,
                sseq.map_or(Some(seq), |s| u64::try_from(s).ok())?,
            ),
        };
        Some(AuditRecord {
            version,
            seq,
            segment,
            sseq,
            prev: digest(&self.prev)?,
            hash: digest(&self.hash)?,
            entry,
        })
    }

    /// The record, or `store_corrupt` (for reads other than `verify`, which
    /// names the break instead).
    pub(crate) fn into_checked(self) -> Result<AuditRecord, Error> {
        self.into_record()
            .ok_or_else(|| Error::new(ErrorCode::Corrupt, "an audit record cannot be read"))
    }
}

/// The columns of an entry that are not stored as they are: the reason and
/// policy lists as JSON arrays, the approval id as a signed integer.
pub(crate) struct EntryColumns {
    pub(crate) reasons: String,
    pub(crate) policies: String,
    pub(crate) approval: Option<i64>,
}

impl EntryColumns {
    /// Encodes `entry`'s lists and approval id.
    pub(crate) fn of(entry: &AuditEntry) -> Result<Self, Error> {
        check_bounds(entry)?;
        let approval = match entry.approval {
            Some(id) => Some(
                i64::try_from(id.get())
                    .map_err(|_| Error::new(ErrorCode::InvalidInput, "approval id out of range"))?,
            ),
            None => None,
        };
        let mut reasons = String::new();
        audit::str_array(&mut reasons, &entry.reasons);
        let mut policies = String::new();
        audit::str_array(&mut policies, &entry.policies);
        Ok(Self {
            reasons,
            policies,
            approval,
        })
    }
}

/// Writes `records` (by ascending `seq`) as JSON Lines, one record a line
/// ([`AuditRecord::to_json`]), and flushes; the number written. The first
/// error, reading or writing, ends the export.
pub(crate) fn write_jsonl(
    out: &mut dyn Write,
    records: impl IntoIterator<Item = Result<AuditRecord, Error>>,
) -> Result<u64, Error> {
    let io =
        |e: std::io::Error| Error::new(ErrorCode::Unavailable, "writing the export").with_source(e);
    let mut n = 0;
    for record in records {
        let mut line = record?.to_json();
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(io)?;
        n += 1;
    }
    out.flush().map_err(io)?;
    Ok(n)
}

/// The store's redaction key: `cached` once read, else `read` (its bytes
/// in the database), which must be 32 bytes long.
pub(crate) fn redaction_key(
    cached: &OnceLock<RedactionKey>,
    read: impl FnOnce() -> Result<Vec<u8>, Error>,
) -> Result<RedactionKey, Error> {
    if let Some(key) = cached.get() {
        return Ok(key.clone());
    }
    let key = RedactionKey::from_slice(&read()?)
        .ok_or_else(|| Error::new(ErrorCode::Corrupt, "the store's redaction key is malformed"))?;
    Ok(cached.get_or_init(|| key).clone())
}

/// A JSON array of strings, or `None`.
fn string_list(json: &str) -> Option<Vec<String>> {
    let v = toolgate_json::from_str(json).ok()?;
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// A stored digest: exactly 32 bytes.
pub(crate) fn digest(bytes: &[u8]) -> Option<Digest> {
    let arr: [u8; 32] = bytes.try_into().ok()?;
    Some(Digest::from_bytes(arr))
}

/// Refuses (`invalid_input`) a record naming a user, session, tool, call id
/// or actor longer than [`toolgate::identifier::MAX_IDENTIFIER_BYTES`], or
/// with a note longer than [`toolgate::identifier::MAX_NOTE_BYTES`]: no
/// record grows with a length a model or a caller chose, whichever front
/// end wrote it.
pub(crate) fn check_bounds(entry: &AuditEntry) -> Result<(), Error> {
    use toolgate::identifier::{within, MAX_IDENTIFIER_BYTES};
    for (name, value) in [
        ("user", &entry.user),
        ("session", &entry.session),
        ("tool", &entry.tool),
        ("call_id", &entry.call_id),
        ("actor", &entry.actor),
    ] {
        if value.as_deref().is_some_and(|v| !within(v)) {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!("the record's `{name}` is longer than {MAX_IDENTIFIER_BYTES} bytes"),
            ));
        }
    }
    check_note(entry.note.as_deref().unwrap_or_default())
}

/// Refuses (`invalid_input`) a note longer than
/// [`toolgate::identifier::MAX_NOTE_BYTES`].
pub(crate) fn check_note(note: &str) -> Result<(), Error> {
    let max = toolgate::identifier::MAX_NOTE_BYTES;
    if note.len() > max {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!("the note is longer than {max} bytes"),
        ));
    }
    Ok(())
}

/// Refuses (`invalid_input`) identifiers of an approval longer than
/// [`toolgate::identifier::MAX_IDENTIFIER_BYTES`].
pub(crate) fn check_identifiers(named: &[(&str, &str)]) -> Result<(), Error> {
    let max = toolgate::identifier::MAX_IDENTIFIER_BYTES;
    match named.iter().find(|(_, v)| v.len() > max) {
        Some((name, _)) => Err(Error::new(
            ErrorCode::InvalidInput,
            format!("`{name}` is longer than {max} bytes"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;
    use crate::audit::{GENESIS, RECORD_VERSION};

    fn raw() -> RawRecord {
        let entry = AuditEntry::new(Timestamp::from_unix_millis(9), AuditVerdict::ApprovalUsed)
            .approval(ApprovalId::new(7))
            .reason("r");
        let cols = EntryColumns::of(&entry).unwrap();
        RawRecord {
            seq: 1,
            time: 9,
            verdict: "approval_used".into(),
            user: None,
            session: None,
            tool: None,
            call_id: None,
            reasons: cols.reasons,
            policies: cols.policies,
            digest: None,
            arguments: None,
            approval: cols.approval,
            actor: None,
            note: None,
            prev: GENESIS.as_bytes().to_vec(),
            hash: GENESIS.as_bytes().to_vec(),
            refused: None,
            risk: None,
            v: i64::from(RECORD_VERSION),
            segment: None,
            sseq: None,
        }
    }

    #[test]
    fn records_are_exported_one_a_line_until_the_first_error() {
        let rec = raw().into_record().unwrap();
        let mut out = Vec::new();
        let n = write_jsonl(&mut out, [Ok(rec.clone()), Ok(rec.clone())]).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{}\n{}\n", rec.to_json(), rec.to_json())
        );
        let mut out = Vec::new();
        let broken = Error::new(ErrorCode::Corrupt, "an audit record cannot be read");
        let e = write_jsonl(&mut out, [Ok(rec.clone()), Err(broken), Ok(rec.clone())]);
        assert_eq!(e.unwrap_err().code(), ErrorCode::Corrupt);
        assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = write_jsonl(&mut Full, [Ok(rec)]).unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (ErrorCode::Unavailable, "writing the export")
        );
    }

    #[test]
    fn the_redaction_key_is_read_once_and_checked() {
        let cached = OnceLock::new();
        let e = redaction_key(&cached, || Ok(vec![1; 31])).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Corrupt);
        let key = redaction_key(&cached, || Ok(vec![1; 32])).unwrap();
        assert_eq!(key, RedactionKey::from_bytes([1; 32]));
        let again = redaction_key(&cached, || panic!("read twice")).unwrap();
        assert_eq!(again, key);
    }

    #[test]
    fn columns_round_trip() {
        let r = raw().into_record().unwrap();
        assert_eq!(r.entry.approval, Some(ApprovalId::new(7)));
        assert_eq!(r.entry.reasons, ["r"]);
        assert_eq!(r.version, RECORD_VERSION);
    }

    #[test]
    fn a_column_off_the_format_is_refused() {
        let cases: [fn(&mut RawRecord); 10] = [
            |r| r.verdict = "maybe".into(),
            |r| r.reasons = "{}".into(),
            |r| r.policies = "[1]".into(),
            |r| r.digest = Some(vec![0; 31]),
            |r| r.arguments = Some("{".into()),
            |r| r.refused = Some("nope".into()),
            |r| r.approval = Some(-1),
            |r| r.prev = vec![1],
            |r| r.seq = -1,
            |r| r.v = 3,
        ];
        for (i, spoil) in cases.iter().enumerate() {
            let mut r = raw();
            spoil(&mut r);
            assert!(r.clone().into_record().is_none(), "case {i}");
            assert_eq!(r.into_checked().unwrap_err().code(), ErrorCode::Corrupt);
        }
        for v in [0, 3, -1, i64::MAX] {
            let mut r = raw();
            r.v = v;
            assert!(r.into_record().is_none(), "v = {v}");
        }
        let mut r = raw();
        r.v = 1;
        assert_eq!(r.into_record().unwrap().version, 1);
    }
}
