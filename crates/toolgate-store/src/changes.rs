//! Changes a store pushes to whoever waits on them ([`Store::subscribe`]):
//! an approval decided, the kill switch flipped, in this process or in
//! another sharing the store.
//!
//! [`Store::subscribe`]: crate::Store::subscribe

use std::sync::Arc;

use crate::approval::ApprovalId;

/// A change committed to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// An approval was approved or denied.
    ApprovalDecided(ApprovalId),
    /// The kill switch was set.
    KillSwitch,
    /// Changes may have been missed (the push channel was down and is
    /// back): re-read whatever is waited on.
    Resync,
}

impl Change {
    /// The wire form carried by the database's notification.
    pub(crate) fn payload(&self) -> String {
        match self {
            Self::ApprovalDecided(id) => format!("approval:{id}"),
            Self::KillSwitch => "kill".to_owned(),
            Self::Resync => "resync".to_owned(),
        }
    }

    /// Reads a payload; anything not understood asks for a re-read.
    pub(crate) fn from_payload(payload: &str) -> Self {
        if payload == "kill" {
            return Self::KillSwitch;
        }
        match payload
            .strip_prefix("approval:")
            .and_then(|id| id.parse::<u64>().ok())
        {
            Some(id) => Self::ApprovalDecided(ApprovalId::new(id)),
            None => Self::Resync,
        }
    }
}

/// Called with each pushed [`Change`], from a thread of the store's: it
/// must return quickly (wake a waiter, mark a cache stale). It returns
/// whether it wants more: a listener whose receiver is gone returns
/// `false` and is dropped.
pub type ChangeListener = Arc<dyn Fn(&Change) -> bool + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::Change;
    use crate::ApprovalId;

    #[test]
    fn payloads_round_trip_and_garbage_asks_for_a_re_read() {
        for c in [
            Change::ApprovalDecided(ApprovalId::new(42)),
            Change::KillSwitch,
            Change::Resync,
        ] {
            assert_eq!(Change::from_payload(&c.payload()), c);
        }
        for junk in [
            "",
            "approval:",
            "approval:-1",
            "approval:x",
            "KILL",
            "kill ",
        ] {
            assert_eq!(Change::from_payload(junk), Change::Resync, "{junk:?}");
        }
    }
}
