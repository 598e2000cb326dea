//! The authorization hook: is *this* user allowed to do *this* act?
//!
//! The gate asks an [`Authorizer`] about every call that passed the parse,
//! schema and argument-policy stages. The answer is an [`Authorization`]:
//! permit or deny, the policy ids that decided, and any errors met while
//! evaluating. The gate permits only when the answer is a permit **and**
//! carries no error (an evaluation error never produces allow; see
//! STYLE.md §4).
//!
//! There is no implicit default that allows: a [`crate::Gate`] built without
//! an authorizer uses [`DenyAll`], and allowing every call takes the named
//! opt-out [`crate::danger::NoAuthorization`]. Cedar policies (issue 5) will
//! implement this trait.

use toolgate_json::Value;

use crate::context::Context;
use crate::reason::Code;
use crate::registry::Tool;

/// What an authorizer is asked about one call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AuthzRequest<'a> {
    /// Who asks, in which session, with which entities.
    pub context: &'a Context,
    /// The registered tool.
    pub tool: &'a Tool,
    /// The arguments, parsed strictly and valid against the tool's schema.
    pub arguments: &'a Value<'a>,
    /// Their canonical text.
    pub canonical: &'a str,
    /// The value at the tool's resource id pointer, if the tool maps one and
    /// the arguments hold it.
    pub resource_id: Option<&'a Value<'a>>,
    /// The labels the session holds (see [`Tool::labels`]), read only when
    /// [`Authorizer::reads_session_labels`] says so (empty otherwise).
    pub labels: &'a [String],
}

/// Whether the authorizer permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthzVerdict {
    /// The call is permitted.
    Permit,
    /// The call is denied, with the code to report (`not_authorized`,
    /// `not_owner`, `authorization_error`).
    Deny(Code),
    /// The call may run once a human approves it (`approval_required`):
    /// the policies that ask for it would otherwise forbid it.
    Hold,
}

/// An authorizer's answer, with its diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Authorization {
    /// Permit or deny.
    pub verdict: AuthzVerdict,
    /// The ids of the policies that decided (recorded in the decision and the
    /// audit, never sent to the model).
    pub policies: Vec<String>,
    /// Errors met while evaluating, for operators. Any error denies.
    pub errors: Vec<String>,
    /// For a hold: the values the policies that asked for a human read
    /// (such as the order's total), for the approvers; empty otherwise.
    pub facts: Vec<PolicyFact>,
}

/// One value a policy that held a call read: where it read it
/// (`resource.total_cents`, `context.args.amount_cents`) and what it was,
/// in Cedar's notation (a string quoted and escaped), each bounded
/// ([`PolicyFact::MAX_CHARS`]). Shown to the humans who approve, never to
/// the model; the store redacts the arguments the config marks secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyFact {
    /// Where the policy read it, as a Cedar path.
    pub path: String,
    /// The value it read.
    pub value: String,
}

impl PolicyFact {
    /// The most facts one hold carries.
    pub const MAX_FACTS: usize = 16;
    /// The longest path or value kept, in characters (a longer one is cut
    /// and ends with `…`).
    pub const MAX_CHARS: usize = 200;

    /// A fact, each part cut to [`Self::MAX_CHARS`].
    pub fn new(path: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            path: bounded(path.into()),
            value: bounded(value.into()),
        }
    }
}

/// `text` cut to [`PolicyFact::MAX_CHARS`] characters, marked with `…`.
fn bounded(text: String) -> String {
    if text.chars().count() <= PolicyFact::MAX_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(PolicyFact::MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

impl Authorization {
    /// A permit decided by `policies`.
    pub fn permit(policies: Vec<String>) -> Self {
        Self {
            verdict: AuthzVerdict::Permit,
            policies,
            errors: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// A denial with `code`, decided by `policies`.
    pub fn deny(code: Code, policies: Vec<String>) -> Self {
        Self {
            verdict: AuthzVerdict::Deny(code),
            policies,
            errors: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// A permit that needs a human's approval first, asked for by
    /// `policies`.
    pub fn hold(policies: Vec<String>) -> Self {
        Self {
            verdict: AuthzVerdict::Hold,
            policies,
            errors: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// The hold with the values its policies read.
    pub fn with_facts(mut self, facts: Vec<PolicyFact>) -> Self {
        self.facts = facts;
        self
    }

    /// Whether the call needs a human's approval before it runs (and is
    /// otherwise permitted). An answer with errors never holds: it denies.
    pub fn holds(&self) -> bool {
        self.errors.is_empty() && self.verdict == AuthzVerdict::Hold
    }

    /// Adds an evaluation error (which denies).
    pub fn with_error(mut self, error: impl Into<String>) -> Self {
        self.errors.push(error.into());
        self
    }

    /// The code to deny with, or `None` if this answer permits. An answer
    /// with errors denies `authorization_error` whatever its verdict.
    pub fn denial(&self) -> Option<Code> {
        if !self.errors.is_empty() {
            return Some(Code::AuthorizationError);
        }
        match self.verdict {
            AuthzVerdict::Permit | AuthzVerdict::Hold => None,
            AuthzVerdict::Deny(code) => Some(code),
        }
    }
}

/// Decides whether a call may proceed, given who asks.
///
/// Implementations must be total: return a denial with an error rather than
/// panic or block without bound.
pub trait Authorizer: Send + Sync {
    /// Answers for one call.
    fn authorize(&self, request: &AuthzRequest<'_>) -> Authorization;

    /// Whether its policies read the session's labels
    /// ([`AuthzRequest::labels`]): then the gate reads them from the state
    /// for every call (and denies `store_unavailable` if it cannot). The
    /// default: `false`.
    fn reads_session_labels(&self) -> bool {
        false
    }
}

/// Denies every call `not_authorized`: the authorizer of a gate that was
/// given none. Its policy id is `toolgate:default_deny`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl DenyAll {
    /// The policy id reported with each denial.
    pub const POLICY_ID: &'static str = "toolgate:default_deny";
}

impl Authorizer for DenyAll {
    fn authorize(&self, _request: &AuthzRequest<'_>) -> Authorization {
        Authorization::deny(Code::NotAuthorized, vec![Self::POLICY_ID.to_owned()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_cut_at_a_character_boundary() {
        let long = "é".repeat(PolicyFact::MAX_CHARS + 5);
        let f = PolicyFact::new("resource.note", long);
        assert_eq!(f.value.chars().count(), PolicyFact::MAX_CHARS);
        assert!(f.value.ends_with('…'));
        let short = PolicyFact::new("resource.total", "12000");
        assert_eq!(short.value, "12000");
    }

    #[test]
    fn errors_deny_even_a_permit() {
        assert_eq!(Authorization::permit(vec![]).denial(), None);
        assert_eq!(
            Authorization::permit(vec!["p".into()])
                .with_error("boom")
                .denial(),
            Some(Code::AuthorizationError)
        );
        assert_eq!(
            Authorization::deny(Code::NotOwner, vec![]).denial(),
            Some(Code::NotOwner)
        );
    }
}
