//! The store's rules, written once for every backend.
//!
//! [`crate::SqliteStore`] and [`crate::PgStore`] differ in SQL, locking and
//! connections only; what they decide is decided here: by pure functions
//! over plain values, and, where a rule is a sequence of reads and writes,
//! by a function over a small trait the backend implements with its SQL
//! ([`chain::StoredRow`], [`transitions::ApprovalTx`]):
//!
//! - [`record`]: an audit row's columns, to a record and back;
//! - [`chain`]: the walk that verifies the hash chain;
//! - [`escalation`]: the session counters a call moves, and when a
//!   session is escalated;
//! - [`kill`]: the kill switch's stored row and the record of a flip;
//! - [`limits`]: rate limits, budgets and session labels, judged and
//!   applied in the audit record's transaction;
//! - [`migrations`]: which migrations a database needs, which it refuses;
//! - [`options`]: the options every store takes, their defaults and bounds;
//! - [`pins`]: what a catalog does to the tool pins, and which state a
//!   human may move a pin to;
//! - [`transitions`]: which approval state may move to which, and the
//!   records the moves append;
//!
//! A rule fixed here is fixed for both backends: a security rule written
//! twice is a bug waiting in one of them.

pub(crate) mod chain;
pub(crate) mod escalation;
pub(crate) mod kill;
pub(crate) mod limits;
pub(crate) mod migrations;
pub(crate) mod options;
pub(crate) mod pins;
pub(crate) mod record;
pub(crate) mod segments;
pub(crate) mod transitions;

use crate::error::{Error, ErrorCode};

/// A note or reason as stored: none when empty.
pub(crate) fn optional(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// A count or id for a signed database column; `invalid_input` naming
/// `what` if it does not fit.
pub(crate) fn to_i64(v: u64, what: &str) -> Result<i64, Error> {
    i64::try_from(v)
        .map_err(|_| Error::new(ErrorCode::InvalidInput, format!("{what} out of range")))
}

/// A count read back from a signed database column; `store_corrupt` if it
/// is negative.
pub(crate) fn to_u64(v: i64) -> Result<u64, Error> {
    u64::try_from(v).map_err(|_| Error::new(ErrorCode::Corrupt, "a counter is negative"))
}
