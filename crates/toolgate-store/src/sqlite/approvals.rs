//! The approval transitions' statements on SQLite: [`ApprovalTx`] for a
//! write transaction, and the `WHERE` clause the approval listings share.

use super::*;

impl ApprovalTx for Tx<'_> {
    fn approval(&mut self, id: ApprovalId) -> Result<Option<Approval>, Error> {
        rows::get_approval(self.conn, id)
    }

    /// The write lock is held; the condition on the state read makes the
    /// move exact even without it.
    fn set_decided(
        &mut self,
        a: &Approval,
        state: ApprovalState,
        actor: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error> {
        let changed = self
            .conn
            .execute(
                "UPDATE approvals SET state = ?1, decided_by = ?2, decided_at = ?3, note = ?4 \
                 WHERE id = ?5 AND state = ?6",
                rusqlite::params![
                    state.as_str(),
                    actor,
                    now.unix_millis(),
                    note,
                    id_sql(a.id)?,
                    a.state.as_str()
                ],
            )
            .map_err(|e| Error::db("deciding an approval", e))?;
        Ok(changed == 1)
    }

    fn append_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.append(&entry)
    }

    /// The write lock is held; the primary key refuses a second row of
    /// the same approver whatever the code does.
    fn add_vote(
        &mut self,
        a: &Approval,
        approver: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error> {
        let id = id_sql(a.id)?;
        let added = self
            .conn
            .execute(
                "INSERT INTO approval_votes (approval, approver, at, note) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (approval, approver) DO NOTHING",
                rusqlite::params![id, approver, now.unix_millis(), note],
            )
            .map_err(voting)?;
        if added == 0 {
            return Ok(false);
        }
        self.conn
            .execute(
                "UPDATE approvals SET votes = votes + 1 WHERE id = ?1",
                rusqlite::params![id],
            )
            .map_err(voting)?;
        Ok(true)
    }

    /// The write lock, taken first, holds them back already.
    fn lock_requests(&mut self, _user: &str) -> Result<(), Error> {
        Ok(())
    }

    /// The write lock holds them back already.
    fn lock_requester(&mut self, _requester: &str) -> Result<(), Error> {
        Ok(())
    }

    fn count_requested(&mut self, requester: &str, now: Timestamp) -> Result<u64, Error> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND requester = ?1 \
                 AND state = 'pending' AND expires_at > ?2",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![requester, now.unix_millis()], |r| {
                    r.get(0)
                })
            })
            .map_err(requesting)?;
        to_u64(n)
    }

    fn expire_stale(&mut self, call: Call<'_>, now: Timestamp) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "UPDATE approvals SET state = 'expired' WHERE kind = 'single' AND user = ?1 \
                 AND session = ?2 AND tool = ?3 AND digest = ?4 AND state = 'pending' \
                 AND expires_at <= ?5",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    call.user,
                    call.session,
                    call.tool,
                    call.digest.as_bytes().as_slice(),
                    now.unix_millis()
                ])
            })
            .map_err(requesting)?;
        Ok(())
    }

    fn find_pending(&mut self, call: Call<'_>) -> Result<Option<ApprovalId>, Error> {
        let found: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT id FROM approvals WHERE kind = 'single' AND user = ?1 \
                 AND session = ?2 AND tool = ?3 AND digest = ?4 AND state = 'pending'",
            )
            .and_then(|mut s| {
                s.query_row(
                    rusqlite::params![
                        call.user,
                        call.session,
                        call.tool,
                        call.digest.as_bytes().as_slice()
                    ],
                    |r| r.get(0),
                )
                .optional()
            })
            .map_err(requesting)?;
        found.map(|id| Ok(ApprovalId::new(to_u64(id)?))).transpose()
    }

    fn count_pending(
        &mut self,
        user: &str,
        session: Option<&str>,
        now: Timestamp,
    ) -> Result<u64, Error> {
        let now = now.unix_millis();
        let n: i64 = match session {
            Some(session) => self
                .conn
                .prepare_cached(
                    "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND user = ?1 \
                     AND session = ?2 AND state = 'pending' AND expires_at > ?3",
                )
                .and_then(|mut s| s.query_row(rusqlite::params![user, session, now], |r| r.get(0))),
            None => self
                .conn
                .prepare_cached(
                    "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND user = ?1 \
                     AND state = 'pending' AND expires_at > ?2",
                )
                .and_then(|mut s| s.query_row(rusqlite::params![user, now], |r| r.get(0))),
        }
        .map_err(requesting)?;
        to_u64(n)
    }

    /// Never `None`: the write lock is held since the look-up.
    fn insert_pending(
        &mut self,
        call: Call<'_>,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<Option<ApprovalId>, Error> {
        self.conn
            .prepare_cached(
                "INSERT INTO approvals (kind, user, session, tool, digest, created_at, expires_at, state, requester, quorum, not_own, upstream) \
                 VALUES ('single', ?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9, ?10)",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    call.user,
                    call.session,
                    call.tool,
                    call.digest.as_bytes().as_slice(),
                    now.unix_millis(),
                    expires_at.unix_millis(),
                    call.requester,
                    i64::from(call.quorum.approvers),
                    i64::from(call.quorum.not_own),
                    call.upstream
                ])
            })
            .map_err(requesting)?;
        Ok(Some(ApprovalId::new(to_u64(
            self.conn.last_insert_rowid(),
        )?)))
    }

    fn find_single(&mut self, call: Call<'_>, now: Timestamp) -> Result<Option<ApprovalId>, Error> {
        let single: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM approvals WHERE kind = 'single' AND user = ?1 AND session = ?2 \
                 AND tool = ?3 AND digest = ?4 AND state = 'approved' AND used_at IS NULL \
                 AND expires_at > ?5 ORDER BY id LIMIT 1",
                rusqlite::params![
                    call.user,
                    call.session,
                    call.tool,
                    call.digest.as_bytes().as_slice(),
                    now.unix_millis()
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(using)?;
        single
            .map(|id| Ok(ApprovalId::new(to_u64(id)?)))
            .transpose()
    }

    /// The write lock is held, and the condition on `used_at` makes the use
    /// single even without it: one row or none.
    fn use_single(&mut self, id: ApprovalId, now: Timestamp) -> Result<bool, Error> {
        let changed = self
            .conn
            .execute(
                "UPDATE approvals SET used_at = ?1, uses = uses + 1 \
                 WHERE id = ?2 AND used_at IS NULL AND state = 'approved'",
                rusqlite::params![now.unix_millis(), id_sql(id)?],
            )
            .map_err(using)?;
        Ok(changed == 1)
    }

    fn use_standing(
        &mut self,
        user: &str,
        tool: &str,
        upstream: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<ApprovalId>, Error> {
        let standing: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM approvals WHERE kind = 'standing' AND user = ?1 AND tool = ?2 \
                 AND upstream IS ?4 AND state = 'approved' AND expires_at > ?3 ORDER BY id LIMIT 1",
                rusqlite::params![user, tool, now.unix_millis(), upstream],
                |r| r.get(0),
            )
            .optional()
            .map_err(using)?;
        let Some(id) = standing else {
            return Ok(None);
        };
        self.conn
            .execute(
                "UPDATE approvals SET used_at = ?1, uses = uses + 1 WHERE id = ?2",
                rusqlite::params![now.unix_millis(), id],
            )
            .map_err(using)?;
        Ok(Some(ApprovalId::new(to_u64(id)?)))
    }
}

fn requesting(e: rusqlite::Error) -> Error {
    Error::db("requesting an approval", e)
}

fn voting(e: rusqlite::Error) -> Error {
    Error::db("approving", e)
}

/// The approvers of approval `id`, in the order they approved.
pub(super) fn votes_of(conn: &Connection, id: ApprovalId) -> Result<Vec<ApprovalVote>, Error> {
    let Ok(id) = i64::try_from(id.get()) else {
        return Ok(Vec::new());
    };
    let db = |e| Error::db("reading an approval's approvers", e);
    let mut stmt = conn
        .prepare_cached(
            "SELECT approver, at, note FROM approval_votes WHERE approval = ?1 ORDER BY at, approver",
        )
        .map_err(db)?;
    let rows = stmt
        .query_map(rusqlite::params![id], |r| {
            Ok(ApprovalVote {
                approver: r.get(0)?,
                at: Timestamp::from_unix_millis(r.get(1)?),
                note: r.get(2)?,
            })
        })
        .map_err(db)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(db)
}

fn using(e: rusqlite::Error) -> Error {
    Error::db("using an approval", e)
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction on `writer` and commits it.
pub(super) fn write_on<T>(
    writer: &Mutex<Connection>,
    read_only: bool,
    shm: &ShmGuard,
    f: impl FnOnce(&mut Tx<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    if read_only {
        return Err(Error::read_only());
    }
    let mut conn = writer
        .lock()
        .map_err(|_| Error::poisoned("database connection"))?;
    shm.check()?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| Error::db("starting a write", e))?;
    let mut w = Tx {
        conn: &tx,
        chain: Chain::new(),
    };
    let out = f(&mut w)?;
    w.chain.save(&tx)?;
    tx.commit().map_err(|e| Error::db("committing", e))?;
    Ok(out)
}

fn id_sql(id: ApprovalId) -> Result<i64, Error> {
    i64::try_from(id.get())
        .map_err(|_| Error::new(ErrorCode::NotFound, format!("no approval `{id}`")))
}

/// Appends `clause` to a `WHERE` list with its parameter.
pub(super) fn filter(sql: &mut String, params: &mut Vec<SqlValue>, clause: &str, value: SqlValue) {
    sql.push_str(if params.is_empty() {
        " WHERE "
    } else {
        " AND "
    });
    params.push(value);
    sql.push_str(&clause.replace('?', &format!("?{}", params.len())));
}

/// `select` with the `WHERE` list of an approval filter (its state as of
/// `now`) and its parameters.
pub(super) fn approvals_where(
    select: &str,
    f: &ApprovalFilter,
    now: Timestamp,
) -> Result<(String, Vec<SqlValue>), Error> {
    let mut sql = select.to_owned();
    let mut params = Vec::new();
    if let Some(after) = f.after {
        let id = SqlValue::Integer(to_i64(after.get(), "cursor")?);
        filter(&mut sql, &mut params, "id > ?", id);
    }
    if let Some(before) = f.before {
        let id = SqlValue::Integer(to_i64(before.get(), "cursor")?);
        filter(&mut sql, &mut params, "id < ?", id);
    }
    for (clause, value) in [
        ("user = ?", &f.user),
        ("session = ?", &f.session),
        ("tool = ?", &f.tool),
    ] {
        if let Some(v) = value {
            filter(&mut sql, &mut params, clause, SqlValue::Text(v.clone()));
        }
    }
    if let Some(kind) = f.kind {
        let kind = SqlValue::Text(kind.as_str().into());
        filter(&mut sql, &mut params, "kind = ?", kind);
    }
    if let Some(state) = f.state {
        match approval_state_clause(state) {
            Some(clause) => {
                let now = SqlValue::Integer(now.unix_millis());
                filter(&mut sql, &mut params, clause, now);
            }
            None => {
                let state = SqlValue::Text(state.as_str().into());
                filter(&mut sql, &mut params, "state = ?", state);
            }
        }
    }
    Ok((sql, params))
}

/// [`Store::set_approval_facts`].
pub(super) fn set_facts(
    store: &SqliteStore,
    id: ApprovalId,
    facts: &[toolgate::PolicyFact],
) -> Result<(), Error> {
    let Some(text) = crate::held_facts::to_text(facts) else {
        return Ok(());
    };
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        tx.conn
            .execute(
                "UPDATE approvals SET facts = ?1 WHERE id = ?2 AND facts IS NULL",
                rusqlite::params![text, id],
            )
            .map_err(|e| Error::db("keeping policy facts", e))?;
        Ok(())
    })
}

/// [`Store::approval_facts`].
pub(super) fn facts_of(
    store: &SqliteStore,
    id: ApprovalId,
) -> Result<Vec<toolgate::PolicyFact>, Error> {
    let Ok(id) = i64::try_from(id.get()) else {
        return Ok(Vec::new());
    };
    let conn = store.read_conn()?;
    let text: Option<String> = conn
        .prepare_cached("SELECT facts FROM approvals WHERE id = ?1")
        .and_then(|mut s| s.query_row([id], |r| r.get(0)).optional())
        .map_err(|e| Error::db("reading policy facts", e))?
        .flatten();
    Ok(crate::held_facts::from_text(text.as_deref()))
}
