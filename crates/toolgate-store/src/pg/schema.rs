//! Versioned migrations for PostgreSQL. Each entry of [`MIGRATIONS`] moves
//! the schema one version up; `schema_version` records each applied
//! version. Migrations run in one transaction under a transaction-scoped
//! advisory lock, so replicas starting together migrate the database once
//! and the others wait, then find it current.

use postgres::Client;

use crate::error::Error;
use crate::rules::migrations;

/// The schema version this build writes.
pub const PG_SCHEMA_VERSION: u32 = 14;

/// The advisory lock key that serializes migrations (any fixed number;
/// "tgmigr" in ASCII).
const MIGRATION_LOCK: i64 = 0x7467_6d69_6772;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: [&str; PG_SCHEMA_VERSION as usize] =
    [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14];

/// Version 13: what the policies that held each single approval's call
/// read (`toolgate::PolicyFact`s as a JSON array, redacted), shown to the
/// humans deciding. Older rows have none.
const V13: &str = "
ALTER TABLE approvals ADD COLUMN facts TEXT;
";

/// Version 11: the upstream each single approval's call goes to (the MCP
/// proxy's route), shown to the humans deciding; the approval's digest is
/// bound to it. Older rows have none.
const V11: &str = "
ALTER TABLE approvals ADD COLUMN upstream TEXT;
";

/// Version 12: the two-person rule. Each single approval keeps the quorum
/// it was requested with (how many distinct approvers, whether the call's
/// own user is refused as one) and how many approved it so far; each
/// approver's approval is a row of its own, once per approval and
/// identity (the primary key holds it across replicas); and the notices of
/// held calls sent to notification sinks, claimed once per approval and
/// sink across replicas.
const V12: &str = "
ALTER TABLE approvals ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN not_own BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE approvals ADD COLUMN votes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE approval_votes (
    approval BIGINT NOT NULL,
    approver TEXT NOT NULL,
    at       BIGINT NOT NULL,
    note     TEXT,
    PRIMARY KEY (approval, approver)
);
CREATE TABLE approval_notices (
    approval   BIGINT NOT NULL,
    sink       TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL,
    claimed_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    outcome    TEXT,
    PRIMARY KEY (approval, sink)
);
CREATE INDEX approval_notices_updated ON approval_notices (updated_at);
";

/// Version 14: each limit key's running totals on its lock row, kept with
/// its events in the transaction that stores or forgets them (see
/// `rules::limits::Totals`): how many events the key holds, their exact
/// sum as decimal text (`NULL`: not known, the events are read and the
/// next charge counts it afresh, as for every key counted before), the
/// most digits after the point of any of them, and when the oldest ran.
const V14: &str = "
ALTER TABLE limit_keys
    ADD COLUMN calls BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN total TEXT,
    ADD COLUMN scale BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN oldest_at BIGINT;
";

/// Version 10: the usage of rate limits and budgets (one row per counted
/// call and key, a call id once per key), one row per key that a
/// transaction charging it locks first (so replicas judge a key one after
/// the other), and the labels each session holds.
const V10: &str = "
CREATE TABLE limit_keys (
    key TEXT PRIMARY KEY
);
CREATE TABLE limit_events (
    key     TEXT NOT NULL,
    at      BIGINT NOT NULL,
    amount  TEXT NOT NULL,
    call_id TEXT
);
CREATE INDEX limit_events_key_at ON limit_events (key, at);
CREATE UNIQUE INDEX limit_events_call ON limit_events (key, call_id) WHERE call_id IS NOT NULL;
CREATE TABLE session_labels (
    session     TEXT NOT NULL,
    label       TEXT NOT NULL,
    acquired_at BIGINT NOT NULL,
    PRIMARY KEY (session, label)
);
";

/// Version 9: who asked for each pending approval (the front end's
/// authenticated caller, such as the service's token name), so that the
/// approvals one caller holds waiting are capped whatever users it names.
const V9: &str = "
ALTER TABLE approvals ADD COLUMN requester TEXT;
CREATE INDEX approvals_pending_requester ON approvals (requester, expires_at)
    WHERE kind = 'single' AND state = 'pending';
";

/// Version 8: a segmented audit log (see [`crate::audit#segments`]).
/// Records get `seq` from a sequence, which holds no lock until the commit,
/// and each store appends to a chain segment of its own (`segment`,
/// `sseq`), whose head (`audit_segments`) only that store locks.
/// `audit_head` stays the head of the root chain: the records written
/// before (segment 0, no `sseq`, unchanged) and then the first record of
/// each segment, which links to the root's head when it opens the segment.
const V8: &str = r#"
CREATE SEQUENCE audit_seq AS BIGINT MINVALUE 1;
SELECT setval('audit_seq', COALESCE((SELECT MAX(seq) FROM audit), 0) + 1, false);
ALTER TABLE audit ADD COLUMN segment BIGINT NOT NULL DEFAULT 0;
ALTER TABLE audit ADD COLUMN sseq BIGINT;
CREATE TABLE audit_segments (
    id        BIGINT PRIMARY KEY,
    opened_at BIGINT NOT NULL,
    sseq      BIGINT NOT NULL,
    hash      BYTEA NOT NULL
);
"#;

/// Version 7: the MCP proxy's tool-definition pins, per upstream: each
/// definition by the digest of its canonical form, with its text, what a
/// human made of it and the findings in it (one row per definition); and
/// each whole catalog by its digest (`seen_seq` orders the sightings).
const V7: &str = r#"
CREATE TABLE tool_pins (
    id          BIGSERIAL PRIMARY KEY,
    upstream    TEXT NOT NULL,
    tool        TEXT NOT NULL,
    digest      BYTEA NOT NULL,
    definition  TEXT NOT NULL,
    state       TEXT NOT NULL,
    findings    TEXT NOT NULL,
    first_seen  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL,
    decided_by  TEXT,
    decided_at  BIGINT,
    note        TEXT,
    UNIQUE (upstream, tool, digest)
);
CREATE INDEX tool_pins_state ON tool_pins (state, id);
CREATE TABLE tool_catalogs (
    upstream   TEXT NOT NULL,
    digest     BYTEA NOT NULL,
    tools      BIGINT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen  BIGINT NOT NULL,
    seen_seq   BIGINT NOT NULL,
    PRIMARY KEY (upstream, digest)
);
"#;

/// Version 6: each audit record keeps the format version it was written
/// with (`v`), so a record is hashed and verified in its own format. Rows
/// written before have version 1; their bodies and hashes do not change.
const V6: &str = r#"
ALTER TABLE audit ADD COLUMN v INTEGER NOT NULL DEFAULT 1;
"#;

/// Version 5: audit records carry the tool's risk tier and, for arguments
/// that were never parsed, a bounded copy (or a keyed digest) of what was
/// received. Older rows have neither, and their hashes do not change.
const V5: &str = r#"
ALTER TABLE audit ADD COLUMN refused TEXT;
ALTER TABLE audit ADD COLUMN risk TEXT;
"#;

/// Version 4: the gate's own count of each session's decided responses (its
/// turn number, which callers cannot set), and the call ids allowed in each
/// session (a replayed non-read call is denied), shared by every replica.
const V4: &str = r#"
CREATE TABLE session_responses (
    session   TEXT PRIMARY KEY,
    responses BIGINT NOT NULL
);
CREATE TABLE allowed_calls (
    session    TEXT NOT NULL,
    call_id    TEXT NOT NULL,
    allowed_at BIGINT NOT NULL,
    PRIMARY KEY (session, call_id)
);
"#;

/// Version 3: at most one pending single approval per call (user, session,
/// tool, digest), enforced by a partial unique index (the insert is an
/// `ON CONFLICT DO NOTHING` upsert, so concurrent replicas agree on one);
/// an older database's duplicates keep their newest and the others become
/// `expired`, so the index can be built. An index of pending approvals by
/// expiry (the gauge and the queue caps count them), and the readiness
/// probe's row, which `ping` writes and commits.
const V3: &str = r#"
UPDATE approvals SET state = 'expired'
 WHERE kind = 'single' AND state = 'pending'
   AND id NOT IN (
       SELECT MAX(id) FROM approvals WHERE kind = 'single' AND state = 'pending'
        GROUP BY "user", session, tool, digest
   );
CREATE UNIQUE INDEX approvals_one_pending ON approvals ("user", session, tool, digest)
 WHERE kind = 'single' AND state = 'pending';
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE state = 'pending';
CREATE TABLE probe (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    at BIGINT NOT NULL
);
INSERT INTO probe (id, at) VALUES (1, 0);
"#;

/// Version 2: the store's redaction key, 32 bytes from two
/// `gen_random_uuid()`s (PostgreSQL's strong random source; 244 random
/// bits), created once with the database, under the migration lock.
const V2: &str = r#"
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
INSERT INTO meta (name, value) VALUES (
    'redaction_key',
    decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex')
);
"#;

// `user` is a reserved word in PostgreSQL, hence the quotes.
const V1: &str = r#"
CREATE TABLE audit (
    seq        BIGINT PRIMARY KEY,
    time       BIGINT NOT NULL,
    verdict    TEXT NOT NULL,
    "user"     TEXT,
    session    TEXT,
    tool       TEXT,
    call_id    TEXT,
    reasons    TEXT NOT NULL,
    policies   TEXT NOT NULL,
    digest     BYTEA,
    arguments  TEXT,
    approval   BIGINT,
    actor      TEXT,
    note       TEXT,
    prev       BYTEA NOT NULL,
    hash       BYTEA NOT NULL
);
CREATE INDEX audit_session ON audit (session, seq);
CREATE INDEX audit_user ON audit ("user", seq);
CREATE TABLE audit_head (
    id   SMALLINT PRIMARY KEY CHECK (id = 1),
    seq  BIGINT NOT NULL,
    hash BYTEA NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, decode(repeat('00', 32), 'hex'));
CREATE TABLE approvals (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        TEXT NOT NULL,
    "user"      TEXT NOT NULL,
    session     TEXT,
    tool        TEXT NOT NULL,
    digest      BYTEA,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    state       TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  BIGINT,
    note        TEXT,
    used_at     BIGINT,
    uses        BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX approvals_call ON approvals ("user", session, tool, digest);
CREATE INDEX approvals_standing ON approvals ("user", tool) WHERE kind = 'standing';
CREATE TABLE sessions (
    session      TEXT PRIMARY KEY,
    turns        BIGINT NOT NULL,
    last_turn    BIGINT NOT NULL,
    calls        BIGINT NOT NULL,
    rejections   BIGINT NOT NULL,
    consecutive  BIGINT NOT NULL,
    escalated_at BIGINT,
    updated_at   BIGINT NOT NULL
);
CREATE TABLE session_reasons (
    session     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    consecutive BIGINT NOT NULL,
    PRIMARY KEY (session, reason)
);
CREATE TABLE kill_switch (
    id         SMALLINT PRIMARY KEY CHECK (id = 1),
    mode       TEXT NOT NULL,
    reason     TEXT,
    actor      TEXT,
    changed_at BIGINT
);
INSERT INTO kill_switch (id, mode) VALUES (1, 'off');
"#;

/// Brings the database up to [`PG_SCHEMA_VERSION`]; returns the version it
/// found.
pub(crate) fn migrate(client: &mut Client, now_ms: i64) -> Result<u32, Error> {
    let db = |e| Error::pg("migrating the database", e);
    let mut tx = client.transaction().map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(db)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (
             version    INTEGER PRIMARY KEY,
             applied_at BIGINT NOT NULL
         )",
    )
    .map_err(db)?;
    let current = read_version(&mut tx)?;
    for (version, sql) in migrations::pending(current, &MIGRATIONS)? {
        tx.batch_execute(sql).map_err(db)?;
        let version = i32::try_from(version).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
            &[&version, &now_ms],
        )
        .map_err(db)?;
    }
    tx.commit().map_err(db)?;
    Ok(current)
}

/// Checks, without writing, that the database is at [`PG_SCHEMA_VERSION`].
pub(crate) fn check(client: &mut Client) -> Result<(), Error> {
    let exists = client
        .query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])
        .and_then(|r| r.try_get::<_, bool>(0))
        .map_err(|e| Error::pg("reading the schema version", e))?;
    let current = if exists { read_version(client)? } else { 0 };
    migrations::check(
        current,
        PG_SCHEMA_VERSION,
        "run `toolgate migrate` or start the service once to migrate it",
    )
}

fn read_version(client: &mut impl postgres::GenericClient) -> Result<u32, Error> {
    let v: i32 = client
        .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
        .and_then(|r| r.try_get(0))
        .map_err(|e| Error::pg("reading the schema version", e))?;
    migrations::stored_version(i64::from(v))
}

#[cfg(test)]
mod tests {
    use super::{V1, V2, V3};

    /// A version-2 database may hold several pending approvals for one
    /// call (written before version 3): the migration keeps the newest
    /// pending and expires the others instead of failing on the index. Run
    /// in a schema of its own, rolled back.
    #[test]
    fn v3_expires_duplicate_pending_approvals_of_an_old_database() {
        let url = std::env::var("TOOLGATE_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let mut client = match postgres::Client::connect(&url, postgres::NoTls) {
            Ok(c) => c,
            Err(e) => {
                let required = std::env::var("TOOLGATE_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1");
                assert!(!required, "no PostgreSQL at {url}: {e}");
                eprintln!("SKIPPED: no PostgreSQL at {url}: {e}");
                return;
            }
        };
        let mut tx = client.transaction().unwrap();
        tx.batch_execute("CREATE SCHEMA v3_duplicates; SET LOCAL search_path TO v3_duplicates")
            .unwrap();
        tx.batch_execute(V1).unwrap();
        tx.batch_execute(V2).unwrap();
        for (tool, state) in [
            ("refund", "pending"),
            ("refund", "pending"),
            ("refund", "approved"),
            ("refund", "pending"),
            ("delete", "pending"),
        ] {
            tx.execute(
                "INSERT INTO approvals (kind, \"user\", session, tool, digest, created_at, \
                 expires_at, state) VALUES ('single', 'alice', 's-1', $1, '\\x01', 0, 9, $2)",
                &[&tool, &state],
            )
            .unwrap();
        }
        tx.batch_execute(V3).unwrap();
        let states: Vec<(i64, String)> = tx
            .query("SELECT id, state FROM approvals ORDER BY id", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
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
        let again = tx.execute(
            "INSERT INTO approvals (kind, \"user\", session, tool, digest, created_at, \
             expires_at, state) VALUES ('single', 'alice', 's-1', 'refund', '\\x01', 0, 9, 'pending')",
            &[],
        );
        let Err(e) = again else {
            panic!("a second pending approval for one call was accepted");
        };
        assert_eq!(e.code(), Some(&postgres::error::SqlState::UNIQUE_VIOLATION));
        tx.rollback().unwrap();
    }
}
