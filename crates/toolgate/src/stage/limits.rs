//! Stage 7: limits that stop a runaway loop (threat 6).
//!
//! - **Turns**: a session at turn N of at most M turns is allowed while
//!   N ≤ M; past it every call, reads included, is denied `loop_limit`. M is
//!   the gate's cap, lowered (never raised) by the context's `max_turns`.
//!   N is counted by the state (with a store: the session's decided
//!   responses, plus one); the context's `turn` counts only when higher.
//! - **Calls per response**: more than the cap denies every call of the
//!   response `too_many_calls` (not just the extra ones: the response as a
//!   whole is a runaway).
//! - **Repeated rejections**: when the session already had at least the
//!   configured number of rejected calls of the same tool with arguments of
//!   the same shape, the call is denied `repeated_rejection`: a model probing
//!   the validator with small variations stops getting answers.

use toolgate_json::canonical::Digest;

use crate::context::StateView;
use crate::reason::{Code, Reason};

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_turns: u32,
    pub(crate) max_calls: usize,
    pub(crate) max_rejections: u32,
}

/// The turn limit: `turn` ≤ min(gate cap, context cap).
pub(crate) fn turns(limits: &Limits, turn: u32, context_cap: Option<u32>) -> Result<(), Reason> {
    let cap = context_cap.map_or(limits.max_turns, |c| c.min(limits.max_turns));
    if turn <= cap {
        Ok(())
    } else {
        Err(Reason::whole(Code::LoopLimit))
    }
}

/// The calls-per-response cap.
pub(crate) fn calls(limits: &Limits, calls_in_response: usize) -> Result<(), Reason> {
    if calls_in_response <= limits.max_calls {
        Ok(())
    } else {
        Err(Reason::whole(Code::TooManyCalls))
    }
}

/// The repeated-rejection limit; `store_unavailable` if the history cannot
/// be read. A shape of `None` (arguments that did not parse) never reaches
/// this stage.
pub(crate) fn rejections(
    limits: &Limits,
    state: &dyn StateView,
    session: &str,
    tool: &str,
    shape: &Digest,
) -> Result<(), Reason> {
    match state.rejections(session, tool, shape) {
        Ok(n) if n < limits.max_rejections => Ok(()),
        Ok(_) => Err(Reason::whole(Code::RepeatedRejection)),
        Err(_) => Err(Reason::whole(Code::StoreUnavailable)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;

    const L: Limits = Limits {
        max_turns: 8,
        max_calls: 2,
        max_rejections: 2,
    };

    #[test]
    fn turn_n_of_m_is_allowed_while_n_le_m() {
        assert!(turns(&L, 8, None).is_ok());
        assert_eq!(turns(&L, 9, None), Err(Reason::whole(Code::LoopLimit)));
        assert!(turns(&L, 3, Some(3)).is_ok());
        assert!(turns(&L, 4, Some(3)).is_err());
        // The context can lower the cap, never raise it.
        assert!(turns(&L, 9, Some(100)).is_err());
    }

    #[test]
    fn calls_per_response() {
        assert!(calls(&L, 2).is_ok());
        assert_eq!(calls(&L, 3), Err(Reason::whole(Code::TooManyCalls)));
    }

    #[test]
    fn repeated_rejections() {
        let shape = Digest::of(b"shape");
        let mut ctx = Context::new("u", "s", 1);
        assert!(rejections(&L, &ctx, "s", "t", &shape).is_ok());
        let doc = format!(
            r#"{{"user":"u","session":"s","turn":1,"rejections":[{{"tool":"t","shape":"{shape}"}},{{"tool":"t","shape":"{shape}"}}]}}"#
        );
        ctx = Context::from_json(doc.as_bytes()).unwrap();
        assert_eq!(
            rejections(&L, &ctx, "s", "t", &shape),
            Err(Reason::whole(Code::RepeatedRejection))
        );
        assert!(rejections(&L, &ctx, "s", "other", &shape).is_ok());
    }
}
