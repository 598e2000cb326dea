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

use toolgate::limit::{fits, judge, Amount, Judgement};

use crate::audit::{AuditEntry, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// A key's running totals (its `limit_keys` row): what the events the
/// store holds for the key add up to, kept in the transactions that store
/// and forget them, so that a decision reads one row rather than the
/// window's events.
///
/// The events held are those of the key's last window (older ones are
/// forgotten when the key is next charged). When the oldest has not left
/// the window being judged, the window's sum is the total; when some
/// have, it is the total less the amounts of those (read by time from the
/// index, usually none or one). Either way exact: `total` is kept only
/// while it bounds every partial sum of its events
/// ([`Amount::bounds_sums_at`] with `scale`), so no order of adding them
/// can fail where another succeeds; past that (or for a key counted before
/// the totals were kept) it is `None` and the events are read, as they
/// were before totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// How many events the key holds.
    pub(crate) calls: i64,
    /// Their exact sum, when known (see above).
    pub(crate) total: Option<Amount>,
    /// The most digits after the point of any event it holds (not lowered
    /// when events are forgotten, only when they are counted again).
    pub(crate) scale: u32,
    /// When its oldest event ran (Unix milliseconds); `None` without one.
    pub(crate) oldest_at: Option<i64>,
}

impl Totals {
    /// The totals of `events` (time, amount), counted from scratch.
    pub(crate) fn count(events: &[(i64, String)]) -> Result<Self, Error> {
        let mut t = Self {
            total: Some(Amount::ZERO),
            ..Self::default()
        };
        for (at, amount) in events {
            t.add(*at, parse(amount)?);
        }
        t.bound();
        Ok(t)
    }

    /// Adds one event.
    fn add(&mut self, at: i64, amount: Amount) {
        self.calls = self.calls.saturating_add(1);
        self.scale = self.scale.max(amount.scale());
        self.total = self
            .total
            .filter(|_| !amount.is_negative())
            .and_then(|t| t.checked_add(amount));
        self.oldest_at = Some(self.oldest_at.map_or(at, |o| o.min(at)));
    }

    /// Forgets the total if it no longer bounds its partial sums.
    fn bound(&mut self) {
        let scale = self.scale;
        self.total = self.total.filter(|t| t.bounds_sums_at(scale));
    }

    /// The exact sum of the events after `since`, given the amounts of
    /// those at or before it (`expired`, read only when the oldest event
    /// is that old): `None` when the total is not known.
    pub(crate) fn window_sum(&self, expired: &[Amount]) -> Option<Amount> {
        expired
            .iter()
            .try_fold(self.total?, |sum, a| sum.checked_sub(*a))
    }
}

/// A key's totals row as stored: calls, total (text), scale, oldest.
pub(crate) type TotalsRow = (i64, Option<String>, i64, Option<i64>);

/// Reads a stored totals row.
pub(crate) fn totals_of(row: TotalsRow) -> Result<Totals, Error> {
    let (calls, total, scale, oldest_at) = row;
    Ok(Totals {
        calls,
        total: total.as_deref().map(parse).transpose()?,
        scale: u32::try_from(scale)
            .map_err(|_| Error::new(ErrorCode::Corrupt, "a stored limit scale is negative"))?,
        oldest_at,
    })
}

/// The stored form of `totals`: calls, total (text), scale, oldest.
pub(crate) fn totals_row(t: &Totals) -> TotalsRow {
    (
        t.calls,
        t.total.map(|a| a.to_string()),
        i64::from(t.scale),
        t.oldest_at,
    )
}

/// The window's exact sum from a key's totals row and the amounts of its
/// events at or before the window's start (what [`LimitTx::usage`] and the
/// stores' `limit_used` read, in one statement): `None` when the row is
/// missing or its total is not known (read the events).
pub(crate) fn used_of_row(
    row: Option<TotalsRow>,
    expired: &[String],
) -> Result<Option<Amount>, Error> {
    let Some(row) = row else {
        return Ok(None);
    };
    let expired = expired
        .iter()
        .map(|a| parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(totals_of(row)?.window_sum(&expired))
}

/// A stored amount.
pub(crate) fn parse(amount: &str) -> Result<Amount, Error> {
    Amount::parse(amount)
        .ok_or_else(|| Error::new(ErrorCode::Corrupt, "a stored limit amount is not a decimal"))
}

/// What [`LimitTx::usage`] read of a key.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    /// The key's totals, if it has a row, and the amounts of its events at
    /// or before the window's start when its oldest is that old.
    pub(crate) totals: Option<(Totals, Vec<String>)>,
    /// Whether the call id asked about was counted under the key already:
    /// `None` when the key has no row to read it with (ask
    /// [`LimitTx::counted`]).
    pub(crate) counted: Option<bool>,
}

/// What a backend does for [`apply`], inside the write transaction.
pub(crate) trait LimitTx {
    /// `key`'s totals row, if it has one, the amounts of its events at or
    /// before `since` when its oldest is that old, and (read with the row,
    /// in the same statement) whether `call_id` was counted under `key`.
    fn usage(&mut self, key: &str, since: Timestamp, call_id: Option<&str>)
        -> Result<Usage, Error>;
    /// The usage of `key` after `since` (exclusive): time and amount.
    fn events(&mut self, key: &str, since: Timestamp) -> Result<Vec<(i64, String)>, Error>;
    /// Whether `call_id` was already counted under `key`.
    fn counted(&mut self, key: &str, call_id: &str) -> Result<bool, Error>;
    /// Forgets the usage of `key` at or before `until` (out of every
    /// window it can be judged in); the amounts forgotten.
    fn prune(&mut self, key: &str, until: Timestamp) -> Result<Vec<String>, Error>;
    /// When the oldest event `key` holds ran.
    fn oldest(&mut self, key: &str) -> Result<Option<i64>, Error>;
    /// Stores one counted call.
    fn insert(
        &mut self,
        key: &str,
        at: Timestamp,
        amount: &str,
        call_id: Option<&str>,
    ) -> Result<(), Error>;
    /// Stores `key`'s totals (creating its row if needed).
    fn set_totals(&mut self, key: &str, totals: &Totals) -> Result<(), Error>;
    /// Adds `label` to `session` (kept if it holds it already).
    fn label(&mut self, session: &str, label: &str, at: Timestamp) -> Result<(), Error>;
}

/// A charge judged and to be stored, with its key's usage as read for the
/// judging (`None`: read again when stored).
type Todo<'e> = (
    &'e toolgate::limit::Charge,
    Timestamp,
    Option<(Totals, Vec<String>)>,
);

/// Judges and applies the charges and labels of `entry`; the code of the
/// limit that refused it, if one did (then nothing was written).
///
/// A charge is judged on its key's running total when that is known and
/// the call fits (one row read), else on the window's events, as
/// [`judge`] rules; the outcome is the same either way (see [`Totals`]).
pub(crate) fn apply(
    tx: &mut dyn LimitTx,
    entry: &AuditEntry,
) -> Result<Option<&'static str>, Error> {
    if entry.verdict != AuditVerdict::Allow || (entry.charges.is_empty() && entry.labels.is_empty())
    {
        return Ok(None);
    }
    let now = entry.time;
    let mut todo: Vec<Todo<'_>> = Vec::with_capacity(entry.charges.len());
    for charge in &entry.charges {
        let window = i64::try_from(charge.window_ms).unwrap_or(i64::MAX);
        let since = Timestamp::from_unix_millis(now.unix_millis().saturating_sub(window));
        // One read for the key's totals and whether the call id counted.
        let Usage {
            totals: usage,
            counted,
        } = tx.usage(&charge.key, since, charge.call_id.as_deref())?;
        let counted = match (counted, &charge.call_id) {
            (Some(counted), _) => counted,
            (None, Some(id)) => tx.counted(&charge.key, id)?,
            (None, None) => false,
        };
        if counted {
            continue;
        }
        let mut read = None;
        if charge.enforce {
            // Earlier charges of this entry on the same key count too, at
            // `now` (inside the window as `judge` keeps it).
            let earlier: Vec<Amount> = todo
                .iter()
                .filter(|(c, ..)| c.key == charge.key && now > since)
                .map(|(c, ..)| c.amount)
                .collect();
            let used = match &usage {
                Some((totals, expired)) => {
                    let expired = expired
                        .iter()
                        .map(|a| parse(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    totals.window_sum(&expired)
                }
                None => None,
            };
            let judged = match used {
                // Every partial sum is held, so adding in this order gives
                // what `judge` gives in its own.
                Some(used) => earlier
                    .iter()
                    .try_fold(used, |s, a| s.checked_add(*a))
                    .is_some_and(|used| fits(used, charge.amount, charge.cap)),
                None => {
                    let mut events = Vec::new();
                    for (at, amount) in tx.events(&charge.key, since)? {
                        events.push((u64::try_from(at).unwrap_or(0), parse(&amount)?));
                    }
                    events.extend(earlier.iter().map(|a| (now_ms(now), *a)));
                    judge(
                        &events,
                        charge.amount,
                        charge.cap,
                        now_ms(now),
                        charge.window_ms,
                    ) == Judgement::Fits
                }
            };
            if !judged {
                return Ok(Some(charge.code.as_str()));
            }
        }
        // What was read is what is stored on, unless an earlier charge of
        // the entry on the same key changes it first.
        if !todo.iter().any(|(c, ..)| c.key == charge.key) {
            read = usage.filter(|(t, _)| t.total.is_some());
        }
        todo.push((charge, since, read));
    }
    for (charge, since, read) in todo {
        store_charge(tx, charge, since, now, read)?;
    }
    if let Some(session) = &entry.session {
        for label in &entry.labels {
            tx.label(session, label, now)?;
        }
    }
    Ok(None)
}

/// Stores one judged charge and its key's new totals: the events that
/// left the window are forgotten and taken off the total.
fn store_charge(
    tx: &mut dyn LimitTx,
    charge: &toolgate::limit::Charge,
    since: Timestamp,
    now: Timestamp,
    read: Option<(Totals, Vec<String>)>,
) -> Result<(), Error> {
    let usage = match read {
        Some(u) => Some(u),
        None => tx.usage(&charge.key, since, None)?.totals,
    };
    let amount = charge.amount.to_string();
    let totals = match usage {
        Some((mut t, expired)) if t.total.is_some() => {
            if !expired.is_empty() {
                let forgotten = tx.prune(&charge.key, since)?;
                for a in &forgotten {
                    let a = parse(a)?;
                    t.total = t.total.and_then(|s| s.checked_sub(a));
                }
                t.calls = t
                    .calls
                    .saturating_sub(i64::try_from(forgotten.len()).unwrap_or(i64::MAX));
                t.oldest_at = tx.oldest(&charge.key)?;
            }
            tx.insert(&charge.key, now, &amount, charge.call_id.as_deref())?;
            t.add(now.unix_millis(), charge.amount);
            t.bound();
            t
        }
        // No totals yet (a key counted before they were kept) or not
        // known: counted from the events, once.
        _ => {
            tx.prune(&charge.key, since)?;
            tx.insert(&charge.key, now, &amount, charge.call_id.as_deref())?;
            let events = tx.events(&charge.key, Timestamp::from_unix_millis(i64::MIN))?;
            Totals::count(&events)?
        }
    };
    tx.set_totals(&charge.key, &totals)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    fn events(list: &[(i64, &str)]) -> Vec<(i64, String)> {
        list.iter().map(|(at, s)| (*at, (*s).to_owned())).collect()
    }

    #[test]
    fn totals_count_their_events_and_take_off_those_that_left() {
        let t = Totals::count(&events(&[(30, "0.5"), (10, "9.99"), (20, "3")])).unwrap();
        assert_eq!(t.calls, 3);
        assert_eq!(t.total, Some(a("13.49")));
        assert_eq!((t.scale, t.oldest_at), (2, Some(10)));
        assert_eq!(t.window_sum(&[a("9.99")]), Some(a("3.5")));
        assert_eq!(Totals::count(&[]).unwrap().total, Some(Amount::ZERO));
        let stored = totals_row(&t);
        assert_eq!(totals_of(stored.clone()).unwrap(), t);
        assert_eq!(
            used_of_row(Some(stored), &["3".to_owned()]).unwrap(),
            Some(a("10.49"))
        );
        assert_eq!(used_of_row(None, &[]).unwrap(), None);
        assert!(used_of_row(Some((1, Some("x".into()), 0, None)), &[]).is_err());
    }

    #[test]
    fn a_total_whose_partial_sums_could_fail_is_not_kept() {
        // 0.5 + 0.5 + 10^19 holds in this order, not after 10^19 first:
        // the total is not kept, the events are read.
        let t = Totals::count(&events(&[
            (1, "0.5"),
            (2, "0.5"),
            (3, "10000000000000000000"),
        ]))
        .unwrap();
        assert_eq!((t.calls, t.total), (3, None));
        assert_eq!(t.window_sum(&[]), None);
        // A negative amount (never charged) is not summed either.
        assert_eq!(Totals::count(&events(&[(1, "-1")])).unwrap().total, None);
    }
}
