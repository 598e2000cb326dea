//! `/v1/kill`: read and set the kill switch.

use axum::extract::State;
use axum::response::Response;

use super::ok_json;
use crate::auth::Admin;
use crate::error::ApiError;
use crate::extract::StrictJson;
use crate::state::AppState;
use crate::wire;

pub(super) async fn get_kill(
    State(state): State<AppState>,
    Admin(_caller): Admin,
) -> Result<Response, ApiError> {
    let k = state.blocking(|s| s.kill_switch()).await?;
    Ok(ok_json(wire::kill(&k)))
}

pub(super) async fn set_kill(
    State(state): State<AppState>,
    Admin(caller): Admin,
    StrictJson(value): StrictJson,
) -> Result<Response, ApiError> {
    let req = wire::KillRequest::from_value(&value)?;
    let k = state
        .blocking(move |s| s.set_kill_switch(req.mode, &req.reason, &caller.actor))
        .await?;
    Ok(ok_json(wire::kill(&k)))
}
