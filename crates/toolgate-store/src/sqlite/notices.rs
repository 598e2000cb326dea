//! Notices of held calls on SQLite: one row per (approval, sink), the
//! primary key deciding which process sends it.

use super::*;
use crate::notice::bounded_outcome;

fn db(e: rusqlite::Error) -> Error {
    Error::db("keeping a notice", e)
}

/// [`Store::claim_notice`]: the insert that wins the primary key claims.
pub(super) fn claim(
    store: &SqliteStore,
    id: ApprovalId,
    sink: &str,
    now: Timestamp,
) -> Result<bool, Error> {
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        let n = tx
            .conn
            .execute(
                "INSERT INTO approval_notices (approval, sink, state, attempts, claimed_at, updated_at) \
                 VALUES (?1, ?2, 'sending', 0, ?3, ?3) ON CONFLICT (approval, sink) DO NOTHING",
                rusqlite::params![id, sink, now.unix_millis()],
            )
            .map_err(db)?;
        Ok(n == 1)
    })
}

/// [`Store::record_notice`].
pub(super) fn record(
    store: &SqliteStore,
    id: ApprovalId,
    sink: &str,
    (state, attempts, outcome): (NoticeState, u32, &str),
    now: Timestamp,
) -> Result<(), Error> {
    let id = to_i64(id.get(), "approval id")?;
    let outcome = bounded_outcome(outcome);
    store.write(|tx| {
        tx.conn
            .execute(
                "UPDATE approval_notices SET state = ?3, attempts = ?4, outcome = ?5, updated_at = ?6 \
                 WHERE approval = ?1 AND sink = ?2",
                rusqlite::params![
                    id,
                    sink,
                    state.as_str(),
                    i64::from(attempts),
                    outcome,
                    now.unix_millis()
                ],
            )
            .map_err(db)?;
        Ok(())
    })
}

/// [`Store::list_notices`].
pub(super) fn list(store: &SqliteStore, limit: u32) -> Result<Vec<Notice>, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "a notice cannot be read");
    let conn = store.read_conn()?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT approval, sink, state, attempts, claimed_at, updated_at, outcome \
             FROM approval_notices ORDER BY updated_at DESC, approval DESC, sink LIMIT ?1",
        )
        .map_err(db)?;
    let mut rows = stmt
        .query(rusqlite::params![i64::from(limit)])
        .map_err(db)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(db)? {
        let approval: i64 = r.get(0).map_err(db)?;
        let state: String = r.get(2).map_err(db)?;
        let attempts: i64 = r.get(3).map_err(db)?;
        out.push(Notice {
            approval: ApprovalId::new(u64::try_from(approval).map_err(|_| corrupt())?),
            sink: r.get(1).map_err(db)?,
            state: NoticeState::parse(&state).ok_or_else(corrupt)?,
            attempts: u32::try_from(attempts).map_err(|_| corrupt())?,
            claimed_at: Timestamp::from_unix_millis(r.get(4).map_err(db)?),
            updated_at: Timestamp::from_unix_millis(r.get(5).map_err(db)?),
            outcome: r.get(6).map_err(db)?,
        });
    }
    Ok(out)
}

/// [`Store::reclaim_notices`]: the write lock is held, so each stale row
/// is taken by one process.
pub(super) fn reclaim(
    store: &SqliteStore,
    now: Timestamp,
    stale_before: Timestamp,
    limit: u32,
) -> Result<Vec<(ApprovalId, String)>, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "a notice cannot be read");
    store.write(|tx| {
        let mut stmt = tx
            .conn
            .prepare_cached(
                "UPDATE approval_notices SET claimed_at = ?1, updated_at = ?1 \
                 WHERE (approval, sink) IN (SELECT approval, sink FROM approval_notices \
                   WHERE state = 'sending' AND updated_at < ?2 ORDER BY updated_at LIMIT ?3) \
                 RETURNING approval, sink",
            )
            .map_err(db)?;
        let mut rows = stmt
            .query(rusqlite::params![
                now.unix_millis(),
                stale_before.unix_millis(),
                i64::from(limit)
            ])
            .map_err(db)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(db)? {
            let approval: i64 = r.get(0).map_err(db)?;
            let id = ApprovalId::new(u64::try_from(approval).map_err(|_| corrupt())?);
            out.push((id, r.get(1).map_err(db)?));
        }
        Ok(out)
    })
}

/// [`Store::renew_notice`].
pub(super) fn renew(
    store: &SqliteStore,
    id: ApprovalId,
    sink: &str,
    claimed_at: Timestamp,
    now: Timestamp,
) -> Result<bool, Error> {
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        let n = tx
            .conn
            .execute(
                "UPDATE approval_notices SET updated_at = ?4 \
                 WHERE approval = ?1 AND sink = ?2 AND claimed_at = ?3 AND state = 'sending'",
                rusqlite::params![id, sink, claimed_at.unix_millis(), now.unix_millis()],
            )
            .map_err(db)?;
        Ok(n == 1)
    })
}
