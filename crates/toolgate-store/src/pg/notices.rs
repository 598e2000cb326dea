//! Notices of held calls on PostgreSQL: one row per (approval, sink), the
//! primary key deciding which replica sends it.

use super::*;
use crate::notice::bounded_outcome;

fn db(e: postgres::Error) -> Error {
    Error::pg("keeping a notice", e)
}

/// [`Store::claim_notice`]: the insert that wins the primary key claims.
pub(super) fn claim(
    store: &PgStore,
    id: ApprovalId,
    sink: &str,
    now: Timestamp,
) -> Result<bool, Error> {
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        let n = tx
            .tx
            .execute(
                "INSERT INTO approval_notices (approval, sink, state, attempts, claimed_at, updated_at) \
                 VALUES ($1, $2, 'sending', 0, $3, $3) ON CONFLICT (approval, sink) DO NOTHING",
                &[&id, &sink, &now.unix_millis()],
            )
            .map_err(db)?;
        Ok(n == 1)
    })
}

/// [`Store::record_notice`].
pub(super) fn record(
    store: &PgStore,
    id: ApprovalId,
    sink: &str,
    (state, attempts, outcome): (NoticeState, u32, &str),
    now: Timestamp,
) -> Result<(), Error> {
    let id = to_i64(id.get(), "approval id")?;
    let attempts = i32::try_from(attempts).unwrap_or(i32::MAX);
    let outcome = bounded_outcome(outcome);
    store.write(|tx| {
        tx.tx
            .execute(
                "UPDATE approval_notices SET state = $3, attempts = $4, outcome = $5, updated_at = $6 \
                 WHERE approval = $1 AND sink = $2",
                &[&id, &sink, &state.as_str(), &attempts, &outcome, &now.unix_millis()],
            )
            .map_err(db)?;
        Ok(())
    })
}

/// [`Store::list_notices`].
pub(super) fn list(store: &PgStore, limit: u32) -> Result<Vec<Notice>, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "a notice cannot be read");
    store.pool.with(|client, _| {
        client
            .query(
                "SELECT approval, sink, state, attempts, claimed_at, updated_at, outcome \
                 FROM approval_notices ORDER BY updated_at DESC, approval DESC, sink LIMIT $1",
                &[&i64::from(limit)],
            )
            .map_err(db)?
            .iter()
            .map(|r| {
                let approval: i64 = r.try_get(0).map_err(|_| corrupt())?;
                let state: String = r.try_get(2).map_err(|_| corrupt())?;
                let attempts: i32 = r.try_get(3).map_err(|_| corrupt())?;
                Ok(Notice {
                    approval: ApprovalId::new(u64::try_from(approval).map_err(|_| corrupt())?),
                    sink: r.try_get(1).map_err(|_| corrupt())?,
                    state: NoticeState::parse(&state).ok_or_else(corrupt)?,
                    attempts: u32::try_from(attempts).map_err(|_| corrupt())?,
                    claimed_at: Timestamp::from_unix_millis(r.try_get(4).map_err(|_| corrupt())?),
                    updated_at: Timestamp::from_unix_millis(r.try_get(5).map_err(|_| corrupt())?),
                    outcome: r.try_get(6).map_err(|_| corrupt())?,
                })
            })
            .collect()
    })
}

/// [`Store::reclaim_notices`]: rows another replica is taking are
/// skipped, so each stale row is taken by one replica.
pub(super) fn reclaim(
    store: &PgStore,
    now: Timestamp,
    stale_before: Timestamp,
    limit: u32,
) -> Result<Vec<(ApprovalId, String)>, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "a notice cannot be read");
    store.write(|tx| {
        tx.tx
            .query(
                "UPDATE approval_notices SET claimed_at = $1, updated_at = $1 \
                 WHERE (approval, sink) IN (SELECT approval, sink FROM approval_notices \
                   WHERE state = 'sending' AND updated_at < $2 ORDER BY updated_at LIMIT $3 \
                   FOR UPDATE SKIP LOCKED) \
                 RETURNING approval, sink",
                &[
                    &now.unix_millis(),
                    &stale_before.unix_millis(),
                    &i64::from(limit),
                ],
            )
            .map_err(db)?
            .iter()
            .map(|r| {
                let approval: i64 = r.try_get(0).map_err(|_| corrupt())?;
                let id = ApprovalId::new(u64::try_from(approval).map_err(|_| corrupt())?);
                Ok((id, r.try_get(1).map_err(|_| corrupt())?))
            })
            .collect()
    })
}

/// [`Store::renew_notice`].
pub(super) fn renew(
    store: &PgStore,
    id: ApprovalId,
    sink: &str,
    claimed_at: Timestamp,
    now: Timestamp,
) -> Result<bool, Error> {
    let id = to_i64(id.get(), "approval id")?;
    store.write(|tx| {
        let n = tx
            .tx
            .execute(
                "UPDATE approval_notices SET updated_at = $4 \
                 WHERE approval = $1 AND sink = $2 AND claimed_at = $3 AND state = 'sending'",
                &[&id, &sink, &claimed_at.unix_millis(), &now.unix_millis()],
            )
            .map_err(db)?;
        Ok(n == 1)
    })
}
