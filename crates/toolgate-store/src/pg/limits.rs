//! Limits and session labels on PostgreSQL: the SQL under
//! [`crate::rules::limits`], and the per-key locks that make replicas
//! judge one key one after the other.

use postgres::{GenericClient, Transaction};

use crate::error::Error;
use crate::rules::limits::LimitTx;
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

    fn prune(&mut self, key: &str, until: Timestamp) -> Result<(), Error> {
        self.0
            .execute(
                "DELETE FROM limit_events WHERE key = $1 AND at <= $2",
                &[&key, &until.unix_millis()],
            )
            .map_err(|e| Error::pg("forgetting a limit's old usage", e))?;
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
            .execute(
                "INSERT INTO limit_events (key, at, amount, call_id) VALUES ($1, $2, $3, $4)",
                &[&key, &at.unix_millis(), &amount, &call_id],
            )
            .map_err(|e| Error::pg("counting a call toward a limit", e))?;
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
