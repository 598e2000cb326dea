//! The stdio proxy: two pumps, client → server and server → client, each
//! reading frames strictly, with the gate on `tools/call` and the pins on
//! `tools/list`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use toolgate::authz::Narrowed;
use toolgate::{Format, Verdict};
use toolgate_json::{canonical, Object, ParseOptions, Value};
use toolgate_store::{ApprovalId, StoreGate};

use crate::frame::{self, Line, Message, RequestId};
use crate::pins;
use crate::results::{self, OutputSchema};

mod answers;
mod catalogs;
mod continuation;
mod hold;
mod mrtr;
mod pinning;
mod pumps;
mod reads;
mod traces;

use self::pumps::{client_pump, server_pump, write_lines};

use hold::Held;
pub(crate) use traces::HttpTraces;

/// The proxy's limits (`[mcp]`: `max_frame_bytes`, `call_timeout_seconds`,
/// `max_result_bytes`, `hold_seconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyOptions {
    max_frame_bytes: usize,
    call_timeout: Duration,
    max_result_bytes: usize,
    hold: Duration,
}

impl ProxyOptions {
    /// The `[mcp]` table's limits.
    pub fn from_config(config: &toolgate_edge::config::McpConfig) -> Self {
        Self {
            max_frame_bytes: config.max_frame_bytes(),
            call_timeout: config.call_timeout(),
            max_result_bytes: config.max_result_bytes(),
            hold: config.hold(),
        }
    }

    /// Replaces the time a forwarded call may take.
    #[must_use]
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self::from_config(&toolgate_edge::config::McpConfig::default())
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// The client closed its side (end of its stream).
    ClientClosed,
    /// The server closed its side (it exited, or closed its output): every
    /// pending request was answered with an error.
    ServerClosed,
}

/// The proxy between one client and one server: the store gate that decides
/// every `tools/call`, the user and session calls are decided as, and the
/// limits. Built once; [`Proxy::run`] serves one connection.
pub struct Proxy {
    shared: Arc<Shared>,
}

/// Cancels the live calls of a running [`Proxy`] (an HTTP session that
/// ends): each is withdrawn as if its client had cancelled it.
#[derive(Clone)]
pub(crate) struct Canceller(Arc<Shared>);

impl Canceller {
    /// Cancels every live call; returns once their approvals are withdrawn.
    pub(crate) async fn cancel_all(&self, why: &'static str) {
        self.0.cancel_all(why).await;
    }
}

/// What both pumps share.
struct Shared {
    gate: Arc<StoreGate>,
    user: String,
    session: String,
    options: ProxyOptions,
    parse: ParseOptions,
    state: Mutex<State>,
    /// `input_required` for 2026-07-28 clients, when an approvals page is
    /// configured ([`Proxy::with_approvals_url`]).
    mrtr: std::sync::OnceLock<mrtr::Mrtr>,
    /// Woken when the last live call ended.
    idle: tokio::sync::Notify,
    /// Audit records of refused frames, aggregated.
    refusals: Arc<crate::refusals::Refusals>,
    /// Traces, OTLP metrics and the decision log ([`Proxy::with_telemetry`]).
    telemetry: std::sync::OnceLock<toolgate_telemetry::Telemetry>,
    /// The trace headers of the HTTP requests that brought calls, by the
    /// call's id ([`HttpTraces`]).
    http_traces: Mutex<HashMap<RequestId, axum::http::HeaderMap>>,
}

/// The proxy's memory for one connection.
#[derive(Default)]
struct State {
    /// Client requests forwarded and not answered yet.
    pending: HashMap<RequestId, Pending>,
    /// The tool pins' memory of the run.
    catalog: pinning::Catalog,
    /// The tools as the user may call them, when `tools/list` is narrowed.
    narrowed: Option<Narrowed>,
    /// Retries a server asked for of calls a human approved ([`continuation`]).
    continuations: Vec<continuation::Continuation>,
    /// The declared `outputSchema`s of the latest list, by tool.
    outputs: HashMap<String, Arc<OutputSchema>>,
    /// Client calls not yet forwarded or answered ([`hold`]).
    live: HashMap<RequestId, Arc<hold::CallCtl>>,
    /// Server requests forwarded to the client and not answered yet: only
    /// an answer to one of these reaches the server, once (at most
    /// [`MAX_SERVER_REQUESTS`]).
    server_pending: std::collections::HashSet<RequestId>,
}

/// The most server requests a connection keeps waiting on the client; a
/// server request beyond it is answered with an error.
pub(crate) const MAX_SERVER_REQUESTS: usize = 256;

/// The most client requests a connection keeps in flight (forwarded and
/// not answered, or calls not decided yet); a request beyond it is
/// answered with an error and never forwarded.
pub(crate) const MAX_IN_FLIGHT: usize = 1024;

/// What a forwarded client request was.
#[derive(Debug, Clone)]
enum Pending {
    /// The client's `tools/list`; `paged`: it asked for a page after the
    /// first.
    List {
        paged: bool,
    },
    /// The proxy's own `tools/list` (after `list_changed`, or before a
    /// call when no catalog of the run is fresh).
    OwnList,
    Call {
        tool: String,
        call_id: String,
        /// Let through by a human's approval, with the digest of its
        /// canonical arguments: a server's `input_required` for it makes
        /// its retry a continuation ([`continuation`]).
        approved: Option<toolgate_json::canonical::Digest>,
    },
    /// A request whose answer is read before it passes ([`reads`]).
    Read(reads::Read),
    Other,
}

/// A line for one side, or the end of that side.
enum Out {
    Line(String),
    Close,
}

impl Proxy {
    /// A proxy deciding with `gate` as `user` in `session`.
    pub fn new(
        gate: StoreGate,
        user: impl Into<String>,
        session: impl Into<String>,
        options: ProxyOptions,
    ) -> Self {
        Self::with_gate(Arc::new(gate), user, session, options)
    }

    /// A proxy deciding with a gate shared with other proxies (one per
    /// session of `toolgate mcp --listen`), as `user` in `session`.
    pub fn with_gate(
        gate: Arc<StoreGate>,
        user: impl Into<String>,
        session: impl Into<String>,
        options: ProxyOptions,
    ) -> Self {
        let refusals = crate::refusals::Refusals::new(Arc::clone(&gate));
        Self {
            shared: Arc::new(Shared {
                gate,
                user: user.into(),
                session: session.into(),
                parse: frame::parse_options(options.max_frame_bytes),
                options,
                state: Mutex::new(State::default()),
                mrtr: std::sync::OnceLock::new(),
                idle: tokio::sync::Notify::new(),
                refusals,
                telemetry: std::sync::OnceLock::new(),
                http_traces: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Shows the tools in `tools/list` as `narrowed` says the user may call
    /// them (what `toolgate narrow` prints for the proxy's user): a tool
    /// the user cannot call at all is hidden, and a resource argument's
    /// schema is an `enum` of the ids the user may touch. The gate still
    /// checks every call.
    #[must_use]
    pub fn with_narrowed(self, narrowed: Narrowed) -> Self {
        self.shared.lock().narrowed = Some(narrowed);
        self
    }

    /// Keeps the server's tool pins in the store under `upstream` (default
    /// `default`), its first catalog treated as `first` says (default
    /// trust on first use): `[mcp] upstream_name` and `pin_first`.
    #[must_use]
    pub fn with_pins(self, upstream: &str, first: toolgate::config::PinFirst) -> Self {
        self.shared.lock().catalog.configure(upstream, first);
        self
    }

    /// Records each `tools/call` as a span (inside the client's trace when
    /// its `params._meta` carries a `traceparent`), its decision as a child,
    /// and passes this span's `traceparent` on in the forwarded call's
    /// `_meta`; set once.
    #[must_use]
    pub fn with_telemetry(self, telemetry: toolgate_telemetry::Telemetry) -> Self {
        telemetry.observe_store(Arc::clone(self.shared.gate.store()));
        let _ = self.shared.telemetry.set(telemetry);
        self
    }

    /// Pins each tool under the upstream serving it, as the join of several
    /// upstreams names it in the list (HTTP mode), rather than all under
    /// the one upstream name.
    #[must_use]
    pub(crate) fn with_routed_pins(self) -> Self {
        self.shared.lock().catalog.route();
        self
    }

    /// Answers a call that needs a human's approval, from a client of the
    /// 2026-07-28 era that declares URL-mode elicitation, with
    /// `input_required`: an elicitation pointing at `approvals_url` (the
    /// approvals page of `toolgate serve`) for the approval, and a
    /// `requestState` MACed with a secret of this process. The retry is
    /// let through only once the store holds the approval, for the same
    /// user, session, tool and arguments, once. Fails only when the system
    /// gives no random bytes for the secret.
    pub fn with_approvals_url(self, approvals_url: impl Into<String>) -> std::io::Result<Self> {
        let m = mrtr::Mrtr::new(approvals_url.into())?;
        // Set once, before the proxy serves: a second call keeps the first.
        let _ = self.shared.mrtr.set(m);
        Ok(self)
    }

    /// Records its refused frames through `refusals` (shared by the
    /// sessions of one HTTP endpoint, so a flood across sessions is
    /// aggregated as one).
    pub(crate) fn with_refusals(mut self, refusals: Arc<crate::refusals::Refusals>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.refusals = refusals;
        }
        self
    }

    /// What cancels this proxy's live calls from outside its run.
    pub(crate) fn canceller(&self) -> Canceller {
        Canceller(Arc::clone(&self.shared))
    }

    /// Where the HTTP endpoint puts the trace headers of the requests
    /// that bring calls.
    pub(crate) fn http_traces(&self) -> HttpTraces {
        HttpTraces(Arc::clone(&self.shared))
    }

    /// Serves one connection: frames from `client_in` go to `server_in`,
    /// frames from `server_out` to `client_out`, each read strictly, the
    /// gated ones changed as the crate documentation says. Returns when
    /// either side closes (after answering every pending request when the
    /// server closed).
    pub async fn run<CI, CO, SO, SI>(
        &self,
        client_in: CI,
        client_out: CO,
        server_out: SO,
        server_in: SI,
    ) -> Ended
    where
        CI: AsyncBufRead + Unpin + Send + 'static,
        CO: AsyncWrite + Unpin + Send + 'static,
        SO: AsyncBufRead + Unpin + Send + 'static,
        SI: AsyncWrite + Unpin + Send + 'static,
    {
        let (to_client, client_rx) = mpsc::channel::<Out>(64);
        let (to_server, server_rx) = mpsc::channel::<Out>(64);
        let client_writer = tokio::spawn(write_lines(client_out, client_rx));
        let server_writer = tokio::spawn(write_lines(server_in, server_rx));
        let sides = Sides {
            client: to_client.clone(),
            server: to_server.clone(),
        };
        let mut from_client = tokio::spawn(client_pump(
            Arc::clone(&self.shared),
            client_in,
            sides.clone(),
        ));
        let mut from_server = tokio::spawn(server_pump(
            Arc::clone(&self.shared),
            server_out,
            sides.clone(),
        ));
        let ended = tokio::select! {
            _ = &mut from_client => {
                // Its held calls are withdrawn: nobody waits for them.
                self.shared.cancel_all("the client went away").await;
                // The client is gone: the server's input ends, and the
                // server is given a moment to finish.
                let _ = to_server.send(Out::Close).await;
                let _ = tokio::time::timeout(Duration::from_secs(5), &mut from_server).await;
                from_server.abort();
                Ended::ClientClosed
            }
            _ = &mut from_server => {
                from_client.abort();
                self.shared.fail_pending(&sides, "upstream_closed").await;
                Ended::ServerClosed
            }
        };
        let _ = to_client.send(Out::Close).await;
        let _ = to_server.send(Out::Close).await;
        drop(sides);
        drop(to_client);
        drop(to_server);
        let _ = tokio::time::timeout(Duration::from_secs(5), client_writer).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), server_writer).await;
        let refusals = Arc::clone(&self.shared.refusals);
        let _ = tokio::task::spawn_blocking(move || refusals.flush()).await;
        ended
    }
}

/// The senders of both sides.
#[derive(Clone)]
struct Sides {
    client: mpsc::Sender<Out>,
    server: mpsc::Sender<Out>,
}

impl Sides {
    async fn to_client(&self, line: String) {
        let _ = self.client.send(Out::Line(line)).await;
    }

    async fn to_server(&self, line: String) {
        let _ = self.server.send(Out::Line(line)).await;
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The audit record of a client frame refused before any decision
    /// (aggregated: [`crate::refusals`]).
    fn refuse_frame(&self, code: &'static str) {
        self.refuse_at("mcp frame", code);
    }

    /// The audit record of a message refused at `place` (a method or
    /// notification off the pass list; aggregated like the frames).
    fn refuse_at(&self, place: &'static str, code: &'static str) {
        self.refusals
            .record(crate::refusals::Kind::Deny, place, code, Some(&self.user));
    }

    /// Whether the connection has [`MAX_IN_FLIGHT`] requests in flight.
    fn is_full(&self) -> bool {
        let state = self.lock();
        state.pending.len().saturating_add(state.live.len()) >= MAX_IN_FLIGHT
    }

    /// Whether a request with id `id` is pending or a live call: another
    /// with that id is refused.
    fn is_taken(&self, id: &RequestId) -> bool {
        let state = self.lock();
        state.pending.contains_key(id) || state.live.contains_key(id)
    }

    /// One `tools/call` from the client: denied `tool_changed` if the
    /// server changed the tool's definition since it was pinned; otherwise
    /// decided by the store gate on the frame itself (as `toolgate check
    /// --format mcp`), and forwarded with the canonical arguments only if
    /// allowed.
    async fn call(
        self: Arc<Self>,
        id: RequestId,
        value: Value<'static>,
        frame_bytes: Vec<u8>,
        sides: Sides,
        ctl: Arc<hold::CallCtl>,
    ) {
        let tool = value
            .pointer("/params/name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.remember_envelope(&value);
        if value.pointer("/params/task").is_some() {
            // A task-augmented call: toolgate does not check task results
            // (`tasks/result`), so it runs no task.
            let me = Arc::clone(&self);
            let entry_tool = tool.clone().unwrap_or_default();
            let call_id = id.to_string();
            let recorded = tokio::task::spawn_blocking(move || {
                me.audit(
                    &entry_tool,
                    &call_id,
                    "tasks_not_supported",
                    Some("mcp task-augmented call"),
                )
            })
            .await;
            if !matches!(recorded, Ok(true)) {
                finding("the audit record of a refused task could not be written");
            }
            let answer = frame::error_answer(
                Some(&id),
                frame::INVALID_PARAMS,
                "refused by toolgate: tasks_not_supported",
            );
            sides.to_client(answer).await;
            return;
        }
        if let Some(tool) = tool.as_deref() {
            if let Err(refused) = self.pin_check(tool, &sides).await {
                let me = Arc::clone(&self);
                let entry_tool = tool.to_owned();
                let call_id = id.to_string();
                let code = refused.code;
                let recorded = tokio::task::spawn_blocking(move || {
                    me.audit(&entry_tool, &call_id, code, Some(&refused.note))
                })
                .await;
                if !matches!(recorded, Ok(true)) {
                    finding("the audit record of a tool_changed denial could not be written");
                }
                let feedback = format!("denied by toolgate: {code}");
                sides
                    .to_client(frame::result_answer(
                        &id,
                        results::text_result(&feedback, true),
                    ))
                    .await;
                return;
            }
        }
        if mrtr::carried_state(&value).is_some() {
            self.retry_with_state(id, value, frame_bytes, sides, ctl)
                .await;
            return;
        }
        self.decide_call(id, value, frame_bytes, sides, false, ctl)
            .await;
    }

    /// The span of a `tools/call` frame: inside the client's trace when its
    /// `params._meta` carries a valid `traceparent` (and `tracestate`), else
    /// when the HTTP request that brought it did ([`HttpTraces`]).
    fn frame_span(&self, id: &RequestId, value: &Value<'_>) -> toolgate_telemetry::RequestSpan {
        static OFF: toolgate_telemetry::Telemetry = toolgate_telemetry::Telemetry::off();
        let meta = |key: &str| {
            value
                .pointer("/params/_meta")
                .and_then(|m| m.pointer(key))
                .and_then(Value::as_str)
        };
        let http = self.take_http_trace(id);
        let span = self.telemetry.get().unwrap_or(&OFF).frame_within(
            "mcp tools/call",
            meta("/traceparent"),
            meta("/tracestate"),
            http.as_ref(),
        );
        span.attribute("rpc.method", "tools/call");
        span
    }

    /// A `tools/call` decided by the store gate and answered (`retried`: the
    /// second decision after a hold ended in an approval, which is never
    /// held again).
    async fn decide_call(
        self: Arc<Self>,
        id: RequestId,
        value: Value<'static>,
        frame_bytes: Vec<u8>,
        sides: Sides,
        retried: bool,
        ctl: Arc<hold::CallCtl>,
    ) {
        // A retry the server asked for of a call a human approved.
        let continued = !retried && self.take_continuation(&value);
        let me = Arc::clone(&self);
        let context = self.call_context(&value);
        let span = self.frame_span(&id, &value);
        let started = std::time::SystemTime::now();
        let decided = tokio::task::spawn_blocking(move || {
            let d = me
                .gate
                .decide_and_record(&frame_bytes, Format::Mcp, &context);
            (d, frame_bytes)
        })
        .await;
        let Ok((decisions, frame_bytes)) = decided else {
            // The decision task failed: fail closed.
            let answer = results::text_result("denied by toolgate: internal_error", true);
            sides.to_client(frame::result_answer(&id, answer)).await;
            return;
        };
        span.decisions("mcp", &decisions, started);
        let Some(d) = decisions.decisions().first() else {
            // The request was refused as a whole (no name, params not an
            // object, …): a malformed request, a protocol error.
            let code = decisions
                .rejected()
                .map_or("invalid_params", |r| r.code.as_str());
            sides
                .to_client(frame::error_answer(
                    Some(&id),
                    frame::INVALID_PARAMS,
                    &format!("refused by toolgate: {code}"),
                ))
                .await;
            return;
        };
        match d.verdict() {
            Verdict::Allow => {
                let Some(forward) = d
                    .executable_args()
                    .and_then(|args| rewrite_arguments(&value, args, span.traceparent()))
                else {
                    let answer = results::text_result("denied by toolgate: internal_error", true);
                    sides.to_client(frame::result_answer(&id, answer)).await;
                    return;
                };
                let tool = d.tool().to_owned();
                // Let through by an approval: a server's input_required
                // for it makes its retry a continuation.
                let approved = d.digest().filter(|_| d.approval().is_some());
                self.forward(id, tool, forward, approved, sides, &ctl).await;
            }
            Verdict::NeedsApproval if continued => {
                self.continue_approved(id, value, d, sides, &ctl).await;
            }
            Verdict::NeedsApproval => {
                let approval = d
                    .approval()
                    .and_then(|a| a.as_str().parse::<ApprovalId>().ok());
                if let (Some(a), true) = (approval, ctl.is_cancelled()) {
                    // Cancelled while it was decided: nobody waits for it.
                    self.withdraw(a, "the client cancelled the call").await;
                    return;
                }
                self.needs_approval(id, value, frame_bytes, sides, retried, ctl, d, approval)
                    .await;
            }
            Verdict::Deny => {
                let answer = results::text_result(d.feedback(), true);
                sides.to_client(frame::result_answer(&id, answer)).await;
            }
        }
    }

    /// Forwards an allowed call (`forward`, its frame with the canonical
    /// arguments) unless it was cancelled meanwhile; from then on it is
    /// pending and a cancellation goes to the server, which knows the id.
    async fn forward(
        self: &Arc<Self>,
        id: RequestId,
        tool: String,
        forward: String,
        approved: Option<toolgate_json::canonical::Digest>,
        sides: Sides,
        ctl: &hold::CallCtl,
    ) {
        {
            let (taken, cancelled) = {
                let mut state = self.lock();
                if ctl.is_cancelled() {
                    (false, true)
                } else if state.pending.contains_key(&id) {
                    (true, false)
                } else {
                    state.live.remove(&id);
                    state.pending.insert(
                        id.clone(),
                        Pending::Call {
                            tool: tool.clone(),
                            call_id: id.to_string(),
                            approved,
                        },
                    );
                    (false, false)
                }
            };
            if cancelled {
                self.record_result_failure(tool, id.to_string(), "cancelled")
                    .await;
                return;
            }
            if taken {
                // Another request with this id got in while this one
                // was decided: this one does not run.
                let answer = frame::error_answer(
                    Some(&id),
                    frame::INVALID_REQUEST,
                    "refused by toolgate: duplicate_request_id",
                );
                sides.to_client(answer).await;
                return;
            }
            self.spawn_timeout(id, sides.clone());
            sides.to_server(forward).await;
        }
    }

    /// A call that needs a human's approval: `input_required` for a client
    /// that takes it, held for the configured time, or answered pending.
    #[expect(
        clippy::too_many_arguments,
        reason = "the call's parts, as decide_call has them"
    )]
    async fn needs_approval(
        self: Arc<Self>,
        id: RequestId,
        value: Value<'static>,
        frame_bytes: Vec<u8>,
        sides: Sides,
        retried: bool,
        ctl: Arc<hold::CallCtl>,
        d: &toolgate::Decision,
        approval: Option<ApprovalId>,
    ) {
        if let Some(line) = self.input_required(&id, &value, d).await {
            sides.to_client(line).await;
            return;
        }
        let held = approval.filter(|_| !self.options.hold.is_zero() && !retried);
        if let Some(approval) = held {
            if self.held_for(&ctl, approval).await {
                return;
            }
            match self.hold(&id, &value, approval, &sides, &ctl).await {
                Held::Approved => {
                    // Decided again: the approval in the store is
                    // what lets the call through, once.
                    Box::pin(Arc::clone(&self).decide_call(
                        id,
                        value,
                        frame_bytes,
                        sides,
                        true,
                        ctl,
                    ))
                    .await;
                    return;
                }
                Held::Refused => {
                    let text = format!(
                                "denied by a human: approval {approval} was not granted; the call did not run"
                            );
                    let answer = results::text_result(&text, true);
                    sides.to_client(frame::result_answer(&id, answer)).await;
                    return;
                }
                Held::Cancelled => return,
                Held::Waiting => {}
            }
        }
        let text = match d.approval() {
                    Some(a) => format!(
                        "held by toolgate for human approval: approval {}; the call did not run. \
                         Ask a human to approve it, then retry the same call with the same arguments",
                        a.as_str()
                    ),
                    None => d.feedback().to_owned(),
                };
        let answer = results::text_result(&text, true);
        sides.to_client(frame::result_answer(&id, answer)).await;
    }

    /// After the call timeout, a call still pending is answered with an
    /// error result, and the server is told to cancel it.
    fn spawn_timeout(self: &Arc<Self>, id: RequestId, sides: Sides) {
        let me = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(me.options.call_timeout).await;
            let pending = me.lock().pending.remove(&id);
            if let Some(Pending::Call { tool, call_id, .. }) = pending {
                finding(&format!("tools/call {id} timed out"));
                me.record_result_failure(tool, call_id, "upstream_timeout")
                    .await;
                let answer = results::text_result("refused by toolgate: upstream_timeout", true);
                sides.to_client(frame::result_answer(&id, answer)).await;
                let cancel = cancelled_notification(&id);
                sides.to_server(cancel).await;
            }
        });
    }
}

/// A tools/call frame with its `params.arguments` replaced by the checked
/// canonical value.
fn rewrite_arguments(
    frame: &Value<'static>,
    canonical_args: &str,
    traceparent: Option<String>,
) -> Option<String> {
    let args = toolgate_json::from_str(canonical_args).ok()?.into_owned();
    let mut o = frame.as_object()?.clone();
    let mut params: Object<'static> = o.get("params")?.as_object()?.clone();
    params.insert("arguments", args);
    if let Some(tp) = traceparent {
        // The server's span becomes a child of toolgate's: the client's
        // trace context is replaced by toolgate's own (W3C, in `_meta`).
        let mut meta = match params.get("_meta") {
            Some(Value::Object(m)) => m.clone(),
            _ => Object::new(),
        };
        meta.insert("traceparent", Value::String(std::borrow::Cow::Owned(tp)));
        params.insert("_meta", Value::Object(meta));
    }
    o.insert("params", Value::Object(params));
    Some(canonical::to_string(&Value::Object(o)))
}

/// `notifications/cancelled` for a request of the client's.
fn cancelled_notification(id: &RequestId) -> String {
    let mut params = Object::new();
    params.insert("requestId", id.to_value());
    params.insert(
        "reason",
        Value::String(std::borrow::Cow::Borrowed("timed out in toolgate")),
    );
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(std::borrow::Cow::Borrowed("2.0")));
    o.insert(
        "method",
        Value::String(std::borrow::Cow::Borrowed("notifications/cancelled")),
    );
    o.insert("params", Value::Object(params));
    canonical::to_string(&Value::Object(o))
}

/// The request a `notifications/cancelled` frame names (`params.requestId`).
fn cancelled_request(bytes: &[u8], parse: &ParseOptions) -> Option<RequestId> {
    let value = parse.parse(bytes).ok()?;
    RequestId::from_value(value.pointer("/params/requestId")?)
}

/// A frame the strict parser accepted, as the text it was (valid UTF-8
/// by then: the parser refuses anything else).
fn lossless(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A line on standard error (the MCP client's log); never on the client's
/// stream.
fn finding(text: &str) {
    toolgate_edge::log::line(toolgate_edge::log::Level::Warn, "mcp", "finding", text);
}

/// A name from the server or the model, safe for a terminal.
fn printable(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 64 {
            out.push('…');
            break;
        }
        if c.is_control() || pins::hidden_kind(c).is_some() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Starts the server `program args…` with its standard input and output
/// piped (stderr passed through), in an environment holding only the
/// variables named in `env` that toolgate's own environment has.
pub fn spawn_server(
    program: &OsString,
    args: &[OsString],
    env: &[String],
) -> std::io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    for name in env {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    cmd.spawn()
}
