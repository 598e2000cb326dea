//! `/v1/approvals`: list and read approvals, approve or deny them, and
//! wait for one to be decided.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use toolgate_store::{ApprovalFilter, ApprovalId, ApprovalState};

use super::{invalid_query, ok_json};
use crate::auth::{self, Approver, Waiter};
use crate::error::ApiError;
use crate::extract::{MaybeJson, StrictQuery};
use crate::state::AppState;
use crate::wire;

/// The longest a wait may last, whatever the client asks.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

fn approval_id(raw: &str) -> Result<ApprovalId, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(format!("no approval `{}`", raw.escape_debug())))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalsQuery {
    state: Option<String>,
    limit: Option<u32>,
    after: Option<u64>,
    before: Option<u64>,
    user: Option<String>,
    session: Option<String>,
    tool: Option<String>,
}

/// `filter` narrowed to the `user`, `session` and `tool` asked for (exact
/// matches, so that a real request stays findable on a flooded queue):
/// each non-empty and at most
/// [`toolgate::identifier::MAX_IDENTIFIER_BYTES`].
pub(crate) fn narrowed(
    mut filter: ApprovalFilter,
    user: Option<String>,
    session: Option<String>,
    tool: Option<String>,
) -> Result<ApprovalFilter, ApiError> {
    for (name, value) in [("user", &user), ("session", &session), ("tool", &tool)] {
        let Some(v) = value else { continue };
        if v.is_empty() {
            return Err(invalid_query(format!("`{name}` must not be empty")));
        }
        if !toolgate::identifier::within(v) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "identifier_too_long",
                format!(
                    "`{name}` is longer than {} bytes",
                    toolgate::identifier::MAX_IDENTIFIER_BYTES
                ),
            ));
        }
    }
    filter.user = user;
    filter.session = session;
    filter.tool = tool;
    Ok(filter)
}

pub(super) async fn list_approvals(
    State(state): State<AppState>,
    Approver(_caller): Approver,
    StrictQuery(q): StrictQuery<ApprovalsQuery>,
) -> Result<Response, ApiError> {
    let mut filter = ApprovalFilter::new().limit(q.limit.unwrap_or(100).clamp(1, 1000));
    match q.state.as_deref().unwrap_or("pending") {
        "all" => {}
        "pending" => filter = filter.state(ApprovalState::Pending),
        "approved" => filter = filter.state(ApprovalState::Approved),
        "denied" => filter = filter.state(ApprovalState::Denied),
        "expired" => filter = filter.state(ApprovalState::Expired),
        "withdrawn" => filter = filter.state(ApprovalState::Withdrawn),
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                "`state` must be pending, approved, denied, expired, withdrawn or all",
            ))
        }
    }
    for (name, value) in [("after", q.after), ("before", q.before)] {
        // Ids fit the store's signed integers.
        if value.is_some_and(|v| i64::try_from(v).is_err()) {
            return Err(invalid_query(format!("`{name}` is too large")));
        }
    }
    if let Some(after) = q.after {
        filter = filter.after(ApprovalId::new(after));
    } else {
        // The newest first: a new request is never behind a long queue.
        filter = filter.newest_first();
    }
    if let Some(before) = q.before {
        filter = filter.before(ApprovalId::new(before));
    }
    let filter = narrowed(filter, q.user, q.session, q.tool)?;
    let (list, total) = state
        .blocking(move |s| Ok((s.list_approvals(&filter)?, s.count_approvals(&filter)?)))
        .await?;
    Ok(ok_json(wire::approvals_page(&list, total)))
}

pub(super) async fn get_approval(
    State(state): State<AppState>,
    Approver(_caller): Approver,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let inner = std::sync::Arc::clone(&state.inner);
    let body = state
        .blocking(move |s| {
            let Some(a) = s.get_approval(id)? else {
                return Ok(None);
            };
            // What the approver decides on: the arguments of the call that
            // asked (canonical, secrets redacted, escaped as JSON text),
            // why it was held, the approvers so far and what else the
            // session did.
            let gate = inner.gate.gate();
            let why = toolgate_store::approval_context(
                s,
                &a,
                gate.tool_limits(&a.tool),
                inner.clock.now(),
            )?;
            let risk = gate.registry().get(&a.tool).map(|t| t.risk().as_str());
            Ok(Some(toolgate_json::canonical::to_string(
                &toolgate_json::Value::Object(wire::approval_detail_object(&a, risk, &why)),
            )))
        })
        .await?;
    let body = body.ok_or_else(|| ApiError::not_found(format!("no approval {id}")))?;
    Ok(ok_json(body))
}

pub(super) async fn approve(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    // Approvals count by the person (the token's identity), not by token.
    decide_approval(&state, caller.identity, &id, body.as_ref(), true).await
}

pub(super) async fn deny(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_approval(&state, caller.identity, &id, body.as_ref(), false).await
}

/// Approves (`grant`) or denies approval `id` as `actor`, with the body's
/// optional note, and wakes the waiters.
async fn decide_approval(
    state: &AppState,
    actor: String,
    id: &str,
    body: Option<&toolgate_json::Value<'static>>,
    grant: bool,
) -> Result<Response, ApiError> {
    let id = approval_id(id)?;
    let note = wire::note(body)?;
    let a = state
        .blocking(move |s| {
            if grant {
                s.approve(id, &actor, &note)
            } else {
                s.deny(id, &actor, &note)
            }
        })
        .await?;
    state.inner.decided.notify_waiters();
    Ok(ok_json(wire::approval(&a)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitQuery {
    timeout: Option<f64>,
}

pub(super) async fn wait(
    State(state): State<AppState>,
    Waiter(caller): Waiter,
    parts: axum::http::request::Parts,
    Path(id): Path<String>,
    StrictQuery(q): StrictQuery<WaitQuery>,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let seconds = q.timeout.unwrap_or(30.0);
    let timeout = if seconds.is_finite() && seconds > 0.0 {
        Duration::try_from_secs_f64(seconds)
            .unwrap_or(MAX_WAIT)
            .min(MAX_WAIT)
    } else {
        Duration::ZERO
    };
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        // Registered before the read, so a decision in between wakes us.
        let notified = state.inner.decided.notified();
        let found = state.blocking(move |s| s.get_approval(id)).await?;
        let a = found.ok_or_else(|| ApiError::not_found(format!("no approval {id}")))?;
        if !caller.may_speak_for(&a.user) {
            return Err(auth::refuse_user(&state, &caller, &a.user, &parts).await);
        }
        if a.state != ApprovalState::Pending {
            return Ok(ok_json(wire::waited(&a, false)));
        }
        let now = tokio::time::Instant::now();
        let stopping = state
            .inner
            .stopping
            .load(std::sync::atomic::Ordering::SeqCst);
        if now >= deadline || stopping {
            return Ok(ok_json(wire::waited(&a, true)));
        }
        // Woken at once by a decision here or one the store pushes from
        // another replica; the poll catches what nobody pushed.
        let nap = (deadline - now).min(state.inner.store_poll);
        state.inner.approval_waits.send_modify(|n| *n += 1);
        let _ = tokio::time::timeout(nap, notified).await;
    }
}
