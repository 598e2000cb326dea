//! `toolgate mcp --listen`: the streamable-HTTP endpoint (`POST`, `GET`
//! and `DELETE` on `/mcp`) in front of an upstream MCP server.
//!
//! Every request is checked in this order, each failure answered at once:
//!
//! 1. `Host` must name this endpoint (a loopback name or address, an IP
//!    literal, or one of `[mcp] allowed_hosts`), and an `Origin` header, when
//!    present, must be one of `[mcp] allowed_origins`: else `403` (DNS
//!    rebinding, cross-site requests from a browser).
//! 2. `Authorization: Bearer TOKEN` must be one of `[[mcp.token]]` (by its
//!    SHA-256): else `401` with `WWW-Authenticate: Bearer`. The token names
//!    the user every call is decided as; a request's `_meta` never does.
//! 3. The body (at most `[mcp] max_frame_bytes`) is read by the strict
//!    parser ([`frame::decode`]): a duplicate key anywhere, invalid UTF-8,
//!    an oversized body or a batch is answered with a JSON-RPC error
//!    (`400`, `413`) and never forwarded.
//!
//! Then the message is served in its era:
//!
//! - **2025-11-25 and earlier** (sessions): `initialize` without a session
//!   opens one: a connection to the upstream (a child per session for a
//!   `command` upstream) behind its own [`Proxy`], decided as the token's
//!   user in the session named by the `Mcp-Session-Id` the answer carries.
//!   Later requests must carry that id (`404` for an unknown one, or one
//!   opened by another user's token); `DELETE` ends the session (and its
//!   child). A request is answered with `application/json`, or with
//!   `text/event-stream` when the client accepts it: the request's progress
//!   notifications, then its response. `GET` opens the session's stream for
//!   everything else the server sends.
//! - **2026-07-28** (stateless): each request carries `_meta`
//!   `io.modelcontextprotocol/protocolVersion` and `clientCapabilities`, and
//!   the headers `MCP-Protocol-Version`, `Mcp-Method` and, for `tools/call`,
//!   `prompts/get` and `resources/read`, `Mcp-Name`, which must equal the
//!   body (`400` with `-32020` HeaderMismatch otherwise: the proxy decides
//!   on the body, and an intermediary trusting the headers would be
//!   deceived). Its calls are decided in the token's `session` (default
//!   `mcp-http-USER`), over one upstream connection per user and session;
//!   request ids are the proxy's own on that connection. A notification is
//!   answered `202`.
//!
//! Whatever the era, `tools/call`, `tools/list` and the results go through
//! the same [`Proxy`] code as stdio: the gate, the pins, the result checks,
//! the audit records.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use tokio::io::BufReader;
use toolgate::config::Config;
use toolgate_edge::config::{JwtConfig, McpConfig, McpToken, McpUpstream, ServerConfig};
use toolgate_json::{ParseOptions, Value};
use toolgate_store::StoreGate;

use crate::frame::{self, Message, RequestId};
use crate::proxy::{Proxy, ProxyOptions};
use crate::refusals::Kind;
use crate::upstream::{self, HttpClient};

mod admit;
mod eras;
mod session;

#[cfg(test)]
use eras::header_value;
use eras::{find_session, initialize, legacy, modern};

use session::{dispatch, get_stream, Routes, Session};

/// The 2026-07-28 protocol version this endpoint serves.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The session-era versions this endpoint accepts in `MCP-Protocol-Version`.
pub const LEGACY_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// JSON-RPC `-32020`: a mirrored header does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// JSON-RPC `-32022`: the request's protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// How often an open event stream gets a comment when nothing else comes.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// On shutdown, the connections still open after this are left behind.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// Why it cannot start: the edge's one start error.
pub use toolgate_edge::StartError;

/// The streamable-HTTP endpoint: the gate, the client tokens, the upstream
/// and the open sessions. Cheap to clone (one shared state).
#[derive(Clone)]
pub struct HttpProxy {
    inner: Arc<Inner>,
}

struct Inner {
    gate: Arc<StoreGate>,
    options: ProxyOptions,
    parse: ParseOptions,
    max_frame_bytes: usize,
    /// How long a request waits for its answer before the endpoint answers
    /// it with an error (the call timeout and the hold, and a margin).
    wait: Duration,
    tokens: Vec<McpToken>,
    /// JWT bearer tokens (`[jwt]`), once started ([`HttpProxy::start_jwt`]).
    jwt: std::sync::OnceLock<toolgate_edge::jwt::Verifier>,
    /// `[jwt] mcp_resource`: the protected resource metadata (RFC 9728).
    resource: Option<toolgate_edge::jwt::ProtectedResource>,
    upstreams: Vec<McpUpstream>,
    origins: Vec<String>,
    hosts: Vec<String>,
    port: u16,
    max_sessions: usize,
    session_idle: Duration,
    client: HttpClient,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    counter: AtomicU64,
    /// `[mcp] narrow_tools`: the policies each session's list is narrowed
    /// by, for its user.
    narrow: Option<Box<toolgate::CedarAuthorizer>>,
    /// `[mcp] upstream_name` and `pin_first`: where the sessions' tool
    /// pins are kept in the store, and what a first catalog gets.
    pins: (String, toolgate::config::PinFirst),
    /// `[mcp] approvals_url`: 2026-07-28 clients are answered
    /// `input_required` pointing there.
    approvals_url: Option<String>,
    /// Audit records of refused requests, aggregated.
    refusals: Arc<crate::refusals::Refusals>,
    /// The edge's limits, from `[server]`.
    limits: toolgate_edge::Limits,
    /// How long a body may take ([server] `body_timeout_seconds`).
    body_timeout: Duration,
    /// Every session's telemetry ([`HttpProxy::with_telemetry`]).
    telemetry: std::sync::OnceLock<toolgate_telemetry::Telemetry>,
}

impl HttpProxy {
    /// The endpoint the config's `[mcp]` describes, deciding with `gate`,
    /// serving on `port` (for the `Host` check). Needs at least one
    /// `[[mcp.token]]` and exactly one `[[mcp.upstream]]`.
    pub fn from_config(config: &Config, gate: StoreGate, port: u16) -> Result<Self, StartError> {
        let mcp = &McpConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        let http = mcp.http();
        let server =
            ServerConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        let jwt = JwtConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        if http.tokens().is_empty() && jwt.is_none() {
            return Err(StartError::new(
                "[mcp] declares no client token: add a `[[mcp.token]]` (sha256, user) or a `[jwt]` table for --listen"
                    .to_owned(),
            ));
        }
        if http.upstreams().is_empty() {
            return Err(StartError::new(
                "[mcp] declares no upstream server: add an `[[mcp.upstream]]` (name, and url or command) for --listen".to_owned(),
            ));
        }
        let upstreams = http.upstreams().to_vec();
        let options = ProxyOptions::from_config(mcp);
        let narrow = if mcp.narrow_tools() {
            match toolgate::authz::from_config(config) {
                Ok(toolgate::authz::ConfiguredAuthorizer::Cedar(cedar)) => Some(cedar),
                Ok(_) => {
                    return Err(StartError::new(
                        "[mcp] narrow_tools needs Cedar policies in [authorization]".to_owned(),
                    ))
                }
                Err(e) => {
                    return Err(StartError::new(format!(
                        "cannot load the authorization policies for narrow_tools: {e}"
                    )))
                }
            }
        } else {
            None
        };
        let gate = Arc::new(gate);
        let refusals = crate::refusals::Refusals::new(Arc::clone(&gate));
        Ok(Self {
            inner: Arc::new(Inner {
                gate,
                options,
                parse: frame::parse_options(mcp.max_frame_bytes()),
                max_frame_bytes: mcp.max_frame_bytes(),
                wait: mcp.call_timeout() + mcp.hold() + Duration::from_secs(10),
                tokens: http.tokens().to_vec(),
                jwt: std::sync::OnceLock::new(),
                resource: jwt
                    .as_ref()
                    .and_then(toolgate_edge::jwt::ProtectedResource::from_config),
                upstreams,
                origins: http.allowed_origins().to_vec(),
                hosts: http.allowed_hosts().to_vec(),
                port,
                max_sessions: http.max_sessions(),
                session_idle: http.session_idle(),
                client: upstream::http_client(),
                sessions: Mutex::new(HashMap::new()),
                counter: AtomicU64::new(0),
                narrow,
                pins: (mcp.upstream_name().to_owned(), mcp.pin_first()),
                approvals_url: mcp.approvals_url().map(str::to_owned),
                refusals,
                limits: toolgate_edge::Limits::from_server(&server).drain_timeout(DRAIN_TIMEOUT),
                body_timeout: server.body_timeout(),
                telemetry: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Starts accepting JWT bearer tokens as `config`'s `[jwt]` says (the
    /// keys read or fetched now); without `[jwt]`, nothing changes. A
    /// token's user claim is the user its calls are decided as; a token
    /// whose role is `approver` alone may not call tools.
    pub async fn start_jwt(&self, config: &Config) -> Result<(), StartError> {
        let verifier = toolgate_edge::jwt::Verifier::from_config(config)
            .await
            .map_err(|e| StartError::new(e.to_string()))?;
        if let Some(v) = verifier {
            // Started once: a second call keeps the first verifier.
            let _ = self.inner.jwt.set(v);
        }
        Ok(())
    }

    /// Every session recording its calls with `telemetry` (see
    /// [`Proxy::with_telemetry`]); set once.
    #[must_use]
    pub fn with_telemetry(self, telemetry: toolgate_telemetry::Telemetry) -> Self {
        telemetry.observe_store(Arc::clone(self.inner.gate.store()));
        let _ = self.inner.telemetry.set(telemetry);
        self
    }

    /// The routes: `POST`, `GET` and `DELETE` on [`ENDPOINT`]; anything else
    /// is `404`.
    pub fn router(&self) -> Router {
        let mut router = Router::new().route(
            ENDPOINT,
            post(post_message).get(get_stream).delete(delete_session),
        );
        if let Some(r) = &self.inner.resource {
            router = router
                .route(r.path(), axum::routing::get(resource_metadata))
                .route(
                    "/.well-known/oauth-protected-resource",
                    axum::routing::get(resource_metadata),
                );
        }
        router.with_state(self.clone())
    }
}

/// Serves `proxy` on `listener` until `shutdown` completes; then every
/// session (and its upstream child) ends. The listener is the edge's,
/// within the config's `[server]` limits (header and body deadlines,
/// `max_connections`, the pre-authentication budget: a request with a
/// valid token takes its connection out of it) and [`DRAIN_TIMEOUT`].
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: HttpProxy,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = proxy.inner.limits.clone();
    serve_within(listener, proxy, limits, shutdown).await
}

/// [`serve`] within other limits of the edge (a deployment's, or a
/// test's short deadlines).
pub async fn serve_within(
    listener: tokio::net::TcpListener,
    proxy: HttpProxy,
    limits: toolgate_edge::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sessions = Arc::clone(&proxy.inner);
    // Unused sessions end (and their upstream children with them).
    let reaper = {
        let inner = Arc::downgrade(&proxy.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(5)).await;
                let Some(inner) = inner.upgrade() else { return };
                inner.end_idle();
            }
        })
    };
    let router = proxy.router();
    toolgate_edge::serve(listener, router, limits, shutdown, || async move {
        reaper.abort();
        let refusals = Arc::clone(&sessions.refusals);
        let _ = tokio::task::spawn_blocking(move || refusals.flush()).await;
        // Open event streams would hold the shutdown: every session ends
        // first.
        let all: Vec<Arc<Session>> = sessions.lock_sessions().drain().map(|(_, s)| s).collect();
        for s in all {
            s.end();
        }
    })
    .await
}

impl Inner {
    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the sessions unused for longer than `session_idle`: no request
    /// waiting, no open stream, nothing received since.
    fn end_idle(&self) {
        let now = tokio::time::Instant::now();
        let idle: Vec<Arc<Session>> = {
            let mut sessions = self.lock_sessions();
            let keys: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.idle_since(now) > self.session_idle)
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| sessions.remove(k)).collect()
        };
        for s in idle {
            note("an unused session ended");
            s.end();
        }
    }

    /// Opens a session for `user`, decided in `gate_session`: connects to
    /// the upstream and starts its proxy and its dispatcher.
    fn open(
        self: &Arc<Self>,
        key: String,
        user: &str,
        gate_session: &str,
        modern: bool,
    ) -> Result<Arc<Session>, Box<Response>> {
        {
            let sessions = self.lock_sessions();
            if sessions.len() >= self.max_sessions {
                note("session refused: max_sessions reached");
                return Err(Box::new(rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    None,
                    frame::INTERNAL_ERROR,
                    "refused by toolgate: too_many_sessions",
                )));
            }
        }
        let link =
            upstream::connect_all(&self.upstreams, &self.client, self.max_frame_bytes, modern)
                .map_err(|e| {
                    note(&format!("cannot connect to an upstream: {e}"));
                    Box::new(rpc_error(
                        StatusCode::BAD_GATEWAY,
                        None,
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: upstream_unavailable",
                    ))
                })?;
        let mut proxy = Proxy::with_gate(Arc::clone(&self.gate), user, gate_session, self.options)
            .with_pins(&self.pins.0, self.pins.1)
            .with_refusals(Arc::clone(&self.refusals));
        if let Some(t) = self.telemetry.get() {
            proxy = proxy.with_telemetry(t.clone());
        }
        if self.upstreams.len() > 1 {
            proxy = proxy.with_routed_pins();
        }
        if let Some(url) = &self.approvals_url {
            // The session's own requestState secret: a retry verifies in
            // the session that issued it.
            proxy = proxy.with_approvals_url(url.clone()).map_err(|e| {
                note(&format!("cannot draw the session's secret: {e}"));
                Box::new(rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    None,
                    frame::INTERNAL_ERROR,
                    "refused by toolgate: internal_error",
                ))
            })?;
        }
        if let Some(cedar) = &self.narrow {
            // tools/list as this user may call it; a narrowing that fails
            // opens no session.
            let context = toolgate::Context::new(user, gate_session, 1);
            match cedar.narrow(self.gate.gate().registry(), &context) {
                Ok(n) => proxy = proxy.with_narrowed(n),
                Err(e) => {
                    note(&format!("cannot narrow the tools for the user: {e}"));
                    return Err(Box::new(rpc_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        None,
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: internal_error",
                    )));
                }
            }
        }
        let (client_in, proxy_in) = tokio::io::duplex(64 << 10);
        let (proxy_out, client_out) = tokio::io::duplex(64 << 10);
        let session = Arc::new(Session {
            key: key.clone(),
            user: user.to_owned(),
            modern,
            input: tokio::sync::Mutex::new(client_in),
            routes: Mutex::new(Routes::default()),
            alive: AtomicBool::new(true),
            tasks: Mutex::new(Vec::new()),
            used: Mutex::new(tokio::time::Instant::now()),
            canceller: proxy.canceller(),
            traces: proxy.http_traces(),
        });
        let run = tokio::spawn(async move {
            let link = link;
            let _guard = link.guard;
            proxy
                .run(BufReader::new(proxy_in), proxy_out, link.output, link.input)
                .await;
        });
        let dispatch = tokio::spawn(dispatch(
            Arc::downgrade(self),
            Arc::downgrade(&session),
            BufReader::new(client_out),
            self.max_frame_bytes
                .saturating_mul(2)
                .saturating_add(1 << 20),
        ));
        session
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend([run, dispatch]);
        let mut sessions = self.lock_sessions();
        if let Some(other) = sessions
            .get(&key)
            .filter(|s| s.alive.load(Ordering::Relaxed))
            .cloned()
        {
            // Another request opened this (stateless) session meanwhile.
            drop(sessions);
            session.end();
            return Ok(other);
        }
        sessions.insert(key, Arc::clone(&session));
        Ok(session)
    }

    /// A new id, for sessions and for the proxy's own request ids.
    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: the protected
/// resource metadata (RFC 9728), to anyone whose `Host` and `Origin` pass.
async fn resource_metadata(State(p): State<HttpProxy>, headers: HeaderMap) -> Response {
    if let Err(r) = p.inner.check_host_origin(&headers) {
        return *r;
    }
    let Some(res) = &p.inner.resource else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let mut r = Response::new(Body::from(res.document().to_owned()));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// `POST /mcp`: one JSON-RPC message.
async fn post_message(
    State(p): State<HttpProxy>,
    extensions: axum::http::Extensions,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let inner = &p.inner;
    let token = match inner.admit(&headers, &extensions).await {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| {
            c.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_type {
        inner.refused(Kind::Deny, "unsupported_media_type", Some(token.user()));
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            frame::INVALID_REQUEST,
            "refused by toolgate: the body must be application/json",
        );
    }
    let accept = Accept::of(&headers);
    if !accept.json && !accept.sse {
        inner.refused(Kind::Deny, "not_acceptable", Some(token.user()));
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            frame::INVALID_REQUEST,
            "refused by toolgate: Accept must allow application/json or text/event-stream",
        );
    }
    let late = || {
        inner.refused(Kind::Deny, "body_timeout", Some(token.user()));
        rpc_error(
            StatusCode::REQUEST_TIMEOUT,
            None,
            frame::PARSE_ERROR,
            "refused by toolgate: body_timeout",
        )
    };
    // The edge holds the body to its deadline; the timeout here holds a
    // router driven without the edge to the same one.
    let bytes = match tokio::time::timeout(
        inner.body_timeout,
        axum::body::to_bytes(body, inner.max_frame_bytes),
    )
    .await
    {
        Ok(Ok(b)) => b,
        Ok(Err(e)) if toolgate_edge::is_body_deadline(&e) => return late(),
        Ok(Err(_)) => {
            note("client frame refused: frame_too_large");
            inner.refused(Kind::Deny, "frame_too_large", Some(token.user()));
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                frame::PARSE_ERROR,
                "refused by toolgate: frame_too_large",
            );
        }
        Err(_) => return late(),
    };
    let message = match frame::decode(&bytes, &inner.parse) {
        Ok(m) => m,
        Err(e) => {
            // Never forwarded.
            note(&format!("client frame refused: {}", e.reason()));
            inner.refused(Kind::Deny, e.reason(), Some(token.user()));
            return json_response(StatusCode::BAD_REQUEST, e.answer());
        }
    };
    let Ok(value) = inner.parse.parse(&bytes).map(Value::into_owned) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            frame::PARSE_ERROR,
            "refused by toolgate: invalid_json",
        );
    };
    let line = upstream::one_line(&bytes);
    let session_id = headers
        .get("mcp-session-id")
        .map(|v| v.to_str().map(str::to_owned));
    match session_id {
        Some(Ok(id)) => legacy(&p, &token, &id, &headers, message, line, accept).await,
        Some(Err(_)) => {
            inner.refused(Kind::Deny, "unknown_session", Some(token.user()));
            not_found_session()
        }
        None => match &message {
            Message::Request { method, .. } if method == "initialize" => {
                initialize(&p, &token, &headers, message, line, accept).await
            }
            _ if is_modern(&value, &headers) => {
                modern(&p, &token, &headers, message, value, accept).await
            }
            _ => {
                inner.refused(Kind::Deny, "missing_session", Some(token.user()));
                rpc_error(
                    StatusCode::BAD_REQUEST,
                    message_id(&message),
                    frame::INVALID_REQUEST,
                    "refused by toolgate: missing Mcp-Session-Id (send initialize first, or a 2026-07-28 request)",
                )
            }
        },
    }
}

/// What the client accepts.
#[derive(Clone, Copy)]
struct Accept {
    json: bool,
    sse: bool,
}

impl Accept {
    fn of(headers: &HeaderMap) -> Self {
        let Some(text) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
            return Self {
                json: true,
                sse: false,
            };
        };
        let mut a = Self {
            json: false,
            sse: false,
        };
        for part in text.split(',') {
            let t = part
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            match t.as_str() {
                "application/json" | "application/*" => a.json = true,
                "text/event-stream" | "text/*" => a.sse = true,
                "*/*" => {
                    a.json = true;
                    a.sse = true;
                }
                _ => {}
            }
        }
        a
    }
}

/// Whether a message without a session speaks 2026-07-28: its `_meta`
/// names a protocol version, or its `MCP-Protocol-Version` header is not a
/// session-era version.
fn is_modern(value: &Value<'static>, headers: &HeaderMap) -> bool {
    if value
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .is_some()
    {
        return true;
    }
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !LEGACY_VERSIONS.contains(&v))
}

/// `DELETE /mcp`: ends the session.
async fn delete_session(
    State(p): State<HttpProxy>,
    extensions: axum::http::Extensions,
    headers: HeaderMap,
) -> Response {
    let inner = &p.inner;
    let token = match inner.admit(&headers, &extensions).await {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let Some(sid) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return plain(StatusCode::BAD_REQUEST, "DELETE needs an Mcp-Session-Id");
    };
    let Some(session) = find_session(&p, &token, sid) else {
        return not_found_session();
    };
    inner.lock_sessions().remove(sid);
    session.end();
    note(&format!("session {} ended by its client", printable(sid)));
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    r
}

fn message_id(message: &Message) -> Option<&RequestId> {
    match message {
        Message::Request { id, .. } | Message::Response { id, .. } => Some(id),
        _ => None,
    }
}

fn json_response(status: StatusCode, line: String) -> Response {
    let mut r = Response::new(Body::from(line));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, code: i64, message: &str) -> Response {
    json_response(status, frame::error_answer(id, code, message))
}

fn not_found_session() -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        None,
        frame::INVALID_REQUEST,
        "refused by toolgate: unknown session (initialize again)",
    )
}

fn accepted() -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = Response::new(Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// A line on standard error.
fn note(text: &str) {
    toolgate_edge::log::line(toolgate_edge::log::Level::Warn, "mcp", "note", text);
}

/// A name from a client, safe for a terminal.
fn printable(s: &str) -> String {
    s.chars()
        .take(64)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_unicode().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn mirrored_header_values_are_decoded() {
        assert_eq!(header_value("add").as_deref(), Some("add"));
        assert_eq!(header_value("=?base64?YWRk?=").as_deref(), Some("add"));
        assert_eq!(header_value("=?base64?w6k=?=").as_deref(), Some("é"));
        assert_eq!(header_value("=?base64?!!?="), None);
    }

    #[test]
    fn accept_and_era() {
        let mut h = HeaderMap::new();
        let a = Accept::of(&h);
        assert!(a.json && !a.sse);
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream;q=0.9"),
        );
        let a = Accept::of(&h);
        assert!(a.json && a.sse);
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        let a = Accept::of(&h);
        assert!(!a.json && !a.sse);
        let plain = toolgate_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .unwrap()
            .into_owned();
        assert!(!is_modern(&plain, &HeaderMap::new()));
        let mut v = HeaderMap::new();
        v.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2025-11-25"),
        );
        assert!(!is_modern(&plain, &v));
        v.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        assert!(is_modern(&plain, &v));
        let enveloped = toolgate_json::from_str(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )
        .unwrap()
        .into_owned();
        assert!(is_modern(&enveloped, &HeaderMap::new()));
    }
}
