//! The session counters a recorded call moves, and the escalation rule
//! ([`crate::Store::record_call`]; the counters are documented on
//! [`SessionCounters`]).
//!
//! - Only `allow`, `deny` and `needs_approval` are verdicts of a call.
//! - A turn number above the last one starts a new turn.
//! - Every call counts; a denied call counts a rejection and a consecutive
//!   rejection, and each of its reasons (once, however often given) one
//!   more in a row, every other reason's run ending; an allowed call ends
//!   every run; `needs_approval` is neither.
//! - The rejection that brings the count to `escalate_after` escalates the
//!   session, for good: a later call never moves `escalated_at`.

use crate::audit::AuditVerdict;
use crate::error::{Error, ErrorCode};
use crate::session::SessionCounters;
use crate::time::Timestamp;

/// How a call moves the session's runs of rejections by reason, which the
/// backend keeps in its own table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReasonRuns<'a> {
    /// Unchanged.
    Keep,
    /// Every run ends.
    Clear,
    /// These reasons (sorted, without repeats) count one more; every other
    /// reason's run ends.
    Extend(Vec<&'a str>),
}

/// Refuses a verdict that is not a call's.
pub(crate) fn check_call_verdict(verdict: AuditVerdict) -> Result<(), Error> {
    if matches!(
        verdict,
        AuditVerdict::Allow | AuditVerdict::Deny | AuditVerdict::NeedsApproval
    ) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidInput,
        format!("`{verdict}` is not the verdict of a call"),
    ))
}

/// Counts one call of turn `turn` decided `verdict` for `reasons` into `c`
/// (the session's counters as stored), escalating at `escalate_after`
/// rejections at `now`; returns how the runs by reason move.
pub(crate) fn count_call<'a>(
    c: &mut SessionCounters,
    turn: u64,
    verdict: AuditVerdict,
    reasons: &[&'a str],
    escalate_after: u64,
    now: Timestamp,
) -> ReasonRuns<'a> {
    if turn > c.last_turn {
        c.turns += 1;
        c.last_turn = turn;
    }
    c.calls += 1;
    match verdict {
        AuditVerdict::Deny => {
            c.rejections += 1;
            c.consecutive_rejections += 1;
            if c.escalated_at.is_none() && c.rejections >= escalate_after {
                c.escalated_at = Some(now);
            }
            let mut reasons = reasons.to_vec();
            reasons.sort_unstable();
            reasons.dedup();
            ReasonRuns::Extend(reasons)
        }
        AuditVerdict::Allow => {
            c.consecutive_rejections = 0;
            ReasonRuns::Clear
        }
        _ => ReasonRuns::Keep,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_unix_millis(ms)
    }

    #[test]
    fn only_call_verdicts_are_counted() {
        for v in [
            AuditVerdict::Allow,
            AuditVerdict::Deny,
            AuditVerdict::NeedsApproval,
        ] {
            assert!(check_call_verdict(v).is_ok());
        }
        for v in [
            AuditVerdict::ApprovalGranted,
            AuditVerdict::ApprovalDenied,
            AuditVerdict::ApprovalUsed,
            AuditVerdict::KillSwitch,
            AuditVerdict::Unauthorized,
            AuditVerdict::Forbidden,
            AuditVerdict::ConfigReload,
            AuditVerdict::ToolResult,
        ] {
            let e = check_call_verdict(v).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidInput);
            assert_eq!(e.message(), format!("`{v}` is not the verdict of a call"));
        }
    }

    #[test]
    fn turns_count_when_the_number_rises() {
        let mut c = SessionCounters::default();
        for (turn, turns, last) in [
            (1, 1, 1),
            (1, 1, 1),
            (3, 2, 3),
            (2, 2, 3),
            (0, 2, 3),
            (4, 3, 4),
        ] {
            count_call(&mut c, turn, AuditVerdict::Allow, &[], 3, at(0));
            assert_eq!((c.turns, c.last_turn), (turns, last), "turn {turn}");
        }
        assert_eq!(c.calls, 6);
    }

    #[test]
    fn rejections_escalate_once_at_the_threshold() {
        let mut c = SessionCounters::default();
        assert_eq!(
            count_call(&mut c, 1, AuditVerdict::Deny, &["b", "a", "b"], 3, at(1)),
            ReasonRuns::Extend(vec!["a", "b"])
        );
        assert_eq!(
            count_call(&mut c, 1, AuditVerdict::NeedsApproval, &["x"], 3, at(2)),
            ReasonRuns::Keep
        );
        assert_eq!((c.rejections, c.consecutive_rejections), (1, 1));
        assert_eq!(
            count_call(&mut c, 1, AuditVerdict::Allow, &[], 3, at(3)),
            ReasonRuns::Clear
        );
        assert_eq!((c.rejections, c.consecutive_rejections), (1, 0));
        count_call(&mut c, 2, AuditVerdict::Deny, &[], 3, at(4));
        assert_eq!(c.escalated_at, None);
        count_call(&mut c, 2, AuditVerdict::Deny, &["a"], 3, at(5));
        assert_eq!((c.rejections, c.consecutive_rejections), (3, 2));
        assert_eq!(c.escalated_at, Some(at(5)));
        // For good: later rejections and allows do not move it.
        count_call(&mut c, 3, AuditVerdict::Deny, &[], 3, at(6));
        count_call(&mut c, 3, AuditVerdict::Allow, &[], 3, at(7));
        assert_eq!(c.escalated_at, Some(at(5)));
        assert_eq!(c.calls, 7);
        // A threshold of 1: the first rejection escalates.
        let mut c = SessionCounters::default();
        count_call(&mut c, 1, AuditVerdict::Deny, &[], 1, at(9));
        assert_eq!(c.escalated_at, Some(at(9)));
    }
}
