//! `GET /metrics`: the Prometheus text, with the gauges read from the store
//! at most once per [`GAUGE_TTL`].

use std::time::Instant;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use toolgate_store::{ApprovalFilter, ApprovalState};

use crate::auth;
use crate::metrics::GAUGE_TTL;
use crate::state::AppState;

/// The gauges, read from the store at most once per [`GAUGE_TTL`]
/// (one count of unexpired pending approvals, the kill switch), and afresh
/// after the store pushed a kill switch flip.
async fn gauges(state: &AppState) -> (Option<u64>, Option<String>) {
    let mut last = state.inner.gauges.lock().await;
    // A kill switch flip the store pushed makes them stale at once.
    let stale = state
        .inner
        .gauges_stale
        .swap(false, std::sync::atomic::Ordering::SeqCst);
    if let Some((at, g)) = &*last {
        if at.elapsed() < GAUGE_TTL && !stale {
            return g.clone();
        }
    }
    let pending = state
        .blocking(|s| s.count_approvals(&ApprovalFilter::new().state(ApprovalState::Pending)))
        .await
        .ok();
    let kill = state
        .blocking(|s| s.kill_switch())
        .await
        .ok()
        .map(|k| k.mode.as_str().to_owned());
    let g = (pending, kill);
    *last = Some((Instant::now(), g.clone()));
    g
}

pub(super) async fn metrics(
    State(state): State<AppState>,
    parts: axum::http::request::Parts,
) -> Response {
    if state.server().metrics_auth() == toolgate::config::MetricsAuth::Token {
        if let Err(e) = auth::any_token(&parts, &state).await {
            return e.into_response();
        }
    }
    let (pending, kill) = gauges(&state).await;
    let text = state.inner.metrics.render(pending, kill.as_deref());
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}
