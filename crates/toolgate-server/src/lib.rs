//! toolgate's HTTP decision service: `toolgate serve`.
//!
//! [`app`] builds the [`axum::Router`]; [`serve`] runs it on a listener with
//! graceful shutdown. Handlers are thin: an extractor checks the bearer
//! token and role ([`auth`]) and reads the body strictly ([`extract`]), the
//! handler calls the [`toolgate::StoreGate`] or the store on a blocking
//! thread, and [`wire`] writes the answer.
//!
//! | route | roles | answer |
//! |---|---|---|
//! | `POST /v1/decide` | agent, admin | the decisions, as `toolgate check --json` prints them (without `input`) |
//! | `GET /v1/approvals?state=pending\|approved\|denied\|all&limit=&after=` | approver, admin | `{"approvals": […]}` |
//! | `GET /v1/approvals/{id}` | approver, admin | the approval |
//! | `POST /v1/approvals/{id}/approve`, `…/deny` (optional `{"note"}`) | approver, admin | the approval |
//! | `GET /v1/approvals/{id}/wait?timeout=SECONDS` | any | the approval and `timed_out`, once decided or after the timeout (at most 60 s) |
//! | `GET /v1/kill`, `POST /v1/kill` (`{"mode", "reason"}`) | admin | the kill switch |
//! | `GET /v1/audit?limit=&before=` | admin | `{"records": […], "next_before"}`, oldest first |
//! | `GET /healthz`, `GET /readyz`, `GET /metrics` | none | liveness, store reachability (503), Prometheus text |
//!
//! Every error is `{"error": {"code", "message", "pointer"}}`, with one of
//! the stable codes `invalid_json`, `duplicate_key`, `invalid_request`,
//! `unknown_field`, `invalid_query`, `unsupported_media_type`,
//! `payload_too_large`, `unauthorized`, `forbidden`, `not_found`,
//! `conflict`, `store_unavailable`.

pub mod auth;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod wire;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use toolgate::config::{Config, ServerConfig, ServerToken};
use toolgate::store::{
    ApprovalFilter, ApprovalId, ApprovalState, AuditFilter, SqliteOptions, Store,
};
use toolgate::{Gate, StoreGate};

use crate::auth::{Admin, Agent, Approver, Waiter};
use crate::error::{json_response, ApiError};
use crate::extract::{MaybeJson, StrictJson, StrictQuery};
use crate::metrics::Metrics;

/// The longest a wait may last, whatever the client asks.
pub const MAX_WAIT: Duration = Duration::from_secs(60);
/// How often a wait re-reads the store (another process may decide).
const POLL: Duration = Duration::from_millis(200);

/// The service's state, shared by every request.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    gate: StoreGate,
    tokens: Vec<ServerToken>,
    max_body_bytes: usize,
    metrics: Metrics,
    decided: tokio::sync::Notify,
}

/// Why the service could not be built from a config.
pub type BuildError = Box<dyn std::error::Error + Send + Sync>;

impl AppState {
    /// The state over a store gate, with the `[server]` table's tokens and
    /// body cap.
    pub fn new(gate: StoreGate, server: &ServerConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                gate,
                tokens: server.tokens().to_vec(),
                max_body_bytes: server.max_body_bytes(),
                metrics: Metrics::default(),
                decided: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The state as `toolgate check` builds its gate: the config's tools,
    /// limits, authorization and store (opened, created if needed).
    pub fn from_config(config: &Config) -> Result<Self, BuildError> {
        let g = config.gate();
        let authorizer = toolgate::authz::from_config(config)?;
        let gate = Gate::builder(config.registry().clone())
            .max_turns(g.max_turns())
            .max_calls_per_response(
                usize::try_from(g.max_calls_per_response()).unwrap_or(usize::MAX),
            )
            .authorizer(authorizer)
            .build()?;
        let store = toolgate::open_config_store(config, SqliteOptions::new())?;
        let gate =
            StoreGate::new(gate, Arc::new(store)).with_approval_expiry(config.approvals().expiry());
        Ok(Self::new(gate, config.server()))
    }

    /// The configured tokens.
    pub fn tokens(&self) -> &[ServerToken] {
        &self.inner.tokens
    }

    /// The request body cap.
    pub fn max_body_bytes(&self) -> usize {
        self.inner.max_body_bytes
    }

    fn store(&self) -> Arc<dyn Store> {
        Arc::clone(self.inner.gate.store())
    }

    /// Runs `f` on the store on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, toolgate::store::Error> + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = self.store();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|_| ApiError::store_unavailable("the store call did not finish"))?
            .map_err(ApiError::from)
    }
}

/// The router with every route of the service.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/v1/decide", post(decide))
        .route("/v1/approvals", get(list_approvals))
        .route("/v1/approvals/{id}", get(get_approval))
        .route("/v1/approvals/{id}/approve", post(approve))
        .route("/v1/approvals/{id}/deny", post(deny))
        .route("/v1/approvals/{id}/wait", get(wait))
        .route("/v1/kill", get(get_kill).post(set_kill))
        .route("/v1/audit", get(audit))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .with_state(state)
}

/// Serves `app(state)` on `listener` until `shutdown` resolves; requests in
/// flight then finish before it returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

fn ok_json(body: String) -> Response {
    json_response(StatusCode::OK, body)
}

fn approval_id(raw: &str) -> Result<ApprovalId, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(format!("no approval `{}`", raw.escape_debug())))
}

async fn decide(
    State(state): State<AppState>,
    Agent(_caller): Agent,
    StrictJson(value): StrictJson,
) -> Result<Response, ApiError> {
    let request = wire::DecideRequest::from_value(&value)?;
    let started = Instant::now();
    let inner = Arc::clone(&state.inner);
    let decisions = tokio::task::spawn_blocking(move || {
        inner
            .gate
            .decide_and_record(request.body.as_bytes(), request.format, &request.context)
    })
    .await
    .map_err(|_| ApiError::store_unavailable("the decision did not finish"))?;
    let m = &state.inner.metrics;
    m.latency(started.elapsed());
    if decisions.decisions.is_empty() {
        m.decision(decisions.verdict().as_str(), "");
    }
    for d in &decisions.decisions {
        m.decision(d.verdict.as_str(), &d.tool);
    }
    Ok(ok_json(wire::decisions(&decisions)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsQuery {
    state: Option<String>,
    limit: Option<u32>,
    after: Option<u64>,
}

async fn list_approvals(
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
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                "`state` must be pending, approved, denied or all",
            ))
        }
    }
    if let Some(after) = q.after {
        filter = filter.after(ApprovalId::new(after));
    }
    let list = state.blocking(move |s| s.list_approvals(&filter)).await?;
    Ok(ok_json(wire::approvals(&list)))
}

async fn get_approval(
    State(state): State<AppState>,
    Approver(_caller): Approver,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let found = state.blocking(move |s| s.get_approval(id)).await?;
    let a = found.ok_or_else(|| ApiError::not_found(format!("no approval {id}")))?;
    Ok(ok_json(wire::approval(&a)))
}

async fn approve(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let note = wire::note(body.as_ref())?;
    let a = state
        .blocking(move |s| s.approve(id, &caller.actor, &note))
        .await?;
    state.inner.decided.notify_waiters();
    Ok(ok_json(wire::approval(&a)))
}

async fn deny(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let note = wire::note(body.as_ref())?;
    let a = state
        .blocking(move |s| s.deny(id, &caller.actor, &note))
        .await?;
    state.inner.decided.notify_waiters();
    Ok(ok_json(wire::approval(&a)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitQuery {
    timeout: Option<f64>,
}

async fn wait(
    State(state): State<AppState>,
    Waiter(_caller): Waiter,
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
        if a.state != ApprovalState::Pending {
            return Ok(ok_json(wire::waited(&a, false)));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(ok_json(wire::waited(&a, true)));
        }
        let nap = (deadline - now).min(POLL);
        let _ = tokio::time::timeout(nap, notified).await;
    }
}

async fn get_kill(
    State(state): State<AppState>,
    Admin(_caller): Admin,
) -> Result<Response, ApiError> {
    let k = state.blocking(|s| s.kill_switch()).await?;
    Ok(ok_json(wire::kill(&k)))
}

async fn set_kill(
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    limit: Option<u32>,
    before: Option<u64>,
}

async fn audit(
    State(state): State<AppState>,
    Admin(_caller): Admin,
    StrictQuery(q): StrictQuery<AuditQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let records = match q.before {
        None => state.blocking(move |s| s.tail(limit)).await?,
        Some(before) => {
            // Sequence numbers are dense from 1: the page before `before`
            // is the `limit` records after `before - limit - 1`.
            let first = before.saturating_sub(u64::from(limit)).max(1);
            let count = u32::try_from(before.saturating_sub(first)).unwrap_or(limit);
            if count == 0 {
                Vec::new()
            } else {
                let filter = AuditFilter::new().after(first - 1).limit(count);
                state.blocking(move |s| s.list(&filter)).await?
            }
        }
    };
    Ok(ok_json(wire::audit_page(&records)))
}

async fn healthz() -> Response {
    ok_json("{\"status\":\"ok\"}".to_owned())
}

async fn readyz(State(state): State<AppState>) -> Response {
    match state.blocking(|s| s.kill_switch()).await {
        Ok(_) => ok_json("{\"status\":\"ready\"}".to_owned()),
        Err(e) => ApiError::store_unavailable(format!("the store is unreachable: {}", e.code()))
            .into_response(),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let pending = state
        .blocking(|s| {
            s.list_approvals(
                &ApprovalFilter::new()
                    .state(ApprovalState::Pending)
                    .limit(100_000),
            )
        })
        .await
        .ok()
        .map(|l| u64::try_from(l.len()).unwrap_or(u64::MAX));
    let kill = state.blocking(|s| s.kill_switch()).await.ok();
    let text = state
        .inner
        .metrics
        .render(pending, kill.as_ref().map(|k| k.mode.as_str()));
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}
