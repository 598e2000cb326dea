//! Bearer tokens: the SHA-256 of the presented token is compared, in
//! constant time, with every configured hash; the matching token's role
//! decides what the caller may do.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use sha2::{Digest as _, Sha256};
use toolgate::config::{ServerRole, ServerToken};

use crate::error::ApiError;
use crate::AppState;

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The role of its token.
    pub role: ServerRole,
    /// The actor recorded for its changes: the token's name, or
    /// `token:` and the first 12 hex digits of its hash.
    pub actor: String,
}

/// Equality of two digests that takes the same time wherever they differ.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff == 0
}

/// The caller presenting `authorization` (the header's value), if any
/// configured token matches.
pub fn authenticate(tokens: &[ServerToken], authorization: Option<&[u8]>) -> Option<Caller> {
    let value = authorization?;
    let token = value
        .strip_prefix(b"Bearer ")
        .or_else(|| value.strip_prefix(b"bearer "))?;
    let digest: [u8; 32] = Sha256::digest(token).into();
    // Every hash is compared: no early exit on a match.
    let mut found: Option<&ServerToken> = None;
    for t in tokens {
        if constant_time_eq(t.sha256(), &digest) {
            found = Some(t);
        }
    }
    let t = found?;
    let actor = match t.name() {
        Some(n) => n.to_owned(),
        None => {
            let hex: String = t
                .sha256()
                .iter()
                .take(6)
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("token:{hex}")
        }
    };
    Some(Caller {
        role: t.role(),
        actor,
    })
}

fn require(parts: &Parts, state: &AppState, allowed: &[ServerRole]) -> Result<Caller, ApiError> {
    let header = parts
        .headers
        .get(header::AUTHORIZATION)
        .map(axum::http::HeaderValue::as_bytes);
    let caller = authenticate(state.tokens(), header).ok_or_else(ApiError::unauthorized)?;
    if allowed.contains(&caller.role) {
        Ok(caller)
    } else {
        Err(ApiError::forbidden(caller.role.as_str()))
    }
}

/// A caller that may decide: `agent` or `admin`.
#[derive(Debug, Clone)]
pub struct Agent(pub Caller);

/// A caller that may wait on an approval: any role.
#[derive(Debug, Clone)]
pub struct Waiter(pub Caller);

/// A caller that may read and decide approvals: `approver` or `admin`.
#[derive(Debug, Clone)]
pub struct Approver(pub Caller);

/// A caller that may use the kill switch and read the audit log: `admin`.
#[derive(Debug, Clone)]
pub struct Admin(pub Caller);

impl FromRequestParts<AppState> for Agent {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(parts, state, &[ServerRole::Agent, ServerRole::Admin]).map(Self)
    }
}

impl FromRequestParts<AppState> for Waiter {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(
            parts,
            state,
            &[ServerRole::Agent, ServerRole::Approver, ServerRole::Admin],
        )
        .map(Self)
    }
}

impl FromRequestParts<AppState> for Approver {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(parts, state, &[ServerRole::Approver, ServerRole::Admin]).map(Self)
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(parts, state, &[ServerRole::Admin]).map(Self)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, reason = "test code")]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn equality() {
        let a = [7u8; 32];
        let mut b = a;
        assert!(constant_time_eq(&a, &b));
        b[31] = 8;
        assert!(!constant_time_eq(&a, &b));
    }
}
