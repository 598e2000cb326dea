//! `GET /healthz` (liveness) and `GET /readyz` (the store can take a
//! write).

use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use tokio::time::Instant;

use super::ok_json;
use crate::error::ApiError;
use crate::state::AppState;

/// How long a readiness probe's answer is served before the store is
/// probed again.
pub const READY_TTL: Duration = Duration::from_millis(500);

pub(super) async fn healthz() -> Response {
    ok_json("{\"status\":\"ok\"}".to_owned())
}

pub(super) async fn readyz(State(state): State<AppState>) -> Response {
    let verdict = {
        let mut last = state.inner.ready.lock().await;
        match &*last {
            Some((at, v)) if at.elapsed() < READY_TTL => *v,
            _ => {
                let v = state.blocking(|s| s.ping()).await.map_err(|e| e.code());
                *last = Some((Instant::now(), v));
                v
            }
        }
    };
    match verdict {
        Ok(()) => ok_json("{\"status\":\"ready\"}".to_owned()),
        Err(code) => ApiError::store_unavailable(format!("the store cannot take a write: {code}"))
            .into_response(),
    }
}
