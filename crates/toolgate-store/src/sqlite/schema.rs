//! Versioned migrations. Each entry of [`MIGRATIONS`] moves the schema one
//! version up; `schema_version` records each applied version. A database
//! whose version is above [`SCHEMA_VERSION`] was written by a newer toolgate
//! and is refused.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::error::Error;
use crate::rules::migrations;

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = 15;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15,
];

/// Version 15: each session's response count kept in a table keyed by the
/// session itself (`WITHOUT ROWID`), so that counting a response (every
/// decision on a model response does) finds and writes one B-tree instead
/// of two (a rowid table and its primary key's index). The counts move
/// over as they are.
const V15: &str = "
CREATE TABLE session_responses_v15 (
    session   TEXT PRIMARY KEY,
    responses INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO session_responses_v15 (session, responses)
    SELECT session, responses FROM session_responses;
DROP TABLE session_responses;
ALTER TABLE session_responses_v15 RENAME TO session_responses;
";

/// Version 12: what the policies that held each single approval's call
/// read (`toolgate::PolicyFact`s as a JSON array, redacted), shown to the
/// humans deciding. Older rows have none.
const V12: &str = "
ALTER TABLE approvals ADD COLUMN facts TEXT;
";

/// Version 10: the upstream each single approval's call goes to (the MCP
/// proxy's route), shown to the humans deciding; the approval's digest is
/// bound to it. Older rows have none.
const V10: &str = "
ALTER TABLE approvals ADD COLUMN upstream TEXT;
";

/// Version 11: the two-person rule. Each single approval keeps the quorum
/// it was requested with (how many distinct approvers, whether the call's
/// own user is refused as one) and how many approved it so far; each
/// approver's approval is a row of its own, once per approval and
/// identity (the primary key holds it whatever the code does); and the
/// notices of held calls sent to notification sinks, claimed once per
/// approval and sink.
const V11: &str = "
ALTER TABLE approvals ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN not_own INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN votes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE approval_votes (
    approval INTEGER NOT NULL,
    approver TEXT NOT NULL,
    at       INTEGER NOT NULL,
    note     TEXT,
    PRIMARY KEY (approval, approver)
);
CREATE TABLE approval_notices (
    approval   INTEGER NOT NULL,
    sink       TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL,
    claimed_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    outcome    TEXT,
    PRIMARY KEY (approval, sink)
);
CREATE INDEX approval_notices_updated ON approval_notices (updated_at);
";

/// Version 13: each limit key's running totals, kept with its events in
/// the transaction that stores or forgets them (see
/// `rules::limits::Totals`): how many events the key holds, their exact
/// sum as decimal text (`NULL`: not known, the events are read and the
/// next charge counts it afresh), the most digits after the point of any
/// of them, and when the oldest ran. Keys counted before have no row and
/// are counted afresh when next charged.
const V13: &str = "
CREATE TABLE limit_keys (
    key       TEXT PRIMARY KEY,
    calls     INTEGER NOT NULL,
    total     TEXT,
    scale     INTEGER NOT NULL,
    oldest_at INTEGER
);
";

/// Version 14: the counted calls kept in their key's time order in the
/// table itself (`WITHOUT ROWID`, keyed by key, time and the sequence
/// number of the audit record that counted the call), so that storing one
/// writes two B-trees (the table and the call-id index) instead of three
/// (a rowid table, the key-and-time index and the call-id index). The
/// calls counted before keep their order under a negative number (their
/// old rowid, negated: no record's sequence number).
const V14: &str = "
CREATE TABLE limit_events_v14 (
    key     TEXT NOT NULL,
    at      INTEGER NOT NULL,
    record  INTEGER NOT NULL,
    amount  TEXT NOT NULL,
    call_id TEXT,
    PRIMARY KEY (key, at, record)
) WITHOUT ROWID;
INSERT INTO limit_events_v14 (key, at, record, amount, call_id)
    SELECT key, at, -rowid, amount, call_id FROM limit_events;
DROP TABLE limit_events;
ALTER TABLE limit_events_v14 RENAME TO limit_events;
CREATE UNIQUE INDEX limit_events_call ON limit_events (key, call_id) WHERE call_id IS NOT NULL;
";

/// Version 9: the usage of rate limits and budgets (one row per counted
/// call and key, a call id once per key) and the labels each session holds.
const V9: &str = "
CREATE TABLE limit_events (
    key     TEXT NOT NULL,
    at      INTEGER NOT NULL,
    amount  TEXT NOT NULL,
    call_id TEXT
);
CREATE INDEX limit_events_key_at ON limit_events (key, at);
CREATE UNIQUE INDEX limit_events_call ON limit_events (key, call_id) WHERE call_id IS NOT NULL;
CREATE TABLE session_labels (
    session     TEXT NOT NULL,
    label       TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    PRIMARY KEY (session, label)
);
";

/// Version 8: who asked for each pending approval (the front end's
/// authenticated caller, such as the service's token name), so that the
/// approvals one caller holds waiting are capped whatever users it names.
const V8: &str = "
ALTER TABLE approvals ADD COLUMN requester TEXT;
CREATE INDEX approvals_pending_requester ON approvals (requester, expires_at)
    WHERE kind = 'single' AND state = 'pending';
";

/// Version 7: the MCP proxy's tool-definition pins, per upstream: each
/// definition by the digest of its canonical form, with its text, what a
/// human made of it and the findings in it (one row per definition); and
/// each whole catalog by its digest (`seen_seq` orders the sightings).
const V7: &str = "
CREATE TABLE tool_pins (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    upstream    TEXT NOT NULL,
    tool        TEXT NOT NULL,
    digest      BLOB NOT NULL,
    definition  TEXT NOT NULL,
    state       TEXT NOT NULL,
    findings    TEXT NOT NULL,
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    decided_by  TEXT,
    decided_at  INTEGER,
    note        TEXT,
    UNIQUE (upstream, tool, digest)
);
CREATE INDEX tool_pins_state ON tool_pins (state, id);
CREATE TABLE tool_catalogs (
    upstream   TEXT NOT NULL,
    digest     BLOB NOT NULL,
    tools      INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    seen_seq   INTEGER NOT NULL,
    PRIMARY KEY (upstream, digest)
);
";

/// Version 6: each audit record keeps the format version it was written
/// with (`v`), so a record is hashed and verified in its own format. Rows
/// written before have version 1; their bodies and hashes do not change.
const V6: &str = "
ALTER TABLE audit ADD COLUMN v INTEGER NOT NULL DEFAULT 1;
";

/// Version 5: audit records carry the tool's risk tier and, for arguments
/// that were never parsed, a bounded copy (or a keyed digest) of what was
/// received. Older rows have neither, and their hashes do not change.
const V5: &str = "
ALTER TABLE audit ADD COLUMN refused TEXT;
ALTER TABLE audit ADD COLUMN risk TEXT;
";

/// Version 4: the gate's own count of each session's decided responses (its
/// turn number, which callers cannot set), and the call ids allowed in each
/// session (a replayed non-read call is denied).
const V4: &str = "
CREATE TABLE session_responses (
    session   TEXT PRIMARY KEY,
    responses INTEGER NOT NULL
);
CREATE TABLE allowed_calls (
    session    TEXT NOT NULL,
    call_id    TEXT NOT NULL,
    allowed_at INTEGER NOT NULL,
    PRIMARY KEY (session, call_id)
);
";

/// Version 3: at most one pending single approval per call (user, session,
/// tool, digest), enforced by a partial unique index; an older database's
/// duplicates (identical held calls that arrived together) keep their
/// newest and the others become `expired`, so the index can be built. An
/// index of pending approvals by expiry (the gauge and the queue caps count
/// them), and the readiness probe's row, which `ping` writes and commits.
const V3: &str = "
UPDATE approvals SET state = 'expired'
 WHERE kind = 'single' AND state = 'pending'
   AND id NOT IN (
       SELECT MAX(id) FROM approvals WHERE kind = 'single' AND state = 'pending'
        GROUP BY user, session, tool, digest
   );
CREATE UNIQUE INDEX approvals_one_pending ON approvals (user, session, tool, digest)
 WHERE kind = 'single' AND state = 'pending';
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE state = 'pending';
CREATE TABLE probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at INTEGER NOT NULL
);
INSERT INTO probe (id, at) VALUES (1, 0);
";

/// Version 2: the store's redaction key, 32 random bytes (SQLite's
/// `randomblob`, seeded from the operating system's randomness), created
/// once with the database.
const V2: &str = "
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
INSERT INTO meta (name, value) VALUES ('redaction_key', randomblob(32));
";

const V1: &str = "
CREATE TABLE audit (
    seq        INTEGER PRIMARY KEY,
    time       INTEGER NOT NULL,
    verdict    TEXT NOT NULL,
    user       TEXT,
    session    TEXT,
    tool       TEXT,
    call_id    TEXT,
    reasons    TEXT NOT NULL,
    policies   TEXT NOT NULL,
    digest     BLOB,
    arguments  TEXT,
    approval   INTEGER,
    actor      TEXT,
    note       TEXT,
    prev       BLOB NOT NULL,
    hash       BLOB NOT NULL
);
CREATE INDEX audit_session ON audit (session, seq);
CREATE INDEX audit_user ON audit (user, seq);
CREATE TABLE audit_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL,
    hash BLOB NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, zeroblob(32));
CREATE TABLE approvals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL,
    user        TEXT NOT NULL,
    session     TEXT,
    tool        TEXT NOT NULL,
    digest      BLOB,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    state       TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  INTEGER,
    note        TEXT,
    used_at     INTEGER,
    uses        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX approvals_call ON approvals (user, session, tool, digest);
CREATE INDEX approvals_standing ON approvals (user, tool) WHERE kind = 'standing';
CREATE TABLE sessions (
    session      TEXT PRIMARY KEY,
    turns        INTEGER NOT NULL,
    last_turn    INTEGER NOT NULL,
    calls        INTEGER NOT NULL,
    rejections   INTEGER NOT NULL,
    consecutive  INTEGER NOT NULL,
    escalated_at INTEGER,
    updated_at   INTEGER NOT NULL
);
CREATE TABLE session_reasons (
    session     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    consecutive INTEGER NOT NULL,
    PRIMARY KEY (session, reason)
);
CREATE TABLE kill_switch (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    mode       TEXT NOT NULL,
    reason     TEXT,
    actor      TEXT,
    changed_at INTEGER
);
INSERT INTO kill_switch (id, mode) VALUES (1, 'off');
";

/// Brings the database up to [`SCHEMA_VERSION`] in one immediate
/// transaction (so processes opening it together migrate it once).
pub(crate) fn migrate(conn: &mut Connection, now_ms: i64) -> Result<(), Error> {
    let db = |e| Error::db("migrating the database", e);
    // A database already at this version (every open but the first) is
    // not locked for writing: one read says so. Anything else (no table
    // yet, an older or newer version, an error) takes the locked path.
    if read_version(conn).ok() == Some(SCHEMA_VERSION) {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (
             version    INTEGER PRIMARY KEY,
             applied_at INTEGER NOT NULL
         )",
    )
    .map_err(db)?;
    let current = read_version(&tx)?;
    for (version, sql) in migrations::pending(current, &MIGRATIONS)? {
        tx.execute_batch(sql).map_err(db)?;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?1, ?2)",
            (i64::from(version), now_ms),
        )
        .map_err(db)?;
    }
    tx.commit().map_err(db)
}

/// Checks, without writing, that the database is at [`SCHEMA_VERSION`].
pub(crate) fn check(conn: &Connection) -> Result<(), Error> {
    let exists: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| Error::db("reading the schema version", e))?;
    let current = if exists.is_some() {
        read_version(conn)?
    } else {
        0
    };
    migrations::check(
        current,
        SCHEMA_VERSION,
        "open it read-write once to migrate it",
    )
}

fn read_version(conn: &Connection) -> Result<u32, Error> {
    let v: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(|e| Error::db("reading the schema version", e))?;
    migrations::stored_version(v)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::{V1, V2, V3, V4, V5, V6};

    /// Audit rows written before version 6 read back as record version 1.
    #[test]
    fn v6_gives_older_audit_rows_record_version_1() {
        let conn = Connection::open_in_memory().unwrap();
        for sql in [V1, V2, V3, V4, V5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO audit (seq, time, verdict, reasons, policies, approval, prev, hash) \
             VALUES (1, 0, 'approval_used', '[]', '[]', 7, zeroblob(32), zeroblob(32))",
        )
        .unwrap();
        conn.execute_batch(V6).unwrap();
        let v: i64 = conn
            .query_row("SELECT v FROM audit WHERE seq = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 1);
    }

    /// A version-2 database may hold several pending approvals for one
    /// call (written before version 3): the migration keeps the newest
    /// pending and expires the others instead of failing on the index.
    #[test]
    fn v3_expires_duplicate_pending_approvals_of_an_old_database() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1).unwrap();
        conn.execute_batch(V2).unwrap();
        let insert = "INSERT INTO approvals (kind, user, session, tool, digest, created_at, \
                      expires_at, state) VALUES ('single', 'alice', 's-1', ?1, x'01', 0, 9, ?2)";
        for (tool, state) in [
            ("refund", "pending"),
            ("refund", "pending"),
            ("refund", "approved"),
            ("refund", "pending"),
            ("delete", "pending"),
        ] {
            conn.execute(insert, [tool, state]).unwrap();
        }
        conn.execute_batch(V3).unwrap();
        let states: Vec<(i64, String)> = conn
            .prepare("SELECT id, state FROM approvals ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let states: Vec<(i64, &str)> = states.iter().map(|(i, s)| (*i, s.as_str())).collect();
        assert_eq!(
            states,
            [
                (1, "expired"),
                (2, "expired"),
                (3, "approved"),
                (4, "pending"),
                (5, "pending")
            ]
        );
        // The index now refuses a second pending approval for a call.
        assert!(conn.execute(insert, ["refund", "pending"]).is_err());
        conn.execute(insert, ["refund", "denied"]).unwrap();
    }
}
