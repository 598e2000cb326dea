//! `/v1/pins`: the tool definitions MCP servers showed `toolgate mcp`,
//! pinned per upstream (issue 17); list and read them with the diff from
//! the approved definition, approve or reject them. Authorized like
//! approvals (approver or admin); each decision is audited
//! (`pin_approved`, `pin_rejected`) with the caller's identity as actor.

use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use toolgate_store::{approved_before, PinFilter, PinId, PinState, Store, ToolPin};

use super::{invalid_query, ok_json};
use crate::auth::Approver;
use crate::error::ApiError;
use crate::extract::{MaybeJson, StrictQuery};
use crate::state::AppState;
use crate::wire;

pub(crate) fn pin_id(raw: &str) -> Result<PinId, ApiError> {
    raw.parse()
        .ok()
        .filter(|id: &PinId| i64::try_from(id.get()).is_ok())
        .ok_or_else(|| ApiError::not_found(format!("no pin `{}`", raw.escape_debug())))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PinsQuery {
    state: Option<String>,
    upstream: Option<String>,
    tool: Option<String>,
    limit: Option<u32>,
    after: Option<u64>,
}

/// Each pin with the definition approved before it.
pub(crate) fn with_before(
    s: &dyn Store,
    pins: Vec<ToolPin>,
) -> Result<Vec<(ToolPin, Option<ToolPin>)>, toolgate_store::Error> {
    pins.into_iter()
        .map(|p| {
            let before = approved_before(s, &p)?;
            Ok((p, before))
        })
        .collect()
}

pub(super) async fn list_pins(
    State(state): State<AppState>,
    Approver(_caller): Approver,
    StrictQuery(q): StrictQuery<PinsQuery>,
) -> Result<Response, ApiError> {
    let mut filter = PinFilter::new().limit(q.limit.unwrap_or(100).clamp(1, 1000));
    match q.state.as_deref().unwrap_or("pending") {
        "all" => {}
        s => match PinState::parse(s) {
            Some(s) => filter = filter.state(s),
            None => {
                return Err(invalid_query(
                    "`state` must be pending, approved, rejected or all",
                ))
            }
        },
    }
    if let Some(u) = q.upstream {
        filter = filter.upstream(u);
    }
    if let Some(t) = q.tool {
        filter = filter.tool(t);
    }
    if let Some(after) = q.after {
        if i64::try_from(after).is_err() {
            return Err(invalid_query("`after` is too large"));
        }
        filter = filter.after(PinId::new(after));
    }
    let items = state
        .blocking(move |s| with_before(s, s.list_pins(&filter)?))
        .await?;
    Ok(ok_json(wire::pins_page(&items)))
}

pub(super) async fn get_pin(
    State(state): State<AppState>,
    Approver(_caller): Approver,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = pin_id(&id)?;
    let found = state
        .blocking(move |s| match s.get_pin(id)? {
            Some(p) => {
                let before = approved_before(s, &p)?;
                Ok(Some((p, before)))
            }
            None => Ok(None),
        })
        .await?;
    let (p, before) = found.ok_or_else(|| ApiError::not_found(format!("no pin {id}")))?;
    Ok(ok_json(wire::pin(&p, before.as_ref())))
}

pub(super) async fn approve_pin(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_pin(&state, caller.actor, &id, body.as_ref(), true).await
}

pub(super) async fn reject_pin(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_pin(&state, caller.actor, &id, body.as_ref(), false).await
}

/// Approves or rejects pin `id` as `actor`, with the body's optional note.
pub(crate) async fn decide_pin(
    state: &AppState,
    actor: String,
    id: &str,
    body: Option<&toolgate_json::Value<'static>>,
    approve: bool,
) -> Result<Response, ApiError> {
    let id = pin_id(id)?;
    let note = wire::note(body)?;
    let p = state
        .blocking(move |s| {
            if approve {
                s.approve_pin(id, &actor, &note)
            } else {
                s.reject_pin(id, &actor, &note)
            }
        })
        .await?;
    Ok(ok_json(wire::pin(&p, None)))
}
