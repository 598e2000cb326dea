//! Stage 9: risk tier and approval.
//!
//! A tool that requires approval (by default every non-read tool; the
//! registry decides) needs a human approval bound to (user, session, tool,
//! argument digest), unexpired and unused. With one, the call is allowed and
//! the decision names the approval (which the executor must mark used); one
//! approval covers one call, also within one response. Without one, the
//! verdict is needs approval with `approval_required`. Approvals that cannot
//! be read deny `store_unavailable`.
//!
//! In an escalated session (see [`StateView::escalated`]) every non-read
//! tool requires approval, whatever the registry says.

use crate::context::{ApprovalGrant, ApprovalKey, StateView};
use crate::reason::{Code, Reason};
use crate::registry::{Risk, Tool};

/// What the approval stage concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No approval needed.
    NotRequired,
    /// Approved by this grant.
    Approved(ApprovalGrant),
    /// A human must approve.
    Required(Reason),
    /// The state could not be read.
    Denied(Reason),
}

/// Whether a call of `tool` in `session` requires approval: the registry's
/// setting, or any non-read tool in an escalated session.
/// `store_unavailable` if the escalation cannot be read.
pub(crate) fn required(tool: &Tool, state: &dyn StateView, session: &str) -> Result<bool, Reason> {
    if tool.approval_required() {
        return Ok(true);
    }
    if tool.risk() == Risk::Read {
        return Ok(false);
    }
    state
        .escalated(session)
        .map_err(|_| Reason::whole(Code::StoreUnavailable))
}

/// Looks for a usable approval when `required`.
pub(crate) fn check(
    required: bool,
    state: &dyn StateView,
    key: &ApprovalKey<'_>,
    now: u64,
    used_in_response: &[String],
) -> Outcome {
    if !required {
        return Outcome::NotRequired;
    }
    match state.find_approval(key, now, used_in_response) {
        Ok(Some(grant)) => Outcome::Approved(grant),
        Ok(None) => Outcome::Required(Reason::whole(Code::ApprovalRequired)),
        Err(_) => Outcome::Denied(Reason::whole(Code::StoreUnavailable)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Context, KillSwitch, StateError};
    use toolgate_json::canonical::Digest;

    struct Broken;

    impl StateView for Broken {
        fn kill_switch(&self) -> Result<KillSwitch, StateError> {
            Err(StateError::new("down"))
        }
        fn find_approval(
            &self,
            _: &ApprovalKey<'_>,
            _: u64,
            _: &[String],
        ) -> Result<Option<ApprovalGrant>, StateError> {
            Err(StateError::new("down"))
        }
        fn rejections(&self, _: &str, _: &str, _: &Digest) -> Result<u32, StateError> {
            Err(StateError::new("down"))
        }
    }

    #[test]
    fn bound_to_user_session_tool_and_digest() {
        let d = Digest::of(b"{}");
        let doc = format!(
            r#"{{"user":"u","session":"s","turn":1,"approvals":[{{"id":"a1","user":"u","session":"s","tool":"refund","digest":"{d}","expires_at":100}}]}}"#
        );
        let ctx = Context::from_json(doc.as_bytes()).unwrap();
        let key = ApprovalKey {
            user: "u",
            session: "s",
            tool: "refund",
            digest: &d,
        };
        assert_eq!(
            check(true, &ctx, &key, 99, &[]),
            Outcome::Approved(ApprovalGrant::new("a1"))
        );
        assert_eq!(check(false, &ctx, &key, 99, &[]), Outcome::NotRequired);
        let required = Outcome::Required(Reason::whole(Code::ApprovalRequired));
        assert_eq!(check(true, &ctx, &key, 100, &[]), required, "expired");
        assert_eq!(
            check(true, &ctx, &key, 99, &["a1".into()]),
            required,
            "used in this response"
        );
        let other = Digest::of(b"{\"a\":1}");
        for key in [
            ApprovalKey { user: "v", ..key },
            ApprovalKey {
                session: "s2",
                ..key
            },
            ApprovalKey {
                tool: "refund2",
                ..key
            },
            ApprovalKey {
                digest: &other,
                ..key
            },
        ] {
            assert_eq!(check(true, &ctx, &key, 99, &[]), required);
        }
        assert_eq!(
            check(true, &Broken, &key, 99, &[]),
            Outcome::Denied(Reason::whole(Code::StoreUnavailable))
        );
    }
}
