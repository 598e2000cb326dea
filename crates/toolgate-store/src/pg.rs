//! The shared store: [`PgStore`] on one PostgreSQL database, for several gate
//! replicas.
//!
//! Design notes:
//! - The same tables, records and hashes as the SQLite store, except that
//!   the audit log is *segmented* (see [`crate::audit#segments`]): each
//!   store (each replica process) opens a chain segment of its own on its
//!   first append and appends only to it, so replicas never wait for one
//!   another's commits. `seq` comes from a sequence (`nextval` holds no
//!   lock until the commit; numbers of rolled-back transactions are gaps,
//!   not breaks); each segment's first record links to the root chain's
//!   head (`audit_head`), which is locked only while a segment opens.
//! - Every write is one transaction. Appending locks the store's segment
//!   head (`SELECT … FOR UPDATE` on its `audit_segments` row) for the rest
//!   of the transaction, then draws the records' `seq`, so `seq` grows
//!   along the segment. The lock is always the last one a transaction
//!   takes (after approval, session or kill switch rows), so writers never
//!   deadlock; until a store has a segment its writes run one at a time,
//!   so it opens one.
//! - Appends from the threads of one process are committed together (group
//!   commit, one multi-row `INSERT` per batch, its numbers drawn in one
//!   statement).
//! - A single approval is used by an `UPDATE … WHERE used_at IS NULL`: the
//!   row lock decides a race between replicas, the loser's condition no
//!   longer holds and it updates nothing.
//! - A commit is durable when PostgreSQL's `synchronous_commit` is `on` (its
//!   default); the store does not change it.
//! - Connections come from a small pool that reconnects by itself (see
//!   `pool`): while the database is away every call fails with
//!   `store_unavailable` (the gate denies), and the first call after it
//!   returns succeeds. A connection cut while the database stays up costs
//!   no call: it is noticed before use, its generation is replaced, and a
//!   call that met it runs once more when nothing it did took effect.

mod approvals;
mod limits;
mod listen;
mod notices;
mod opening;
mod pins;
mod pool;
mod reads;
mod schema;
mod statements;
pub(crate) mod tls;
mod tx;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::Write;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, IsolationLevel, Row, Transaction};
use toolgate_json::Digest;

use crate::approval::{
    approval_state_clause, Approval, ApprovalFilter, ApprovalId, ApprovalKind, ApprovalState,
    ApprovalUse, ApprovalVote, PendingLimits, Quorum,
};
use crate::audit::{
    self, AppendReceipt, AuditEntry, AuditFilter, AuditRecord, AuditVerdict, Place, RedactionKey,
    Verification,
};
use crate::changes::{Change, ChangeListener};
use crate::error::{Error, ErrorCode};
use crate::kill::{KillMode, KillSwitchState};
use crate::notice::{Notice, NoticeState};
use crate::rules::chain::{self, StoredRow};
use crate::rules::escalation::{self, ReasonRuns};
use crate::rules::options;
use crate::rules::record::{digest, EntryColumns, RawRecord};
use crate::rules::segments;
use crate::rules::transitions::{self, ApprovalTx, Call, Decision};
use crate::rules::{self, kill};
use crate::rules::{to_i64, to_u64};
use crate::session::SessionCounters;
use crate::store::Store;
use crate::time::{Clock, Timestamp};

use self::approvals::{get_approval, votes_of};
use self::listen::Listen;
use self::pool::Pool;
use self::reads::{read_kill_switch, read_session};
pub use self::schema::PG_SCHEMA_VERSION;
use self::statements::Prepared;
use crate::group::GroupCommit;

const AUDIT_COLUMNS: &str = "seq, time, verdict, \"user\", session, tool, call_id, reasons, \
     policies, digest, arguments, approval, actor, note, prev, hash, refused, risk, v, segment, sseq";

const APPROVAL_COLUMNS: &str = "id, kind, \"user\", session, tool, digest, created_at, \
     expires_at, state, decided_by, decided_at, note, used_at, uses, quorum, not_own, votes, upstream";

/// How to open a [`PgStore`]. Built with setters, used by
/// [`PgOptions::open`].
#[derive(Clone)]
pub struct PgOptions {
    lock_timeout: Duration,
    connect_timeout: Duration,
    common: options::Common,
    connections: usize,
    migrate: bool,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("PgOptions");
        d.field("lock_timeout", &self.lock_timeout)
            .field("connect_timeout", &self.connect_timeout);
        self.common.debug_fields(&mut d);
        d.field("connections", &self.connections)
            .field("migrate", &self.migrate)
            .finish_non_exhaustive()
    }
}

fn drop_client(client: Client) {
    let _closed = std::thread::Builder::new()
        .spawn(move || drop(client))
        .map(std::thread::JoinHandle::join);
}

/// The shared [`Store`] on PostgreSQL: several processes (gate replicas)
/// opening the same database share one audit chain, one approvals queue,
/// one set of session counters and one kill switch.
///
/// ```no_run
/// use toolgate_store::{PgOptions, Store};
///
/// let store = PgOptions::new()
///     .escalate_after(5)
///     .open("postgres://toolgate@db.internal:5432/toolgate")?;
/// assert!(store.verify()?.is_intact());
/// # Ok::<(), toolgate_store::Error>(())
/// ```
pub struct PgStore {
    pool: Pool,
    /// Changes pushed from every replica (`LISTEN`), once subscribed.
    listen: Listen,
    group: GroupCommit,
    /// The audit segment this store appends to, once opened.
    segment: Mutex<Option<u64>>,
    /// Held by a write while the store has no segment yet.
    opening: Mutex<()>,
    /// The clock, escalation threshold, read-only switch and redaction key.
    open: options::Open,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.open.debug("PgStore", f)
    }
}

/// A write transaction and the records it appends (written at commit, in
/// one statement, while this store's segment head stays locked).
struct Tx<'a> {
    tx: Transaction<'a>,
    prepared: &'a Prepared,
    /// This store's segment, if it has opened one.
    known: Option<u64>,
    /// The segment this transaction appends to and its head (`sseq`,
    /// hash), once locked.
    head: Option<(u64, u64, Digest)>,
    /// The segment this transaction opened (the store keeps it once
    /// committed), and the root head it moves to (its first record).
    opened: Option<(u64, Option<(u64, Digest)>)>,
    /// Numbers drawn from the log's sequence for the records to come.
    seqs: VecDeque<u64>,
    pending: Vec<(Place, Digest, Digest, AuditEntry)>,
    now: i64,
}

impl PgStore {
    /// Opens the database `url` names with the default [`PgOptions`].
    pub fn open(url: &str) -> Result<Self, Error> {
        PgOptions::new().open(url)
    }

    fn refuse_read_only(&self) -> Result<(), Error> {
        if self.open.read_only {
            return Err(Error::read_only());
        }
        Ok(())
    }

    /// Runs `f` in one read-committed transaction and commits it. If the
    /// connection is found gone before the `COMMIT` was sent (the server
    /// rolled the transaction back), `f` runs once more on a fresh
    /// connection (see `pool`).
    fn write<T>(&self, mut f: impl FnMut(&mut Tx<'_>) -> Result<T, Error>) -> Result<T, Error> {
        self.refuse_read_only()?;
        // Until this store has a segment, its writes go one at a time (each
        // may open one), so that it opens exactly one. Taken before a
        // connection, so no connection waits on it.
        let has_segment = self
            .segment
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        let _opening =
            (!has_segment).then(|| self.opening.lock().unwrap_or_else(PoisonError::into_inner));
        self.pool.run(|client, prepared, progress| {
            let tx = client
                .transaction()
                .map_err(|e| Error::pg("starting a write", e))?;
            let mut w = Tx {
                tx,
                prepared,
                known: *self.segment.lock().unwrap_or_else(PoisonError::into_inner),
                head: None,
                opened: None,
                seqs: VecDeque::new(),
                pending: Vec::new(),
                now: self.open.clock.now().unix_millis(),
            };
            let out = f(&mut w)?;
            w.flush()?;
            // The transaction's id, to learn its outcome if the answer to
            // the `COMMIT` is lost.
            let xid: i64 =
                w.tx.query_one("SELECT txid_current()", &[])
                    .and_then(|r| r.try_get(0))
                    .map_err(|e| Error::pg("committing", e))?;
            progress.committing();
            if let Err(e) = w.tx.commit() {
                let e = Error::pg("committing", e);
                match pool::connection_lost(&e).then(|| self.pool.outcome(xid)) {
                    Some(Some(true)) => {}
                    Some(Some(false)) => {
                        progress.rolled_back();
                        return Err(e);
                    }
                    Some(None) | None => return Err(e),
                }
            }
            if let Some((id, _)) = w.opened {
                let mut known = self.segment.lock().unwrap_or_else(PoisonError::into_inner);
                known.get_or_insert(id);
            }
            Ok(out)
        })
    }

    fn commit_batch(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error> {
        self.write(|tx| {
            // The keys this batch charges, locked in order before the
            // chain's head (see `pg/limits.rs`).
            for key in rules::limits::keys(&entries) {
                limits::lock_key(&mut tx.tx, key)?;
            }
            tx.reserve(entries.len())?;
            // Cloned: the transaction may run twice (see `write`).
            entries.iter().cloned().map(|e| tx.append(e)).collect()
        })
    }

    fn query_records(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<AuditRecord>, Error> {
        self.pool.with(|client, _| {
            let rows = client
                .query(sql, params)
                .map_err(|e| Error::pg("reading the audit log", e))?;
            rows.iter().map(record).collect()
        })
    }

    /// Runs `f` in one repeatable-read, read-only transaction: a consistent
    /// snapshot while others append.
    fn snapshot<T>(
        &self,
        mut f: impl FnMut(&mut Transaction<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.pool.with(|client, _| {
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(|e| Error::pg("starting a read", e))?;
            let out = f(&mut tx)?;
            tx.commit().map_err(|e| Error::pg("ending a read", e))?;
            Ok(out)
        })
    }

    fn decide(
        &self,
        id: ApprovalId,
        actor: &str,
        note: &str,
        decision: Decision,
    ) -> Result<Approval, Error> {
        let now = self.open.clock.now();
        if i64::try_from(id.get()).is_err() {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("no approval `{id}`"),
            ));
        }
        self.write(|tx| {
            let decided = transitions::decide_in(tx, id, decision, actor, note, now)?;
            listen::notify(&mut tx.tx, &Change::ApprovalDecided(decided.id))?;
            Ok(decided)
        })
    }
}

/// The chain's head from its row (`seq`, `hash`), checked.
fn stored_head(row: &Row) -> Result<(u64, Digest), Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "the audit chain's head is malformed");
    let seq: i64 = row.try_get(0).map_err(|_| corrupt())?;
    let hash: Vec<u8> = row.try_get(1).map_err(|_| corrupt())?;
    chain::head(seq, &hash)
}

/// Reads the [`AUDIT_COLUMNS`] of a row; `None` if a column is not of its
/// type.
fn raw_record(row: &Row) -> Option<RawRecord> {
    Some(RawRecord {
        seq: row.try_get(0).ok()?,
        time: row.try_get(1).ok()?,
        verdict: row.try_get(2).ok()?,
        user: row.try_get(3).ok()?,
        session: row.try_get(4).ok()?,
        tool: row.try_get(5).ok()?,
        call_id: row.try_get(6).ok()?,
        reasons: row.try_get(7).ok()?,
        policies: row.try_get(8).ok()?,
        digest: row.try_get(9).ok()?,
        arguments: row.try_get(10).ok()?,
        approval: row.try_get(11).ok()?,
        actor: row.try_get(12).ok()?,
        note: row.try_get(13).ok()?,
        prev: row.try_get(14).ok()?,
        hash: row.try_get(15).ok()?,
        refused: row.try_get(16).ok()?,
        risk: row.try_get(17).ok()?,
        v: i64::from(row.try_get::<_, i32>(18).ok()?),
        segment: Some(row.try_get(19).ok()?),
        sseq: row.try_get(20).ok()?,
    })
}

/// Reads a row as a record, or fails with `store_corrupt`.
fn record(row: &Row) -> Result<AuditRecord, Error> {
    raw_record(row)
        .ok_or_else(|| Error::new(ErrorCode::Corrupt, "an audit record cannot be read"))?
        .into_checked()
}

/// A row of the chain as [`chain::walk`] reads it.
struct ChainRow(Row);

impl StoredRow for ChainRow {
    fn seq(&self) -> Option<u64> {
        self.0
            .try_get::<_, i64>(0)
            .ok()
            .and_then(|s| u64::try_from(s).ok())
    }

    fn record(self) -> Option<AuditRecord> {
        raw_record(&self.0).and_then(RawRecord::into_record)
    }
}

/// A `WHERE` list being built, with its parameters.
#[derive(Default)]
struct Where {
    sql: String,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Where {
    /// Adds `clause`, whose `$` stands for the next parameter.
    fn add(&mut self, clause: &str, value: Box<dyn ToSql + Sync>) {
        self.sql
            .push_str(if self.params.is_empty() && self.sql.is_empty() {
                " WHERE "
            } else {
                " AND "
            });
        self.params.push(value);
        self.sql
            .push_str(&clause.replace('$', &format!("${}", self.params.len())));
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

/// The advisory lock class that queues one user's approval requests
/// ("tgappr" in ASCII, cut to 32 bits: the two-key form takes two `int4`).
const APPROVAL_LOCK: i32 = 0x7467_6170;

/// The advisory lock class that serializes one requester's approval
/// requests across replicas ("tgar" in ASCII); always taken after the
/// user's, so the two never deadlock.
const REQUESTER_LOCK: i32 = 0x7467_6172;

impl Store for PgStore {
    fn append(&self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.refuse_read_only()?;
        self.group.submit(entry, |batch| self.commit_batch(batch))
    }

    fn append_all(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error> {
        self.commit_batch(entries)
    }

    /// Pushed through `LISTEN`/`NOTIFY` on a connection of its own (see
    /// `pg/listen.rs`).
    fn subscribe(&self, listener: ChangeListener) -> bool {
        self.listen.subscribe(listener)
    }

    fn redaction_key(&self) -> Result<RedactionKey, Error> {
        rules::record::redaction_key(&self.open.redaction_key, || {
            self.snapshot(|tx| {
                tx.query_one("SELECT value FROM meta WHERE name = 'redaction_key'", &[])
                    .and_then(|r| r.try_get(0))
                    .map_err(|e| Error::pg("reading the redaction key", e))
            })
        })
    }

    fn verify(&self) -> Result<Verification, Error> {
        self.snapshot(|tx| {
            let db = |e| Error::pg("verifying the audit log", e);
            let head = tx
                .query_opt("SELECT seq, hash FROM audit_head WHERE id = 1", &[])
                .map_err(db)?
                .ok_or_else(|| {
                    Error::new(ErrorCode::Corrupt, "the audit chain's head is missing")
                })?;
            let root = stored_head(&head)?;
            let mut heads = BTreeMap::new();
            for row in tx
                .query("SELECT id, sseq, hash FROM audit_segments", &[])
                .map_err(db)?
            {
                let id: i64 = row.try_get(0).map_err(db)?;
                let id = u64::try_from(id).map_err(|_| {
                    Error::new(ErrorCode::Corrupt, "an audit segment's head is malformed")
                })?;
                let sseq: i64 = row.try_get(1).map_err(db)?;
                let hash: Vec<u8> = row.try_get(2).map_err(db)?;
                heads.insert(id, chain::head(sseq, &hash)?);
            }
            let sql = format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq");
            let rows = tx
                .query_raw(&sql, std::iter::empty::<&(dyn ToSql + Sync)>())
                .map_err(db)?;
            segments::walk(root, &heads, rows.iterator().map(|r| r.map(ChainRow))).map_err(db)
        })
    }

    fn tail(&self, n: u32) -> Result<Vec<AuditRecord>, Error> {
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM (SELECT * FROM audit ORDER BY seq DESC LIMIT $1) t ORDER BY seq"
        );
        self.query_records(&sql, &[&i64::from(n)])
    }

    fn list(&self, f: &AuditFilter) -> Result<Vec<AuditRecord>, Error> {
        let mut w = Where::default();
        if let Some(after) = f.after {
            w.add("seq > $", Box::new(to_i64(after, "cursor")?));
        }
        if let Some(before) = f.before {
            w.add("seq < $", Box::new(to_i64(before, "cursor")?));
        }
        if !f.verdicts.is_empty() {
            let names: Vec<String> = f.verdicts.iter().map(|v| v.as_str().to_owned()).collect();
            w.add("verdict = ANY($)", Box::new(names));
        }
        if let Some(user) = &f.user {
            w.add("\"user\" = $", Box::new(user.clone()));
        }
        if let Some(session) = &f.session {
            w.add("session = $", Box::new(session.clone()));
        }
        if let Some(tool) = &f.tool {
            w.add("tool = $", Box::new(tool.clone()));
        }
        if let Some(verdict) = f.verdict {
            w.add("verdict = $", Box::new(verdict.as_str().to_owned()));
        }
        if let Some(since) = f.since {
            w.add("time >= $", Box::new(since.unix_millis()));
        }
        if let Some(until) = f.until {
            w.add("time < $", Box::new(until.unix_millis()));
        }
        let limit = i64::from(f.limit);
        let order = if f.newest_first { "DESC" } else { "ASC" };
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM audit{} ORDER BY seq {order} LIMIT {limit}",
            w.sql
        );
        let mut records = self.query_records(&sql, &w.refs())?;
        if f.newest_first {
            records.reverse();
        }
        Ok(records)
    }

    fn export_jsonl(&self, out: &mut dyn Write) -> Result<u64, Error> {
        self.snapshot(|tx| {
            let db = |e| Error::pg("exporting the audit log", e);
            let sql = format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq");
            let rows = tx
                .query_raw(&sql, std::iter::empty::<&(dyn ToSql + Sync)>())
                .map_err(db)?;
            let records = rows
                .iterator()
                .map(|row| row.map_err(db).and_then(|row| record(&row)));
            rules::record::write_jsonl(out, records)
        })
    }

    fn request_approval_with(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        expires_at: Timestamp,
        limits: PendingLimits,
        requester: Option<&str>,
        upstream: Option<&str>,
        quorum: Quorum,
    ) -> Result<ApprovalId, Error> {
        let now = self.open.clock.now();
        let call = Call::new(user, session, tool, digest)
            .requested_by(requester)
            .routed_to(upstream)
            .needing(quorum);
        self.write(|tx| transitions::request_in(tx, call, expires_at, limits, now))
    }

    fn approve(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error> {
        self.decide(id, actor, note, Decision::Grant)
    }

    fn deny(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error> {
        self.decide(id, actor, note, Decision::Deny)
    }

    fn withdraw(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error> {
        self.decide(id, actor, note, Decision::Withdraw)
    }

    fn grant_standing_for(
        &self,
        user: &str,
        tool: &str,
        upstream: Option<&str>,
        until: Timestamp,
        actor: &str,
        note: &str,
    ) -> Result<ApprovalId, Error> {
        let now = self.open.clock.now();
        let note = rules::optional(note);
        self.write(|tx| {
            let row = tx
                .tx
                .query_one(
                    "INSERT INTO approvals (kind, \"user\", tool, created_at, expires_at, state, decided_by, decided_at, note, upstream) \
                     VALUES ('standing', $1, $2, $3, $4, 'approved', $5, $3, $6, $7) RETURNING id",
                    &[&user, &tool, &now.unix_millis(), &until.unix_millis(), &actor, &note, &upstream],
                )
                .map_err(|e| Error::pg("granting a standing approval", e))?;
            let id: i64 = row
                .try_get(0)
                .map_err(|e| Error::pg("granting a standing approval", e))?;
            let id = ApprovalId::new(to_u64(id)?);
            tx.append(transitions::standing_entry(now, user, tool, upstream, id, actor, note))?;
            Ok(id)
        })
    }

    fn consume_routed(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        upstream: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<ApprovalUse>, Error> {
        let mut call = Call::new(user, session, tool, digest);
        call.upstream = upstream;
        self.write(|tx| transitions::consume_in(tx, call, now))
    }

    fn set_approval_facts(
        &self,
        id: ApprovalId,
        facts: &[toolgate::PolicyFact],
    ) -> Result<(), Error> {
        approvals::set_facts(self, id, facts)
    }

    fn approval_facts(&self, id: ApprovalId) -> Result<Vec<toolgate::PolicyFact>, Error> {
        approvals::facts_of(self, id)
    }

    fn approval_votes(&self, id: ApprovalId) -> Result<Vec<ApprovalVote>, Error> {
        let Ok(id) = i64::try_from(id.get()) else {
            return Ok(Vec::new());
        };
        self.pool.with(|client, _| votes_of(client, id))
    }

    fn get_approval(&self, id: ApprovalId) -> Result<Option<Approval>, Error> {
        let Ok(id) = i64::try_from(id.get()) else {
            return Ok(None);
        };
        let now = self.open.clock.now();
        let found = self
            .pool
            .with(|client, _| get_approval(client, id, false))?;
        Ok(found.map(|a| a.as_of(now)))
    }

    fn list_approvals(&self, f: &ApprovalFilter) -> Result<Vec<Approval>, Error> {
        self.approvals_page(f)
    }

    fn count_approvals(&self, f: &ApprovalFilter) -> Result<u64, Error> {
        self.approvals_count(f)
    }

    fn claim_notice(&self, id: ApprovalId, sink: &str, now: Timestamp) -> Result<bool, Error> {
        notices::claim(self, id, sink, now)
    }

    fn record_notice(
        &self,
        id: ApprovalId,
        sink: &str,
        state: NoticeState,
        attempts: u32,
        outcome: &str,
        now: Timestamp,
    ) -> Result<(), Error> {
        notices::record(self, id, sink, (state, attempts, outcome), now)
    }

    fn reclaim_notices(
        &self,
        now: Timestamp,
        stale_before: Timestamp,
        limit: u32,
    ) -> Result<Vec<(ApprovalId, String)>, Error> {
        notices::reclaim(self, now, stale_before, limit)
    }

    fn renew_notice(
        &self,
        id: ApprovalId,
        sink: &str,
        claimed_at: Timestamp,
        now: Timestamp,
    ) -> Result<bool, Error> {
        notices::renew(self, id, sink, claimed_at, now)
    }

    fn list_notices(&self, limit: u32) -> Result<Vec<Notice>, Error> {
        notices::list(self, limit)
    }

    fn record_call(
        &self,
        session: &str,
        turn: u64,
        verdict: AuditVerdict,
        reasons: &[&str],
    ) -> Result<SessionCounters, Error> {
        escalation::check_call_verdict(verdict)?;
        to_i64(turn, "turn")?;
        let now = self.open.clock.now();
        self.write(|tx| {
            let db = |e| Error::pg("counting a call", e);
            // Create the row if needed, then lock it: concurrent calls of one
            // session (on any replica) count one after the other.
            tx.tx
                .execute(
                    "INSERT INTO sessions (session, turns, last_turn, calls, rejections, consecutive, updated_at) \
                     VALUES ($1, 0, 0, 0, 0, 0, $2) ON CONFLICT (session) DO NOTHING",
                    &[&session, &now.unix_millis()],
                )
                .map_err(db)?;
            let mut c = read_session(&mut tx.tx, tx.prepared, session, true)?;
            match escalation::count_call(&mut c, turn, verdict, reasons, self.open.escalate_after, now) {
                ReasonRuns::Extend(reasons) => {
                    tx.tx
                        .execute(
                            "DELETE FROM session_reasons WHERE session = $1 AND reason <> ALL($2)",
                            &[&session, &reasons],
                        )
                        .map_err(db)?;
                    tx.tx
                        .execute(
                            "INSERT INTO session_reasons (session, reason, consecutive) \
                             SELECT $1, r, 1 FROM UNNEST($2::text[]) AS r \
                             ON CONFLICT (session, reason) DO UPDATE \
                             SET consecutive = session_reasons.consecutive + 1",
                            &[&session, &reasons],
                        )
                        .map_err(db)?;
                }
                ReasonRuns::Clear => {
                    tx.tx
                        .execute("DELETE FROM session_reasons WHERE session = $1", &[&session])
                        .map_err(db)?;
                }
                ReasonRuns::Keep => {}
            }
            tx.tx
                .execute(
                    "UPDATE sessions SET turns = $2, last_turn = $3, calls = $4, rejections = $5, \
                     consecutive = $6, escalated_at = $7, updated_at = $8 WHERE session = $1",
                    &[
                        &session,
                        &to_i64(c.turns, "turns")?,
                        &to_i64(c.last_turn, "turn")?,
                        &to_i64(c.calls, "calls")?,
                        &to_i64(c.rejections, "rejections")?,
                        &to_i64(c.consecutive_rejections, "rejections")?,
                        &c.escalated_at.map(Timestamp::unix_millis),
                        &now.unix_millis(),
                    ],
                )
                .map_err(db)?;
            read_session(&mut tx.tx, tx.prepared, session, false)
        })
    }

    fn session(&self, session: &str) -> Result<SessionCounters, Error> {
        self.pool
            .with(|client, p| read_session(client, p, session, false))
    }

    fn may_cover(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        now: Timestamp,
    ) -> Result<bool, Error> {
        self.pool.with(|client, _| {
            client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM approvals WHERE state = 'approved' AND expires_at > $5 AND \
                     ((kind = 'single' AND \"user\" = $1 AND session = $2 AND tool = $3 AND digest = $4 \
                     AND used_at IS NULL) OR (kind = 'standing' AND \"user\" = $1 AND tool = $3)))",
                    &[&user, &session, &tool, &digest.as_bytes().as_slice(), &now.unix_millis()],
                )
                .map(|row| row.get::<_, bool>(0))
                .map_err(|e| Error::pg("reading the approvals that may cover a call", e))
        })
    }

    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, Error> {
        self.pool.with(|client, _| {
            client
                .query_opt(
                    "SELECT 1 FROM allowed_calls WHERE session = $1 AND call_id = $2",
                    &[&session, &call_id],
                )
                .map(|row| row.is_some())
                .map_err(|e| Error::pg("reading the allowed call ids", e))
        })
    }

    fn responses(&self, session: &str) -> Result<u64, Error> {
        self.pool.with(|client, _| {
            let row = client
                .query_opt(
                    "SELECT responses FROM session_responses WHERE session = $1",
                    &[&session],
                )
                .map_err(|e| Error::pg("reading a session's responses", e))?;
            let n: i64 = match row {
                Some(r) => r
                    .try_get(0)
                    .map_err(|e| Error::pg("reading a session's responses", e))?,
                None => 0,
            };
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    fn observe_catalog(
        &self,
        upstream: &str,
        catalog: &Digest,
        tools: &[crate::pin::SeenTool],
        first: crate::pin::PinFirst,
    ) -> Result<Vec<crate::pin::PinState>, Error> {
        self.pins_observe(upstream, catalog, tools, first)
    }

    fn pin_state(
        &self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<crate::pin::PinState>, Error> {
        self.pins_state(upstream, tool, digest)
    }

    fn get_pin(&self, id: crate::pin::PinId) -> Result<Option<crate::pin::ToolPin>, Error> {
        self.pins_get(id)
    }

    fn list_pins(&self, f: &crate::pin::PinFilter) -> Result<Vec<crate::pin::ToolPin>, Error> {
        self.pins_list(f)
    }

    fn approve_pin(
        &self,
        id: crate::pin::PinId,
        actor: &str,
        note: &str,
    ) -> Result<crate::pin::ToolPin, Error> {
        self.pins_decide(id, crate::rules::pins::PinDecision::Approve, actor, note)
    }

    fn reject_pin(
        &self,
        id: crate::pin::PinId,
        actor: &str,
        note: &str,
    ) -> Result<crate::pin::ToolPin, Error> {
        self.pins_decide(id, crate::rules::pins::PinDecision::Reject, actor, note)
    }

    fn latest_catalog(&self, upstream: &str) -> Result<Option<crate::pin::CatalogPin>, Error> {
        self.pins_latest_catalog(upstream)
    }

    fn kill_switch(&self) -> Result<KillSwitchState, Error> {
        self.pool
            .with(|client, p| read_kill_switch(client, &p.kill_switch))
    }

    /// Reads the kill switch and checks that the database takes writes (a
    /// read-only store, or a server in recovery as a standby, is
    /// `store_read_only`).
    fn ping(&self) -> Result<(), Error> {
        self.refuse_read_only()?;
        self.pool.with(|client, prepared| {
            read_kill_switch(client, &prepared.kill_switch)?;
            let row = client
                .query_one(
                    "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'",
                    &[],
                )
                .map_err(|e| Error::pg("checking the database", e))?;
            if row
                .try_get::<_, bool>(0)
                .map_err(|e| Error::pg("checking the database", e))?
            {
                return Err(Error::new(
                    ErrorCode::ReadOnly,
                    "the database takes no writes (a standby, or read-only)",
                ));
            }
            Ok(())
        })?;
        // A committed write, as an audit append commits one (a full disk
        // fails it).
        let now = self.open.clock.now().unix_millis();
        self.write(|tx| {
            tx.tx
                .execute("UPDATE probe SET at = $1 WHERE id = 1", &[&now])
                .map_err(|e| Error::pg("writing the readiness probe", e))?;
            Ok(())
        })
    }

    fn set_kill_switch(
        &self,
        mode: KillMode,
        reason: &str,
        actor: &str,
    ) -> Result<KillSwitchState, Error> {
        let now = self.open.clock.now();
        let reason = rules::optional(reason);
        self.write(|tx| {
            tx.tx
                .execute(
                    "UPDATE kill_switch SET mode = $1, reason = $2, actor = $3, changed_at = $4 WHERE id = 1",
                    &[&mode.as_str(), &reason, &actor, &now.unix_millis()],
                )
                .map_err(|e| Error::pg("flipping the kill switch", e))?;
            tx.append(kill::flip_entry(now, mode, reason, actor))?;
            listen::notify(&mut tx.tx, &Change::KillSwitch)?;
            read_kill_switch(&mut tx.tx, &tx.prepared.kill_switch)
        })
    }

    fn limit_events(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Vec<(Timestamp, toolgate::limit::Amount)>, Error> {
        let rows = self
            .pool
            .with(|client, _| limits::read_events(client, key, since))?;
        rules::limits::typed_events(rows)
    }

    fn limit_used(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Option<toolgate::limit::Amount>, Error> {
        self.pool
            .with(|client, _| limits::read_used(client, key, since))
    }

    fn session_labels(&self, session: &str) -> Result<Vec<String>, Error> {
        self.pool
            .with(|client, _| limits::read_labels(client, session))
    }

    fn reset_limit(&self, key: &str, actor: &str, note: &str) -> Result<u64, Error> {
        let now = self.open.clock.now();
        self.write(|tx| {
            limits::lock_key(&mut tx.tx, key)?;
            let n = limits::forget(&mut tx.tx, key)?;
            tx.append(rules::limits::reset_entry(now, key, actor, note))?;
            Ok(n)
        })
    }

    fn count_response(&self, session: &str) -> Result<u64, Error> {
        self.write(|tx| {
            let row = tx
                .tx
                .query_one(
                    "INSERT INTO session_responses (session, responses) VALUES ($1, 1) \
                     ON CONFLICT (session) DO UPDATE \
                     SET responses = session_responses.responses + 1 RETURNING responses",
                    &[&session],
                )
                .map_err(|e| Error::pg("counting a response", e))?;
            let n: i64 = row
                .try_get(0)
                .map_err(|e| Error::pg("counting a response", e))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, Error> {
        let now = self.open.clock.now().unix_millis();
        self.write(|tx| {
            let n = tx
                .tx
                .execute(
                    "INSERT INTO allowed_calls (session, call_id, allowed_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (session, call_id) DO NOTHING",
                    &[&session, &call_id, &now],
                )
                .map_err(|e| Error::pg("claiming a call id", e))?;
            Ok(n == 1)
        })
    }
}
