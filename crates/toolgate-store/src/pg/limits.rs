//! Limits and session labels on PostgreSQL: the SQL under
//! [`crate::rules::limits`], and the per-key locks that make replicas
//! judge one key one after the other.

use postgres::{GenericClient, Transaction};

use crate::error::Error;
use crate::rules;
use crate::rules::limits::{LimitTx, Totals, TotalsRow, Usage};
use crate::time::Timestamp;

/// The open write transaction, for [`LimitTx`].
pub(super) struct PgLimits<'t, 'a>(pub(super) &'t mut Transaction<'a>);

/// Locks `key`'s row (creating it first) until the transaction ends: a
/// replica charging the same key waits here, then reads what this one
/// committed (read committed: each statement sees the latest commits).
/// Taken in key order, before the chain's head.
pub(super) fn lock_key(tx: &mut Transaction<'_>, key: &str) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO limit_keys (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key",
        &[&key],
    )
    .map_err(|e| Error::pg("locking a limit's key", e))?;
    Ok(())
}

impl LimitTx for PgLimits<'_, '_> {
    fn usage(
        &mut self,
        key: &str,
        since: Timestamp,
        call_id: Option<&str>,
    ) -> Result<Usage, Error> {
        let Some((row, expired, counted)) = read_usage(self.0, key, since, call_id)? else {
            return Ok(Usage::default());
        };
        Ok(Usage {
            totals: Some((rules::limits::totals_of(row)?, expired)),
            counted: Some(counted),
        })
    }

    fn events(&mut self, key: &str, since: Timestamp) -> Result<Vec<(i64, String)>, Error> {
        read_events(self.0, key, since)
    }

    fn counted(&mut self, key: &str, call_id: &str) -> Result<bool, Error> {
        let row = self
            .0
            .query_opt(
                "SELECT 1 FROM limit_events WHERE key = $1 AND call_id = $2",
                &[&key, &call_id],
            )
            .map_err(|e| Error::pg("reading a limit's counted calls", e))?;
        Ok(row.is_some())
    }

    fn prune(&mut self, key: &str, until: Timestamp) -> Result<Vec<String>, Error> {
        let rows = self
            .0
            .query(
                "DELETE FROM limit_events WHERE key = $1 AND at <= $2 RETURNING amount",
                &[&key, &until.unix_millis()],
            )
            .map_err(|e| Error::pg("forgetting a limit's old usage", e))?;
        rows.iter()
            .map(|r| {
                r.try_get::<_, String>(0)
                    .map_err(|e| Error::pg("forgetting a limit's old usage", e))
            })
            .collect()
    }

    fn oldest(&mut self, key: &str) -> Result<Option<i64>, Error> {
        self.0
            .query_one("SELECT min(at) FROM limit_events WHERE key = $1", &[&key])
            .and_then(|r| r.try_get(0))
            .map_err(|e| Error::pg("reading a limit's oldest usage", e))
    }

    fn insert(
        &mut self,
        key: &str,
        at: Timestamp,
        amount: &str,
        call_id: Option<&str>,
    ) -> Result<(), Error> {
        self.0
            .execute(
                "INSERT INTO limit_events (key, at, amount, call_id) VALUES ($1, $2, $3, $4)",
                &[&key, &at.unix_millis(), &amount, &call_id],
            )
            .map_err(|e| Error::pg("counting a call toward a limit", e))?;
        Ok(())
    }

    fn set_totals(&mut self, key: &str, totals: &Totals) -> Result<(), Error> {
        let (calls, total, scale, oldest_at) = rules::limits::totals_row(totals);
        self.0
            .execute(
                "INSERT INTO limit_keys (key, calls, total, scale, oldest_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO UPDATE SET \
                 calls = EXCLUDED.calls, total = EXCLUDED.total, scale = EXCLUDED.scale, \
                 oldest_at = EXCLUDED.oldest_at",
                &[&key, &calls, &total, &scale, &oldest_at],
            )
            .map_err(|e| Error::pg("keeping a limit's running total", e))?;
        Ok(())
    }

    fn label(&mut self, session: &str, label: &str, at: Timestamp) -> Result<(), Error> {
        self.0
            .execute(
                "INSERT INTO session_labels (session, label, acquired_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (session, label) DO NOTHING",
                &[&session, &label, &at.unix_millis()],
            )
            .map_err(|e| Error::pg("adding a session label", e))?;
        Ok(())
    }
}

/// `key`'s totals row, if it has one, the amounts of its events at or
/// before `since` when its oldest is that old, and whether `call_id` was
/// counted under `key`: one statement, so one snapshot (read committed)
/// outside the key's lock too.
pub(super) fn read_usage(
    client: &mut impl GenericClient,
    key: &str,
    since: Timestamp,
    call_id: Option<&str>,
) -> Result<Option<(TotalsRow, Vec<String>, bool)>, Error> {
    let err = |e| Error::pg("reading a limit's running total", e);
    let rows = client
        .query(
            "SELECT k.calls, k.total, k.scale, k.oldest_at, e.amount, EXISTS (SELECT 1 \
             FROM limit_events c WHERE c.key = k.key AND c.call_id = $3) \
             FROM limit_keys k \
             LEFT JOIN limit_events e ON e.key = k.key AND k.oldest_at <= $2 AND e.at <= $2 \
             WHERE k.key = $1",
            &[&key, &since.unix_millis(), &call_id],
        )
        .map_err(err)?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let row: TotalsRow = (
        first.try_get(0).map_err(err)?,
        first.try_get(1).map_err(err)?,
        first.try_get(2).map_err(err)?,
        first.try_get(3).map_err(err)?,
    );
    let counted: bool = first.try_get(5).map_err(err)?;
    let mut expired = Vec::new();
    for r in &rows {
        if let Some(amount) = r.try_get::<_, Option<String>>(4).map_err(err)? {
            expired.push(amount);
        }
    }
    Ok(Some((row, expired, counted)))
}

/// The exact sum of what `key` counted after `since`, from its running
/// total (`None`: not known, read the events).
pub(super) fn read_used(
    client: &mut impl GenericClient,
    key: &str,
    since: Timestamp,
) -> Result<Option<toolgate::limit::Amount>, Error> {
    match read_usage(client, key, since, None)? {
        Some((row, expired, _)) => rules::limits::used_of_row(Some(row), &expired),
        None => Ok(None),
    }
}

/// Deletes every counted call of `key` (whose row the transaction locked)
/// and zeroes its running totals; how many calls.
pub(super) fn forget(tx: &mut Transaction<'_>, key: &str) -> Result<u64, Error> {
    let n = tx
        .execute("DELETE FROM limit_events WHERE key = $1", &[&key])
        .map_err(|e| Error::pg("forgetting a limit's usage", e))?;
    tx.execute(
        "UPDATE limit_keys SET calls = 0, total = '0', scale = 0, oldest_at = NULL \
         WHERE key = $1",
        &[&key],
    )
    .map_err(|e| Error::pg("forgetting a limit's running total", e))?;
    Ok(n)
}

/// The usage of `key` after `since`.
pub(super) fn read_events(
    client: &mut impl GenericClient,
    key: &str,
    since: Timestamp,
) -> Result<Vec<(i64, String)>, Error> {
    let rows = client
        .query(
            "SELECT at, amount FROM limit_events WHERE key = $1 AND at > $2",
            &[&key, &since.unix_millis()],
        )
        .map_err(|e| Error::pg("reading a limit's usage", e))?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get::<_, i64>(0)
                    .map_err(|e| Error::pg("reading a limit's usage", e))?,
                r.try_get::<_, String>(1)
                    .map_err(|e| Error::pg("reading a limit's usage", e))?,
            ))
        })
        .collect()
}

/// The labels `session` holds, sorted.
pub(super) fn read_labels(
    client: &mut impl GenericClient,
    session: &str,
) -> Result<Vec<String>, Error> {
    let rows = client
        .query(
            "SELECT label FROM session_labels WHERE session = $1 ORDER BY label",
            &[&session],
        )
        .map_err(|e| Error::pg("reading a session's labels", e))?;
    rows.iter()
        .map(|r| {
            r.try_get::<_, String>(0)
                .map_err(|e| Error::pg("reading a session's labels", e))
        })
        .collect()
}
