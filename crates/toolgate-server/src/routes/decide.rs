//! `POST /v1/decide`: the gate's decisions on a model response, each
//! audited before the answer is written.

use std::time::{Instant, SystemTime};

use axum::extract::State;
use axum::response::Response;

use super::ok_json;
use crate::auth::{self, Agent};
use crate::error::ApiError;
use crate::extract::StrictJson;
use crate::state::AppState;
use crate::wire;

pub(super) async fn decide(
    State(state): State<AppState>,
    Agent(caller): Agent,
    parts: axum::http::request::Parts,
    StrictJson(value): StrictJson,
) -> Result<Response, ApiError> {
    let request = wire::DecideRequest::from_value(&value)?;
    if !caller.may_speak_for(&request.context.user) {
        return Err(auth::refuse_user(&state, &caller, &request.context.user, &parts).await);
    }
    let span = state.inner.telemetry().request("decide", &parts.headers);
    span.attribute("url.path", "/v1/decide");
    let started = Instant::now();
    let decided_from = SystemTime::now();
    let gate = state.inner.gate.current();
    // The token that asks: its pending approvals are capped, whatever
    // users it names (`[approvals] max_pending_per_token`).
    let mut context = request.context;
    context.requester = Some(caller.actor.clone());
    // Decided once, audited before the answer: the store gate's one async
    // entry point.
    let decisions = gate
        .decide_async(request.body.into_bytes(), request.format, context)
        .await
        .map_err(|e| {
            span.error("store_unavailable");
            ApiError::store_unavailable(e.to_string())
        })?;
    span.decisions("api", &decisions, decided_from);
    let m = &state.inner.metrics;
    m.latency(started.elapsed());
    if decisions.decisions().is_empty() {
        m.decision(decisions.verdict().as_str(), "", true);
    }
    let gate = state.inner.gate.gate();
    for d in decisions.decisions() {
        let configured = gate.registry().get(d.tool()).is_some();
        m.decision(d.verdict().as_str(), d.tool(), configured);
        if d.verdict() == toolgate::Verdict::NeedsApproval {
            // The notices go out off this path (`notify::run`).
            state.inner.held.notify_one();
        }
        if let (false, Some(r)) = (d.verdict() == toolgate::Verdict::Allow, d.reasons().first()) {
            m.code(r.code.as_str());
        }
    }
    if let Some(r) = decisions.rejected() {
        m.code(r.code.as_str());
    }
    Ok(ok_json(wire::decisions(&decisions)))
}
