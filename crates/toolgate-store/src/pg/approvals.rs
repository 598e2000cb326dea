//! The approval transitions' statements on PostgreSQL: [`ApprovalTx`] for
//! a write transaction, and reading approval rows.

use super::*;

impl ApprovalTx for Tx<'_> {
    /// Locks the approval's row for the rest of the transaction.
    fn approval(&mut self, id: ApprovalId) -> Result<Option<Approval>, Error> {
        let Ok(id) = i64::try_from(id.get()) else {
            return Ok(None);
        };
        get_approval(&mut self.tx, id, true)
    }

    /// The row is locked since it was read: the move is exact.
    fn set_decided(
        &mut self,
        a: &Approval,
        state: ApprovalState,
        actor: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error> {
        let id = to_i64(a.id.get(), "approval id")?;
        self.tx
            .execute(
                "UPDATE approvals SET state = $1, decided_by = $2, decided_at = $3, note = $4 \
                 WHERE id = $5",
                &[&state.as_str(), &actor, &now.unix_millis(), &note, &id],
            )
            .map_err(|e| Error::pg("deciding an approval", e))?;
        Ok(true)
    }

    fn append_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.append(entry)
    }

    /// The approval's row is locked since it was read, so replicas count
    /// votes one after the other; the primary key refuses a second row of
    /// the same approver whatever happens.
    fn add_vote(
        &mut self,
        a: &Approval,
        approver: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error> {
        let id = to_i64(a.id.get(), "approval id")?;
        let added = self
            .tx
            .execute(
                "INSERT INTO approval_votes (approval, approver, at, note) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (approval, approver) DO NOTHING",
                &[&id, &approver, &now.unix_millis(), &note],
            )
            .map_err(voting)?;
        if added == 0 {
            return Ok(false);
        }
        self.tx
            .execute(
                "UPDATE approvals SET votes = votes + 1 WHERE id = $1",
                &[&id],
            )
            .map_err(voting)?;
        Ok(true)
    }

    /// One user's requests queue on a transaction-scoped lock, so the caps
    /// count what replicas write at the same moment; the unique index of
    /// pending approvals holds one per call whatever happens.
    fn lock_requests(&mut self, user: &str) -> Result<(), Error> {
        self.tx
            .execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&APPROVAL_LOCK, &user],
            )
            .map_err(requesting)?;
        Ok(())
    }

    fn lock_requester(&mut self, requester: &str) -> Result<(), Error> {
        self.tx
            .execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&REQUESTER_LOCK, &requester],
            )
            .map_err(requesting)?;
        Ok(())
    }

    fn count_requested(&mut self, requester: &str, now: Timestamp) -> Result<u64, Error> {
        self.tx
            .query_one(
                "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND requester = $1 \
                 AND state = 'pending' AND expires_at > $2",
                &[&requester, &now.unix_millis()],
            )
            .and_then(|r| r.try_get::<_, i64>(0))
            .map_err(requesting)
            .and_then(to_u64)
    }

    fn expire_stale(&mut self, call: Call<'_>, now: Timestamp) -> Result<(), Error> {
        self.tx
            .execute(
                "UPDATE approvals SET state = 'expired' WHERE kind = 'single' AND \"user\" = $1 \
                 AND session = $2 AND tool = $3 AND digest = $4 AND state = 'pending' \
                 AND expires_at <= $5",
                &[
                    &call.user,
                    &call.session,
                    &call.tool,
                    &call.digest.as_bytes().as_slice(),
                    &now.unix_millis(),
                ],
            )
            .map_err(requesting)?;
        Ok(())
    }

    fn find_pending(&mut self, call: Call<'_>) -> Result<Option<ApprovalId>, Error> {
        let row = self
            .tx
            .query_opt(
                "SELECT id FROM approvals WHERE kind = 'single' AND \"user\" = $1 \
                 AND session = $2 AND tool = $3 AND digest = $4 AND state = 'pending'",
                &[
                    &call.user,
                    &call.session,
                    &call.tool,
                    &call.digest.as_bytes().as_slice(),
                ],
            )
            .map_err(requesting)?;
        row.map(|r| id_of(&r, requesting)).transpose()
    }

    fn count_pending(
        &mut self,
        user: &str,
        session: Option<&str>,
        now: Timestamp,
    ) -> Result<u64, Error> {
        let now = now.unix_millis();
        match session {
            Some(session) => self.tx.query_one(
                "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND \"user\" = $1 \
                 AND session = $2 AND state = 'pending' AND expires_at > $3",
                &[&user, &session, &now],
            ),
            None => self.tx.query_one(
                "SELECT COUNT(*) FROM approvals WHERE kind = 'single' AND \"user\" = $1 \
                 AND state = 'pending' AND expires_at > $2",
                &[&user, &now],
            ),
        }
        .and_then(|r| r.try_get::<_, i64>(0))
        .map_err(requesting)
        .and_then(to_u64)
    }

    /// `None` when another transaction's pending approval for the call won
    /// (`ON CONFLICT DO NOTHING` on the unique index).
    fn insert_pending(
        &mut self,
        call: Call<'_>,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<Option<ApprovalId>, Error> {
        let row = self
            .tx
            .query_opt(
                "INSERT INTO approvals (kind, \"user\", session, tool, digest, created_at, expires_at, state, requester, quorum, not_own, upstream) \
                 VALUES ('single', $1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10) \
                 ON CONFLICT (\"user\", session, tool, digest) \
                 WHERE kind = 'single' AND state = 'pending' DO NOTHING RETURNING id",
                &[
                    &call.user,
                    &call.session,
                    &call.tool,
                    &call.digest.as_bytes().as_slice(),
                    &now.unix_millis(),
                    &expires_at.unix_millis(),
                    &call.requester,
                    &i32::try_from(call.quorum.approvers).unwrap_or(i32::MAX),
                    &call.quorum.not_own,
                    &call.upstream,
                ],
            )
            .map_err(requesting)?;
        row.map(|r| id_of(&r, requesting)).transpose()
    }

    fn find_single(&mut self, call: Call<'_>, now: Timestamp) -> Result<Option<ApprovalId>, Error> {
        let row = self
            .tx
            .query_opt(
                "SELECT id FROM approvals WHERE kind = 'single' AND \"user\" = $1 AND session = $2 \
                 AND tool = $3 AND digest = $4 AND state = 'approved' AND used_at IS NULL \
                 AND expires_at > $5 ORDER BY id LIMIT 1",
                &[
                    &call.user,
                    &call.session,
                    &call.tool,
                    &call.digest.as_bytes().as_slice(),
                    &now.unix_millis(),
                ],
            )
            .map_err(using)?;
        row.map(|r| id_of(&r, using)).transpose()
    }

    /// The row lock decides a race: a concurrent user waits for the
    /// winner's commit, then finds `used_at` set and updates nothing.
    fn use_single(&mut self, id: ApprovalId, now: Timestamp) -> Result<bool, Error> {
        let id = to_i64(id.get(), "approval id")?;
        let changed = self
            .tx
            .execute(
                "UPDATE approvals SET used_at = $1, uses = uses + 1 \
                 WHERE id = $2 AND used_at IS NULL AND state = 'approved'",
                &[&now.unix_millis(), &id],
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
        let row = self
            .tx
            .query_opt(
                "UPDATE approvals SET used_at = $3, uses = uses + 1 WHERE id = \
                 (SELECT id FROM approvals WHERE kind = 'standing' AND \"user\" = $1 AND tool = $2 \
                  AND upstream IS NOT DISTINCT FROM $4 \
                  AND state = 'approved' AND expires_at > $3 ORDER BY id LIMIT 1) \
                 AND state = 'approved' RETURNING id",
                &[&user, &tool, &now.unix_millis(), &upstream],
            )
            .map_err(using)?;
        row.map(|r| id_of(&r, using)).transpose()
    }
}

/// The approval id in column 0 of `row`.
fn id_of(row: &Row, db: fn(postgres::Error) -> Error) -> Result<ApprovalId, Error> {
    let id: i64 = row.try_get(0).map_err(db)?;
    Ok(ApprovalId::new(to_u64(id)?))
}

fn requesting(e: postgres::Error) -> Error {
    Error::pg("requesting an approval", e)
}

fn voting(e: postgres::Error) -> Error {
    Error::pg("approving", e)
}

/// The approvers of approval `id`, in the order they approved.
pub(super) fn votes_of(
    client: &mut impl postgres::GenericClient,
    id: i64,
) -> Result<Vec<ApprovalVote>, Error> {
    let db = |e| Error::pg("reading an approval's approvers", e);
    client
        .query(
            "SELECT approver, at, note FROM approval_votes WHERE approval = $1 \
             ORDER BY at, approver",
            &[&id],
        )
        .map_err(db)?
        .iter()
        .map(|r| {
            Ok(ApprovalVote {
                approver: r.try_get(0).map_err(db)?,
                at: Timestamp::from_unix_millis(r.try_get(1).map_err(db)?),
                note: r.try_get(2).map_err(db)?,
            })
        })
        .collect()
}

fn using(e: postgres::Error) -> Error {
    Error::pg("using an approval", e)
}

/// Reads the [`APPROVAL_COLUMNS`] of a row.
pub(super) fn approval(row: &Row) -> Result<Approval, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "an approval cannot be read");
    let id: i64 = row.try_get(0).map_err(|_| corrupt())?;
    let kind: String = row.try_get(1).map_err(|_| corrupt())?;
    let digest_bytes: Option<Vec<u8>> = row.try_get(5).map_err(|_| corrupt())?;
    let state: String = row.try_get(8).map_err(|_| corrupt())?;
    let uses: i64 = row.try_get(13).map_err(|_| corrupt())?;
    let time = |i: usize| -> Result<Option<Timestamp>, Error> {
        Ok(row
            .try_get::<_, Option<i64>>(i)
            .map_err(|_| corrupt())?
            .map(Timestamp::from_unix_millis))
    };
    Ok(Approval {
        id: ApprovalId::new(u64::try_from(id).map_err(|_| corrupt())?),
        kind: ApprovalKind::parse(&kind).ok_or_else(corrupt)?,
        user: row.try_get(2).map_err(|_| corrupt())?,
        session: row.try_get(3).map_err(|_| corrupt())?,
        tool: row.try_get(4).map_err(|_| corrupt())?,
        digest: match digest_bytes {
            Some(d) => Some(digest(&d).ok_or_else(corrupt)?),
            None => None,
        },
        created_at: time(6)?.ok_or_else(corrupt)?,
        expires_at: time(7)?.ok_or_else(corrupt)?,
        state: ApprovalState::parse(&state).ok_or_else(corrupt)?,
        decided_by: row.try_get(9).map_err(|_| corrupt())?,
        decided_at: time(10)?,
        note: row.try_get(11).map_err(|_| corrupt())?,
        used_at: time(12)?,
        uses: u64::try_from(uses).map_err(|_| corrupt())?,
        quorum: Quorum::new(
            u32::try_from(row.try_get::<_, i32>(14).map_err(|_| corrupt())?)
                .map_err(|_| corrupt())?,
            row.try_get(15).map_err(|_| corrupt())?,
        ),
        votes: u32::try_from(row.try_get::<_, i32>(16).map_err(|_| corrupt())?)
            .map_err(|_| corrupt())?,
        upstream: row.try_get(17).map_err(|_| corrupt())?,
    })
}

/// One approval; with `lock`, its row stays locked until the transaction
/// ends.
pub(super) fn get_approval(
    client: &mut impl postgres::GenericClient,
    id: i64,
    lock: bool,
) -> Result<Option<Approval>, Error> {
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    client
        .query_opt(&sql, &[&id])
        .map_err(|e| Error::pg("reading an approval", e))?
        .as_ref()
        .map(approval)
        .transpose()
}

impl PgStore {
    /// One page of approvals ([`Store::list_approvals`]).
    pub(super) fn approvals_page(&self, f: &ApprovalFilter) -> Result<Vec<Approval>, Error> {
        let now = self.open.clock.now();
        let w = approvals_where(f, now)?;
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals{} ORDER BY id {} LIMIT {}",
            w.sql,
            if f.newest_first { "DESC" } else { "ASC" },
            i64::from(f.limit)
        );
        self.pool.with(|client, _| {
            client
                .query(&sql, &w.refs())
                .map_err(|e| Error::pg("listing approvals", e))?
                .iter()
                .map(|r| approval(r).map(|a| a.as_of(now)))
                .collect()
        })
    }

    /// How many approvals match ([`Store::count_approvals`]).
    pub(super) fn approvals_count(&self, f: &ApprovalFilter) -> Result<u64, Error> {
        let mut f = f.clone();
        f.after = None;
        f.before = None;
        let w = approvals_where(&f, self.open.clock.now())?;
        let sql = format!("SELECT COUNT(*) FROM approvals{}", w.sql);
        self.pool.with(|client, _| {
            client
                .query_one(&sql, &w.refs())
                .and_then(|r| r.try_get::<_, i64>(0))
                .map_err(|e| Error::pg("counting approvals", e))
                .and_then(to_u64)
        })
    }
}

/// [`Store::set_approval_facts`].
pub(super) fn set_facts(
    store: &PgStore,
    id: ApprovalId,
    facts: &[toolgate::PolicyFact],
) -> Result<(), Error> {
    let Some(text) = crate::held_facts::to_text(facts) else {
        return Ok(());
    };
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        tx.tx
            .execute(
                "UPDATE approvals SET facts = $1 WHERE id = $2 AND facts IS NULL",
                &[&text, &id],
            )
            .map_err(|e| Error::pg("keeping policy facts", e))?;
        Ok(())
    })
}

/// [`Store::approval_facts`].
pub(super) fn facts_of(
    store: &PgStore,
    id: ApprovalId,
) -> Result<Vec<toolgate::PolicyFact>, Error> {
    let Ok(id) = i64::try_from(id.get()) else {
        return Ok(Vec::new());
    };
    let text: Option<String> = store.pool.with(|client, _| {
        Ok(client
            .query_opt("SELECT facts FROM approvals WHERE id = $1", &[&id])
            .map_err(|e| Error::pg("reading policy facts", e))?
            .and_then(|r| r.try_get::<_, Option<String>>(0).ok().flatten()))
    })?;
    Ok(crate::held_facts::from_text(text.as_deref()))
}

/// The `WHERE` list of an approval filter, its state as of `now`.
fn approvals_where(f: &ApprovalFilter, now: Timestamp) -> Result<Where, Error> {
    let mut w = Where::default();
    if let Some(after) = f.after {
        w.add("id > $", Box::new(to_i64(after.get(), "cursor")?));
    }
    if let Some(before) = f.before {
        w.add("id < $", Box::new(to_i64(before.get(), "cursor")?));
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
    if let Some(kind) = f.kind {
        w.add("kind = $", Box::new(kind.as_str().to_owned()));
    }
    if let Some(state) = f.state {
        match approval_state_clause(state) {
            Some(clause) => w.add(&clause.replace('?', "$"), Box::new(now.unix_millis())),
            None => w.add("state = $", Box::new(state.as_str().to_owned())),
        }
    }
    Ok(w)
}
