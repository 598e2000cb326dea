//! Opt-outs that weaken the gate. Each is named, so that a reviewer sees it.

use crate::authorize::{Authorization, Authorizer, AuthzRequest};

/// Permits every call at the authorization stage: no per-user check at all.
///
/// Use it only where authorization is done elsewhere, or until policies exist
/// (issue 5 brings Cedar). Every other stage still runs: parse, schema, URL
/// policies, limits, kill switch and approvals. Its permits carry the policy
/// id `toolgate:no_authorization`, so the audit shows that no policy decided.
///
/// In a config it must be named explicitly (`[authorization] mode = "none"`
/// or the CLI's equivalent); a gate with no authorizer denies every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAuthorization;

impl NoAuthorization {
    /// The policy id reported with each permit.
    pub const POLICY_ID: &'static str = "toolgate:no_authorization";
}

impl Authorizer for NoAuthorization {
    fn authorize(&self, _request: &AuthzRequest<'_>) -> Authorization {
        Authorization::permit(vec![Self::POLICY_ID.to_owned()])
    }
}
