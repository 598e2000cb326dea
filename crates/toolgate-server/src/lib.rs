//! toolgate's HTTP decision service: `toolgate serve`.
//!
//! [`app`] builds the [`axum::Router`]; [`serve`] runs it on a listener with
//! graceful shutdown. Handlers are thin: an extractor checks the bearer
//! token and role ([`auth`]) and reads the body strictly ([`extract`]), the
//! handler calls the [`toolgate_store::StoreGate`] or the store on a blocking
//! thread, and [`wire`] writes the answer.
//!
//! | route | roles | answer |
//! |---|---|---|
//! | `POST /v1/decide` | agent, admin | the decisions, as `toolgate check --json` prints them (without `input`) |
//! | `POST /v1/results` (`{"tool", "result", "call_id"?, "session"?}`) | agent, admin | the sanitized result: `content`, `wrapped`, `changed`, `truncated`, `findings` (see [`results`]) |
//! | `GET /v1/approvals?state=pending\|approved\|denied\|expired\|all&limit=&before=&after=` | approver, admin | `{"approvals": […], "total"}`: without `after`, the newest first (`before=ID` pages back); with `after=ID`, the next ones oldest first; `total` counts every match (a pending approval past its expiry is `expired`, never `pending`) |
//! | `GET /v1/approvals/{id}` | approver, admin | the approval |
//! | `POST /v1/approvals/{id}/approve`, `…/deny` (optional `{"note"}`) | approver, admin | the approval |
//! | `GET /v1/approvals/{id}/wait?timeout=SECONDS` | any | the approval and `timed_out`, once decided, after the timeout (at most 60 s), or as the service stops |
//! | `GET /v1/kill`, `POST /v1/kill` (`{"mode", "reason"}`) | admin | the kill switch |
//! | `GET /v1/audit?user=&session=&tool=&verdict=&kind=&since=&until=&limit=&before=&after=` | admin | `{"records": […], "next_before", "next_after"}`, oldest first: the newest matching page, or the page before `before` / after `after` (a `seq`; the answer's cursor is the next page's) |
//! | `POST /v1/reload` | admin | re-reads the config file, policies, schemas and entities and swaps the gate atomically (see [`live`]); a bad config keeps the running one (`422 invalid_config`, saying what and where) |
//! | `GET /healthz`, `GET /readyz` | none | liveness, store readiness (503) |
//! | `GET /metrics` | none, or any token with `[server] metrics_auth = "token"` | Prometheus text (see [`metrics`]) |
//! | `GET /openapi.json` | none | the OpenAPI 3.1 document of every route above but `/ui/` ([`openapi`]) |
//! | `GET /ui/` and the page's own routes ([`ui`]) | a session from an approver or admin token | the approvals page |
//!
//! Every error is `{"error": {"code", "message", "pointer"}}`, with one of
//! the stable codes `invalid_json`, `duplicate_key`, `invalid_request`,
//! `unknown_field`, `invalid_query`, `unsupported_media_type`,
//! `payload_too_large`, `request_timeout`, `unauthorized`, `forbidden`,
//! `not_found`, `method_not_allowed`, `conflict`, `invalid_config`,
//! `store_unavailable`.
//!
//! `GET /v1/audit`'s `kind` is `decision` (`allow`, `deny`,
//! `needs_approval`), `approval` (`approval_granted`, `approval_denied`,
//! `approval_used`), `kill_switch`, `auth` (`unauthorized`, `forbidden`:
//! refused requests, see [`auth`]) or `reload` (`config_reload`); `since`
//! and `until` are Unix milliseconds (`[since, until)`).
//!
//! `/readyz` answers `503 store_unavailable` when the store does not answer
//! or cannot take a write ([`Store::ping`] commits a write to a probe row,
//! by the path an audit append takes: an immutable file, a full disk or a
//! lock held too long fail it); `POST /v1/decide` then denies every call
//! with `store_unavailable`: nothing is allowed without its audit record.
//! The probe runs at most once per [`READY_TTL`]; callers in between share
//! its answer, so an anonymous flood of `/readyz` is not a flood of
//! commits.
//!
//! Tokens and users: an agent token with `users` in its `[[server.token]]`
//! table may decide only for those users (the context's `user`) and wait
//! only on their approvals; anything else is `403 forbidden`, audited
//! (`forbidden`, reason `user`). A token without `users` speaks for any
//! user (the default).
//!
//! Slow clients: a request's headers must arrive within `[server]
//! header_timeout_seconds` (10 s; the connection is closed, as is an idle
//! keep-alive connection after as long), its body within
//! `body_timeout_seconds` (30 s; `408 request_timeout`). At most
//! `max_connections` (1024) connections are served at once; more wait in
//! the listener's backlog.

pub mod auth;
pub mod error;
pub mod extract;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod results;
pub mod ui;
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
use toolgate_store::StoreGate;
use toolgate_store::{
    ApprovalFilter, ApprovalId, ApprovalState, AuditFilter, Store, Timestamp, Verdict,
};

use crate::auth::{Admin, Agent, Approver, Waiter};
use crate::error::{json_response, ApiError};
use crate::extract::{MaybeJson, StrictJson, StrictQuery};
use crate::metrics::Metrics;

/// The longest a wait may last, whatever the client asks.
pub const MAX_WAIT: Duration = Duration::from_secs(60);
/// How often a wait re-reads the store (another process may decide).
const POLL: Duration = Duration::from_millis(200);
/// How long a readiness probe's answer is served before the store is
/// probed again.
pub const READY_TTL: Duration = Duration::from_millis(500);

/// An answer read from the store, kept for a while.
type Cached<T> = tokio::sync::Mutex<Option<(Instant, T)>>;

/// The service's state, shared by every request.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    gate: live::LiveGate,
    source: Option<live::Source>,
    reload_lock: tokio::sync::Mutex<()>,
    auth_failures: auth::FailureLimiter,
    tokens: Vec<ServerToken>,
    max_body_bytes: usize,
    header_timeout: Duration,
    body_timeout: Duration,
    max_connections: usize,
    metrics: Metrics,
    metrics_auth: toolgate::config::MetricsAuth,
    /// The gauges (pending approvals, kill switch mode) of the last scrape.
    gauges: Cached<(Option<u64>, Option<String>)>,
    /// The last readiness probe: `Err` holds the store's error code.
    ready: Cached<Result<(), &'static str>>,
    decided: tokio::sync::Notify,
    /// Set when [`serve`] begins its graceful shutdown: waits end early.
    stopping: std::sync::atomic::AtomicBool,
}

/// Why the service could not be built from a config.
pub type BuildError = Box<dyn std::error::Error + Send + Sync>;

impl AppState {
    /// The state over a store gate, with the `[server]` table's tokens and
    /// body cap.
    pub fn new(gate: StoreGate, server: &ServerConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                gate: live::LiveGate::new(gate),
                source: None,
                reload_lock: tokio::sync::Mutex::new(()),
                auth_failures: auth::FailureLimiter::default(),
                tokens: server.tokens().to_vec(),
                max_body_bytes: server.max_body_bytes(),
                header_timeout: server.header_timeout(),
                body_timeout: server.body_timeout(),
                max_connections: server.max_connections(),
                metrics: Metrics::default(),
                metrics_auth: server.metrics_auth(),
                gauges: tokio::sync::Mutex::new(None),
                ready: tokio::sync::Mutex::new(None),
                decided: tokio::sync::Notify::new(),
                stopping: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// The state as `toolgate check` builds its gate: the config's tools,
    /// limits, authorization and store (opened, created if needed).
    /// `POST /v1/reload` re-reads the config's file ([`Config::path`]).
    pub fn from_config(config: &Config) -> Result<Self, BuildError> {
        let gate = live::gate_from_config(config)?;
        let store = toolgate_store::open_config_store(config, toolgate_store::StoreOptions::new())?;
        let gate = StoreGate::new(gate, store).configured(config);
        let mut state = Self::new(gate, config.server());
        if let Some(inner) = Arc::get_mut(&mut state.inner) {
            inner.source = Some(live::Source {
                path: config.path().to_path_buf(),
                store_url: config.store().url().to_owned(),
                escalate_after: config.gate().escalate_after(),
            });
        }
        Ok(state)
    }

    /// The configured tokens.
    pub fn tokens(&self) -> &[ServerToken] {
        &self.inner.tokens
    }

    /// The request body cap.
    pub fn max_body_bytes(&self) -> usize {
        self.inner.max_body_bytes
    }

    /// How long a request's body may take to arrive.
    pub fn body_timeout(&self) -> Duration {
        self.inner.body_timeout
    }

    fn store(&self) -> Arc<dyn Store> {
        Arc::clone(self.inner.gate.store())
    }

    /// Runs `f` on the store on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, toolgate_store::Error> + Send + 'static,
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
        .route("/v1/results", post(results::results))
        .route("/v1/reload", post(live::reload))
        .route("/openapi.json", get(openapi::document))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(ui::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// Serves `app(state)` on `listener` (HTTP/1.1) until `shutdown` resolves:
/// it then stops accepting, lets every request in flight finish (a
/// decision's audit records are committed before its answer is written),
/// closes idle connections, and returns once every connection is closed.
///
/// Each connection has the header read timeout of the state's `[server]`
/// table; at most `max_connections` are served at once (the others wait in
/// the listener's backlog).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_timeout = state.inner.header_timeout;
    let max = state.inner.max_connections.max(1);
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        usize::try_from(all).unwrap_or(1),
    ));
    let router = app(state.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors, a connection reset before it
                    // was accepted…: the listener itself is fine.
                    eprintln!("toolgate serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let _ = stream.set_nodelay(true);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop.wait_for(|stopping| *stopping) => {}
            }
            // The request in flight (if any) finishes, then the connection
            // closes.
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    drop(listener);
    // Long-poll waits answer now (`timed_out`, the approval still pending)
    // instead of holding the shutdown for up to a minute.
    state
        .inner
        .stopping
        .store(true, std::sync::atomic::Ordering::SeqCst);
    state.inner.decided.notify_waiters();
    stop_tx.send_replace(true);
    // Every connection holds a permit until it is closed.
    let _all = permits.acquire_many(all).await;
    Ok(())
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

/// The time now, by the system clock (for records the service writes
/// itself).
pub(crate) fn now() -> Timestamp {
    use toolgate_store::Clock as _;
    toolgate_store::SystemClock::new().now()
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsQuery {
    state: Option<String>,
    limit: Option<u32>,
    after: Option<u64>,
    before: Option<u64>,
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
        "expired" => filter = filter.state(ApprovalState::Expired),
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                "`state` must be pending, approved, denied, expired or all",
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
    let (list, total) = state
        .blocking(move |s| Ok((s.list_approvals(&filter)?, s.count_approvals(&filter)?)))
        .await?;
    Ok(ok_json(wire::approvals_page(&list, total)))
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
    decide_approval(&state, caller.actor, &id, body.as_ref(), true).await
}

async fn deny(
    State(state): State<AppState>,
    Approver(caller): Approver,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_approval(&state, caller.actor, &id, body.as_ref(), false).await
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
struct WaitQuery {
    timeout: Option<f64>,
}

async fn wait(
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

/// The query of `GET /v1/audit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    limit: Option<u32>,
    before: Option<u64>,
    after: Option<u64>,
    user: Option<String>,
    session: Option<String>,
    tool: Option<String>,
    verdict: Option<String>,
    kind: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
}

/// The verdicts of an audit `kind`.
pub(crate) fn kind_verdicts(kind: &str) -> Option<&'static [Verdict]> {
    Some(match kind {
        "decision" => &[Verdict::Allow, Verdict::Deny, Verdict::NeedsApproval],
        "approval" => &[
            Verdict::ApprovalGranted,
            Verdict::ApprovalDenied,
            Verdict::ApprovalUsed,
        ],
        "kill_switch" => &[Verdict::KillSwitch],
        "auth" => &[Verdict::Unauthorized, Verdict::Forbidden],
        "reload" => &[Verdict::ConfigReload],
        _ => return None,
    })
}

/// The audit kinds `GET /v1/audit?kind=` accepts.
pub const AUDIT_KINDS: [&str; 5] = ["decision", "approval", "kill_switch", "auth", "reload"];

fn invalid_query(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", message)
}

/// `GET /v1/audit`: without a cursor, the newest page; `before=SEQ` pages
/// back (the page's first `seq` is the next cursor), `after=SEQ` pages
/// forward; both filter, so pages never assume gapless numbers.
async fn audit(
    State(state): State<AppState>,
    Admin(_caller): Admin,
    StrictQuery(q): StrictQuery<AuditQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let mut filter = AuditFilter::new().limit(limit);
    if let Some(v) = q.verdict.as_deref() {
        let v = Verdict::parse(v).ok_or_else(|| {
            invalid_query(format!("`verdict`: no verdict `{}`", v.escape_debug()))
        })?;
        filter = filter.verdict(v);
    }
    if let Some(k) = q.kind.as_deref() {
        let verdicts = kind_verdicts(k).ok_or_else(|| {
            invalid_query(format!("`kind` must be one of {}", AUDIT_KINDS.join(", ")))
        })?;
        filter = filter.verdicts(verdicts.iter().copied());
    }
    for (name, value) in [
        ("user", &q.user),
        ("session", &q.session),
        ("tool", &q.tool),
    ] {
        if value.as_deref().is_some_and(str::is_empty) {
            return Err(invalid_query(format!("`{name}` must not be empty")));
        }
    }
    if let Some(u) = q.user {
        filter = filter.user(u);
    }
    if let Some(s) = q.session {
        filter = filter.session(s);
    }
    if let Some(t) = q.tool {
        filter = filter.tool(t);
    }
    filter.since = q.since.map(Timestamp::from_unix_millis);
    filter.until = q.until.map(Timestamp::from_unix_millis);
    // Sequence numbers fit SQLite's signed integers.
    let max_seq = u64::try_from(i64::MAX).unwrap_or(u64::MAX);
    for (name, value) in [("before", q.before), ("after", q.after)] {
        if value.is_some_and(|v| v > max_seq) {
            return Err(invalid_query(format!("`{name}` is too large")));
        }
    }
    filter.after = q.after;
    filter.before = q.before;
    let backward = q.after.is_none();
    if backward {
        filter = filter.newest_first();
    }
    let records = state.blocking(move |s| s.list(&filter)).await?;
    let full = records.len() >= usize::try_from(limit).unwrap_or(usize::MAX);
    let next_before = if backward && full {
        records.first().map(|r| r.seq)
    } else {
        None
    };
    let next_after = if !backward && full {
        records.last().map(|r| r.seq)
    } else {
        None
    };
    Ok(ok_json(wire::audit_page(&records, next_before, next_after)))
}

async fn healthz() -> Response {
    ok_json("{\"status\":\"ok\"}".to_owned())
}

async fn readyz(State(state): State<AppState>) -> Response {
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

/// The gauges, read from the store at most once per [`metrics::GAUGE_TTL`]
/// (one count of unexpired pending approvals, the kill switch).
async fn gauges(state: &AppState) -> (Option<u64>, Option<String>) {
    let mut last = state.inner.gauges.lock().await;
    if let Some((at, g)) = &*last {
        if at.elapsed() < metrics::GAUGE_TTL {
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

async fn metrics(State(state): State<AppState>, parts: axum::http::request::Parts) -> Response {
    if state.inner.metrics_auth == toolgate::config::MetricsAuth::Token {
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

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "the route does not take this method",
    )
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}
