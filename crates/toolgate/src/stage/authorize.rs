//! Stage 6: the authorization hook ([`crate::Authorizer`]). A denial, or any
//! evaluation error, denies; a hold (a policy asks for a human) makes the
//! approval stage require an approval; the policy ids are kept for the
//! decision.

use crate::authorize::{Authorizer, AuthzRequest, PolicyFact};
use crate::reason::Reason;

/// `Ok(held)` if permitted (`held`: only with a human's approval), else
/// the reason; with the policies either way, and for a hold the values its
/// policies read.
pub(crate) fn check(
    authorizer: &dyn Authorizer,
    request: &AuthzRequest<'_>,
) -> (Result<bool, Reason>, Vec<String>, Vec<PolicyFact>) {
    let answer = authorizer.authorize(request);
    let result = match answer.denial() {
        None => Ok(answer.holds()),
        Some(code) => Err(Reason::whole(code)),
    };
    let facts = if result == Ok(true) {
        answer.facts
    } else {
        Vec::new()
    };
    (result, answer.policies, facts)
}
