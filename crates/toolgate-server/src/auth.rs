//! Bearer tokens, read and matched by the edge's one rule
//! ([`toolgate_edge::token`]): one `Authorization: Bearer TOKEN` header,
//! whose SHA-256 is compared, in constant time, with every configured hash;
//! the matching token's role decides what the caller may do.
//!
//! A refused request is audited: `unauthorized` (reason `missing_token`,
//! `malformed_token`, `unknown_token`, a JWT's refusal code such as
//! `jwt_expired` (`[jwt]`: [`toolgate_edge::jwt`]), or `duplicate_token` for a request
//! with more than one `Authorization` header, refused `400
//! duplicate_header` whatever the headers hold) or `forbidden` (the token's name
//! as `actor`, never the token; reason `role:` and its role), with the
//! method and route as `note`; at most [`AUDITED_REFUSALS_PER_SECOND`] a
//! second.

use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use toolgate_edge::config::{ServerRole, ServerToken};
use toolgate_edge::token::{Presented, TokenDigest};
use toolgate_store::{AuditEntry, AuditVerdict, Timestamp};

use crate::error::ApiError;
use crate::state::AppState;

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The role of its token.
    pub role: ServerRole,
    /// The actor recorded for its changes: the token's name, or
    /// `token:` and the first 12 hex digits of its hash.
    pub actor: String,
    /// The person behind it, as a two-person rule counts approvers: the
    /// token's `identity`, else its actor. Two tokens of one identity are
    /// one approver.
    pub identity: String,
    /// The users its token may speak for (`[[server.token]] users`: names,
    /// or prefixes ending in `*`); `None`: any user.
    pub users: Option<Vec<String>>,
}

impl Caller {
    /// Whether the caller may decide and wait for `user`.
    pub fn may_speak_for(&self, user: &str) -> bool {
        toolgate_edge::config::speaks_for(self.users.as_deref(), user)
    }
}

/// The SHA-256 of a presented token (what the config holds).
pub(crate) fn token_digest(token: &[u8]) -> [u8; 32] {
    *TokenDigest::of(token).bytes()
}

/// The caller whose token has the SHA-256 `digest`, if one is configured
/// (the page's sessions are checked again with it on every request, so a
/// reload that revokes or rebinds a token ends or changes them).
pub(crate) fn caller_for(tokens: &[ServerToken], digest: &[u8; 32]) -> Option<Caller> {
    // Every hash is compared: no early exit on a match.
    let found = TokenDigest::from_bytes(*digest).find(tokens, ServerToken::sha256);
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
        identity: t.identity().map_or_else(|| actor.clone(), str::to_owned),
        actor,
        users: t.users().map(<[String]>::to_vec),
    })
}

/// The caller of a JWT bearer token (`[jwt]`, the edge's one rule:
/// [`toolgate_edge::jwt`]): its role from the claims, bound to its user as
/// a static token with `users = [USER]` is. `Unknown` without `[jwt]` or
/// for a token that is no JWT; the JWT's refusal code otherwise.
async fn jwt_caller(state: &AppState, parts: &Parts) -> Result<Caller, Refusal> {
    let Some(verifier) = state.inner.jwt.get() else {
        return Err(Refusal::Unknown);
    };
    let token = toolgate_edge::token::bearer_text(&parts.headers).ok_or(Refusal::Malformed)?;
    if !toolgate_edge::jwt::Verifier::looks_like_jwt(token) {
        return Err(Refusal::Unknown);
    }
    let identity = verifier.verify(token).await.map_err(Refusal::Jwt)?;
    let user: String = identity.user;
    Ok(Caller {
        role: identity.role,
        actor: format!("jwt:{user}"),
        identity: user.clone(),
        users: Some(vec![user]),
    })
}

/// Why a request was refused, for its audit record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// No `Authorization` header.
    Missing,
    /// A header that is not `Bearer <token>`.
    Malformed,
    /// A bearer token that is not configured.
    Unknown,
    /// More than one `Authorization` header (refused `400`).
    Duplicate,
    /// A JWT the edge refused (its code: `jwt_expired`, …).
    Jwt(toolgate_edge::jwt::Refused),
}

impl Refusal {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Missing => "missing_token",
            Self::Malformed => "malformed_token",
            Self::Unknown => "unknown_token",
            Self::Duplicate => "duplicate_token",
            Self::Jwt(r) => r.code(),
        }
    }
}

/// How many refused requests a second are written to the audit log. An
/// unauthenticated flood must not turn into a flood of durable writes (each
/// one a commit): past the cap, refusals are counted, and the next record
/// written says how many were left out (reason `dropped:N`). Every refusal
/// is counted in the metrics.
pub const AUDITED_REFUSALS_PER_SECOND: u32 = 10;

/// The rate cap on audit records of refused requests.
#[derive(Debug, Default)]
pub struct FailureLimiter {
    state: Mutex<LimiterState>,
}

#[derive(Debug, Default)]
struct LimiterState {
    window: Option<Timestamp>,
    written: u32,
    dropped: u64,
}

impl FailureLimiter {
    /// `Some(dropped)` when this refusal is to be recorded (with how many
    /// were left out before it), `None` when the cap is reached.
    /// `now` by the service's clock.
    fn admit(&self, now: Timestamp) -> Option<u64> {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = s
            .window
            .is_none_or(|w| now.unix_millis().saturating_sub(w.unix_millis()) >= 1000);
        if fresh {
            s.window = Some(now);
            s.written = 0;
        }
        if s.written >= AUDITED_REFUSALS_PER_SECOND {
            s.dropped = s.dropped.saturating_add(1);
            return None;
        }
        s.written += 1;
        Some(std::mem::take(&mut s.dropped))
    }
}

/// The route of a request for its audit record: the method and the path
/// (without the query), cut to 200 bytes.
fn route(parts: &Parts) -> String {
    let p = parts.uri.path();
    let mut end = p.len().min(200);
    while !p.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} {}", parts.method, p.get(..end).unwrap_or_default())
}

/// Writes the audit record of a refused request (within the rate cap). A
/// record that cannot be written goes to the server's log; the request is
/// refused either way.
pub(crate) async fn audit_refusal(state: &AppState, entry: AuditEntry) {
    let Some(dropped) = state.inner.auth_failures.admit(state.now()) else {
        return;
    };
    let entry = if dropped > 0 {
        entry.reason(format!("dropped:{dropped}"))
    } else {
        entry
    };
    let store = Arc::clone(state.inner.gate.store());
    match tokio::task::spawn_blocking(move || store.append(entry)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => toolgate_edge::log::line(
            toolgate_edge::log::Level::Error,
            "serve",
            "audit_failed",
            &format!("cannot audit a refused request: {e}"),
        ),
        Err(_) => toolgate_edge::log::line(
            toolgate_edge::log::Level::Error,
            "serve",
            "audit_failed",
            "cannot audit a refused request",
        ),
    }
}

async fn require(
    parts: &Parts,
    state: &AppState,
    allowed: &[ServerRole],
) -> Result<Caller, ApiError> {
    let why = match toolgate_edge::token::bearer(&parts.headers) {
        Presented::Duplicate => {
            // Which one counts would be up to each hop that reads them:
            // none.
            state.inner.metrics.refusal(StatusCode::BAD_REQUEST);
            let entry = AuditEntry::new(state.now(), AuditVerdict::Unauthorized)
                .reason(Refusal::Duplicate.as_str())
                .note(route(parts));
            audit_refusal(state, entry).await;
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "duplicate_header",
                "more than one `Authorization` header",
            ));
        }
        Presented::Missing => Err(Refusal::Missing),
        Presented::Malformed => Err(Refusal::Malformed),
        Presented::Token(digest) => match caller_for(state.server().tokens(), digest.bytes()) {
            Some(caller) => Ok(caller),
            None => jwt_caller(state, parts).await,
        },
    };
    let caller = match why {
        Ok(caller) => caller,
        Err(why) => {
            state.inner.metrics.refusal(StatusCode::UNAUTHORIZED);
            let entry = AuditEntry::new(state.now(), AuditVerdict::Unauthorized)
                .reason(why.as_str())
                .note(route(parts));
            audit_refusal(state, entry).await;
            return Err(match why {
                // What is wrong with a JWT, in words (never the token).
                Refusal::Jwt(r) => {
                    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", r.message())
                }
                _ => ApiError::unauthorized(),
            });
        }
    };
    // An authenticated request: its connection is no longer anonymous.
    toolgate_edge::authenticated(&parts.extensions);
    if allowed.contains(&caller.role) {
        Ok(caller)
    } else {
        state.inner.metrics.refusal(StatusCode::FORBIDDEN);
        let entry = AuditEntry::new(state.now(), AuditVerdict::Forbidden)
            .actor(caller.actor.clone())
            .reason(format!("role:{}", caller.role.as_str()))
            .note(route(parts));
        audit_refusal(state, entry).await;
        Err(ApiError::forbidden(caller.role.as_str()))
    }
}

/// Refuses (`403 forbidden`) a caller speaking for a user its token is not
/// bound to; audited `forbidden` with reason `user`, the user, the actor
/// and the route (within the refusals' rate cap).
pub(crate) async fn refuse_user(
    state: &AppState,
    caller: &Caller,
    user: &str,
    parts: &Parts,
) -> ApiError {
    state.inner.metrics.refusal(StatusCode::FORBIDDEN);
    let user: String = user.chars().take(200).collect();
    let entry = AuditEntry::new(state.now(), AuditVerdict::Forbidden)
        .actor(caller.actor.clone())
        .user(user)
        .reason("user")
        .note(route(parts));
    audit_refusal(state, entry).await;
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        "this token may not speak for the user (`[[server.token]] users`)",
    )
}

/// Any configured token (for `GET /metrics` with `metrics_auth = "token"`).
pub(crate) async fn any_token(parts: &Parts, state: &AppState) -> Result<Caller, ApiError> {
    require(
        parts,
        state,
        &[ServerRole::Agent, ServerRole::Approver, ServerRole::Admin],
    )
    .await
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
        require(parts, state, &[ServerRole::Agent, ServerRole::Admin])
            .await
            .map(Self)
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
        .await
        .map(Self)
    }
}

impl FromRequestParts<AppState> for Approver {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(parts, state, &[ServerRole::Approver, ServerRole::Admin])
            .await
            .map(Self)
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        require(parts, state, &[ServerRole::Admin]).await.map(Self)
    }
}
