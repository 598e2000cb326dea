//! Stage 6: the authorization hook ([`crate::Authorizer`]). A denial, or any
//! evaluation error, denies; a hold (a policy asks for a human) makes the
//! approval stage require an approval; the policy ids are kept for the
//! decision.

use crate::authorize::{Authorizer, AuthzRequest};
use crate::reason::Reason;

/// `Ok(held)` if permitted (`held`: only with a human's approval), else
/// the reason; with the policies either way.
pub(crate) fn check(
    authorizer: &dyn Authorizer,
    request: &AuthzRequest<'_>,
) -> (Result<bool, Reason>, Vec<String>) {
    let answer = authorizer.authorize(request);
    let result = match answer.denial() {
        None => Ok(answer.holds()),
        Some(code) => Err(Reason::whole(code)),
    };
    (result, answer.policies)
}
