//! Limits and session labels on SQLite: the SQL under
//! [`crate::rules::limits`].

use rusqlite::{Connection, OptionalExtension};

use crate::error::Error;
use crate::rules;
use crate::rules::limits::{LimitTx, Totals, TotalsRow, Usage};
use crate::time::Timestamp;

/// The open write transaction's connection, for [`LimitTx`], and the
/// sequence number of the audit record whose charges it stores (each
/// counted call names it: with the key and the time, the call's primary
/// key).
pub(super) struct SqliteLimits<'c> {
    pub(super) conn: &'c Connection,
    pub(super) record: i64,
}

fn db(what: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |e| Error::db(what, e)
}

impl LimitTx for SqliteLimits<'_> {
    fn usage(
        &mut self,
        key: &str,
        since: Timestamp,
        call_id: Option<&str>,
    ) -> Result<Usage, Error> {
        // The write lock is held: the row and the events read apart agree.
        let err = db("reading a limit's running total");
        let row: Option<(TotalsRow, bool)> = self
            .conn
            .prepare_cached(
                "SELECT calls, total, scale, oldest_at, EXISTS (SELECT 1 FROM limit_events \
                 WHERE key = ?1 AND call_id = ?2) FROM limit_keys WHERE key = ?1",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![key, call_id], |r| {
                    Ok(((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?), r.get(4)?))
                })
                .optional()
            })
            .map_err(&err)?;
        let Some((row, counted)) = row else {
            return Ok(Usage::default());
        };
        let totals = rules::limits::totals_of(row)?;
        let mut expired = Vec::new();
        if totals.oldest_at.is_some_and(|o| o <= since.unix_millis()) {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT amount FROM limit_events WHERE key = ?1 AND at <= ?2")
                .map_err(&err)?;
            let rows = stmt
                .query_map(rusqlite::params![key, since.unix_millis()], |r| r.get(0))
                .map_err(&err)?;
            expired = rows.collect::<Result<Vec<String>, _>>().map_err(&err)?;
        }
        Ok(Usage {
            totals: Some((totals, expired)),
            counted: Some(counted),
        })
    }

    fn events(&mut self, key: &str, since: Timestamp) -> Result<Vec<(i64, String)>, Error> {
        read_events(self.conn, key, since)
    }

    fn counted(&mut self, key: &str, call_id: &str) -> Result<bool, Error> {
        let found: Option<i64> = self
            .conn
            .prepare_cached("SELECT 1 FROM limit_events WHERE key = ?1 AND call_id = ?2")
            .and_then(|mut s| s.query_row([key, call_id], |r| r.get(0)).optional())
            .map_err(db("reading a limit's counted calls"))?;
        Ok(found.is_some())
    }

    fn prune(&mut self, key: &str, until: Timestamp) -> Result<Vec<String>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached("DELETE FROM limit_events WHERE key = ?1 AND at <= ?2 RETURNING amount")
            .map_err(db("forgetting a limit's old usage"))?;
        let rows = stmt
            .query_map(rusqlite::params![key, until.unix_millis()], |r| r.get(0))
            .map_err(db("forgetting a limit's old usage"))?;
        rows.collect::<Result<Vec<String>, _>>()
            .map_err(db("forgetting a limit's old usage"))
    }

    fn oldest(&mut self, key: &str) -> Result<Option<i64>, Error> {
        self.conn
            .prepare_cached("SELECT min(at) FROM limit_events WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| r.get(0)))
            .map_err(db("reading a limit's oldest usage"))
    }

    fn insert(
        &mut self,
        key: &str,
        at: Timestamp,
        amount: &str,
        call_id: Option<&str>,
    ) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "INSERT INTO limit_events (key, at, record, amount, call_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    key,
                    at.unix_millis(),
                    self.record,
                    amount,
                    call_id
                ])
            })
            .map_err(db("counting a call toward a limit"))?;
        Ok(())
    }

    fn set_totals(&mut self, key: &str, totals: &Totals) -> Result<(), Error> {
        let (calls, total, scale, oldest_at) = rules::limits::totals_row(totals);
        let updated = self
            .conn
            .prepare_cached(
                "UPDATE limit_keys SET calls = ?2, total = ?3, scale = ?4, oldest_at = ?5 \
                 WHERE key = ?1",
            )
            .and_then(|mut s| s.execute(rusqlite::params![key, calls, total, scale, oldest_at]))
            .map_err(db("keeping a limit's running total"))?;
        if updated == 1 {
            return Ok(());
        }
        self.conn
            .prepare_cached(
                "INSERT INTO limit_keys (key, calls, total, scale, oldest_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO UPDATE SET \
                 calls = excluded.calls, total = excluded.total, scale = excluded.scale, \
                 oldest_at = excluded.oldest_at",
            )
            .and_then(|mut s| s.execute(rusqlite::params![key, calls, total, scale, oldest_at]))
            .map_err(db("keeping a limit's running total"))?;
        Ok(())
    }

    fn label(&mut self, session: &str, label: &str, at: Timestamp) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "INSERT INTO session_labels (session, label, acquired_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (session, label) DO NOTHING",
            )
            .and_then(|mut s| s.execute(rusqlite::params![session, label, at.unix_millis()]))
            .map_err(db("adding a session label"))?;
        Ok(())
    }
}

/// `key`'s totals row, if it has one, and the amounts of its events at or
/// before `since` when its oldest is that old: one statement, so one
/// snapshot outside a transaction too.
pub(super) fn read_usage(
    conn: &Connection,
    key: &str,
    since: Timestamp,
) -> Result<Option<(TotalsRow, Vec<String>)>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT k.calls, k.total, k.scale, k.oldest_at, e.amount FROM limit_keys k \
             LEFT JOIN limit_events e ON e.key = k.key AND k.oldest_at <= ?2 AND e.at <= ?2 \
             WHERE k.key = ?1",
        )
        .map_err(db("reading a limit's running total"))?;
    let mut rows = stmt
        .query(rusqlite::params![key, since.unix_millis()])
        .map_err(db("reading a limit's running total"))?;
    let err = db("reading a limit's running total");
    let mut out: Option<(TotalsRow, Vec<String>)> = None;
    while let Some(r) = rows.next().map_err(&err)? {
        let expired = match &mut out {
            Some((_, expired)) => expired,
            None => {
                let row = (
                    r.get(0).map_err(&err)?,
                    r.get(1).map_err(&err)?,
                    r.get(2).map_err(&err)?,
                    r.get(3).map_err(&err)?,
                );
                &mut out.insert((row, Vec::new())).1
            }
        };
        if let Some(amount) = r.get::<_, Option<String>>(4).map_err(&err)? {
            expired.push(amount);
        }
    }
    Ok(out)
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

/// Deletes every counted call of `key` and its running totals (counted
/// afresh from no events when next charged); how many calls.
pub(super) fn forget(conn: &Connection, key: &str) -> Result<u64, Error> {
    let n = conn
        .prepare_cached("DELETE FROM limit_events WHERE key = ?1")
        .and_then(|mut s| s.execute([key]))
        .map_err(db("forgetting a limit's usage"))?;
    conn.prepare_cached("DELETE FROM limit_keys WHERE key = ?1")
        .and_then(|mut s| s.execute([key]))
        .map_err(db("forgetting a limit's running total"))?;
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}

/// The exact sum of what `key` counted after `since`, from its running
/// total (`None`: not known, read the events).
pub(super) fn read_used(
    conn: &Connection,
    key: &str,
    since: Timestamp,
) -> Result<Option<toolgate::limit::Amount>, Error> {
    // The common case: no event has left the window, the total is the
    // sum (one row by its key). Else the total and the amounts to take
    // off, read together (one snapshot).
    let err = db("reading a limit's running total");
    let row: Option<(Option<String>, Option<i64>)> = conn
        .prepare_cached("SELECT total, oldest_at FROM limit_keys WHERE key = ?1")
        .and_then(|mut s| {
            s.query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(&err)?;
    match row {
        None | Some((None, _)) => Ok(None),
        Some((Some(total), oldest)) if oldest.is_none_or(|o| o > since.unix_millis()) => {
            rules::limits::parse(&total).map(Some)
        }
        Some(_) => match read_usage(conn, key, since)? {
            Some((row, expired)) => rules::limits::used_of_row(Some(row), &expired),
            None => Ok(None),
        },
    }
}
