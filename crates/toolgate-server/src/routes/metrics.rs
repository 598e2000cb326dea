//! `GET /metrics`: the Prometheus text, with the gauges read from the store
//! at most once per [`GAUGE_TTL`].

use std::sync::atomic::Ordering;
use tokio::time::Instant;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use toolgate_store::{ApprovalFilter, ApprovalState};

use crate::auth;
use crate::metrics::{render_limits, Gauges, LimitGauge, GAUGE_TTL};
use crate::state::AppState;
use toolgate::limit::{Amount, Limit, Scope};

/// The gauges, read from the store at most once per [`GAUGE_TTL`]
/// (one count of unexpired pending approvals, the kill switch), and afresh
/// after the store pushed a kill switch flip.
async fn gauges(state: &AppState) -> Gauges {
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
    let oldest = state
        .blocking(|s| {
            s.list_approvals(&ApprovalFilter::new().state(ApprovalState::Pending).limit(1))
        })
        .await
        .ok()
        .map(|a| {
            a.first().map_or(0, |a| {
                let now = state.now().unix_seconds();
                u64::try_from(now.saturating_sub(a.created_at.unix_seconds())).unwrap_or(0)
            })
        });
    let kill = state
        .blocking(|s| s.kill_switch())
        .await
        .ok()
        .map(|k| k.mode.as_str().to_owned());
    let g = Gauges {
        pending,
        oldest_pending_seconds: oldest,
        kill_mode: kill,
    };
    *last = Some((Instant::now(), g.clone()));
    g
}

/// The `[[limit]]` gauges of the gate in force, the usage of its `global`
/// limits read from the store at most once per [`GAUGE_TTL`].
async fn limit_gauges(state: &AppState) -> Vec<LimitGauge> {
    let mut last = state.inner.limit_gauges.lock().await;
    if let Some((at, g)) = &*last {
        if at.elapsed() < GAUGE_TTL {
            return g.clone();
        }
    }
    let gate = state.inner.gate.current();
    let mut limits: Vec<Limit> = Vec::new();
    for tool in gate.gate().registry().iter() {
        for l in gate.gate().tool_limits(tool.name()) {
            if !limits.iter().any(|k| k.name == l.name) {
                limits.push(l.clone());
            }
        }
    }
    limits.sort_by(|a, b| a.name.cmp(&b.name));
    let now = gate.now();
    let mut out = Vec::with_capacity(limits.len());
    for l in limits {
        let used = if l.scope == Scope::Global {
            let key = l.key("", "", None);
            let window = i64::try_from(l.window_ms()).unwrap_or(i64::MAX);
            let since = toolgate_store::Timestamp::from_unix_millis(
                now.unix_millis().saturating_sub(window),
            );
            state
                .blocking(move |s| s.limit_events(&key, since))
                .await
                .ok()
                .and_then(|events| {
                    events
                        .iter()
                        .try_fold(Amount::ZERO, |sum, (_, a)| sum.checked_add(*a))
                })
                .map(|a| a.to_string())
        } else {
            None
        };
        out.push(LimitGauge {
            cap: l.cap().to_string(),
            per: l.scope.as_str(),
            window_seconds: l.window_seconds,
            name: l.name,
            used,
        });
    }
    *last = Some((Instant::now(), out.clone()));
    out
}

pub(super) async fn metrics(
    State(state): State<AppState>,
    parts: axum::http::request::Parts,
) -> Response {
    if state.server().metrics_auth() == toolgate_edge::config::MetricsAuth::Token {
        if let Err(e) = auth::any_token(&parts, &state).await {
            return e.into_response();
        }
    }
    let g = gauges(&state).await;
    let mut text = state.inner.metrics.render(&g);
    crate::metrics::render_telemetry(&mut text, state.inner.telemetry());
    if state.inner.notify.is_some() {
        crate::metrics::render_notices(
            &mut text,
            state.inner.notices_dropped.load(Ordering::Relaxed),
            state.inner.notices_pending.load(Ordering::Relaxed),
        );
    }
    text.push_str(&render_limits(&limit_gauges(&state).await));
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}
