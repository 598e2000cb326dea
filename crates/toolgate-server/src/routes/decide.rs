//! `POST /v1/decide`: the gate's decisions on a model response, each
//! audited before the answer is written.

use std::sync::Arc;
use std::time::Instant;

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
    let started = Instant::now();
    let gate = state.inner.gate.current();
    let decisions = if gate.store().quick_reads() {
        decide_here(gate, request).await?
    } else {
        decide_blocking(gate, request).await?
    };
    let m = &state.inner.metrics;
    m.latency(started.elapsed());
    if decisions.decisions().is_empty() {
        m.decision(decisions.verdict().as_str(), "", true);
    }
    let gate = state.inner.gate.gate();
    for d in decisions.decisions() {
        let configured = gate.registry().get(d.tool()).is_some();
        m.decision(d.verdict().as_str(), d.tool(), configured);
    }
    Ok(ok_json(wire::decisions(&decisions)))
}

/// Decides on this runtime thread, reading the store, and awaits the
/// audit record's commit without blocking the thread (one record: the
/// store's committer thread answers); falls back to a blocking thread when
/// the decision needs other writes first or several records.
async fn decide_here(
    gate: Arc<toolgate_store::StoreGate>,
    request: wire::DecideRequest,
) -> Result<toolgate::Decisions, ApiError> {
    let Some(mut unrecorded) =
        gate.decide_unrecorded(request.body.as_bytes(), request.format, &request.context)
    else {
        return decide_blocking(gate, request).await;
    };
    let entries = unrecorded.take_entries();
    let committed = match <[toolgate_store::AuditEntry; 1]>::try_from(entries) {
        Ok([entry]) => {
            let (tx, rx) = tokio::sync::oneshot::channel();
            gate.store().append_deferred(
                entry,
                Box::new(move |result| {
                    // The request may have gone; its record is committed
                    // all the same.
                    let _ignored = tx.send(result.is_ok());
                }),
            );
            // A dropped callback means the record was not committed.
            rx.await.unwrap_or(false)
        }
        Err(entries) if entries.is_empty() => true,
        Err(entries) => {
            let store = Arc::clone(gate.store());
            tokio::task::spawn_blocking(move || store.append_all(entries).is_ok())
                .await
                .unwrap_or(false)
        }
    };
    Ok(gate.finish(unrecorded, committed))
}

/// Decides and records on a blocking thread.
async fn decide_blocking(
    gate: Arc<toolgate_store::StoreGate>,
    request: wire::DecideRequest,
) -> Result<toolgate::Decisions, ApiError> {
    tokio::task::spawn_blocking(move || {
        gate.decide_and_record(request.body.as_bytes(), request.format, &request.context)
    })
    .await
    .map_err(|_| ApiError::store_unavailable("the decision did not finish"))
}
