//! The HTTP side: the routes, the upstream requests, the stream pump.

use std::collections::{HashSet, VecDeque};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use http_body_util::{BodyExt as _, Full};
use toolgate::config::Config;
use toolgate::{AdapterOptions, Context, Decisions, Format};
use toolgate_edge::config::{ProxyAuth, ProxyConfig, ProxyToken, ServerConfig, ServerRole};
use toolgate_edge::token::Presented;
use toolgate_json::canonical::Digest;
use toolgate_store::{AuditEntry, StoreGate, ToolResultRecord};
use toolgate_telemetry::{RequestSpan, Stage, Telemetry};

use toolgate::authz::CedarAuthorizer;
use toolgate::registry::Registry;

use crate::api::Api;
use crate::continuation::Continuations;
use crate::request::{rewrite_request, RequestOptions, ResultFindings};
use crate::sse::{Reader as SseReader, SseError};
use crate::stream::{Broken, Rewriter, Step};
use crate::{headers, intake, refused, rewrite, upstream};

mod forward;
mod pump;
mod whole;

use self::forward::other;
use self::pump::stream_response;

/// Why it cannot start: the edge's one start error.
pub use toolgate_edge::StartError;

/// The proxy: its gate over the store, its config, its upstream client.
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

struct Inner {
    gate: Arc<StoreGate>,
    registry: Registry,
    narrower: Option<CedarAuthorizer>,
    adapter: AdapterOptions,
    config: ProxyConfig,
    client: upstream::UpstreamClient,
    max_request_bytes: usize,
    max_response_bytes: usize,
    /// The edge's limits, from `[server]`.
    limits: toolgate_edge::Limits,
    /// The tool results whose findings are already in the audit log.
    audited: Mutex<Audited>,
    /// The calls withheld from recent Responses answers.
    continuations: Continuations,
    /// JWT bearer tokens (`[jwt]`), once started ([`Proxy::start_jwt`]).
    jwt: std::sync::OnceLock<toolgate_edge::jwt::Verifier>,
    /// Traces, metrics and the decision log ([`Proxy::with_telemetry`]).
    telemetry: OnceLock<Telemetry>,
}

/// The telemetry of a proxy given none.
static NO_TELEMETRY: Telemetry = Telemetry::off();

impl Inner {
    fn telemetry(&self) -> &Telemetry {
        self.telemetry.get().unwrap_or(&NO_TELEMETRY)
    }
}

/// The tool results already audited, by (user, session, call, content)
/// digest, so that a result repeated in every later turn of a
/// conversation is recorded once (bounded: the oldest are forgotten, and a
/// forgotten one is recorded again, never lost).
#[derive(Default)]
pub(crate) struct Audited {
    order: VecDeque<Digest>,
    set: HashSet<Digest>,
}

impl Audited {
    const MAX: usize = 16_384;

    pub(crate) fn contains(&self, key: &Digest) -> bool {
        self.set.contains(key)
    }

    pub(crate) fn insert(&mut self, key: Digest) {
        if self.set.insert(key) {
            self.order.push_back(key);
            while self.order.len() > Self::MAX {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}

/// The key a result is audited under.
fn result_key(user: &str, session: &str, r: &ResultFindings) -> Digest {
    let mut text = String::new();
    for part in [user, session, r.call_id.as_deref().unwrap_or("")] {
        text.push_str(&part.len().to_string());
        text.push(':');
        text.push_str(part);
    }
    text.push_str(&r.digest.to_hex());
    Digest::of(text.as_bytes())
}

impl Proxy {
    /// A proxy for `config`'s `[proxy]` table, deciding with `gate`. It
    /// refuses a table whose values are refused
    /// ([`ProxyConfig::from_config`]), or that names no way of knowing the
    /// user or no upstream.
    pub fn new(config: &Config, gate: StoreGate) -> Result<Self, StartError> {
        let p = ProxyConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        Self::with_table(config, p, gate)
    }

    /// A proxy for `config` with `p` as its `[proxy]` table (the
    /// config's, checked and then changed: `toolgate proxy --upstream`),
    /// deciding with `gate`; refused as [`Proxy::new`] refuses.
    pub fn with_table(
        config: &Config,
        p: ProxyConfig,
        gate: StoreGate,
    ) -> Result<Self, StartError> {
        let server =
            ServerConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        if p.auth().is_none() && config.front_end_tables().jwt.is_none() {
            return Err(StartError::new(
                "[proxy] names no way of knowing the user: set `[[proxy.token]]`, `user_header`, `user` or a `[jwt]` table".to_owned(),
            ));
        }
        if p.openai().is_none() && p.anthropic().is_none() {
            return Err(StartError::new(
                "[proxy] names no upstream: set `openai` and/or `anthropic` to the API's base URL"
                    .to_owned(),
            ));
        }
        // The policies once more, for narrowing each request's tools.
        let narrower = if p.narrow_tools() {
            match toolgate::authz::from_config(config) {
                Ok(toolgate::authz::ConfiguredAuthorizer::Cedar(c)) => Some(*c),
                Ok(_) => {
                    return Err(StartError::new(
                        "[proxy] narrow_tools needs Cedar policies in [authorization]".to_owned(),
                    ))
                }
                Err(e) => {
                    return Err(StartError::new(format!(
                        "cannot load the authorization policies: {e}"
                    )))
                }
            }
        } else {
            None
        };
        Ok(Self {
            inner: Arc::new(Inner {
                gate: Arc::new(gate),
                registry: config.registry().clone(),
                narrower,
                adapter: config.gate().adapter_options(),
                config: p,
                client: upstream::client(),
                max_request_bytes: server.max_body_bytes(),
                max_response_bytes: config.gate().max_body_bytes(),
                limits: toolgate_edge::Limits::from_server(&server),
                audited: Mutex::new(Audited::default()),
                continuations: Continuations::default(),
                jwt: std::sync::OnceLock::new(),
                telemetry: OnceLock::new(),
            }),
        })
    }

    /// Starts accepting JWT bearer tokens in the token header as
    /// `config`'s `[jwt]` says (the keys read or fetched now), beside the
    /// `[[proxy.token]]`s; without `[jwt]`, nothing changes. A token's user
    /// claim is the user its calls are decided as; a token whose role is
    /// `approver` alone may not call tools.
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

    /// The proxy recording its requests and decisions with `telemetry`
    /// (a span per request inside the caller's trace, a child span per
    /// decision, the trace context passed upstream); set once.
    #[must_use]
    pub fn with_telemetry(self, telemetry: Telemetry) -> Self {
        telemetry.observe_store(Arc::clone(self.inner.gate.store()));
        let _ = self.inner.telemetry.set(telemetry);
        self
    }

    /// The routes.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/v1/chat/completions", post(chat).fallback(other))
            .route("/v1/responses", post(responses).fallback(other))
            .route("/v1/messages", post(messages).fallback(other))
            .fallback(other)
            .with_state(self.clone())
    }
}

/// Serves `proxy` on `listener` until `shutdown` completes, on the edge's
/// listener within the config's `[server]` limits (header and body
/// deadlines, `max_connections`, the pre-authentication budget): a request
/// whose user is known takes its connection out of that budget.
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: Proxy,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = proxy.inner.limits.clone();
    serve_within(listener, proxy, limits, shutdown).await
}

/// [`serve`] within other limits of the edge (a test's short deadlines).
pub async fn serve_within(
    listener: tokio::net::TcpListener,
    proxy: Proxy,
    limits: toolgate_edge::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    toolgate_edge::serve(listener, proxy.router(), limits, shutdown, || async {}).await
}

/// `narrowed` without the tools a `[[limit]]` counting `user`, `session`
/// (or everyone) has used up, read from the store; `None` when the store
/// cannot be read (the narrowing fails closed).
async fn without_exhausted(
    gate: &Arc<StoreGate>,
    mut narrowed: toolgate::authz::Narrowed,
    user: &str,
    session: &str,
) -> Option<toolgate::authz::Narrowed> {
    let g = gate.gate();
    if g.registry()
        .iter()
        .all(|t| g.tool_limits(t.name()).is_empty())
    {
        return Some(narrowed);
    }
    let gate = Arc::clone(gate);
    let (user, session) = (user.to_owned(), session.to_owned());
    let hidden = tokio::task::spawn_blocking(move || {
        gate.exhausted_tools(toolgate_store::UsageOf {
            user: &user,
            session: Some(&session),
            token: None,
        })
    })
    .await
    .ok()?
    .ok()?;
    narrowed.tools.retain(|t| !hidden.contains(&t.name));
    Some(narrowed)
}

/// A request's body, at most `cap` bytes, within the edge's body deadline:
/// else `413` or `408`.
async fn read_request(api: Api, body: Body, cap: usize) -> Result<Bytes, Box<Response>> {
    match axum::body::to_bytes(body, cap).await {
        Ok(b) => Ok(b),
        Err(e) if toolgate_edge::is_body_deadline(&e) => Err(Box::new(error(
            api,
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request body did not arrive in time",
        ))),
        Err(_) => Err(Box::new(error(
            api,
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            "the request body is too large",
        ))),
    }
}

fn error(api: Api, status: StatusCode, code: &'static str, message: &str) -> Response {
    let mut r = Response::new(Body::from(api.error_body(code, message)));
    *r.status_mut() = status;
    r.extensions_mut().insert(ErrorCode(code));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

async fn chat(State(p): State<Proxy>, req: Request) -> Response {
    headers::scoped(gated(p, Api::ChatCompletions, req)).await
}

async fn responses(State(p): State<Proxy>, req: Request) -> Response {
    headers::scoped(gated(p, Api::Responses, req)).await
}

async fn messages(State(p): State<Proxy>, req: Request) -> Response {
    headers::scoped(gated(p, Api::Messages, req)).await
}

/// Who a request is for: `(user, session)`, or why it is refused. A token
/// is read and matched by the edge's one rule ([`toolgate_edge::token`]:
/// exactly one header, one spelling, constant-time), then, if it matches
/// no `[[proxy.token]]`, verified as a JWT ([`toolgate_edge::jwt`]); a
/// user named by the trusted header follows the one user-name rule.
async fn caller(
    config: &ProxyConfig,
    jwt: Option<&toolgate_edge::jwt::Verifier>,
    headers: &HeaderMap,
) -> Result<(String, String), &'static str> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= 256)
    };
    let user = match config.auth() {
        Some(ProxyAuth::Fixed(u)) => u.clone(),
        Some(ProxyAuth::TrustedHeader(h)) => {
            let mut all = headers.get_all(h.as_str()).iter();
            let (Some(value), None) = (all.next(), all.next()) else {
                return Err("the request must name exactly one user");
            };
            let user = value
                .to_str()
                .map_err(|_| "the request names no valid user")?;
            toolgate_edge::config::check_user_name(user)
                .map_err(|_| "the request names no valid user")?;
            user.to_owned()
        }
        auth @ (Some(ProxyAuth::Tokens(_)) | None) if auth.is_some() || jwt.is_some() => {
            let digest = match toolgate_edge::token::in_header(headers, config.token_header()) {
                Presented::Token(d) => d,
                Presented::Missing => return Err("the request carries no proxy token"),
                Presented::Duplicate => {
                    return Err("the request carries more than one proxy token")
                }
                Presented::Malformed => return Err("the proxy token is malformed"),
            };
            let tokens = match auth {
                Some(ProxyAuth::Tokens(t)) => t.as_slice(),
                _ => &[],
            };
            match digest.find(tokens, ProxyToken::sha256) {
                Some(t) => t.user().to_owned(),
                None => jwt_user(jwt, headers, config.token_header()).await?,
            }
        }
        _ => return Err("the proxy names no way of knowing the user"),
    };
    let session = text(config.session_header())
        .unwrap_or("default")
        .to_owned();
    Ok((user, session))
}

/// The user of a JWT in the token header, or why it is refused.
async fn jwt_user(
    jwt: Option<&toolgate_edge::jwt::Verifier>,
    headers: &HeaderMap,
    name: &str,
) -> Result<String, &'static str> {
    let token = toolgate_edge::token::in_header_text(headers, name)
        .filter(|t| toolgate_edge::jwt::Verifier::looks_like_jwt(t));
    let (Some(verifier), Some(token)) = (jwt, token) else {
        return Err("the proxy token is not known");
    };
    match verifier.verify(token).await {
        Ok(id) if matches!(id.role, ServerRole::Agent | ServerRole::Admin) => Ok(id.user),
        Ok(_) => Err("this token's role may not call tools"),
        Err(r) => Err(r.message()),
    }
}

/// Toolgate's own headers, never forwarded.
fn own_headers(config: &ProxyConfig) -> Vec<&str> {
    let mut own = vec![config.token_header(), config.session_header()];
    if let Some(ProxyAuth::TrustedHeader(h)) = config.auth() {
        own.push(h);
    }
    own
}

fn upstream_uri(base: &str, uri: &Uri) -> Option<Uri> {
    let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    format!("{base}{path}").parse().ok()
}

async fn gated(p: Proxy, api: Api, req: Request) -> Response {
    let span = p.inner.telemetry().request("proxy request", req.headers());
    span.attribute("url.path", api.path());
    traced(&span, gated_in(p, api, req, &span).await)
}

/// toolgate's error code on a response it made itself, for its span.
#[derive(Debug, Clone, Copy)]
struct ErrorCode(&'static str);

/// The response, its status on the request's span. As the OpenTelemetry
/// HTTP conventions have it for a server's span, a 5xx answer (an
/// upstream unreachable, late or broken, a response refused, an
/// upstream's own 5xx passed on) sets the span's status to error, with
/// `error.type` toolgate's code or else the status; a 4xx (the caller's
/// own mistake, a refused token) leaves the status unset and names its
/// code in `toolgate.code`.
fn traced(span: &RequestSpan, r: Response) -> Response {
    let status = r.status();
    span.attribute("http.response.status_code", i64::from(status.as_u16()));
    let code = r.extensions().get::<ErrorCode>().map(|c| c.0);
    if status.is_server_error() {
        span.failed(code.unwrap_or_else(|| status_text(status)));
    } else if let Some(code) = code {
        span.attribute("toolgate.code", code);
    }
    r
}

/// A 5xx status as `error.type` names it: its number.
fn status_text(status: StatusCode) -> &'static str {
    match status.as_u16() {
        500 => "500",
        501 => "501",
        502 => "502",
        503 => "503",
        504 => "504",
        _ => "5xx",
    }
}

async fn gated_in(p: Proxy, api: Api, req: Request, span: &RequestSpan) -> Response {
    let inner = &p.inner;
    let base = match api {
        Api::Messages => inner.config.anthropic(),
        Api::ChatCompletions | Api::Responses => inner.config.openai(),
    };
    let Some(base) = base else {
        return error(
            api,
            StatusCode::NOT_FOUND,
            "not_found",
            "this route has no upstream",
        );
    };
    let (parts, body) = req.into_parts();
    let (user, session) = match caller(&inner.config, inner.jwt.get(), &parts.headers).await {
        Ok(c) => c,
        Err(why) => return error(api, StatusCode::UNAUTHORIZED, "unauthorized", why),
    };
    toolgate_edge::authenticated(&parts.extensions);
    let body = match read_request(api, body, inner.max_request_bytes).await {
        Ok(b) => b,
        Err(r) => return *r,
    };
    // The request is read strictly too: what the upstream receives is what
    // was checked to be one JSON object.
    let mut root = match toolgate_json::from_slice(&body) {
        Ok(v) if v.as_object().is_some() => v.into_owned(),
        _ => {
            return error(
                api,
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the request body is not one strict JSON object (no duplicate keys, no NaN)",
            )
        }
    };
    let streamed = root
        .as_object()
        .and_then(|o| o.get("stream"))
        .and_then(toolgate_json::Value::as_bool)
        .unwrap_or(false);
    // The tool results in the history sanitized, the tools narrowed.
    let narrowed = match (&inner.narrower, inner.config.narrow_tools()) {
        (Some(cedar), true) => match cedar.narrow(
            &inner.registry,
            &Context::new(user.clone(), session.clone(), 1),
        ) {
            Ok(n) => Some(n),
            Err(_) => {
                return error(
                    api,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "narrowing_failed",
                    "the tools could not be narrowed for this user",
                )
            }
        },
        _ => None,
    };
    // And the tools whose limits this user or session has used up.
    let narrowed = match narrowed {
        Some(n) => match without_exhausted(&inner.gate, n, &user, &session).await {
            Some(n) => Some(n),
            None => {
                return error(
                    api,
                    StatusCode::SERVICE_UNAVAILABLE,
                    "narrowing_failed",
                    "the tools could not be narrowed for this user",
                )
            }
        },
        None => None,
    };
    let options = RequestOptions {
        narrowed: narrowed.as_ref(),
        registry: &inner.registry,
        wrap_results: inner.config.wrap_results(),
        offered_tools: inner.config.offered_tools(),
        deepseek: inner.config.deepseek(),
    };
    // A continued conversation gets the outputs of the calls withheld
    // from the response it continues.
    let supplied = match api {
        Api::Responses => inner.continuations.supply(&user, &mut root),
        _ => Vec::new(),
    };
    let (changed, report) = match rewrite_request(api, &mut root, &options) {
        Ok(r) => r,
        Err(refused) => {
            return intake::refuse(&inner.gate, api, &user, &session, &refused).await;
        }
    };
    let changed = crate::items::strip_history_verdicts(api, &mut root) || changed;
    let body = if changed || !supplied.is_empty() {
        Bytes::from(toolgate_json::canonical::to_string(&root))
    } else {
        body
    };
    let result_findings = report.findings.join(",");
    // What the sanitizer found is in the audit log before the upstream
    // sees the request: a store that cannot record it refuses the request.
    headers::note_request_findings(&report);
    headers::note_supplied(&supplied);
    if !intake::audit_offered(
        &inner.gate,
        &inner.audited,
        api,
        &user,
        &session,
        &report.offered,
    )
    .await
        || !audit_results(inner, api, &user, &session, &report.results).await
    {
        return error(
            api,
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the tool results' findings could not be recorded",
        );
    }
    let response = match send(inner, api, Method::POST, base, &parts, body, span).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let timeout = inner.config.upstream_timeout();
    let (rparts, rbody) = response.into_parts();
    let is_stream = rparts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !rparts.status.is_success() {
        // An upstream error carries no call: passed on as it came (capped).
        let bytes = match read_all(rbody, inner.max_response_bytes, timeout).await {
            Ok(b) => b,
            Err(r) => return error(api, r.0, r.1, r.2),
        };
        let mut r = Response::new(Body::from(bytes));
        *r.status_mut() = rparts.status;
        *r.headers_mut() = upstream::returned_headers(&rparts.headers);
        return r;
    }
    // The caller asks for the approvals its calls need: per-requester caps
    // count them.
    let mut context = Context::new(user.clone(), session, 1);
    context.requester = Some(user.clone());
    if is_stream && streamed {
        return with_findings(
            stream_response(p.clone(), api, rbody, context, span.clone()),
            &result_findings,
        );
    }
    let bytes = match read_all(rbody, inner.max_response_bytes, timeout).await {
        Ok(b) => b,
        Err(r) => return error(api, r.0, r.1, r.2),
    };
    match whole::answer(inner, api, bytes, streamed, is_stream, &context, span).await {
        Ok(r) => with_findings(r, &result_findings),
        Err(r) => r,
    }
}

/// Records a `tool_result` audit record for each tool result of the
/// request in which the sanitizer found something and that is not
/// recorded yet (all in one transaction); whether they are committed.
async fn audit_results(
    inner: &Inner,
    api: Api,
    user: &str,
    session: &str,
    results: &[ResultFindings],
) -> bool {
    let fresh: Vec<(Digest, &ResultFindings)> = {
        let audited = inner.audited.lock().unwrap_or_else(PoisonError::into_inner);
        results
            .iter()
            .map(|r| (result_key(user, session, r), r))
            .filter(|(k, _)| !audited.contains(k))
            .collect()
    };
    if fresh.is_empty() {
        return true;
    }
    let entries: Vec<AuditEntry> = fresh
        .iter()
        .map(|(_, r)| {
            let mut record = ToolResultRecord::new(format!("proxy request {}", api.path()))
                .user(user)
                .session(session)
                .digest(r.digest);
            if let Some(t) = &r.tool {
                record = record.tool(t.as_str());
            }
            if let Some(c) = &r.call_id {
                record = record.call_id(c.as_str());
            }
            for f in &r.findings {
                record = record.finding(*f);
            }
            inner.gate.tool_result(record)
        })
        .collect();
    let gate = Arc::clone(&inner.gate);
    let committed = tokio::task::spawn_blocking(move || gate.store().append_all(entries).is_ok())
        .await
        .unwrap_or(false);
    if committed {
        let mut audited = inner.audited.lock().unwrap_or_else(PoisonError::into_inner);
        for (k, _) in fresh {
            audited.insert(k);
        }
    }
    committed
}

/// Sends the request on to `base` (the caller's path and query, its
/// headers but toolgate's own), within the upstream timeout; an upstream
/// that cannot be reached or does not answer is the caller's error.
async fn send(
    inner: &Inner,
    api: Api,
    method: Method,
    base: &str,
    parts: &axum::http::request::Parts,
    body: Bytes,
    span: &RequestSpan,
) -> Result<hyper::Response<hyper::body::Incoming>, Response> {
    let Some(uri) = upstream_uri(base, &parts.uri) else {
        return Err(error(
            api,
            StatusCode::BAD_GATEWAY,
            "upstream_unreachable",
            "the upstream URL is invalid",
        ));
    };
    let mut up = hyper::Request::new(Full::new(body));
    *up.method_mut() = method;
    *up.uri_mut() = uri;
    *up.headers_mut() = upstream::forwarded_headers(&parts.headers, &own_headers(&inner.config));
    span.inject(up.headers_mut());
    let asked = Instant::now();
    let answer =
        tokio::time::timeout(inner.config.upstream_timeout(), inner.client.request(up)).await;
    inner.telemetry().stage(Stage::Upstream, asked.elapsed());
    match answer {
        Ok(Ok(r)) => {
            headers::record(r.headers());
            Ok(r)
        }
        Ok(Err(_)) => Err(error(
            api,
            StatusCode::BAD_GATEWAY,
            "upstream_unreachable",
            "the upstream could not be reached",
        )),
        Err(_) => Err(error(
            api,
            StatusCode::GATEWAY_TIMEOUT,
            "upstream_timeout",
            "the upstream did not answer in time",
        )),
    }
}

/// Names what the sanitizer found in the request's tool results, in the
/// `x-toolgate-result-findings` header (codes, comma-separated).
fn with_findings(mut r: Response, findings: &str) -> Response {
    if let (false, Ok(v)) = (findings.is_empty(), HeaderValue::from_str(findings)) {
        r.headers_mut().insert("x-toolgate-result-findings", v);
    }
    r
}

/// Decides a body with the gate over the store (audited first), each
/// decision a child of `span`; `None` when the decision could not be
/// recorded.
async fn decide(
    inner: &Inner,
    body: Vec<u8>,
    format: Format,
    context: Context,
    span: &RequestSpan,
) -> Option<Decisions> {
    let started = SystemTime::now();
    let decisions = inner.gate.decide_async(body, format, context).await.ok()?;
    span.decisions("proxy", &decisions, started);
    Some(decisions)
}

type Fail = (StatusCode, &'static str, &'static str);

/// The whole body, within `max` bytes and `timeout`.
async fn read_all(
    mut body: hyper::body::Incoming,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, Fail> {
    let mut out: Vec<u8> = Vec::new();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => {
                return Err((
                    StatusCode::GATEWAY_TIMEOUT,
                    "upstream_timeout",
                    "the upstream did not answer in time",
                ))
            }
            Ok(None) => return Ok(Bytes::from(out)),
            Ok(Some(Err(_))) => {
                return Err((
                    StatusCode::BAD_GATEWAY,
                    "upstream_broken",
                    "the upstream's response broke off",
                ))
            }
            Ok(Some(Ok(f))) => f,
        };
        if let Ok(data) = frame.into_data() {
            if out.len().saturating_add(data.len()) > max {
                return Err((
                    StatusCode::BAD_GATEWAY,
                    "upstream_too_large",
                    "the upstream's response is too large",
                ));
            }
            out.extend_from_slice(&data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Audited, Digest};

    /// Issue 29, item 9: a million sessions' results leave the set at its
    /// bound; a forgotten result is only recorded again, never skipped.
    #[test]
    fn the_audited_results_set_stays_bounded_over_a_million_sessions() {
        let mut audited = Audited::default();
        let key = |i: u32| {
            let mut bytes = [0u8; 32];
            bytes[..4].copy_from_slice(&i.to_le_bytes());
            Digest::from_bytes(bytes)
        };
        for i in 0..1_000_000u32 {
            audited.insert(key(i));
        }
        assert_eq!(audited.set.len(), Audited::MAX);
        assert_eq!(audited.order.len(), Audited::MAX);
        assert!(audited.contains(&key(999_999)));
        assert!(!audited.contains(&key(0)), "the oldest are forgotten");
    }
}
