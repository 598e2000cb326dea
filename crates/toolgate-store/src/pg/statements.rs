//! The statements of the hot path (the kill switch and session reads of
//! every decision, and the chain's append), prepared once per connection:
//! each then costs one round trip and no parsing or planning.

use postgres::{Client, Statement};

use crate::error::Error;

/// The reads of one session's counters.
pub(crate) const SESSION: &str = "SELECT turns, last_turn, calls, rejections, consecutive, \
     escalated_at FROM sessions WHERE session = $1";

/// The same, locking the row.
pub(crate) const SESSION_FOR_UPDATE: &str = "SELECT turns, last_turn, calls, rejections, \
     consecutive, escalated_at FROM sessions WHERE session = $1 FOR UPDATE";

/// A session's consecutive rejections by reason, sorted bytewise.
pub(crate) const REASONS: &str = "SELECT reason, consecutive FROM session_reasons \
     WHERE session = $1 ORDER BY reason COLLATE \"C\"";

/// The kill switch.
pub(crate) const KILL_SWITCH: &str =
    "SELECT mode, reason, actor, changed_at FROM kill_switch WHERE id = 1";

/// The chain's head, locked until the transaction ends.
pub(crate) const HEAD_FOR_UPDATE: &str = "SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE";

/// A batch of records (one array per column) and the new head, in one
/// statement.
pub(crate) const APPEND: &str = "WITH batch AS (\
     INSERT INTO audit (seq, time, verdict, \"user\", session, tool, call_id, reasons, \
     policies, digest, arguments, approval, actor, note, prev, hash, refused, risk, v) \
     SELECT * FROM UNNEST(\
     $1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], \
     $7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[], $12::bigint[], \
     $13::text[], $14::text[], $15::bytea[], $16::bytea[], $17::text[], $18::text[], \
     $19::integer[])) \
     UPDATE audit_head SET seq = $20, hash = $21 WHERE id = 1";

/// The prepared statements of one connection.
pub(crate) struct Prepared {
    pub(crate) session: Statement,
    pub(crate) session_for_update: Statement,
    pub(crate) reasons: Statement,
    pub(crate) kill_switch: Statement,
    pub(crate) head_for_update: Statement,
    pub(crate) append: Statement,
}

impl Prepared {
    /// Prepares them on `client` (the schema must be in place).
    pub(crate) fn new(client: &mut Client) -> Result<Self, Error> {
        let mut p = |sql: &str| {
            client
                .prepare(sql)
                .map_err(|e| Error::pg("preparing the store's statements", e))
        };
        Ok(Self {
            session: p(SESSION)?,
            session_for_update: p(SESSION_FOR_UPDATE)?,
            reasons: p(REASONS)?,
            kill_switch: p(KILL_SWITCH)?,
            head_for_update: p(HEAD_FOR_UPDATE)?,
            append: p(APPEND)?,
        })
    }
}
