//! Notices of held calls sent to notification sinks: one record per
//! (approval, sink), claimed once (so replicas sharing a store send each
//! notice once) and updated with each delivery's outcome. A notice never
//! decides anything: it only tells a human that an approval waits.

use crate::approval::ApprovalId;
use crate::time::Timestamp;

/// Where a notice's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoticeState {
    /// `sending`: claimed, attempts under way (or the sender stopped).
    Sending,
    /// `delivered`: a sink answered 2xx.
    Delivered,
    /// `failed`: every attempt failed; `outcome` says how the last did.
    Failed,
}

impl NoticeState {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sending => "sending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "sending" => Some(Self::Sending),
            "delivered" => Some(Self::Delivered),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// One notice as stored ([`crate::Store::list_notices`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notice {
    /// The approval it announced.
    pub approval: ApprovalId,
    /// The sink's name (`[[approvals.notify]] name`).
    pub sink: String,
    /// Where its delivery stands.
    pub state: NoticeState,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it was claimed.
    pub claimed_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// How the last attempt went (`200`, `500`, `timeout`, `redirect 302
    /// not followed`, `connect: …`), bounded.
    pub outcome: Option<String>,
}

/// The longest outcome text kept, in bytes.
pub const MAX_NOTICE_OUTCOME_BYTES: usize = 200;

/// `outcome` cut to [`MAX_NOTICE_OUTCOME_BYTES`] at a character boundary.
pub(crate) fn bounded_outcome(outcome: &str) -> &str {
    if outcome.len() <= MAX_NOTICE_OUTCOME_BYTES {
        return outcome;
    }
    let mut end = MAX_NOTICE_OUTCOME_BYTES;
    while !outcome.is_char_boundary(end) {
        end -= 1;
    }
    outcome.get(..end).unwrap_or_default()
}
