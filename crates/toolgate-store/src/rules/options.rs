//! The options every store takes, with their defaults and bounds: after
//! how many rejections a session is escalated, the clock, read-only, and
//! the group commit's batch. [`crate::SqliteOptions`] and
//! [`crate::PgOptions`] hold one [`Common`] and add their own.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::audit::RedactionKey;
use crate::time::{Clock, SystemClock};

/// The options every store takes.
#[derive(Clone)]
pub(crate) struct Common {
    /// Rejections that escalate a session: at least 1, default 3.
    pub(crate) escalate_after: u32,
    /// The clock for times the caller does not pass: the system's.
    pub(crate) clock: Arc<dyn Clock>,
    /// Nothing created, migrated or written: default off.
    pub(crate) read_only: bool,
    /// Records one group commit writes at most: at least 1, default 1,024.
    pub(crate) max_batch: usize,
}

impl Common {
    /// The defaults.
    pub(crate) fn new() -> Self {
        Self {
            escalate_after: 3,
            clock: Arc::new(SystemClock::new()),
            read_only: false,
            max_batch: 1024,
        }
    }

    /// Escalation after `rejections`, at least 1.
    pub(crate) fn set_escalate_after(&mut self, rejections: u32) {
        self.escalate_after = rejections.max(1);
    }

    /// Batches of at most `records`, at least 1.
    pub(crate) fn set_max_batch(&mut self, records: usize) {
        self.max_batch = records.max(1);
    }

    /// What the open store keeps of them.
    pub(crate) fn open(self) -> Open {
        Open {
            clock: self.clock,
            escalate_after: u64::from(self.escalate_after),
            read_only: self.read_only,
            redaction_key: OnceLock::new(),
        }
    }

    /// Adds the common fields to a store's options' `Debug` (never the
    /// clock).
    pub(crate) fn debug_fields(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("escalate_after", &self.escalate_after)
            .field("read_only", &self.read_only)
            .field("max_batch", &self.max_batch);
    }
}

/// What an open store keeps of its [`Common`] options, and the redaction
/// key once read.
pub(crate) struct Open {
    /// The clock for times the caller does not pass.
    pub(crate) clock: Arc<dyn Clock>,
    /// Rejections that escalate a session.
    pub(crate) escalate_after: u64,
    /// Every write refused with `store_read_only`.
    pub(crate) read_only: bool,
    /// Read from the database on first use.
    pub(crate) redaction_key: OnceLock<RedactionKey>,
}

impl Open {
    /// The store's `Debug`: its name and these settings (never the key).
    pub(crate) fn debug(&self, store: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(store)
            .field("escalate_after", &self.escalate_after)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        let mut c = Common::new();
        assert_eq!(
            (c.escalate_after, c.read_only, c.max_batch),
            (3, false, 1024)
        );
        c.set_escalate_after(0);
        c.set_max_batch(0);
        assert_eq!((c.escalate_after, c.max_batch), (1, 1));
        c.set_escalate_after(7);
        c.set_max_batch(9);
        assert_eq!((c.escalate_after, c.max_batch), (7, 9));
        struct Shown<'a>(&'a Common);
        impl fmt::Debug for Shown<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut d = f.debug_struct("O");
                self.0.debug_fields(&mut d);
                d.finish_non_exhaustive()
            }
        }
        let d = format!("{:?}", Shown(&c));
        assert_eq!(
            d,
            "O { escalate_after: 7, read_only: false, max_batch: 9, .. }"
        );
        let open = c.open();
        assert_eq!((open.escalate_after, open.read_only), (7, false));
        assert!(open.redaction_key.get().is_none());
    }
}
