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

/// The root chain's head, locked until the transaction ends (only when a
/// store opens its segment).
pub(crate) const ROOT_FOR_UPDATE: &str = "SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE";

/// A segment's head, locked until the transaction ends (only the store
/// that opened the segment appends to it).
pub(crate) const SEGMENT_FOR_UPDATE: &str =
    "SELECT sseq, hash FROM audit_segments WHERE id = $1 FOR UPDATE";

/// `$1` numbers from the log's sequence, ascending. Drawn after the
/// segment's head is locked, so they grow along the segment.
pub(crate) const NEXT_SEQS: &str =
    "SELECT nextval('audit_seq') AS s FROM generate_series(1, $1::integer) ORDER BY s";

/// A batch of records of one segment (one array per column) and the
/// segment's new head, in one statement.
pub(crate) const APPEND: &str = "WITH batch AS (\
     INSERT INTO audit (seq, time, verdict, \"user\", session, tool, call_id, reasons, \
     policies, digest, arguments, approval, actor, note, prev, hash, refused, risk, v, \
     sseq, segment) \
     SELECT *, $20::bigint FROM UNNEST(\
     $1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], \
     $7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[], $12::bigint[], \
     $13::text[], $14::text[], $15::bytea[], $16::bytea[], $17::text[], $18::text[], \
     $19::integer[], $21::bigint[])) \
     UPDATE audit_segments SET sseq = $22, hash = $23 WHERE id = $20";

/// The prepared statements of one connection.
pub(crate) struct Prepared {
    pub(crate) session: Statement,
    pub(crate) session_for_update: Statement,
    pub(crate) reasons: Statement,
    pub(crate) kill_switch: Statement,
    pub(crate) segment_for_update: Statement,
    pub(crate) next_seqs: Statement,
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
            segment_for_update: p(SEGMENT_FOR_UPDATE)?,
            next_seqs: p(NEXT_SEQS)?,
            append: p(APPEND)?,
        })
    }
}
