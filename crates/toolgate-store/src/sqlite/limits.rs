//! Limits and session labels on SQLite: the SQL under
//! [`crate::rules::limits`].

use rusqlite::{Connection, OptionalExtension};

use crate::error::Error;
use crate::rules::limits::LimitTx;
use crate::time::Timestamp;

/// The open write transaction's connection, for [`LimitTx`].
pub(super) struct SqliteLimits<'c>(pub(super) &'c Connection);

fn db(what: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |e| Error::db(what, e)
}

impl LimitTx for SqliteLimits<'_> {
    fn events(&mut self, key: &str, since: Timestamp) -> Result<Vec<(i64, String)>, Error> {
        read_events(self.0, key, since)
    }

    fn counted(&mut self, key: &str, call_id: &str) -> Result<bool, Error> {
        let found: Option<i64> = self
            .0
            .prepare_cached("SELECT 1 FROM limit_events WHERE key = ?1 AND call_id = ?2")
            .and_then(|mut s| s.query_row([key, call_id], |r| r.get(0)).optional())
            .map_err(db("reading a limit's counted calls"))?;
        Ok(found.is_some())
    }

    fn prune(&mut self, key: &str, until: Timestamp) -> Result<(), Error> {
        self.0
            .prepare_cached("DELETE FROM limit_events WHERE key = ?1 AND at <= ?2")
            .and_then(|mut s| s.execute(rusqlite::params![key, until.unix_millis()]))
            .map_err(db("forgetting a limit's old usage"))?;
        Ok(())
    }

    fn insert(
        &mut self,
        key: &str,
        at: Timestamp,
        amount: &str,
        call_id: Option<&str>,
    ) -> Result<(), Error> {
        self.0
            .prepare_cached(
                "INSERT INTO limit_events (key, at, amount, call_id) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(rusqlite::params![key, at.unix_millis(), amount, call_id]))
            .map_err(db("counting a call toward a limit"))?;
        Ok(())
    }

    fn label(&mut self, session: &str, label: &str, at: Timestamp) -> Result<(), Error> {
        self.0
            .prepare_cached(
                "INSERT INTO session_labels (session, label, acquired_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (session, label) DO NOTHING",
            )
            .and_then(|mut s| s.execute(rusqlite::params![session, label, at.unix_millis()]))
            .map_err(db("adding a session label"))?;
        Ok(())
    }
}

/// The usage of `key` after `since`.
pub(super) fn read_events(
    conn: &Connection,
    key: &str,
    since: Timestamp,
) -> Result<Vec<(i64, String)>, Error> {
    let mut stmt = conn
        .prepare_cached("SELECT at, amount FROM limit_events WHERE key = ?1 AND at > ?2")
        .map_err(db("reading a limit's usage"))?;
    let rows = stmt
        .query_map(rusqlite::params![key, since.unix_millis()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(db("reading a limit's usage"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(db("reading a limit's usage"))
}

/// The labels `session` holds, sorted.
pub(super) fn read_labels(conn: &Connection, session: &str) -> Result<Vec<String>, Error> {
    let mut stmt = conn
        .prepare_cached("SELECT label FROM session_labels WHERE session = ?1 ORDER BY label")
        .map_err(db("reading a session's labels"))?;
    let rows = stmt
        .query_map([session], |r| r.get::<_, String>(0))
        .map_err(db("reading a session's labels"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(db("reading a session's labels"))
}

/// Deletes every counted call of `key`; how many.
pub(super) fn forget(conn: &Connection, key: &str) -> Result<u64, Error> {
    let n = conn
        .prepare_cached("DELETE FROM limit_events WHERE key = ?1")
        .and_then(|mut s| s.execute([key]))
        .map_err(db("forgetting a limit's usage"))?;
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}
