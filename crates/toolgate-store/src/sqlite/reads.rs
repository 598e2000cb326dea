//! The reads a decision makes on SQLite (session counters, responses,
//! the kill switch) and the small statement helpers they share.

use super::*;

pub(super) fn count_response_in(conn: &Connection, session: &str) -> Result<u64, Error> {
    let n: i64 = conn
        .prepare_cached(
            "INSERT INTO session_responses (session, responses) VALUES (?1, 1) \
             ON CONFLICT (session) DO UPDATE SET responses = responses + 1 \
             RETURNING responses",
        )
        .and_then(|mut s| s.query_row([session], |r| r.get(0)))
        .map_err(|e| Error::db("counting a response", e))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Claims `call_id` in `session` in the open transaction: `false` if it
/// was claimed already.
pub(super) fn claim_in(
    conn: &Connection,
    session: &str,
    call_id: &str,
    now_ms: i64,
) -> Result<bool, Error> {
    let n = conn
        .prepare_cached(
            "INSERT INTO allowed_calls (session, call_id, allowed_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (session, call_id) DO NOTHING",
        )
        .and_then(|mut s| s.execute(rusqlite::params![session, call_id, now_ms]))
        .map_err(|e| Error::db("claiming a call id", e))?;
    Ok(n == 1)
}

/// The responses of `session` counted so far (0 for a new session).
pub(super) fn read_responses(conn: &Connection, session: &str) -> Result<u64, Error> {
    let n: Option<i64> = conn
        .prepare_cached("SELECT responses FROM session_responses WHERE session = ?1")
        .and_then(|mut s| s.query_row([session], |r| r.get(0)).optional())
        .map_err(|e| Error::db("reading a session's responses", e))?;
    Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
}

pub(super) fn json_list(items: &[&str]) -> String {
    let owned: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
    let mut out = String::new();
    crate::audit::str_array(&mut out, &owned);
    out
}

pub(super) fn read_session(conn: &Connection, session: &str) -> Result<SessionCounters, Error> {
    let db = |e| Error::db("reading a session", e);
    let row: Option<(i64, i64, i64, i64, i64, Option<i64>)> = conn
        .prepare_cached(
            "SELECT turns, last_turn, calls, rejections, consecutive, escalated_at FROM sessions WHERE session = ?1",
        )
        .map_err(db)?
        .query_row([session], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })
        .optional()
        .map_err(db)?;
    let mut c = SessionCounters {
        session: session.to_owned(),
        ..SessionCounters::default()
    };
    let Some((turns, last_turn, calls, rejections, consecutive, escalated_at)) = row else {
        return Ok(c);
    };
    c.turns = to_u64(turns)?;
    c.last_turn = to_u64(last_turn)?;
    c.calls = to_u64(calls)?;
    c.rejections = to_u64(rejections)?;
    c.consecutive_rejections = to_u64(consecutive)?;
    c.escalated_at = escalated_at.map(Timestamp::from_unix_millis);
    let mut stmt = conn
        .prepare_cached(
            "SELECT reason, consecutive FROM session_reasons WHERE session = ?1 ORDER BY reason",
        )
        .map_err(db)?;
    let mut rows = stmt.query([session]).map_err(db)?;
    while let Some(row) = rows.next().map_err(db)? {
        let reason: String = row.get(0).map_err(db)?;
        let n: i64 = row.get(1).map_err(db)?;
        c.consecutive_by_reason.push((reason, to_u64(n)?));
    }
    Ok(c)
}

/// Runs a statement without parameters, prepared once per connection.
pub(super) fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute([])
}

pub(super) fn read_kill_switch(conn: &Connection) -> Result<KillSwitchState, Error> {
    let db = |e| Error::db("reading the kill switch", e);
    let (mode, reason, actor, changed_at): (String, Option<String>, Option<String>, Option<i64>) =
        conn.prepare_cached("SELECT mode, reason, actor, changed_at FROM kill_switch WHERE id = 1")
            .map_err(db)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(db)?;
    kill::state(&mode, reason, actor, changed_at)
}
