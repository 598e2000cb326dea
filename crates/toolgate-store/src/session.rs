//! Per-session counters; documented on [`SessionCounters`].

use crate::time::Timestamp;

/// What the store counts for one session ([`crate::Store::record_call`]).
///
/// - `turns`: distinct turns seen (a call with a turn number above the last
///   one starts a new turn); `last_turn` is the highest turn number.
/// - `calls`: every recorded call.
/// - `rejections`: every denied call; when it reaches the store's
///   `escalate_after` (default 3) the session is *escalated*, for good:
///   `escalated_at` is set.
/// - `consecutive_rejections`: denied calls since the last allowed one.
/// - `consecutive_by_reason`: for each reason code, how many of the latest
///   denied calls in a row carried it (an allowed call clears all; a denied
///   call without the reason clears that reason). Sorted by reason.
///
/// `needs_approval` counts as a call, neither a rejection nor an allow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SessionCounters {
    /// The session.
    pub session: String,
    /// Distinct turns.
    pub turns: u64,
    /// The highest turn number seen.
    pub last_turn: u64,
    /// Calls recorded.
    pub calls: u64,
    /// Denied calls.
    pub rejections: u64,
    /// Denied calls since the last allowed one.
    pub consecutive_rejections: u64,
    /// Consecutive rejections per reason code, sorted by reason.
    pub consecutive_by_reason: Vec<(String, u64)>,
    /// When the session was escalated.
    pub escalated_at: Option<Timestamp>,
}

impl SessionCounters {
    /// Whether the session is escalated: further non-read calls need a human.
    pub fn is_escalated(&self) -> bool {
        self.escalated_at.is_some()
    }

    /// Consecutive rejections carrying `reason`.
    pub fn consecutive(&self, reason: &str) -> u64 {
        self.consecutive_by_reason
            .iter()
            .find(|(r, _)| r == reason)
            .map_or(0, |(_, n)| *n)
    }
}
