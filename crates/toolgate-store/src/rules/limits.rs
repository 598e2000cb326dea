//! Limits and session labels in the audit record's transaction: the rule
//! both backends keep, over [`LimitTx`] (their SQL).
//!
//! An allowed decision's record carries its charges
//! ([`AuditEntry::charges`]) and labels ([`AuditEntry::labels`]). In the
//! transaction that commits the record, after the backend locked every key
//! the transaction charges (SQLite: the database's write lock; PostgreSQL:
//! one row per key, locked in key order before the chain's head), each
//! charge is judged again against the key's stored usage with
//! [`toolgate::limit::judge`]: if one does not fit, nothing is charged, no
//! label is added, and the record is written as a deny with the limit's
//! code ([`refused_entry`]); two replicas cannot both let through the call
//! that crosses a limit. Otherwise every charge is stored (a call id once
//! per key: a charge of an id already counted is skipped) and the labels
//! are added to the session.

use toolgate::limit::{judge, Amount, Judgement};

use crate::audit::{AuditEntry, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// What a backend does for [`apply`], inside the write transaction.
pub(crate) trait LimitTx {
    /// The usage of `key` after `since` (exclusive): time and amount.
    fn events(&mut self, key: &str, since: Timestamp) -> Result<Vec<(i64, String)>, Error>;
    /// Whether `call_id` was already counted under `key`.
    fn counted(&mut self, key: &str, call_id: &str) -> Result<bool, Error>;
    /// Forgets the usage of `key` at or before `until` (out of every
    /// window it can be judged in).
    fn prune(&mut self, key: &str, until: Timestamp) -> Result<(), Error>;
    /// Stores one counted call.
    fn insert(
        &mut self,
        key: &str,
        at: Timestamp,
        amount: &str,
        call_id: Option<&str>,
    ) -> Result<(), Error>;
    /// Adds `label` to `session` (kept if it holds it already).
    fn label(&mut self, session: &str, label: &str, at: Timestamp) -> Result<(), Error>;
}

/// Judges and applies the charges and labels of `entry`; the code of the
/// limit that refused it, if one did (then nothing was written).
pub(crate) fn apply(
    tx: &mut dyn LimitTx,
    entry: &AuditEntry,
) -> Result<Option<&'static str>, Error> {
    if entry.verdict != AuditVerdict::Allow || (entry.charges.is_empty() && entry.labels.is_empty())
    {
        return Ok(None);
    }
    let now = entry.time;
    let mut todo = Vec::with_capacity(entry.charges.len());
    for charge in &entry.charges {
        if let Some(id) = &charge.call_id {
            if tx.counted(&charge.key, id)? {
                continue;
            }
        }
        let window = i64::try_from(charge.window_ms).unwrap_or(i64::MAX);
        let since = Timestamp::from_unix_millis(now.unix_millis().saturating_sub(window));
        if charge.enforce {
            let mut events = Vec::new();
            for (at, amount) in tx.events(&charge.key, since)? {
                let amount = Amount::parse(&amount).ok_or_else(|| {
                    Error::new(ErrorCode::Corrupt, "a stored limit amount is not a decimal")
                })?;
                events.push((u64::try_from(at).unwrap_or(0), amount));
            }
            // Earlier charges of this entry on the same key count too.
            events.extend(
                todo.iter()
                    .filter(|(c, _): &&(&toolgate::limit::Charge, Timestamp)| c.key == charge.key)
                    .map(|(c, _)| (now_ms(now), c.amount)),
            );
            if let Judgement::Over { .. } = judge(
                &events,
                charge.amount,
                charge.cap,
                now_ms(now),
                charge.window_ms,
            ) {
                return Ok(Some(charge.code.as_str()));
            }
        }
        todo.push((charge, since));
    }
    for (charge, since) in todo {
        tx.prune(&charge.key, since)?;
        tx.insert(
            &charge.key,
            now,
            &charge.amount.to_string(),
            charge.call_id.as_deref(),
        )?;
    }
    if let Some(session) = &entry.session {
        for label in &entry.labels {
            tx.label(session, label, now)?;
        }
    }
    Ok(None)
}

fn now_ms(t: Timestamp) -> u64 {
    u64::try_from(t.unix_millis()).unwrap_or(0)
}

/// The record of an allowed call a limit refused at commit: a deny with the
/// limit's code alone, nothing charged, no label.
pub(crate) fn refused_entry(entry: &AuditEntry, code: &str) -> AuditEntry {
    let mut e = entry.clone();
    e.verdict = AuditVerdict::Deny;
    e.reasons = vec![code.to_owned()];
    e.charges.clear();
    e.labels.clear();
    e
}

/// The keys `entries` charge, sorted and without repeats: the order a
/// backend that locks per key takes its locks in (so two writers never
/// wait on each other in a cycle).
pub(crate) fn keys(entries: &[AuditEntry]) -> Vec<&str> {
    let mut keys: Vec<&str> = entries
        .iter()
        .filter(|e| e.verdict == AuditVerdict::Allow)
        .flat_map(|e| e.charges.iter().map(|c| c.key.as_str()))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Stored usage rows as the gate reads them.
pub(crate) fn typed_events(rows: Vec<(i64, String)>) -> Result<Vec<(Timestamp, Amount)>, Error> {
    rows.into_iter()
        .map(|(at, amount)| {
            Amount::parse(&amount)
                .map(|a| (Timestamp::from_unix_millis(at), a))
                .ok_or_else(|| {
                    Error::new(ErrorCode::Corrupt, "a stored limit amount is not a decimal")
                })
        })
        .collect()
}

/// The record of [`crate::Store::reset_limit`].
pub(crate) fn reset_entry(now: Timestamp, key: &str, actor: &str, note: &str) -> AuditEntry {
    let mut e = AuditEntry::new(now, AuditVerdict::LimitReset).actor(actor);
    e.reasons = vec![key.to_owned()];
    if let Some(note) = crate::rules::optional(note) {
        e = e.note(note);
    }
    e
}
