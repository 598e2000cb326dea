//! Stage 6: the authorization hook ([`crate::Authorizer`]). A denial, or any
//! evaluation error, denies; the policy ids are kept for the decision.

use crate::authorize::{Authorizer, AuthzRequest};
use crate::reason::Reason;

/// `Ok(policies)` if permitted, else the reason and the policies.
pub(crate) fn check(
    authorizer: &dyn Authorizer,
    request: &AuthzRequest<'_>,
) -> (Result<(), Reason>, Vec<String>) {
    let answer = authorizer.authorize(request);
    let result = match answer.denial() {
        None => Ok(()),
        Some(code) => Err(Reason::whole(code)),
    };
    (result, answer.policies)
}
