//! The reads a decision makes on PostgreSQL: the session's counters and
//! the kill switch.

use super::*;

pub(super) fn read_session(
    client: &mut impl postgres::GenericClient,
    prepared: &Prepared,
    session: &str,
    lock: bool,
) -> Result<SessionCounters, Error> {
    let db = |e| Error::pg("reading a session", e);
    let corrupt = || Error::new(ErrorCode::Corrupt, "a session cannot be read");
    let stmt = if lock {
        &prepared.session_for_update
    } else {
        &prepared.session
    };
    let row = client.query_opt(stmt, &[&session]).map_err(db)?;
    let mut c = SessionCounters {
        session: session.to_owned(),
        ..SessionCounters::default()
    };
    let Some(row) = row else {
        return Ok(c);
    };
    let n = |i: usize| -> Result<u64, Error> {
        to_u64(row.try_get::<_, i64>(i).map_err(|_| corrupt())?)
    };
    c.turns = n(0)?;
    c.last_turn = n(1)?;
    c.calls = n(2)?;
    c.rejections = n(3)?;
    c.consecutive_rejections = n(4)?;
    c.escalated_at = row
        .try_get::<_, Option<i64>>(5)
        .map_err(|_| corrupt())?
        .map(Timestamp::from_unix_millis);
    for row in client.query(&prepared.reasons, &[&session]).map_err(db)? {
        let reason: String = row.try_get(0).map_err(|_| corrupt())?;
        let k: i64 = row.try_get(1).map_err(|_| corrupt())?;
        c.consecutive_by_reason.push((reason, to_u64(k)?));
    }
    Ok(c)
}

pub(super) fn read_kill_switch<T: postgres::ToStatement + ?Sized>(
    client: &mut impl postgres::GenericClient,
    statement: &T,
) -> Result<KillSwitchState, Error> {
    let corrupt = || Error::new(ErrorCode::Corrupt, "the kill switch cannot be read");
    let row = client
        .query_opt(statement, &[])
        .map_err(|e| Error::pg("reading the kill switch", e))?
        .ok_or_else(|| Error::new(ErrorCode::Corrupt, "the kill switch is missing"))?;
    let mode: String = row.try_get(0).map_err(|_| corrupt())?;
    kill::state(
        &mode,
        row.try_get(1).map_err(|_| corrupt())?,
        row.try_get(2).map_err(|_| corrupt())?,
        row.try_get(3).map_err(|_| corrupt())?,
    )
}
