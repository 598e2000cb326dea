//! The embedded store: [`SqliteStore`] on one SQLite file.
//!
//! Design notes (see also `README.md` beside this crate):
//! - WAL journal, so readers never wait for the writer; every connection has
//!   a busy timeout, so several processes share one file.
//! - Every write is one `BEGIN IMMEDIATE` transaction: the write lock is taken
//!   first, then the chain's head is read, so appends from several processes
//!   keep one unbroken chain.
//! - Durability [`Durability::Full`] (the default) fsyncs the WAL on every
//!   commit: a returned receipt survives power loss.
//! - One writer connection (behind the group commit) and a small pool of
//!   reader connections, so `kill_switch()` and lookups neither queue behind a
//!   commit nor behind each other; the reads a decision makes
//!   (`kill_switch()`, `session()`) have two connections of their own, so a
//!   long listing or scan never holds them up.

/// The room the readiness probe takes for a moment: a large audit record's.
const PROBE_BYTES: i64 = 4096;
/// Reader connections per store for lookups, listings and scans.
const READERS: usize = 4;
/// Reader connections per store for the reads a decision makes (kill
/// switch, session counters), which a long scan must never hold up: an
/// async service makes these reads on its runtime threads.
const HOT_READERS: usize = 2;

mod approvals;
mod limits;
mod notices;
mod open_options;
mod pins;
mod reads;
mod rows;
mod schema;
mod shm;

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use toolgate_json::Digest;

use self::approvals::{approvals_where, filter, write_on};
use self::reads::{
    claim_in, count_response_in, json_list, read_kill_switch, read_responses, read_session,
    run_cached,
};

use crate::approval::approval_state_clause;
use crate::approval::{
    Approval, ApprovalFilter, ApprovalId, ApprovalState, ApprovalUse, ApprovalVote, PendingLimits,
    Quorum,
};
use crate::audit::{
    AppendReceipt, AuditEntry, AuditFilter, AuditRecord, AuditVerdict, RedactionKey, Verification,
};
use crate::error::{Error, ErrorCode};
use crate::kill::{KillMode, KillSwitchState};
use crate::notice::{Notice, NoticeState};
use crate::session::SessionCounters;
use crate::store::{AppendDone, DecisionReads, Store};
use crate::time::{Clock, Timestamp};

pub use self::open_options::{Durability, SqliteOptions};
use self::rows::{Chain, ChainRow, APPROVAL_COLUMNS, AUDIT_COLUMNS};
pub use self::schema::SCHEMA_VERSION;
use self::shm::ShmGuard;
use crate::group::{CommitFn, GroupCommit};
use crate::rules::chain;
use crate::rules::escalation::{self, ReasonRuns};
use crate::rules::options;
use crate::rules::transitions::{self, ApprovalTx, Call, Decision};
use crate::rules::{self, kill, record};
use crate::rules::{to_i64, to_u64};

/// The embedded [`Store`]: one SQLite file (or memory), safe to share
/// between threads (`Arc<SqliteStore>`) and between processes (open the same
/// path).
///
/// ```no_run
/// use toolgate_store::{SqliteOptions, SqliteStore, Store};
/// use std::time::Duration;
///
/// let store = SqliteStore::open("toolgate.db")?;
/// let shared = SqliteOptions::new()
///     .busy_timeout(Duration::from_secs(2))
///     .escalate_after(5)
///     .open("toolgate.db")?;
/// assert_eq!(store.kill_switch()?, shared.kill_switch()?);
/// # Ok::<(), toolgate_store::Error>(())
/// ```
pub struct SqliteStore {
    /// Shared with the group commit's committer thread.
    writer: Arc<Mutex<Connection>>,
    /// Looked at before every use of a connection (see `sqlite/shm.rs`).
    shm: ShmGuard,
    /// Reader connections; empty when the writer reads too (in memory).
    readers: Vec<Mutex<Connection>>,
    /// Reader connections for a decision's reads; empty when the writer
    /// reads too.
    hot: Vec<Mutex<Connection>>,
    /// Where the next read starts looking for a free reader.
    next_reader: AtomicUsize,
    group: GroupCommit,
    /// Commits one batch of audit records (the group commit's leaders).
    commit: CommitFn,
    /// The clock, escalation threshold, read-only switch and redaction key.
    open: options::Open,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.open.debug("SqliteStore", f)
    }
}

/// A write transaction: the connection and the chain's head.
struct Tx<'a> {
    conn: &'a Connection,
    chain: Chain,
}

impl Tx<'_> {
    fn append(&mut self, entry: &AuditEntry) -> Result<AppendReceipt, Error> {
        if entry.claims_call {
            if let (Some(session), Some(call_id)) = (&entry.session, &entry.call_id) {
                if !claim_in(self.conn, session, call_id, entry.time.unix_millis())? {
                    return Err(rules::record::call_claimed());
                }
            }
        }
        if entry.counts_response {
            if let Some(session) = &entry.session {
                let n = count_response_in(self.conn, session)?;
                rules::record::check_responses(entry, n)?;
            }
        }
        // The write lock is held: limits are judged one writer at a time.
        let mut limits = limits::SqliteLimits {
            conn: self.conn,
            record: self.chain.next_seq(self.conn)?,
        };
        if let Some(code) = rules::limits::apply(&mut limits, entry)? {
            let refused = rules::limits::refused_entry(entry, code);
            let mut receipt = self.chain.append(self.conn, &refused)?;
            receipt.refused = Some(code);
            return Ok(receipt);
        }
        self.chain.append(self.conn, entry)
    }
}

/// Counts one response of `session` in the open transaction; the count.
impl SqliteStore {
    /// Opens (creating and migrating if needed) the database at `path` with
    /// the default [`SqliteOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        SqliteOptions::new().open(path)
    }

    /// A private in-memory store with the default [`SqliteOptions`].
    pub fn open_in_memory() -> Result<Self, Error> {
        SqliteOptions::new().open_in_memory()
    }

    fn new(
        writer: Connection,
        mut readers: Vec<Connection>,
        options: SqliteOptions,
        shm: ShmGuard,
    ) -> Self {
        let writer = Arc::new(Mutex::new(writer));
        let commit: CommitFn = {
            let writer = Arc::clone(&writer);
            let read_only = options.common.read_only;
            let shm = shm.clone();
            Arc::new(move |entries: Vec<AuditEntry>| {
                write_on(&writer, read_only, &shm, |tx| {
                    entries.iter().map(|e| tx.append(e)).collect()
                })
            })
        };
        Self {
            writer,
            shm,
            group: GroupCommit::with_committer(options.common.max_batch, Arc::clone(&commit)),
            commit,
            hot: readers
                .split_off(readers.len().min(READERS))
                .into_iter()
                .map(Mutex::new)
                .collect(),
            readers: readers.into_iter().map(Mutex::new).collect(),
            next_reader: AtomicUsize::new(0),
            open: options.common.open(),
        }
    }

    /// A free reader connection for lookups and scans.
    fn read_conn(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.pick(&self.readers)
    }

    /// A free reader connection for a decision's reads.
    fn hot_conn(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.pick(&self.hot)
    }

    /// A free connection of `pool` (the first free one from a rotating
    /// start), else waits for one; the writer when the pool is empty.
    fn pick<'a>(
        &'a self,
        pool: &'a [Mutex<Connection>],
    ) -> Result<MutexGuard<'a, Connection>, Error> {
        let conn = self.pick_any(pool)?;
        // Looked at once the connection is ours: the next statement runs
        // right after.
        self.shm.check()?;
        Ok(conn)
    }

    /// A free connection of `pool`, else the first one to be free.
    fn pick_any<'a>(
        &'a self,
        pool: &'a [Mutex<Connection>],
    ) -> Result<MutexGuard<'a, Connection>, Error> {
        let poisoned = |_| Error::poisoned("database connection");
        let n = pool.len();
        if n == 0 {
            return self.writer.lock().map_err(poisoned);
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            if let Some(m) = pool.get((start + k) % n) {
                match m.try_lock() {
                    Ok(guard) => return Ok(guard),
                    Err(TryLockError::WouldBlock) => {}
                    Err(TryLockError::Poisoned(_)) => {
                        return Err(Error::poisoned("database connection"))
                    }
                }
            }
        }
        pool.get(start % n)
            .unwrap_or(&*self.writer)
            .lock()
            .map_err(poisoned)
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits it.
    fn write<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, Error>) -> Result<T, Error> {
        write_on(&self.writer, self.open.read_only, &self.shm, f)
    }

    /// Commits a write to the probe row: the same path as an audit append
    /// (write lock, WAL, shared memory, fsync), so whatever would fail an
    /// append fails this.
    /// The row first takes [`PROBE_BYTES`] (as much room as a large audit
    /// record), then its time: a database whose size limit or disk an
    /// append would overflow fails the probe too.
    fn probe_write(&self) -> Result<(), Error> {
        let now = self.open.clock.now().unix_millis();
        self.write(|tx| {
            let db = |e| Error::db("writing the readiness probe", e);
            tx.conn
                .prepare_cached("UPDATE probe SET at = zeroblob(?1) WHERE id = 1")
                .and_then(|mut s| s.execute([PROBE_BYTES]))
                .map_err(db)?;
            tx.conn
                .prepare_cached("UPDATE probe SET at = ?1 WHERE id = 1")
                .and_then(|mut s| s.execute([now]))
                .map_err(db)?;
            Ok(())
        })
    }

    fn commit_batch(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error> {
        (self.commit)(entries)
    }

    fn query_records(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<AuditRecord>, Error> {
        let conn = self.read_conn()?;
        let db = |e| Error::db("reading the audit log", e);
        let mut stmt = conn.prepare_cached(sql).map_err(db)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db)? {
            out.push(rows::record(row)?);
        }
        Ok(out)
    }

    fn decide(
        &self,
        id: ApprovalId,
        actor: &str,
        note: &str,
        decision: Decision,
    ) -> Result<Approval, Error> {
        let now = self.open.clock.now();
        self.write(|tx| transitions::decide_in(tx, id, decision, actor, note, now))
    }
}

impl Store for SqliteStore {
    fn append(&self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        if self.open.read_only {
            return Err(Error::read_only());
        }
        self.group.submit(entry, |batch| self.commit_batch(batch))
    }

    /// Never blocks: the entry joins the group commit, whose committer
    /// thread calls `done`.
    fn append_deferred(&self, entry: AuditEntry, done: AppendDone) {
        if self.open.read_only {
            done(Err(Error::read_only()));
            return;
        }
        self.group.submit_deferred(entry, done);
    }

    /// Reads come from a local file through reader connections of their
    /// own, which listings and scans do not use.
    fn quick_reads(&self) -> bool {
        true
    }

    fn append_all(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error> {
        self.commit_batch(entries)
    }

    fn redaction_key(&self) -> Result<RedactionKey, Error> {
        record::redaction_key(&self.open.redaction_key, || {
            self.read_conn()?
                .query_row(
                    "SELECT value FROM meta WHERE name = 'redaction_key'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| Error::db("reading the redaction key", e))
        })
    }

    fn verify(&self) -> Result<Verification, Error> {
        let mut conn = self.read_conn()?;
        let db = |e| Error::db("verifying the audit log", e);
        // One read transaction: a consistent snapshot while others append.
        let tx = conn.transaction().map_err(db)?;
        let head = rows::head(&tx)?;
        let mut stmt = tx
            .prepare(&format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq"))
            .map_err(db)?;
        let rows = stmt
            .query_map([], |row| Ok(ChainRow::read(row)))
            .map_err(db)?;
        chain::walk(head, rows).map_err(db)
    }

    fn tail(&self, n: u32) -> Result<Vec<AuditRecord>, Error> {
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM (SELECT * FROM audit ORDER BY seq DESC LIMIT ?1) ORDER BY seq"
        );
        self.query_records(&sql, &[SqlValue::Integer(i64::from(n))])
    }

    fn list(&self, f: &AuditFilter) -> Result<Vec<AuditRecord>, Error> {
        let mut sql = format!("SELECT {AUDIT_COLUMNS} FROM audit");
        let mut params = Vec::new();
        if let Some(after) = f.after {
            filter(
                &mut sql,
                &mut params,
                "seq > ?",
                SqlValue::Integer(to_i64(after, "cursor")?),
            );
        }
        if let Some(before) = f.before {
            filter(
                &mut sql,
                &mut params,
                "seq < ?",
                SqlValue::Integer(to_i64(before, "cursor")?),
            );
        }
        if !f.verdicts.is_empty() {
            sql.push_str(if params.is_empty() {
                " WHERE "
            } else {
                " AND "
            });
            sql.push_str("verdict IN (");
            for (i, v) in f.verdicts.iter().enumerate() {
                if i > 0 {
                    sql.push(',');
                }
                params.push(SqlValue::Text(v.as_str().into()));
                sql.push_str(&format!("?{}", params.len()));
            }
            sql.push(')');
        }
        if let Some(user) = &f.user {
            filter(
                &mut sql,
                &mut params,
                "user = ?",
                SqlValue::Text(user.clone()),
            );
        }
        if let Some(session) = &f.session {
            filter(
                &mut sql,
                &mut params,
                "session = ?",
                SqlValue::Text(session.clone()),
            );
        }
        if let Some(tool) = &f.tool {
            filter(
                &mut sql,
                &mut params,
                "tool = ?",
                SqlValue::Text(tool.clone()),
            );
        }
        if let Some(verdict) = f.verdict {
            filter(
                &mut sql,
                &mut params,
                "verdict = ?",
                SqlValue::Text(verdict.as_str().into()),
            );
        }
        if let Some(since) = f.since {
            filter(
                &mut sql,
                &mut params,
                "time >= ?",
                SqlValue::Integer(since.unix_millis()),
            );
        }
        if let Some(until) = f.until {
            filter(
                &mut sql,
                &mut params,
                "time < ?",
                SqlValue::Integer(until.unix_millis()),
            );
        }
        params.push(SqlValue::Integer(i64::from(f.limit)));
        if f.newest_first {
            sql.push_str(&format!(" ORDER BY seq DESC LIMIT ?{}", params.len()));
            let mut records = self.query_records(&sql, &params)?;
            records.reverse();
            Ok(records)
        } else {
            sql.push_str(&format!(" ORDER BY seq LIMIT ?{}", params.len()));
            self.query_records(&sql, &params)
        }
    }

    fn export_jsonl(&self, out: &mut dyn Write) -> Result<u64, Error> {
        let mut conn = self.read_conn()?;
        let db = |e| Error::db("exporting the audit log", e);
        let tx = conn.transaction().map_err(db)?;
        let mut stmt = tx
            .prepare(&format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq"))
            .map_err(db)?;
        let mut rows = stmt.query([]).map_err(db)?;
        let records = std::iter::from_fn(|| match rows.next() {
            Ok(Some(row)) => Some(rows::record(row)),
            Ok(None) => None,
            Err(e) => Some(Err(db(e))),
        });
        record::write_jsonl(out, records)
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
        // `BEGIN IMMEDIATE` holds the write lock of every process sharing
        // the file from the look-up to the insert; the unique index of
        // pending approvals holds the rule whatever the code does.
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
            tx.conn
                .execute(
                    "INSERT INTO approvals (kind, user, tool, created_at, expires_at, state, decided_by, decided_at, note, upstream) \
                     VALUES ('standing', ?1, ?2, ?3, ?4, 'approved', ?5, ?3, ?6, ?7)",
                    rusqlite::params![user, tool, now.unix_millis(), until.unix_millis(), actor, note, upstream],
                )
                .map_err(|e| Error::db("granting a standing approval", e))?;
            let id = ApprovalId::new(to_u64(tx.conn.last_insert_rowid())?);
            tx.append(&transitions::standing_entry(now, user, tool, upstream, id, actor, note))?;
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
        let conn = self.read_conn()?;
        approvals::votes_of(&conn, id)
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

    fn get_approval(&self, id: ApprovalId) -> Result<Option<Approval>, Error> {
        let now = self.open.clock.now();
        let conn = self.read_conn()?;
        Ok(rows::get_approval(&conn, id)?.map(|a| a.as_of(now)))
    }

    fn list_approvals(&self, f: &ApprovalFilter) -> Result<Vec<Approval>, Error> {
        let now = self.open.clock.now();
        let (mut sql, mut params) =
            approvals_where(&format!("SELECT {APPROVAL_COLUMNS} FROM approvals"), f, now)?;
        params.push(SqlValue::Integer(i64::from(f.limit)));
        let order = if f.newest_first { "DESC" } else { "ASC" };
        sql.push_str(&format!(" ORDER BY id {order} LIMIT ?{}", params.len()));
        let conn = self.read_conn()?;
        let db = |e| Error::db("listing approvals", e);
        let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db)? {
            out.push(rows::approval(row)?.as_of(now));
        }
        Ok(out)
    }

    fn count_approvals(&self, f: &ApprovalFilter) -> Result<u64, Error> {
        let mut f = f.clone();
        f.after = None;
        f.before = None;
        let (sql, params) =
            approvals_where("SELECT COUNT(*) FROM approvals", &f, self.open.clock.now())?;
        let conn = self.read_conn()?;
        let n: i64 = conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row(rusqlite::params_from_iter(params.iter()), |r| r.get(0)))
            .map_err(|e| Error::db("counting approvals", e))?;
        to_u64(n)
    }

    fn record_call(
        &self,
        session: &str,
        turn: u64,
        verdict: AuditVerdict,
        reasons: &[&str],
    ) -> Result<SessionCounters, Error> {
        escalation::check_call_verdict(verdict)?;
        let turn_i = to_i64(turn, "turn")?;
        let now = self.open.clock.now();
        self.write(|tx| {
            let db = |e| Error::db("counting a call", e);
            let mut c = read_session(tx.conn, session)?;
            match escalation::count_call(&mut c, turn, verdict, reasons, self.open.escalate_after, now) {
                ReasonRuns::Extend(reasons) => {
                    tx.conn
                        .execute(
                            "DELETE FROM session_reasons WHERE session = ?1 AND reason NOT IN \
                             (SELECT value FROM json_each(?2))",
                            rusqlite::params![session, json_list(&reasons)],
                        )
                        .map_err(db)?;
                    for r in reasons {
                        tx.conn
                            .execute(
                                "INSERT INTO session_reasons (session, reason, consecutive) VALUES (?1, ?2, 1) \
                                 ON CONFLICT (session, reason) DO UPDATE SET consecutive = consecutive + 1",
                                rusqlite::params![session, r],
                            )
                            .map_err(db)?;
                    }
                }
                ReasonRuns::Clear => {
                    tx.conn
                        .execute("DELETE FROM session_reasons WHERE session = ?1", [session])
                        .map_err(db)?;
                }
                ReasonRuns::Keep => {}
            }
            tx.conn
                .execute(
                    "INSERT INTO sessions (session, turns, last_turn, calls, rejections, consecutive, escalated_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                     ON CONFLICT (session) DO UPDATE SET turns = ?2, last_turn = ?3, calls = ?4, \
                     rejections = ?5, consecutive = ?6, escalated_at = ?7, updated_at = ?8",
                    rusqlite::params![
                        session,
                        to_i64(c.turns, "turns")?,
                        turn_i.max(to_i64(c.last_turn, "turn")?),
                        to_i64(c.calls, "calls")?,
                        to_i64(c.rejections, "rejections")?,
                        to_i64(c.consecutive_rejections, "rejections")?,
                        c.escalated_at.map(Timestamp::unix_millis),
                        now.unix_millis()
                    ],
                )
                .map_err(db)?;
            read_session(tx.conn, session)
        })
    }

    fn session(&self, session: &str) -> Result<SessionCounters, Error> {
        let conn = self.hot_conn()?;
        read_session(&conn, session)
    }

    fn count_response(&self, session: &str) -> Result<u64, Error> {
        self.write(|tx| count_response_in(tx.conn, session))
    }

    fn responses(&self, session: &str) -> Result<u64, Error> {
        let conn = self.hot_conn()?;
        read_responses(&conn, session)
    }

    /// One connection, one read transaction (one snapshot) for the three.
    fn decision_reads(&self, session: &str) -> DecisionReads {
        let conn = match self.hot_conn() {
            Ok(conn) => conn,
            Err(e) => {
                return DecisionReads {
                    responses: Err(e.clone()),
                    counters: Err(e.clone()),
                    kill_switch: Err(e),
                }
            }
        };
        // Without the transaction each statement is a read transaction of
        // its own; a failed `BEGIN` leaves them so.
        let began = run_cached(&conn, "BEGIN").is_ok();
        let reads = DecisionReads {
            responses: read_responses(&conn, session),
            counters: read_session(&conn, session),
            kill_switch: read_kill_switch(&conn),
        };
        if began {
            // A read transaction ends with nothing to write; if it cannot,
            // rolling back ends it all the same.
            if run_cached(&conn, "COMMIT").is_err() {
                let _ignored = run_cached(&conn, "ROLLBACK");
            }
        }
        reads
    }

    fn may_cover(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let conn = self.hot_conn()?;
        let found: i64 = conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM approvals WHERE state = 'approved' AND expires_at > ?5 AND \
                 ((kind = 'single' AND user = ?1 AND session = ?2 AND tool = ?3 AND digest = ?4 \
                 AND used_at IS NULL) OR (kind = 'standing' AND user = ?1 AND tool = ?3)))",
            )
            .and_then(|mut s| {
                s.query_row(
                    rusqlite::params![user, session, tool, digest.as_bytes().as_slice(), now.unix_millis()],
                    |r| r.get(0),
                )
            })
            .map_err(|e| Error::db("reading the approvals that may cover a call", e))?;
        Ok(found != 0)
    }

    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, Error> {
        let conn = self.hot_conn()?;
        let found: Option<i64> = conn
            .prepare_cached("SELECT 1 FROM allowed_calls WHERE session = ?1 AND call_id = ?2")
            .and_then(|mut s| s.query_row([session, call_id], |r| r.get(0)).optional())
            .map_err(|e| Error::db("reading the allowed call ids", e))?;
        Ok(found.is_some())
    }

    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, Error> {
        let now = self.open.clock.now().unix_millis();
        self.write(|tx| claim_in(tx.conn, session, call_id, now))
    }

    fn limit_events(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Vec<(Timestamp, toolgate::limit::Amount)>, Error> {
        rules::limits::typed_events(limits::read_events(&*self.hot_conn()?, key, since)?)
    }

    fn limit_used(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Option<toolgate::limit::Amount>, Error> {
        limits::read_used(&*self.hot_conn()?, key, since)
    }

    fn session_labels(&self, session: &str) -> Result<Vec<String>, Error> {
        limits::read_labels(&*self.hot_conn()?, session)
    }

    fn reset_limit(&self, key: &str, actor: &str, note: &str) -> Result<u64, Error> {
        let now = self.open.clock.now();
        self.write(|tx| {
            let n = limits::forget(tx.conn, key)?;
            tx.append(&rules::limits::reset_entry(now, key, actor, note))?;
            Ok(n)
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
        let conn = self.hot_conn()?;
        read_kill_switch(&conn)
    }

    fn ping(&self) -> Result<(), Error> {
        self.kill_switch()?;
        self.probe_write()
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
            tx.conn
                .execute(
                    "UPDATE kill_switch SET mode = ?1, reason = ?2, actor = ?3, changed_at = ?4 WHERE id = 1",
                    rusqlite::params![mode.as_str(), reason, actor, now.unix_millis()],
                )
                .map_err(|e| Error::db("flipping the kill switch", e))?;
            tx.append(&kill::flip_entry(now, mode, reason, actor))?;
            read_kill_switch(tx.conn)
        })
    }
}

#[cfg(test)]
mod tests;
