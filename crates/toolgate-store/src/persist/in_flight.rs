//! The responses decided on the two-phase path whose records are not
//! committed yet, per session: what the next response's turn counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Per session, the responses decided on the two-phase path whose records
/// are not committed yet.
#[derive(Debug, Default)]
pub(super) struct InFlight(pub(super) Mutex<HashMap<String, u64>>);

impl InFlight {
    /// Takes a place for one more response of `session`; how many were in
    /// flight before it.
    pub(super) fn reserve(self: &Arc<Self>, session: &str) -> (Reservation, u64) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = map.entry(session.to_owned()).or_insert(0);
        let before = *n;
        *n = n.saturating_add(1);
        (
            Reservation {
                in_flight: Arc::clone(self),
                session: session.to_owned(),
            },
            before,
        )
    }

    /// How many responses of `session` are in flight.
    pub(super) fn count(&self, session: &str) -> u64 {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(session).copied().unwrap_or(0)
    }
}

/// One response's place in [`InFlight`], given up on drop.
#[derive(Debug)]
pub(super) struct Reservation {
    in_flight: Arc<InFlight>,
    session: String,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut map = self
            .in_flight
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = map.get_mut(&self.session) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.session);
            }
        }
    }
}
