//! Reading rows back into records, and appending to the chain inside a
//! transaction.

use rusqlite::{Connection, OptionalExtension, Row};
use toolgate_json::Digest;

use crate::approval::{Approval, ApprovalId, ApprovalKind, ApprovalState, Quorum};
use crate::audit::{self, AppendReceipt, AuditEntry, AuditRecord, Place};
use crate::error::{Error, ErrorCode};
use crate::rules::chain::{self, StoredRow};
use crate::rules::record::{digest, EntryColumns, RawRecord};
use crate::time::Timestamp;

/// The audit table's columns, in the order records are read and written.
macro_rules! audit_columns {
    () => {
        "seq, time, verdict, user, session, tool, call_id, reasons, \
         policies, digest, arguments, approval, actor, note, prev, hash, refused, risk, v"
    };
}

pub(crate) const AUDIT_COLUMNS: &str = audit_columns!();

/// Appends one record (one parameter per column), a statement written out
/// once.
const INSERT_AUDIT: &str = concat!(
    "INSERT INTO audit (",
    audit_columns!(),
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
);

pub(crate) const APPROVAL_COLUMNS: &str = "id, kind, user, session, tool, digest, created_at, \
     expires_at, state, decided_by, decided_at, note, used_at, uses, quorum, not_own, votes, upstream";

/// Reads the [`AUDIT_COLUMNS`] of a row.
pub(crate) fn raw_record(row: &Row<'_>) -> rusqlite::Result<RawRecord> {
    Ok(RawRecord {
        seq: row.get(0)?,
        time: row.get(1)?,
        verdict: row.get(2)?,
        user: row.get(3)?,
        session: row.get(4)?,
        tool: row.get(5)?,
        call_id: row.get(6)?,
        reasons: row.get(7)?,
        policies: row.get(8)?,
        digest: row.get(9)?,
        arguments: row.get(10)?,
        approval: row.get(11)?,
        actor: row.get(12)?,
        note: row.get(13)?,
        prev: row.get(14)?,
        hash: row.get(15)?,
        refused: row.get(16)?,
        risk: row.get(17)?,
        v: row.get(18)?,
        segment: None,
        sseq: None,
    })
}

/// A row of the chain as [`chain::walk`] reads it: its `seq` and its
/// columns, each `None` where the stored value is not of the column's type.
pub(crate) struct ChainRow {
    seq: Option<u64>,
    raw: Option<RawRecord>,
}

impl ChainRow {
    /// Reads the [`AUDIT_COLUMNS`] of a row; never fails.
    pub(crate) fn read(row: &Row<'_>) -> Self {
        Self {
            seq: row
                .get::<_, i64>(0)
                .ok()
                .and_then(|s| u64::try_from(s).ok()),
            raw: raw_record(row).ok(),
        }
    }
}

impl StoredRow for ChainRow {
    fn seq(&self) -> Option<u64> {
        self.seq
    }

    fn record(self) -> Option<AuditRecord> {
        self.raw.and_then(RawRecord::into_record)
    }
}

/// Reads a row as a record, or fails with `store_corrupt`.
pub(crate) fn record(row: &Row<'_>) -> Result<AuditRecord, Error> {
    raw_record(row)
        .map_err(|e| Error::db("reading an audit record", e))?
        .into_checked()
}

/// Reads the [`APPROVAL_COLUMNS`] of a row.
pub(crate) fn approval(row: &Row<'_>) -> Result<Approval, Error> {
    let db = |e| Error::db("reading an approval", e);
    let corrupt = || Error::new(ErrorCode::Corrupt, "an approval cannot be read");
    let id: i64 = row.get(0).map_err(db)?;
    let kind: String = row.get(1).map_err(db)?;
    let digest_bytes: Option<Vec<u8>> = row.get(5).map_err(db)?;
    let state: String = row.get(8).map_err(db)?;
    let uses: i64 = row.get(13).map_err(db)?;
    Ok(Approval {
        id: ApprovalId::new(u64::try_from(id).map_err(|_| corrupt())?),
        kind: ApprovalKind::parse(&kind).ok_or_else(corrupt)?,
        user: row.get(2).map_err(db)?,
        session: row.get(3).map_err(db)?,
        tool: row.get(4).map_err(db)?,
        digest: match digest_bytes {
            Some(d) => Some(digest(&d).ok_or_else(corrupt)?),
            None => None,
        },
        created_at: Timestamp::from_unix_millis(row.get(6).map_err(db)?),
        expires_at: Timestamp::from_unix_millis(row.get(7).map_err(db)?),
        state: ApprovalState::parse(&state).ok_or_else(corrupt)?,
        decided_by: row.get(9).map_err(db)?,
        decided_at: row
            .get::<_, Option<i64>>(10)
            .map_err(db)?
            .map(Timestamp::from_unix_millis),
        note: row.get(11).map_err(db)?,
        used_at: row
            .get::<_, Option<i64>>(12)
            .map_err(db)?
            .map(Timestamp::from_unix_millis),
        uses: u64::try_from(uses).map_err(|_| corrupt())?,
        quorum: Quorum::new(
            u32::try_from(row.get::<_, i64>(14).map_err(db)?).map_err(|_| corrupt())?,
            row.get::<_, i64>(15).map_err(db)? != 0,
        ),
        votes: u32::try_from(row.get::<_, i64>(16).map_err(db)?).map_err(|_| corrupt())?,
        upstream: row.get(17).map_err(db)?,
    })
}

pub(crate) fn get_approval(conn: &Connection, id: ApprovalId) -> Result<Option<Approval>, Error> {
    let Ok(id) = i64::try_from(id.get()) else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"
        ))
        .map_err(|e| Error::db("reading an approval", e))?;
    let mut rows = stmt
        .query([id])
        .map_err(|e| Error::db("reading an approval", e))?;
    match rows
        .next()
        .map_err(|e| Error::db("reading an approval", e))?
    {
        Some(row) => approval(row).map(Some),
        None => Ok(None),
    }
}

/// The chain's head, loaded lazily inside a write transaction; appended
/// records move it, and it is saved before the commit.
pub(crate) struct Chain {
    head: Option<(u64, Digest)>,
    dirty: bool,
}

impl Chain {
    pub(crate) fn new() -> Self {
        Self {
            head: None,
            dirty: false,
        }
    }

    fn load(conn: &Connection) -> Result<(u64, Digest), Error> {
        let db = |e| Error::db("reading the audit chain's head", e);
        let (seq, hash): (i64, Vec<u8>) = conn
            .prepare_cached("SELECT seq, hash FROM audit_head WHERE id = 1")
            .map_err(db)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db)?
            .ok_or_else(|| Error::new(ErrorCode::Corrupt, "the audit chain's head is missing"))?;
        chain::head(seq, &hash)
    }

    /// The sequence number the next appended record takes.
    pub(crate) fn next_seq(&mut self, conn: &Connection) -> Result<i64, Error> {
        let (seq, prev) = match self.head {
            Some(h) => h,
            None => Self::load(conn)?,
        };
        self.head = Some((seq, prev));
        seq.checked_add(1)
            .and_then(|s| i64::try_from(s).ok())
            .ok_or_else(|| Error::new(ErrorCode::Full, "the audit chain is full"))
    }

    /// Appends `entry` after the head.
    pub(crate) fn append(
        &mut self,
        conn: &Connection,
        entry: &AuditEntry,
    ) -> Result<AppendReceipt, Error> {
        let (seq, prev) = match self.head {
            Some(h) => h,
            None => Self::load(conn)?,
        };
        let seq = seq
            .checked_add(1)
            .ok_or_else(|| Error::new(ErrorCode::Full, "the audit chain is full"))?;
        let hash = audit::chain_hash(&prev, Place::single(seq), audit::RECORD_VERSION, entry);
        let db = |e| Error::db("appending an audit record", e);
        let seq_i = i64::try_from(seq)
            .map_err(|_| Error::new(ErrorCode::Full, "the audit chain is full"))?;
        let columns = EntryColumns::of(entry)?;
        let mut stmt = conn.prepare_cached(INSERT_AUDIT).map_err(db)?;
        stmt.execute(rusqlite::params![
            seq_i,
            entry.time.unix_millis(),
            entry.verdict.as_str(),
            entry.user,
            entry.session,
            entry.tool,
            entry.call_id,
            columns.reasons,
            columns.policies,
            entry.digest.as_ref().map(|d| d.as_bytes().as_slice()),
            entry.arguments,
            columns.approval,
            entry.actor,
            entry.note,
            prev.as_bytes().as_slice(),
            hash.as_bytes().as_slice(),
            entry.refused_arguments,
            entry.risk,
            audit::RECORD_VERSION,
        ])
        .map_err(db)?;
        self.head = Some((seq, hash));
        self.dirty = true;
        Ok(AppendReceipt {
            seq,
            hash,
            refused: None,
        })
    }

    /// Saves the head if records were appended.
    pub(crate) fn save(&self, conn: &Connection) -> Result<(), Error> {
        if let (true, Some((seq, hash))) = (self.dirty, self.head) {
            let seq = i64::try_from(seq)
                .map_err(|_| Error::new(ErrorCode::Full, "the audit chain is full"))?;
            let db = |e| Error::db("saving the audit chain's head", e);
            conn.prepare_cached("UPDATE audit_head SET seq = ?1, hash = ?2 WHERE id = 1")
                .map_err(db)?
                .execute(rusqlite::params![seq, hash.as_bytes().as_slice()])
                .map_err(db)?;
        }
        Ok(())
    }
}

/// Reads the head without a write transaction (for `verify`).
pub(crate) fn head(conn: &Connection) -> Result<(u64, Digest), Error> {
    Chain::load(conn)
}
